package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// MySQL attaches a condition of a WHERE clause that reads one table (and
// constants; an uncorrelated subquery is one, and a subquery correlated
// with that table only reads it) to that table's access, and evaluates
// it on every row the access reads, before the join looks for a match:
// the conjuncts of that table in the order the statement wrote them,
// AND stopping at the first false one. Under a strict sql_mode an
// UPDATE's or DELETE's comparison of a number with a string that is no
// number is error 1292 (strict.go), a warning otherwise, so `UPDATE t1
// JOIN g ON t1.c9 = g.c9 SET … WHERE t1.c1 = (SELECT MIN(a) FROM t0)`
// fails (warns) on a t1 row whose c1 is 'a%b' even when that row joins
// nothing, and `… WHERE t1.c9 > 1 AND t1.c1 = (…)` does not on a row
// whose c9 is 0. GMS keeps a condition with a subquery above the join
// (its filter pushdown refuses any filter with a subquery, filters.go)
// and unnests the subquery into a semi join above it, so the comparison
// only met joined rows, and the statement ran without a warning.
//
// OneTableWriteConditions, for an UPDATE or DELETE, moves such a
// conjunct of a filter over a join onto its table, below the join,
// together with the table's other one-table conjuncts, in their order
// (a table on the inner side of an outer join is left alone: the WHERE
// clause filters its NULL rows too). The rows the statement changes are
// the same; only where the conditions are evaluated, and so whether the
// statement fails or warns, differs.

// OneTableWriteConditions is the analyzer rule the comment above
// describes.
func OneTableWriteConditions(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	switch n.(type) {
	case *plan.Update, *plan.DeleteFrom:
	default:
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		if tableUnderAlias(f.Child) != nil {
			return oneTableFilter(ctx, f)
		}
		j, ok := f.Child.(*plan.JoinNode)
		if !ok {
			return n, transform.SameTree, nil
		}
		leaves := tableNames(j)
		conjuncts := expression.SplitConjunction(f.Expression)
		tables := make([]string, len(conjuncts))
		withSubquery := map[string]bool{}
		hasSubquery := make([]bool, len(conjuncts))
		for i, c := range conjuncts {
			table, ok, subquery := oneTableCondition(c)
			hasSubquery[i] = subquery
			if !ok || subqueriesRead(c, leaves) {
				continue
			}
			tables[i] = table
			if subquery {
				withSubquery[table] = true
			}
		}
		var kept []gsql.Expression
		var child gsql.Node = j
		moved := false
		for table := range withSubquery {
			var conds []gsql.Expression
			var subqueries []bool
			for i, c := range conjuncts {
				if tables[i] == table {
					conds = append(conds, c)
					subqueries = append(subqueries, hasSubquery[i])
				}
			}
			var done bool
			if child, done = filterJoinLeaf(child, table, func(leaf gsql.Node) gsql.Node {
				return leafFilters(ctx, leaf, conds, subqueries)
			}); done {
				moved = true
			} else {
				delete(withSubquery, table)
			}
		}
		if !moved {
			return n, transform.SameTree, nil
		}
		for i, c := range conjuncts {
			if !withSubquery[tables[i]] {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return child, transform.NewTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(kept...), child), transform.NewTree, nil
	})
}

// oneTableFilter returns f, the filter of a one-table UPDATE or DELETE
// (or of one table of a join, which leafFilters made), with its
// conjuncts in the order MySQL evaluates them on a row (leafFilters):
// `UPDATE k1 SET … WHERE k1.c1 <= (SELECT …) AND k1.a > 1` reads the
// range of k1's primary key first, and a row whose a is 1, never read,
// is never compared with the subquery (a 1292 of a strict UPDATE on its
// c1 'a%b').
func oneTableFilter(ctx *gsql.Context, f *plan.Filter) (gsql.Node, transform.TreeIdentity, error) {
	conds := expression.SplitConjunction(f.Expression)
	subqueries := make([]bool, len(conds))
	withSubquery := false
	for i, c := range conds {
		transform.InspectExpr(c, func(e gsql.Expression) bool {
			_, subqueries[i] = e.(*plan.Subquery)
			return subqueries[i]
		})
		withSubquery = withSubquery || subqueries[i]
	}
	if !withSubquery {
		return f, transform.SameTree, nil
	}
	ordered := evaluationOrder(ctx, f.Child, conds, subqueries)
	for i := range ordered {
		if ordered[i] != conds[i] {
			return plan.NewFilter(expression.JoinAnd(ordered...), f.Child), transform.NewTree, nil
		}
	}
	return f, transform.SameTree, nil
}

// oneTableCondition returns the table (its name in the statement) that
// c reads, when c reads one table outside its subqueries and each of
// its subqueries is uncorrelated or, a scalar one, correlated with that
// table only, and whether c holds a subquery (a condition without one GMS pushes
// down itself).
func oneTableCondition(c gsql.Expression) (table string, ok, subquery bool) {
	ok = true
	transform.InspectExpr(c, func(e gsql.Expression) bool {
		switch x := e.(type) {
		case *plan.Subquery:
			subquery = true
			for _, t := range correlatedTables(x) {
				if t == "" || (table != "" && t != table) {
					ok = false
				}
				table = t
			}
			return false
		case *plan.InSubquery, *plan.ExistsSubquery:
			// Their subquery is a child, checked as above; a correlated
			// one stays above the join: GMS unnests it into a semi join
			// whose execution indexes, below the join, missed the outer
			// row (difftest8.txt: 1105 unable to find field with index
			// 10 in row of 7 columns).
			for _, child := range x.Children() {
				if sq, isSubquery := child.(*plan.Subquery); isSubquery && !sq.Correlated().Empty() {
					ok = false
				}
			}
		case *expression.GetField:
			t := strings.ToLower(x.Table())
			if t == "" || (table != "" && t != table) {
				ok = false
			}
			table = t
		case *expression.BindVar, *expression.UnresolvedColumn, *expression.Star:
			ok = false
		}
		return !ok
	})
	return table, ok && table != "", subquery
}

// correlatedTables returns the names (in the statement, lower case) of
// the tables whose columns sq reads from outside itself, "" for such a
// reference it cannot name.
func correlatedTables(sq *plan.Subquery) []string {
	outer := sq.Correlated()
	if outer.Empty() {
		return nil
	}
	var tables []string
	var found gsql.ColSet
	transform.InspectExpressions(sq.Query, func(e gsql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok && outer.Contains(gf.Id()) {
			tables = append(tables, strings.ToLower(gf.Table()))
			found.Add(gf.Id())
		}
		return true
	})
	if !found.Equals(outer) {
		// Some references live where the walk did not look (a nested
		// subquery): their tables are unknown.
		return []string{""}
	}
	return tables
}

// tableNames returns the names (in the statement, lower case) of the
// tables n reads in its own scope: a table under an alias by the alias,
// a derived table by its name, not the tables inside it (whose names
// do not meet n's: seed 12435's subquery reading t2 stayed above the
// join of a derived table reading t2 as d).
func tableNames(n gsql.Node) map[string]bool {
	names := map[string]bool{}
	transform.Inspect(n, func(n gsql.Node) bool {
		switch x := n.(type) {
		case *plan.ResolvedTable, *plan.TableAlias, *plan.SubqueryAlias:
			names[strings.ToLower(x.(gsql.Nameable).Name())] = true
			return false
		}
		return true
	})
	return names
}

// subqueriesRead reports whether a subquery of c reads a table under one
// of names. Such a condition stays above the join: GMS unnests an IN or
// EXISTS subquery into a semi join with the table it filters, and one
// below the join would put the subquery's table beside the join's table
// of the same name, which GMS refuses (1066 Not unique table/alias).
func subqueriesRead(c gsql.Expression, names map[string]bool) bool {
	found := false
	transform.InspectExpr(c, func(e gsql.Expression) bool {
		if sq, ok := e.(*plan.Subquery); ok {
			for name := range tableNames(sq.Query) {
				if names[name] {
					found = true
				}
			}
		}
		return found
	})
	return found
}

// leafFilters returns leaf filtered by conds, the one-table conjuncts
// of the WHERE clause on it in the statement's order (subqueries[i]
// says conds[i] holds a subquery), as MySQL evaluates them at the
// table's access: first a conjunct without a subquery before the first
// one with a subquery, and a comparison of an index's first column with
// a constant (MySQL reads it as a range of the index, so that rows
// outside it are never read); then the others, in their order. One
// filter, whose AND stops at the first false conjunct (two stacked
// filters lost the lower one in GMS's pushFilters, nestedfilters.go).
func leafFilters(ctx *gsql.Context, leaf gsql.Node, conds []gsql.Expression, subqueries []bool) gsql.Node {
	return plan.NewFilter(expression.JoinAnd(evaluationOrder(ctx, leaf, conds, subqueries)...), leaf)
}

// evaluationOrder returns conds, the conjuncts of a filter on leaf, in
// the order leafFilters gives them.
func evaluationOrder(ctx *gsql.Context, leaf gsql.Node, conds []gsql.Expression, subqueries []bool) []gsql.Expression {
	leading := indexLeadingColumns(ctx, leaf)
	var first, then []gsql.Expression
	seenSubquery := false
	for i, c := range conds {
		seenSubquery = seenSubquery || subqueries[i]
		if !subqueries[i] && (!seenSubquery || rangeOfColumn(c, leading)) {
			first = append(first, c)
		} else {
			then = append(then, c)
		}
	}
	return append(first, then...)
}

// tableUnderAlias returns n when it is a resolved table, the table it
// names when it is an alias of one, nil otherwise.
func tableUnderAlias(n gsql.Node) *plan.ResolvedTable {
	switch x := n.(type) {
	case *plan.ResolvedTable:
		return x
	case *plan.TableAlias:
		rt, _ := x.Child.(*plan.ResolvedTable)
		return rt
	}
	return nil
}

// indexLeadingColumns returns the names (lower case) of the first
// columns of leaf's indexes, its primary key's among them.
func indexLeadingColumns(ctx *gsql.Context, leaf gsql.Node) map[string]bool {
	rt := tableUnderAlias(leaf)
	cols := map[string]bool{}
	if rt == nil {
		return cols
	}
	for _, c := range rt.Schema() {
		if c.PrimaryKey {
			cols[strings.ToLower(c.Name)] = true
			break
		}
	}
	ia, ok := rt.UnderlyingTable().(gsql.IndexAddressable)
	if !ok {
		return cols
	}
	idxs, err := ia.GetIndexes(ctx)
	if err != nil {
		return cols // fewer ranges known: the conjuncts stay in their order
	}
	for _, idx := range idxs {
		if exprs := idx.Expressions(); len(exprs) > 0 && !idx.IsSpatial() && !idx.IsFullText() {
			e := exprs[0]
			cols[strings.ToLower(e[strings.LastIndexByte(e, '.')+1:])] = true
		}
	}
	return cols
}

// rangeOfColumn reports whether c compares one of columns with
// constants (=, <=>, <, <=, >, >=, BETWEEN, IN of a list, IS NULL):
// a range of an index that column leads.
func rangeOfColumn(c gsql.Expression, columns map[string]bool) bool {
	var operands []gsql.Expression
	switch x := c.(type) {
	case expression.Comparer:
		operands = []gsql.Expression{x.Left(), x.Right()}
	case *expression.Between:
		operands = []gsql.Expression{x.Val, x.Lower, x.Upper}
	case *expression.IsNull:
		operands = []gsql.Expression{x.Child}
	default:
		return false
	}
	fields := 0
	for _, o := range operands {
		if gf, ok := o.(*expression.GetField); ok && columns[strings.ToLower(gf.Name())] {
			fields++
			continue
		}
		constant := true
		transform.InspectExpr(o, func(e gsql.Expression) bool {
			switch e.(type) {
			case *expression.GetField, *plan.Subquery, *expression.UnresolvedColumn, *expression.BindVar:
				constant = false
			}
			return !constant
		})
		if !constant {
			return false
		}
	}
	return fields == 1
}

// filterJoinLeaf returns n, a join tree, with its leaf named table
// filtered by filter, and whether it found one: through inner and cross
// joins, and the left side of a left join.
func filterJoinLeaf(n gsql.Node, table string, filter func(leaf gsql.Node) gsql.Node) (gsql.Node, bool) {
	switch x := n.(type) {
	case *plan.JoinNode:
		if !x.Op.IsInner() && !x.Op.IsCross() && !x.Op.IsLeftOuter() {
			return n, false
		}
		if l, ok := filterJoinLeaf(x.Left(), table, filter); ok {
			out, err := x.WithChildren(l, x.Right())
			return out, err == nil
		}
		if x.Op.IsLeftOuter() {
			return n, false
		}
		if r, ok := filterJoinLeaf(x.Right(), table, filter); ok {
			out, err := x.WithChildren(x.Left(), r)
			return out, err == nil
		}
		return n, false
	case *plan.ResolvedTable, *plan.TableAlias:
		if strings.EqualFold(x.(gsql.Nameable).Name(), table) {
			return filter(n), true
		}
	}
	return n, false
}
