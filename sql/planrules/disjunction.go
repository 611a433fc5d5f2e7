package planrules

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS builds ranges from an OR only when every comparison in it is on a
// column of one index: (k = 5 AND q = 1) OR (k = 7 AND q = 2), with an
// index on k only, was a full scan, as was (k, n) IN ((5, 5), (7, 7))
// over two nullable columns (written as that OR, sql/compat/rows.go) with an
// index on each. MySQL's range optimizer reads k IN (5, 7) through the
// index and checks the rest on each row. disjunctionRanges derives from
// such an OR the condition it implies on the columns every alternative
// constrains: here k = 5 OR k = 7. When the filter is over one table,
// whose indexes are known, that is one condition over the longest prefix
// of an index those columns make up (none when that is the OR itself,
// which GMS serves); otherwise one per column and one over all of them.
// Each is added next to the OR, which stays and decides: they only give
// GMS's range builder something to read by.

// MaxDisjuncts is the most alternatives of an OR that disjunctionRanges
// derives from: each derived condition is checked on every row read, as
// the OR is, and a long OR of comparisons on the columns of one index
// (a long row IN list on a composite key) needs none.
const MaxDisjuncts = 64

// tableIndexes describes the one table a filter reads: its name (or
// alias) and the column names of each of its indexes, in order.
type tableIndexes struct {
	name    string
	indexes [][]string
}

// indexesOf returns the indexes of the table n reads, when n reads one
// table and its indexes are known.
func indexesOf(ctx *gsql.Context, n gsql.Node) (*tableIndexes, bool) {
	name := ""
	if a, ok := n.(*plan.TableAlias); ok {
		name, n = a.Name(), a.Child
	}
	var t gsql.Table
	switch n := n.(type) {
	case *plan.ResolvedTable:
		t = n.UnderlyingTable()
	case *plan.IndexedTableAccess:
		t = n.TableNode.UnderlyingTable()
		name = n.Name()
	default:
		return nil, false
	}
	if name == "" {
		name = t.Name()
	}
	ia, ok := t.(gsql.IndexAddressable)
	if !ok {
		return nil, false
	}
	idxs, err := ia.GetIndexes(ctx)
	if err != nil {
		return nil, false
	}
	ti := &tableIndexes{name: strings.ToLower(name)}
	for _, idx := range idxs {
		var cols []string
		for _, e := range idx.Expressions() {
			cols = append(cols, strings.ToLower(name+"."+e[strings.LastIndexByte(e, '.')+1:]))
		}
		ti.indexes = append(ti.indexes, cols)
	}
	return ti, true
}

// disjunctionRanges returns the conditions e implies on the columns that
// every alternative of e (an OR) compares with a value; nil when e is
// not an OR or no column is common to its alternatives. With the
// indexes of the table read (ti non-nil), the condition is over the
// longest index prefix among those columns only.
func disjunctionRanges(e gsql.Expression, ti *tableIndexes) []gsql.Expression {
	if _, ok := e.(*expression.Or); !ok {
		return nil
	}
	disjuncts := expression.SplitDisjunction(e)
	if len(disjuncts) < 2 || len(disjuncts) > MaxDisjuncts {
		return nil
	}
	leaves := make([]map[string][]gsql.Expression, len(disjuncts))
	var order []string
	for i, d := range disjuncts {
		leaves[i] = map[string][]gsql.Expression{}
		for _, c := range expression.SplitConjunction(d) {
			col := sargableColumn(c)
			if col == "" {
				continue
			}
			if i == 0 && leaves[0][col] == nil {
				order = append(order, col)
			}
			leaves[i][col] = append(leaves[i][col], c)
		}
	}
	var common []string
	for _, col := range order {
		inAll := true
		for _, l := range leaves[1:] {
			if l[col] == nil {
				inAll = false
				break
			}
		}
		if inAll {
			common = append(common, col)
		}
	}
	if len(common) == 0 {
		return nil
	}
	over := func(cols ...string) gsql.Expression {
		var alts []gsql.Expression
		seen := map[string]bool{}
		for _, l := range leaves {
			var parts []gsql.Expression
			for _, col := range cols {
				parts = append(parts, l[col]...)
			}
			alt := expression.JoinAnd(parts...)
			if !seen[alt.String()] {
				seen[alt.String()] = true
				alts = append(alts, alt)
			}
		}
		return expression.JoinOr(alts...)
	}
	if ti != nil {
		in := make(map[string]bool, len(common))
		for _, col := range common {
			in[col] = true
		}
		var best []string
		for _, cols := range ti.indexes {
			n := 0
			for n < len(cols) && in[cols[n]] {
				n++
			}
			if n > len(best) {
				best = cols[:n]
			}
		}
		if len(best) == 0 {
			return nil
		}
		if d := over(best...); d.String() != e.String() {
			return []gsql.Expression{d}
		}
		return nil
	}
	var out []gsql.Expression
	if len(common) > 1 {
		out = append(out, over(common...))
	}
	for _, col := range common {
		out = append(out, over(col))
	}
	return out
}

// sargableColumn returns the column (table.name) that c compares with
// values that depend on no column, or "" when c is no such comparison.
func sargableColumn(c gsql.Expression) string {
	var col, val gsql.Expression
	switch c := c.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
		ch := c.Children()
		col, val = ch[0], ch[1]
		if _, ok := col.(*expression.GetField); !ok {
			col, val = val, col
		}
	case *expression.InTuple:
		col, val = c.Left(), c.Right()
	case *expression.HashInTuple:
		col, val = c.Left(), c.Right()
	case *expression.IsNull:
		col = c.Child
	case *expression.Not:
		if isNull, ok := c.Child.(*expression.IsNull); ok {
			col = isNull.Child
		}
	}
	gf, ok := col.(*expression.GetField)
	if !ok || val != nil && !constant(val) {
		return ""
	}
	return strings.ToLower(gf.Table() + "." + gf.Name())
}

// constant reports whether e depends on no column and holds no subquery.
func constant(e gsql.Expression) bool {
	ok := true
	transform.InspectExpr(e, func(x gsql.Expression) bool {
		switch x.(type) {
		case *expression.GetField, *plan.Subquery:
			ok = false
		}
		return !ok
	})
	return ok
}
