package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// The assignments of INSERT ... ON DUPLICATE KEY UPDATE store values as
// an UPDATE's do, and MySQL fits them to their columns the same way
// (fit.go): `ON DUPLICATE KEY UPDATE tu = tu + 300` of a TINYINT
// UNSIGNED fails with 1264 under a strict sql_mode and stores 255 with
// a warning otherwise. GMS converted the value itself: the statement
// changed nothing and reported no error. FitUpsert wraps them in
// fittedValues as FitUpdate does an UPDATE's.

// FitUpsert returns n with the values of its ON DUPLICATE KEY UPDATE
// assignments to numeric columns fitted, and whether it changed n (not
// when they already are).
func FitUpsert(ctx *gsql.Context, n *plan.InsertInto) (*plan.InsertInto, bool) {
	if len(n.OnDupExprs) == 0 {
		return n, false
	}
	exprs, ok := FitUpdate(ctx, n.OnDupExprs, n.Ignore)
	if !ok {
		exprs = n.OnDupExprs
	}
	// NULL into a NOT NULL column (notnull.go): MySQL's single-row
	// INSERT fails with 1048 outside a strict sql_mode too.
	lenient := n.Ignore || (!strictMode(ctx) && !SingleRow(n.Source))
	if nd, changed := implicitDefaults(exprs, lenient); changed {
		exprs, ok = nd, true
	}
	if !ok {
		return n, false
	}
	m := *n
	m.OnDupExprs = exprs
	return &m, true
}

// SingleRow reports whether src is a VALUES list of one row (under the
// FitRows of FitInsert and the projection GMS puts over VALUES).
func SingleRow(src gsql.Node) bool {
	for {
		switch n := src.(type) {
		case *FitRows:
			src = n.Child
		case *plan.Project:
			src = n.Child
		case *plan.Values:
			return len(n.ExpressionTuples) == 1
		default:
			return false
		}
	}
}
