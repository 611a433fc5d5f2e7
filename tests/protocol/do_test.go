package protocol

import (
	"errors"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// TestDo runs DO statements, which evaluate their expressions and answer
// with an OK packet, alone and inside multi-statement queries.
func TestDo(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "DO 1", want: []uint16{ac}},
			{sql: "do 1, 2 + 3, SLEEP(0)", want: []uint16{ac}},
			{sql: "/* ping */ DO(1)", want: []uint16{ac}},
			// The expressions are evaluated.
			{sql: "DO GET_LOCK('percdb_do', 0)", want: []uint16{ac}},
			{sql: "SELECT IS_FREE_LOCK('percdb_do')", want: []uint16{ac}, rows: "[[0]]"},
			{sql: "DO RELEASE_LOCK('percdb_do')", want: []uint16{ac}},
			{sql: "SELECT IS_FREE_LOCK('percdb_do')", want: []uint16{ac}, rows: "[[1]]"},
			{sql: "DO 1; SELECT 2", want: []uint16{ac | more, ac}, rows: "[[2]]"},
			{sql: "SELECT 1; DO 2; DO 3", want: []uint16{ac | more, ac | more, ac}},
			{sql: "BEGIN; DO 1; COMMIT", want: []uint16{ac | tx | more, ac | tx | more, ac}},
			{sql: "DO nosuchcolumn", err: 1054},
			{sql: "DO 1; DO nosuchcolumn; SELECT 3", want: []uint16{ac | more}, err: 1054},
			{sql: "SELECT 4", want: []uint16{ac}, rows: "[[4]]"},
			{sql: "DO", err: 1064},
			{sql: "DOT 1", err: 1064},
		})
	})
}

// TestDoPrepared prepares DO statements (COM_STMT_PREPARE), which answer
// with no columns, evaluate their expressions with the parameters bound
// at each execution, and answer with an OK packet.
func TestDoPrepared(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		prepare := func(q string, wantParams int) uint32 {
			t.Helper()
			id, params, err := c.Prepare(q)
			if err != nil {
				t.Fatalf("prepare %s: %v", q, err)
			}
			if params != wantParams {
				t.Fatalf("prepare %s: %d parameters, want %d", q, params, wantParams)
			}
			return id
		}
		exec := func(id uint32, q string, want uint16, args ...any) {
			t.Helper()
			res, err := c.Execute(id, args...)
			check(t, step{sql: q, want: []uint16{want}}, res, err)
			if len(res) == 1 && len(res[0].Columns) != 0 {
				t.Errorf("%s: answered %d columns, want an OK packet", q, len(res[0].Columns))
			}
		}
		one := prepare("DO 1", 0)
		exec(one, "DO 1", ac)
		exec(one, "DO 1", ac)
		lock := prepare(" /* take */ do GET_LOCK(?, 0), ? + 1", 2)
		exec(lock, "DO GET_LOCK(?, 0), ? + 1", ac, "percdb_do_prepared", int64(2))
		run(t, c, []step{{sql: "SELECT IS_FREE_LOCK('percdb_do_prepared')", want: []uint16{ac}, rows: "[[0]]"}})
		release := prepare("DO RELEASE_LOCK(?)", 1)
		exec(release, "DO RELEASE_LOCK(?)", ac, "percdb_do_prepared")
		run(t, c, []step{
			{sql: "SELECT IS_FREE_LOCK('percdb_do_prepared')", want: []uint16{ac}, rows: "[[1]]"},
			{sql: "BEGIN", want: []uint16{ac | tx}},
		})
		exec(one, "DO 1 (in a transaction)", ac|tx)
		run(t, c, []step{{sql: "COMMIT", want: []uint16{ac}}})

		var se *wirefuzz.ServerError
		if _, _, err := c.Prepare("DO nosuchcolumn"); !errors.As(err, &se) || se.Code != 1054 {
			t.Errorf("prepare DO nosuchcolumn: %v, want error 1054", err)
		}
		// Syntax errors (1064, though vitess, which parses the statement
		// before any handler, answers 1105), after which the connection
		// goes on. A statement whose text only starts with the letters is
		// not a DO.
		for _, q := range []string{"DO", "DOT 1", "SELEC 1"} {
			if _, _, err := c.Prepare(q); !errors.As(err, &se) || se.Code != 1064 || se.State != "42000" {
				t.Errorf("prepare %s: %v, want error 1064 (42000)", q, err)
			}
			exec(one, "DO 1", ac)
		}
		sel := prepare("SELECT ?", 1)
		res, err := c.Execute(sel, int64(7))
		if err != nil || len(res) != 1 || len(res[0].Binary) != 1 {
			t.Fatalf("SELECT ? after the DO statements: %v, %v", res, err)
		}
	})
}
