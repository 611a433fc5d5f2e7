package sql

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// A prepared statement has at most 65,535 parameters in MySQL (their count
// is two bytes of the COM_STMT_PREPARE answer); one with more fails with
// error 1390. vitess counts them in a uint16 that wraps around, so a
// statement with more was answered with the count modulo 65,536 (the
// client and server then disagree on every later packet): percdb refuses
// such statements at prepare time with 1390. (vitess also computes the
// size of COM_STMT_EXECUTE's NULL bitmap as (count+7)/8 in uint16, which
// wraps to 0 for 65,529 parameters and more; percdb decodes those
// executes itself, in package wire.) Statements within the limit are
// untouched.

// maxPlaceholders is the most parameters a prepared statement may have.
const maxPlaceholders = 65535

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
	return mysql.NewSQLError(codeManyParams, stateGeneral, "%s", msgManyParams)
}

// vitess counts a prepared statement's parameters by walking its parsed
// tree, and its walk of a set operation leaves out the operation's own
// WITH, ORDER BY and LIMIT: WITH c AS (SELECT ?) SELECT n FROM c UNION
// SELECT ? was announced with one parameter, and the client's execute
// with two failed (go-sql-driver: "expected 1 arguments, got 2").
// setOpPlaceholders counts them again, walking those parts too, for a
// statement with a set operation and a question mark.

// setOpPlaceholders raises prepare's parameter count to the placeholders
// of query when vitess's walk missed some; see the comment above.
func setOpPlaceholders(query string, prepare *mysql.PrepareData) {
	if !strings.Contains(query, "?") || !containsSetOpWord(query) {
		return
	}
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return
	}
	names := map[string]bool{}
	var visit sqlparser.Visit
	visit = func(node sqlparser.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *sqlparser.SQLVal:
			if strings.HasPrefix(string(n.Val), ":v") {
				names[string(n.Val)] = true
			}
		case *sqlparser.SetOp:
			// the parts vitess's walk of a SetOp leaves out
			if n.With != nil {
				_ = sqlparser.Walk(visit, n.With)
			}
			_ = sqlparser.Walk(visit, n.OrderBy, n.Limit)
		}
		return true, nil
	}
	_ = sqlparser.Walk(visit, stmt)
	if len(names) <= int(prepare.ParamsCount) || len(names) > maxPlaceholders {
		return
	}
	prepare.ParamsCount = uint16(len(names))
	prepare.ParamsType = make([]int32, len(names))
	prepare.BindVars = make(map[string]*querypb.BindVariable, len(names))
}

// containsSetOpWord reports whether query has UNION, INTERSECT or EXCEPT
// in any case (a cheap test before parsing).
func containsSetOpWord(query string) bool {
	q := strings.ToLower(query)
	return strings.Contains(q, "union") || strings.Contains(q, "intersect") || strings.Contains(q, "except")
}
