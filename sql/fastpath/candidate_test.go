package fastpath

import (
	"bufio"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// shapeOf is what the handler learns of query when Candidate lets it
// through: its shape, nil when the TiDB parser or ShapeOf turns it
// down.
func shapeOf(query string) *Shape {
	normalized, _ := parser.NormalizeDigest(query)
	stmt, err := parser.New().ParseOneStmt(query, "", "")
	if err != nil {
		return nil
	}
	return ShapeOf(stmt, normalized)
}

// statements returns statements of every shape the fast path runs,
// spelled in the ways the lexical check must read past: quoted names,
// reserved words as names next to a dot or in quotes, strings and
// comments holding what it turns down elsewhere, odd spacing and case.
func statements() []string {
	tables := []string{"t", "`t`", "db.t", "`db`.`t`", "`order`", "db.`select`", "t1$", "`a``b`", "tabé"}
	values := []string{"1", "-1", "'x'", "'a AND b OR c'", "'it''s (1)'", `'back\'slash < 2'`, `"dq * /"`,
		"NULL", "TRUE", "x'1F'", "_utf8mb4'x'", "'--'", "'#'", "18446744073709551615", "1.5", "'/*'"}
	var out []string
	for _, tb := range tables {
		for _, v := range values {
			out = append(out,
				"SELECT c FROM "+tb+" WHERE id = "+v,
				"select a, `b`, `order` from "+tb+" where "+v+" = k",
				"SELECT ALL * FROM "+tb+" WHERE id = "+v,
				"SELECT all c FROM "+tb+" WHERE id = "+v,
				"SELECT * FROM "+tb+" WHERE id IN ("+v+", 2, "+v+")",
				"SELECT c FROM "+tb+" WHERE id IN("+v+")",
				"SELECT /* a OR b */ c FROM "+tb+" WHERE id = "+v+" -- AND x\n",
				"SELECT c FROM "+tb+" WHERE id = "+v+" # ORDER BY c",
				"SELECT c FROM "+tb+" WHERE id = "+v+";",
				"\n\tSELECT\n*\nFROM "+tb+"\nWHERE\nid\n=\n"+v,
				"UPDATE "+tb+" SET c = "+v+" WHERE id = 1",
				"UPDATE "+tb+" SET k = k + 1, c = "+v+", `where` = k - 2 WHERE id = "+v,
				"update "+tb+" set k=k+"+v+" where id="+v,
				"DELETE FROM "+tb+" WHERE id = "+v,
				"DELETE FROM "+tb+" WHERE "+v+" = id",
				"INSERT INTO "+tb+" (a, b) VALUES ("+v+", 1), (2, "+v+")",
				"INSERT INTO "+tb+" (`values`) VALUES ("+v+")",
				"insert into "+tb+"(a)value("+v+")",
				"INSERT INTO "+tb+" (a, b) VALUES (?, ?)",
				"SELECT c FROM "+tb+" WHERE id = ?",
				"SELECT c FROM "+tb+" WHERE w = "+v+" AND d = ? and id = 3",
				"SELECT c FROM "+tb+" WHERE id = "+v+" FOR UPDATE",
				"select c from "+tb+" where w = ? AND id = "+v+" for update",
				"UPDATE "+tb+" SET k = k + 1 WHERE w = "+v+" AND id = ?",
				"DELETE FROM "+tb+" WHERE w = "+v+" AND id = ?",
				"SELECT c FROM "+tb+" WHERE id BETWEEN "+v+" AND 2 ORDER BY c DESC LIMIT 1",
				"SELECT c FROM "+tb+" WHERE id > "+v+" ORDER BY c, k LIMIT 10, 5",
				"SELECT DISTINCT c FROM "+tb+" WHERE (id > "+v+" OR k <= 2) AND NOT c IS NULL ORDER BY c, `order` ASC",
				"SELECT COUNT(*), sum(k), AVG(k), MIN(k), MAX(`k`) FROM "+tb+" WHERE id < "+v,
				"select * from "+tb+" where id != "+v+" and k <> 1 limit 2, 3",
				"SELECT c FROM "+tb+" WHERE id IN (1, "+v+") AND k NOT BETWEEN 1 AND 2 LIMIT ? OFFSET ?",
				"SELECT c FROM "+tb+" WHERE id <=> "+v+" AND k IS NOT NULL AND !(k >= 3)",
				"SELECT k, COUNT(*), MAX(c) FROM "+tb+" WHERE k BETWEEN "+v+" AND 9 GROUP BY k ORDER BY k DESC LIMIT 3",
			)
		}
	}
	return append(out, "BEGIN", "begin", "START TRANSACTION", "COMMIT", "ROLLBACK", " commit ",
		"SELECT c FROM t WHERE t.id = 1", "SELECT t.order FROM t WHERE id = 1",
		"SELECT c FROM t WHERE id = 1 /* unterminated",
	)
}

// TestFastCandidateSound checks that Candidate turns down no
// statement that has a shape: it may only save the parse of statements
// that have none.
func TestFastCandidateSound(t *testing.T) {
	shaped := 0
	for _, q := range statements() {
		if shapeOf(q) == nil {
			continue
		}
		shaped++
		if !Candidate(q) {
			t.Errorf("Candidate(%q) = false for a statement with a fast shape", q)
		}
	}
	// The list is of shaped statements: most must have a shape, or the
	// test checks nothing.
	if n := len(statements()); shaped < n*3/4 {
		t.Fatalf("only %d of %d statements have a fast shape", shaped, n)
	}
}

// TestFastCandidateTurnsDown checks statements the lexical check must
// turn down, each for one of its rules, and that none of them has a
// shape (else the rule would be wrong).
func TestFastCandidateTurnsDown(t *testing.T) {
	for _, q := range []string{
		"SELECT c FROM t WHERE id = 1 LOCK IN SHARE MODE",
		"SELECT c FROM t WHERE id < 2 GROUP BY c WITH ROLLUP",
		"SELECT c FROM t WHERE id < 2 ORDER BY c + 1",
		"SELECT c FROM t WHERE id < 2 ORDER BY 1",
		"SELECT c, k FROM t WHERE id < 2 ORDER BY c DESC, 2 LIMIT 3",
		"SELECT c FROM t WHERE id < 2 ORDER BY c LIMIT 1 UNION SELECT 1",
		"SELECT c FROM t WHERE id LIKE 2",
		"SELECT c FROM t WHERE id < 2 LIMIT 1 INTO @x",
		"SELECT c FROM t FOR UPDATE",
		"SELECT c AS d FROM t WHERE id = 1",
		"SELECT c FROM t AS u WHERE id = 1",
		"SELECT c FROM t, u WHERE id = 1",
		"SELECT c FROM t JOIN u ON t.a = u.a WHERE id = 1",
		"SELECT c FROM t CROSS JOIN u WHERE id = 1",
		"SELECT c * 2 FROM t WHERE id = 1",
		"SELECT t.* FROM t WHERE id = 1",
		"SELECT c FROM t WHERE id = +1",
		"SELECT c FROM t WHERE id = 7 % 2",
		"SELECT c FROM t WHERE id = 7 / 2",
		"SELECT c FROM t WHERE id = @v",
		"SELECT c FROM t WHERE id IN (SELECT a FROM u WHERE a = 1)",
		"SELECT c FROM t",
		"SELECT 1",
		"SELECT c FROM t GROUP BY c HAVING c = 1",
		"SELECT CASE WHEN c = 1 THEN 2 END FROM t WHERE id = 1",
		"SELECT c FROM t WHERE id = 1 UNION SELECT c FROM t WHERE id = 2",
		"SELECT c FROM t WHERE c = 'a' COLLATE utf8mb4_bin",
		"SELECT c FROM t WHERE id = CAST(1 AS SIGNED)",
		"SELECT c FROM t WHERE id DIV 2 = 1",
		"UPDATE t SET c = 1",
		"UPDATE t SET c = 1 WHERE id IN (1, 2)",
		"UPDATE t SET c = 1 AND 2 WHERE id = 1",
		"UPDATE t SET c = c * 2 WHERE id = 1",
		"UPDATE t SET c = abs(c) WHERE id = 1",
		"UPDATE t, u SET t.c = 1 WHERE t.id = 1",
		"UPDATE t SET c = DEFAULT WHERE id = 1",
		"UPDATE t SET c = 1 WHERE id = 1 ORDER BY id LIMIT 1",
		"DELETE FROM t",
		"DELETE FROM t WHERE id IN (1, 2)",
		"DELETE FROM t WHERE id > 1",
		"DELETE t, u FROM t, u WHERE t.id = 1",
		"INSERT INTO t VALUES (1, 2)",
		"INSERT INTO t (a) VALUES (1 + 2)",
		"INSERT INTO t (a) VALUES (DEFAULT)",
		"INSERT INTO t (a) SELECT a FROM u WHERE a = 1",
		"INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
		"SHOW TABLES", "CREATE TABLE t (a INT)", "", ";",
	} {
		if Candidate(q) {
			t.Errorf("Candidate(%q) = true", q)
		}
		if s := shapeOf(q); s != nil {
			t.Errorf("%q has a fast shape (kind %d): Candidate must not turn it down", q, s.Kind)
		}
	}
}

// TestFastCandidateWordsReserved checks that every word rejectedWord
// turns down is reserved in the TiDB parser: a non-reserved one could be
// an unquoted table or column name in a fast statement. The words are
// read from the switch in rejectedWord's source.
func TestFastCandidateWordsReserved(t *testing.T) {
	f, err := goparser.ParseFile(token.NewFileSet(), "candidate.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "rejectedWord" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				w, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				words = append(words, w)
			}
			return true
		})
		return false
	})
	if len(words) < 20 {
		t.Fatalf("read %d words from rejectedWord; is the switch still there?", len(words))
	}
	reserved := make(map[string]bool)
	for _, k := range parser.Keywords {
		if k.Reserved {
			reserved[strings.ToLower(k.Word)] = true
		}
	}
	for _, w := range words {
		if !reserved[w] {
			t.Errorf("rejectedWord turns down %q, which the TiDB parser does not reserve", w)
		}
		if !rejectedWord([]byte(w)) {
			t.Errorf("rejectedWord(%q) = false", w)
		}
	}
	for _, w := range []string{"select", "from", "where", "in", "set", "values", "value", "into", "null", "true", "false", "tab0", "status"} {
		if rejectedWord([]byte(w)) {
			t.Errorf("rejectedWord(%q) = true for a word fast shapes have", w)
		}
	}
}

// TestFastCandidateOnTestdata checks the lexical check against the
// sqllogictest files of tests/sqllogic/testdata (and the index/ files of
// the gate set, $SLT_GATE_DIR or ../shared/sqllogictest, when it is
// there, sampled): it turns down no statement with a shape, and most of
// those without one.
func TestFastCandidateOnTestdata(t *testing.T) {
	files, _ := filepath.Glob("../../tests/sqllogic/testdata/*.test")
	gateDir := os.Getenv("SLT_GATE_DIR")
	if gateDir == "" {
		gateDir = "../../../shared/sqllogictest"
	}
	gate, _ := filepath.Glob(filepath.Join(gateDir, "index/*/*/*.test"))
	if !testing.Short() {
		files = append(files, gate...)
	}
	if len(files) == 0 {
		t.Skip("no .test files")
	}
	var statements, candidates, shaped int
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		line := 0
		for sc.Scan() {
			q := sc.Text()
			if !firstWordIs(q, "select", "insert", "update", "delete") {
				continue
			}
			// Every 7th line of the gate set keeps the test short.
			if line++; !strings.HasPrefix(name, "../../tests/") && line%7 != 0 {
				continue
			}
			statements++
			ok := Candidate(q)
			if ok {
				candidates++
			}
			if shapeOf(q) != nil {
				shaped++
				if !ok {
					t.Errorf("%s: Candidate(%q) = false for a statement with a fast shape", name, q)
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d statements: %d let through, %d with a fast shape", statements, candidates, shaped)
	if statements > 1000 && candidates-shaped > statements/10 {
		t.Errorf("%d of %d statements without a shape let through", candidates-shaped, statements)
	}
}

// FuzzFastCandidate checks on arbitrary text that Candidate turns
// down no statement with a fast shape.
//
//	go test ./sql -run '^$' -fuzz '^FuzzFastCandidate$' -fuzztime 5m
func FuzzFastCandidate(f *testing.F) {
	for _, q := range statements() {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		if !Candidate(query) && shapeOf(query) != nil {
			t.Fatalf("Candidate(%q) = false for a statement with a fast shape", query)
		}
	})
}

// BenchmarkFastCandidate measures the lexical check on a statement it
// turns down at its end and one it lets through.
func BenchmarkFastCandidate(b *testing.B) {
	for _, q := range []string{
		"SELECT pk FROM tab0 WHERE col3 = 78 OR col4 < 55.79",
		"SELECT c FROM sbtest1 WHERE id = 4711",
	} {
		b.Run(strconv.Itoa(len(q)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Candidate(q)
			}
		})
	}
}

// firstWordIs reports whether the first word of q, after blanks and
// opening parentheses, is one of words (ASCII case-insensitive).
func firstWordIs(q string, words ...string) bool {
	q = strings.TrimLeft(q, " \t\r\n(")
	for _, w := range words {
		if len(q) > len(w) && strings.EqualFold(q[:len(w)], w) && !lexical.IsWordByte(q[len(w)]) {
			return true
		}
	}
	return false
}
