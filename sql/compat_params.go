package sql

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// A prepared statement has at most 65,535 parameters in MySQL (their count
// is two bytes of the COM_STMT_PREPARE answer); one with more fails with
// error 1390. vitess counts them in a uint16 that wraps around, so a
// statement with more was answered with the count modulo 65,536 (the
// client and server then disagree on every later packet), and it computes
// the size of COM_STMT_EXECUTE's NULL bitmap as (count+7)/8 in uint16 too,
// which wraps to 0 for 65,529 parameters and more: parsing the execute
// then indexes past that empty bitmap and panics, and vitess closes the
// connection. Neither happens inside a handler method that percdb could
// wrap, and no packet a client can send parses right, so percdb refuses
// such statements at prepare time: more than maxPlaceholders placeholders
// fail with 1390. Statements within the limit are untouched.

// maxPlaceholders is the most parameters a prepared statement may have:
// the largest count whose NULL bitmap size vitess computes right.
const maxPlaceholders = 65528

// Error 1390, ER_PS_MANY_PARAM.
const (
	codeManyParams = 1390
	msgManyParams  = "Prepared statement contains too many placeholders"
)

// checkPlaceholders returns error 1390 when query has more placeholders
// than maxPlaceholders. Only a statement with that many question marks is
// parsed to count them (as vitess does, ignoring those in strings and
// comments): every other costs one scan of its text.
func checkPlaceholders(query string) error {
	if strings.Count(query, "?") <= maxPlaceholders {
		return nil
	}
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		// GMS's own parse reports it.
		return nil
	}
	n := 0
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if v, ok := node.(*sqlparser.SQLVal); ok && strings.HasPrefix(string(v.Val), ":v") {
			n++
		}
		return true, nil
	}, stmt)
	if n <= maxPlaceholders {
		return nil
	}
	if n <= 65535 {
		return mysql.NewSQLError(codeManyParams, stateGeneral, "%s (%d: percdb takes at most %d)", msgManyParams, n, maxPlaceholders)
	}
	return mysql.NewSQLError(codeManyParams, stateGeneral, "%s", msgManyParams)
}
