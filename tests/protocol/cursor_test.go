package protocol

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// Server status flags of a read-only cursor (MySQL's
// SERVER_STATUS_CURSOR_EXISTS and SERVER_STATUS_LAST_ROW_SENT).
const (
	cursorExists = 0x0040
	lastRowSent  = 0x0080
)

// comStmtFetch is COM_STMT_FETCH.
const comStmtFetch = 0x1c

// TestCursorFetch runs a prepared SELECT with CURSOR_TYPE_READ_ONLY and
// reads its rows with COM_STMT_FETCH, as Connector/J (useCursorFetch)
// and libmysqlclient's mysql_stmt_attr_set(CURSOR_TYPE) do: the execute
// answers with the columns only and SERVER_STATUS_CURSOR_EXISTS, each
// fetch with up to the rows asked for, and the fetch that reaches the
// end says SERVER_STATUS_LAST_ROW_SENT; then the statement runs again.
func TestCursorFetch(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{"CREATE TABLE cur (a INT PRIMARY KEY)", "INSERT INTO cur VALUES (1), (2), (3)"} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		id, _, err := c.Prepare("SELECT a FROM cur ORDER BY a")
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			body, err := wirefuzz.ExecuteBody(id)
			if err != nil {
				t.Fatal(err)
			}
			body[5] = 1 // CURSOR_TYPE_READ_ONLY
			if err := c.WriteCommand(body); err != nil {
				t.Fatal(err)
			}
			status, rows, err := readCursorAnswer(c, true)
			if err != nil {
				t.Fatalf("round %d: execute: %v", round, err)
			}
			if rows != 0 || status&cursorExists == 0 {
				t.Errorf("round %d: execute: %d rows, status %#x; want no rows and CURSOR_EXISTS", round, rows, status)
			}
			var got []string
			for i, want := range []struct {
				rows int
				last bool
			}{{2, false}, {1, true}} {
				fetch := binary.LittleEndian.AppendUint32([]byte{comStmtFetch}, id)
				fetch = binary.LittleEndian.AppendUint32(fetch, 2)
				if err := c.WriteCommand(fetch); err != nil {
					t.Fatal(err)
				}
				status, rows, err := readCursorAnswer(c, false)
				if err != nil {
					t.Fatalf("round %d: fetch %d: %v", round, i, err)
				}
				got = append(got, fmt.Sprintf("%d rows last=%v", rows, status&lastRowSent != 0))
				if rows != want.rows || (status&lastRowSent != 0) != want.last {
					t.Errorf("round %d: fetch %d: %d rows, status %#x; want %d rows, LAST_ROW_SENT %v", round, i, rows, status, want.rows, want.last)
				}
			}
			t.Logf("round %d: %v", round, got)
		}
		// The connection goes on as before.
		if _, err := c.QueryAll("SELECT 1"); err != nil {
			t.Fatalf("after the cursor: %v", err)
		}
	})
}

// readCursorAnswer reads the answer to an execute with a cursor (the
// column count, the columns and an EOF, when columns) or to a fetch (rows
// and an EOF), and returns the EOF's status and the number of rows.
func readCursorAnswer(c *wirefuzz.Conn, columns bool) (status uint16, rows int, err error) {
	if columns {
		p, err := c.ReadPacket()
		if err != nil {
			return 0, 0, err
		}
		if len(p) > 0 && p[0] == 0xff {
			return 0, 0, fmt.Errorf("error packet %q", p)
		}
		n := int(p[0])
		for range n + 1 { // the columns, then their EOF
			if p, err = c.ReadPacket(); err != nil {
				return 0, 0, err
			}
		}
		if len(p) == 0 || p[0] != 0xfe {
			return 0, 0, fmt.Errorf("want an EOF after the columns, got %x", p)
		}
		return binary.LittleEndian.Uint16(p[3:]), 0, nil
	}
	for {
		p, err := c.ReadPacket()
		if err != nil {
			return 0, rows, err
		}
		switch {
		case len(p) > 0 && p[0] == 0xff:
			return 0, rows, fmt.Errorf("error packet %q", p)
		case len(p) > 0 && p[0] == 0xfe && len(p) < 9:
			return binary.LittleEndian.Uint16(p[3:]), rows, nil
		}
		rows++
	}
}
