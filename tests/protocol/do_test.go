package protocol

import (
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
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
