package wirefuzz

import (
	"os"
	"strings"
	"testing"
)

// envFindings, set to 1, makes TestFindings run the reproductions of the
// known findings, which fail until the findings are fixed.
const envFindings = "PERCDB_WIREFUZZ_FINDINGS"

// finding is a known defect of the packet path: an input on which the
// server panics. Every one of them is recovered by vitess' listener, which
// closes the connection, so the server survives; they are still defects
// (the client gets no error, and a panic half way can leave state behind).
type finding struct {
	name string
	// signature is a line of the recovered panic's report (a frame with
	// its source line) that identifies the defect.
	signature string
	// fix says where the defect lives and what would fix it.
	fix string
	// input reproduces it.
	input fuzzInput
}

// findings are the known findings, reported in docs/reliability.md. When
// one is fixed, delete its entry: the fuzz targets then fail on its
// signature again, so it cannot come back unnoticed.
func findings() []finding {
	types := [][2]byte{{typeDouble, 0}, {typeVarString, 0}, {typeLong, 0}, {typeVarString, 0}}
	return []finding{
		{
			name:      "stmt-execute-with-open-cursor",
			signature: `handleNextCommand: if werr := c.writeErrorPacket(ERUnknownComError, SSUnknownComError, "error handling ComStmtExecute packet")`,
			fix: "vitess mysql.(*Conn).handleNextCommand: a COM_STMT_EXECUTE while a cursor is open (the previous " +
				"execute asked for CURSOR_TYPE_READ_ONLY and was not fetched to the end) writes its error packet " +
				"without recycling the read packet, and startEphemeralPacket panics; any client using cursors " +
				"(Connector/J useCursorFetch, libmysqlclient STMT_ATTR_CURSOR_TYPE) can hit it; fix upstream. " +
				"Found by FuzzStmt (testdata/fuzz/FuzzStmt/6d9cd21a8b7e700b)",
			input: fuzzInput{target: "FuzzStmt", args: []any{byte(ComStmtExecute), executeBody(1, 1, 0, types,
				le32(0), le32(0), AppendLenencString(nil, "p"), le32(1), AppendLenencString(nil, "b")), executeBody(0, 1, 0, nil,
				le32(0), le32(0), AppendLenencString(nil, "p"), le32(1), AppendLenencString(nil, "b"))}},
		},
	}
}

// knownFinding returns the name of the known finding whose signature the
// panic report shows, or "".
func knownFinding(report string) string {
	for _, f := range findings() {
		if strings.Contains(report, f.signature) {
			return f.name
		}
	}
	return ""
}

// TestFindings replays each known finding with the strict check (no panic
// at all). It is skipped unless PERCDB_WIREFUZZ_FINDINGS=1; with it, every
// subtest fails until its finding is fixed.
func TestFindings(t *testing.T) {
	if os.Getenv(envFindings) != "1" {
		t.Skipf("known findings of docs/reliability.md fail until fixed; run with %s=1", envFindings)
	}
	tg := startTarget(t)
	for _, f := range findings() {
		t.Run(f.name, func(t *testing.T) {
			t.Logf("fix: %s", f.fix)
			tg.run(t, f.input, true)
		})
	}
}

// TestFindingsReproduce checks that each known finding's input still
// panics with its signature, so that the list stays true: a finding fixed
// upstream (after a dependency update) fails here until its entry is
// deleted.
func TestFindingsReproduce(t *testing.T) {
	tg := startTarget(t)
	for _, f := range findings() {
		t.Run(f.name, func(t *testing.T) {
			before := tg.panics.count()
			tg.run(t, f.input, false)
			n, last := tg.panics.since(before)
			if n == 0 || !strings.Contains(last, f.signature) {
				t.Fatalf("the input no longer panics with %q (panics: %d, last:\n%s)\nif it was fixed, delete the finding", f.signature, n, last)
			}
		})
	}
}
