package planrules

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/percdb/percdb/sql/compat"
)

// MaxRowExpansionTuples is the longest row IN list rewritten. GMS's
// range builder and the rewritten filter cost more than linearly in the
// list's length: on a 100k-row table (loaded 2-core machine) 100 rows
// took 15 ms, 200 116 ms, 500 760 ms and 1,000 2,150 ms, where GMS's
// hashed IN over a full scan took 1,500 ms whatever the length. A longer
// list is left to GMS (a scan, unless another conjunct serves an index).
const MaxRowExpansionTuples = 256

// ExpandRowComparisons rewrites, in every Filter of n, each conjunct that
// is a row comparison an index could serve (RowExpansion) into its
// column-by-column form, hides from GMS's range builder the string
// columns compared with numbers (unsargableStrings), and adds the ranges
// an OR implies (disjunctionRanges). Subqueries are left to the analyzer, which runs
// the rule on each.
func ExpandRowComparisons(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		if j, ok := n.(*plan.JoinNode); ok {
			return expandJoinCondition(j)
		}
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		conjuncts := expression.SplitConjunction(f.Expression)
		changed := false
		out := make([]gsql.Expression, len(conjuncts))
		for i, c := range conjuncts {
			if x := RowExpansion(c); x != nil {
				c, changed = x, true
			}
			x, same, err := unsargableStrings(c)
			if err != nil {
				return n, transform.SameTree, err
			}
			out[i], changed = x, changed || same == transform.NewTree
		}
		// The ranges an OR implies (disjunction.go), once each.
		have := make(map[string]bool, len(out))
		for _, c := range out {
			have[c.String()] = true
		}
		ti, _ := indexesOf(ctx, f.Child)
		for _, c := range out[:len(out):len(out)] {
			for _, d := range disjunctionRanges(c, ti) {
				if !have[d.String()] {
					have[d.String()] = true
					out, changed = append(out, d), true
				}
			}
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(out...), f.Child), transform.NewTree, nil
	})
}

// expandJoinCondition writes the row comparisons among the conjuncts of
// a join's condition column by column: GMS plans a lookup join (and the
// semi join of a row IN (SELECT ...)) only by equalities of columns.
func expandJoinCondition(j *plan.JoinNode) (gsql.Node, transform.TreeIdentity, error) {
	cond := j.JoinCond()
	if cond == nil {
		return j, transform.SameTree, nil
	}
	conjuncts := expression.SplitConjunction(cond)
	changed := false
	for i, c := range conjuncts {
		if x := RowExpansion(c); x != nil {
			conjuncts[i], changed = x, true
		}
	}
	if !changed {
		return j, transform.SameTree, nil
	}
	ret, err := j.WithExpressions(expression.JoinAnd(conjuncts...))
	if err != nil {
		return j, transform.SameTree, err
	}
	return ret, transform.NewTree, nil
}

// RowExpansion returns e written column by column when e is a row
// comparison that an index could serve: (a, b) = (x, y) as a = x AND
// b = y, and (a, b) IN ((x, y), (u, v)) as (a = x AND b = y) OR (a = u
// AND b = v), where one row holds a column. It returns nil for any other
// expression, for rows of rows, and for IN lists longer than
// MaxRowExpansionTuples.
func RowExpansion(e gsql.Expression) gsql.Expression {
	switch e := e.(type) {
	case *expression.Equals:
		l, r, ok := rowPair(e.Left(), e.Right())
		if !ok || !hasColumn(l) && !hasColumn(r) {
			return nil
		}
		return columnsEqual(l, r)
	case *expression.InTuple:
		return inExpansion(e.Left(), e.Right())
	case *expression.HashInTuple:
		return inExpansion(e.Left(), e.Right())
	}
	return nil
}

// inExpansion expands left IN right, where left is a row holding a
// column and right a list of rows as wide.
func inExpansion(left, right gsql.Expression) gsql.Expression {
	l, ok := flatRow(left)
	if !ok || !hasColumn(l) {
		return nil
	}
	list, ok := right.(expression.Tuple)
	if !ok || len(list) == 0 || len(list) > MaxRowExpansionTuples {
		return nil
	}
	alts := make([]gsql.Expression, len(list))
	for i, item := range list {
		r, ok := flatRow(item)
		if !ok || len(r) != len(l) {
			return nil
		}
		alts[i] = columnsEqual(l, r)
	}
	return expression.JoinOr(alts...)
}

// rowPair returns two rows of the same width, neither holding a row.
func rowPair(a, b gsql.Expression) (expression.Tuple, expression.Tuple, bool) {
	l, ok := flatRow(a)
	if !ok {
		return nil, nil, false
	}
	r, ok := flatRow(b)
	if !ok || len(r) != len(l) {
		return nil, nil, false
	}
	return l, r, true
}

// flatRow returns e as a row of two or more values none of which is a
// row.
func flatRow(e gsql.Expression) (expression.Tuple, bool) {
	t, ok := e.(expression.Tuple)
	if !ok || len(t) < 2 {
		return nil, false
	}
	for _, v := range t {
		if _, nested := v.(expression.Tuple); nested {
			return nil, false
		}
	}
	return t, true
}

// hasColumn reports whether a value of row is a column.
func hasColumn(row expression.Tuple) bool {
	for _, v := range row {
		if _, ok := v.(*expression.GetField); ok {
			return true
		}
	}
	return false
}

// columnsEqual returns l[0] = r[0] AND l[1] = r[1] AND ...
func columnsEqual(l, r expression.Tuple) gsql.Expression {
	// A YEAR column beside a constant from 1 to 99 compares the
	// numbers in a row (compat.RowYears).
	l, r = compat.RowYears(l, r)
	parts := make([]gsql.Expression, len(l))
	for i := range l {
		parts[i] = expression.NewEquals(l[i], r[i])
	}
	return expression.JoinAnd(parts...)
}
