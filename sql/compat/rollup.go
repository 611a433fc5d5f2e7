package compat

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GROUP BY ... WITH ROLLUP, which neither the vitess grammar nor GMS
// v0.20.0 has. On the parse error rewriteSyntax writes WITH ROLLUP as a
// last grouping item the grammar takes (GROUP BY a, b, percdb_rollup()),
// and rollupSelects turns each SELECT so marked into the grouping sets
// of the rollup, one level a branch of a UNION ALL:
//
//	SELECT a, b, COUNT(*) FROM t WHERE w GROUP BY a, b WITH ROLLUP HAVING h ORDER BY o LIMIT n
//
// is
//
//	SELECT percdb_rc1 AS `a`, percdb_rc2 AS `b`, percdb_rc3 AS `COUNT(*)` FROM (
//	  SELECT a AS percdb_rc1, b AS percdb_rc2, COUNT(*) AS percdb_rc3, <keys> FROM t WHERE w GROUP BY a, b HAVING h
//	  UNION ALL SELECT a, NULL, COUNT(*), <keys> FROM t WHERE w GROUP BY a HAVING h'
//	  UNION ALL SELECT NULL, NULL, COUNT(*), <keys> FROM t WHERE w HAVING h'' AND COUNT(*) > 0
//	) AS percdb_rollup ORDER BY o', <keys> LIMIT n
//
// In the level that rolls up a grouping expression, that expression is
// NULL wherever the select list, HAVING or ORDER BY reads it outside an
// aggregate (MySQL's super-aggregate rows), and GROUPING(e, ...) is the
// constant bit mask of the expressions rolled up (1 for each, the first
// the highest bit), so that a NULL group value (GROUPING 0) and a rolled
// up one (GROUPING 1) differ. The grand total's level has COUNT(*) > 0
// added to its HAVING: MySQL returns no row for a rollup of no rows,
// where an aggregate without GROUP BY returns one.
//
// The keys are hidden columns: for each grouping expression whether the
// level rolls it up and its value, by which the rows are ordered after
// the statement's own ORDER BY (MySQL sorts to roll up: without an ORDER
// BY the groups come in ascending order, each group's super-aggregate
// row after its rows). An ORDER BY item is the select item it names (by
// position, alias or the same expression) or else a hidden column of
// its own, computed in each level as the select list is. DISTINCT and
// LIMIT apply to the union, as MySQL applies them after the rollup.
//
// Each level reads the table again: a rollup of k expressions reads the
// rows k+1 times. MySQL 8.0.12 and later take ORDER BY with ROLLUP
// (before, 1221); so does this.

// rollupMarker is the grouping item that stands for WITH ROLLUP.
const rollupMarker = "percdb_rollup"

// rollupAggregates are the aggregate functions, by lower-case name: a
// rolled-up expression inside one keeps its value (the aggregate reads
// the rows, not the group).
var rollupAggregates = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "group_concat": true,
	"std": true, "stddev": true, "stddev_pop": true, "stddev_samp": true, "variance": true,
	"var_pop": true, "var_samp": true, "bit_and": true, "bit_or": true, "bit_xor": true,
	"json_arrayagg": true, "json_objectagg": true, "any_value": true,
}

// rollupSelects rewrites every SELECT of stmt marked WITH ROLLUP as the
// comment at the top of the file says, in place; columns gives the
// columns of a table a select list names with * (nil: none, 1235).
func rollupSelects(stmt ast.Statement, columns func(db, table string) ([]string, error)) (ast.Statement, error) {
	if stmt == nil {
		return stmt, nil
	}
	var marked []*ast.Select
	existsOf := map[*ast.Select]*ast.ExistsExpr{} // the SELECTs EXISTS reads
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.ExistsExpr:
			if n.Subquery != nil {
				if s, ok := n.Subquery.Select.(*ast.Select); ok {
					existsOf[s] = n
				}
			}
		case *ast.Select:
			if isRollupMarked(n) {
				marked = append(marked, n)
			}
		}
		return true, nil
	}, stmt)
	// A SELECT nested in another is found after it: rewrite the inner
	// ones first, so that the outer one's text has them rewritten.
	for i := len(marked) - 1; i >= 0; i-- {
		s := marked[i]
		if e := existsOf[s]; e != nil {
			repl, ok, err := rollupExists(s)
			if err != nil {
				return nil, err
			}
			if repl != nil {
				replaceExpr(stmt, e, repl)
			}
			if ok {
				continue
			}
		}
		if err := expandStars(s, columns); err != nil {
			return nil, err
		}
		r, err := rollupSelect(s)
		if err != nil {
			return nil, err
		}
		*s = *r
	}
	return stmt, nil
}

// rollupExists rewrites s, the SELECT of an EXISTS, as the same
// grouping without ROLLUP, and reports whether it did. A rollup has a
// row exactly when its finest grouping has one, unless HAVING drops
// that level's rows and keeps another's: then it returns the OR of an
// EXISTS of each level, to stand for the EXISTS. With LIMIT 0 or
// OFFSET, s is not rewritten (false). A correlated rollup under EXISTS
// needs this: GMS cannot evaluate a correlated derived table or UNION
// there (1105, unable to find field), and the rollup is both.
func rollupExists(s *ast.Select) (ast.Expr, bool, error) {
	if s.Into != nil {
		return nil, false, nil
	}
	if l := s.Limit; l != nil {
		if l.Offset != nil {
			return nil, false, nil
		}
		v, ok := l.Rowcount.(*ast.SQLVal)
		if !ok || v.Type != ast.IntVal || strings.Trim(string(v.Val), "0") == "" {
			return nil, false, nil
		}
	}
	items := make([]*ast.AliasedExpr, 0, len(s.SelectExprs))
	for _, se := range s.SelectExprs {
		a, ok := se.(*ast.AliasedExpr)
		if !ok {
			// * is read by GMS's planner alone
			return nil, false, nil
		}
		items = append(items, a)
	}
	groups := rollupGroups(s, items)
	if err := groupingArguments(s, items, groups); err != nil {
		return nil, false, err
	}
	if s.Having != nil && s.Having.Expr != nil {
		if s.With != nil {
			return nil, false, nil
		}
		return rollupExistsLevels(s, groups)
	}
	// The select list is not read: one column, with no GROUPING() to
	// evaluate.
	s.SelectExprs = ast.SelectExprs{&ast.AliasedExpr{Expr: ast.NewIntVal([]byte("1"))}}
	s.GroupBy = ast.GroupBy(groups)
	s.OrderBy = nil
	s.Limit = nil
	s.QueryOpts.Distinct = false
	return nil, true, nil
}

// rollupExistsLevels returns the expression that stands for EXISTS over
// s, a rollup with HAVING of groups: one EXISTS per level, ORed (each
// level a grouping GMS runs correlated).
func rollupExistsLevels(s *ast.Select, groups []ast.Expr) (ast.Expr, bool, error) {
	groupText := make([]string, len(groups))
	for i, g := range groups {
		groupText[i] = ast.String(g)
	}
	levels, err := rollupLevels(s, groupText, nil)
	if err != nil {
		return nil, false, err
	}
	for i, l := range levels {
		levels[i] = "exists (" + l + ")"
	}
	parsed, err := ast.Parse("select (" + strings.Join(levels, " or ") + ")")
	if err != nil {
		return nil, false, fmt.Errorf("WITH ROLLUP: %w", err)
	}
	sel, ok := parsed.(*ast.Select)
	if !ok || len(sel.SelectExprs) != 1 {
		return nil, false, fmt.Errorf("WITH ROLLUP: %T", parsed)
	}
	a, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return nil, false, fmt.Errorf("WITH ROLLUP: %T", sel.SelectExprs[0])
	}
	return a.Expr, true, nil
}

// replaceExpr replaces from with to wherever stmt holds it: in a WHERE
// or HAVING, a select item, an ORDER BY item or a join's ON.
func replaceExpr(stmt ast.Statement, from, to ast.Expr) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		// The walk visits a clause a statement does not have as a
		// nil pointer of its type.
		switch n := node.(type) {
		case *ast.Where:
			if n != nil && n.Expr != nil {
				n.Expr = ast.ReplaceExpr(n.Expr, from, to)
			}
		case *ast.AliasedExpr:
			if n != nil && n.Expr != nil {
				n.Expr = ast.ReplaceExpr(n.Expr, from, to)
			}
		case *ast.Order:
			if n != nil && n.Expr != nil {
				n.Expr = ast.ReplaceExpr(n.Expr, from, to)
			}
		case *ast.JoinTableExpr:
			if n != nil && n.Condition.On != nil {
				n.Condition.On = ast.ReplaceExpr(n.Condition.On, from, to)
			}
		}
		return true, nil
	}, stmt)
}

// isRollupMarked reports whether s's last grouping item is the marker.
func isRollupMarked(s *ast.Select) bool {
	if len(s.GroupBy) == 0 {
		return false
	}
	f, ok := s.GroupBy[len(s.GroupBy)-1].(*ast.FuncExpr)
	return ok && f.Name.Lowered() == rollupMarker && len(f.Exprs) == 0 && f.Qualifier.IsEmpty()
}

// rollupSelect returns the SELECT that computes s's rollup.
func rollupSelect(s *ast.Select) (*ast.Select, error) {
	if s.Into != nil {
		return nil, errNotSupportedYet("WITH ROLLUP and INTO")
	}
	items := make([]*ast.AliasedExpr, len(s.SelectExprs))
	names := make([]string, len(s.SelectExprs))
	for i, se := range s.SelectExprs {
		a, ok := se.(*ast.AliasedExpr)
		if !ok {
			return nil, errNotSupportedYet("WITH ROLLUP and *")
		}
		items[i] = a
		switch {
		case !a.As.IsEmpty():
			names[i] = a.As.String()
		case a.InputExpression != "":
			names[i] = a.InputExpression
		default:
			names[i] = ast.String(a.Expr)
		}
	}
	groups := rollupGroups(s, items)
	if err := groupingArguments(s, items, groups); err != nil {
		return nil, err
	}
	k := len(groups)
	groupText := make([]string, k)
	for i, g := range groups {
		groupText[i] = ast.String(g)
	}
	// The ORDER BY: each item a select item's column or a hidden one.
	var orderBy []string
	var hidden []int // indexes into s.OrderBy of the hidden columns
	for _, o := range s.OrderBy {
		col := ""
		if i := selectItemOf(o.Expr, items); i >= 0 {
			col = fmt.Sprintf("percdb_rc%d", i+1)
		} else {
			hidden = append(hidden, len(orderBy))
			col = fmt.Sprintf("percdb_ro%d", len(hidden))
		}
		orderBy = append(orderBy, col+" "+o.Direction)
	}
	for i := 1; i <= k; i++ {
		orderBy = append(orderBy, fmt.Sprintf("percdb_rg%d", i), fmt.Sprintf("percdb_rk%d", i))
	}

	levels, err := rollupLevels(s, groupText, hidden)
	if err != nil {
		return nil, err
	}

	var b strings.Builder
	b.WriteString(ast.String(s.With))
	b.WriteString("select ")
	if s.QueryOpts.Distinct {
		b.WriteString("distinct ")
	}
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "percdb_rc%d as `%s`", i+1, strings.ReplaceAll(name, "`", "``"))
	}
	b.WriteString(" from (" + strings.Join(levels, " union all ") + ") as percdb_rollup")
	b.WriteString(" order by " + strings.Join(orderBy, ", "))
	b.WriteString(ast.String(s.Limit))
	b.WriteString(s.Lock)
	parsed, err := ast.Parse(b.String())
	if err != nil {
		return nil, fmt.Errorf("WITH ROLLUP: %w", err)
	}
	r, ok := parsed.(*ast.Select)
	if !ok {
		return nil, fmt.Errorf("WITH ROLLUP: %T", parsed)
	}
	return r, nil
}

// rollupLevels returns the SELECTs of s's levels, finest first (see the
// comment at the top of the file): groupText are the grouping
// expressions' text, hidden the positions in s.OrderBy of the ORDER BY
// items that are no select item.
func rollupLevels(s *ast.Select, groupText []string, hidden []int) ([]string, error) {
	k := len(groupText)
	levels := make([]string, 0, k+1)
	for j := k; j >= 0; j-- {
		// A copy of s to substitute in: this level's expressions.
		c, err := cloneSelect(s)
		if err != nil {
			return nil, err
		}
		cItems := make([]*ast.AliasedExpr, len(c.SelectExprs))
		for i, se := range c.SelectExprs {
			cItems[i] = se.(*ast.AliasedExpr)
		}
		cGroups := rollupGroups(c, cItems)
		rolled := cGroups[j:]
		var b strings.Builder
		b.WriteString("select ")
		for i, a := range cItems {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s as percdb_rc%d", ast.String(rollupSubstitute(a.Expr, rolled, nil)), i+1)
		}
		for n, h := range hidden {
			fmt.Fprintf(&b, ", %s as percdb_ro%d", ast.String(rollupSubstitute(c.OrderBy[h].Expr, rolled, cItems)), n+1)
		}
		for i := 0; i < k; i++ {
			if i < j {
				fmt.Fprintf(&b, ", 0 as percdb_rg%d, %s as percdb_rk%d", i+1, groupText[i], i+1)
			} else {
				fmt.Fprintf(&b, ", 1 as percdb_rg%d, null as percdb_rk%d", i+1, i+1)
			}
		}
		if c.From != nil {
			b.WriteString(" from " + ast.String(c.From))
		}
		b.WriteString(ast.String(c.Where))
		if j > 0 {
			b.WriteString(" group by " + strings.Join(groupText[:j], ", "))
		}
		var having []string
		if c.Having != nil && c.Having.Expr != nil {
			h := rollupSubstitute(aliasesAsColumns(c.Having.Expr, cItems), rolled, cItems)
			having = append(having, "("+ast.String(h)+")")
		}
		if j == 0 {
			having = append(having, "count(*) > 0")
		}
		if len(having) > 0 {
			b.WriteString(" having " + strings.Join(having, " and "))
		}
		levels = append(levels, b.String())
	}
	return levels, nil
}

// MySQL's errors for GROUPING(): outside the select list, HAVING and
// ORDER BY of a SELECT ... WITH ROLLUP (in a WHERE, or without ROLLUP)
// it is ER_INVALID_GROUP_FUNC_USE; an argument that is not one of the
// grouping expressions, ER_FIELD_IN_GROUPING_NOT_GROUP_BY (counted from
// 1). The parser's errors reach the client through GMS as messages,
// which sql/errors.go gives these codes.
const (
	msgInvalidGroupFuncUse = "Invalid use of group function"
	msgGroupingNotGroupBy  = "Argument #%d of GROUPING function is not in GROUP BY"
)

// groupingArguments returns ER_FIELD_IN_GROUPING_NOT_GROUP_BY for the
// first argument of a GROUPING() in s's select list, HAVING or ORDER BY
// (outside subqueries) that is none of groups (the same expression, or
// in HAVING and ORDER BY a select item's alias naming one), nil if none.
func groupingArguments(s *ast.Select, items []*ast.AliasedExpr, groups []ast.Expr) error {
	var err error
	var aliases []*ast.AliasedExpr // the items whose aliases the clause reads
	visit := func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			if n.Name.Lowered() != "grouping" || !n.Qualifier.IsEmpty() {
				return true, nil
			}
			for i, a := range n.Exprs {
				ae, ok := a.(*ast.AliasedExpr)
				if ok && isGroupExpr(ae.Expr, aliases, groups) {
					continue
				}
				if err == nil {
					err = fmt.Errorf(msgGroupingNotGroupBy, i+1)
				}
				return false, nil
			}
			return false, nil
		}
		return err == nil, nil
	}
	for _, a := range items {
		_ = ast.Walk(visit, a.Expr)
	}
	aliases = items
	if s.Having != nil && s.Having.Expr != nil {
		_ = ast.Walk(visit, s.Having.Expr)
	}
	for _, o := range s.OrderBy {
		_ = ast.Walk(visit, o.Expr)
	}
	return err
}

// isGroupExpr reports whether e is one of groups, or a select item's
// alias naming one.
func isGroupExpr(e ast.Expr, items []*ast.AliasedExpr, groups []ast.Expr) bool {
	for _, g := range groups {
		if sameRollupExpr(e, g) {
			return true
		}
	}
	if c, ok := e.(*ast.ColName); ok && c.Qualifier.IsEmpty() {
		if i := selectItemNamed(e, items); i >= 0 {
			for _, g := range groups {
				if sameRollupExpr(items[i].Expr, g) {
					return true
				}
			}
		}
	}
	return false
}

// groupingOutsideRollup returns ER_INVALID_GROUP_FUNC_USE when stmt
// (query's) still has a GROUPING() once its rollups are rewritten (a
// rollup's select list, HAVING and ORDER BY have theirs made constants):
// in a WHERE, a GROUP BY, or a SELECT without ROLLUP. MySQL reserves
// the word, so no function of a user's is called so.
func groupingOutsideRollup(stmt ast.Statement, query string) error {
	if stmt == nil || !containsFoldASCII(query, "grouping") {
		return nil
	}
	found := false
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if f, ok := node.(*ast.FuncExpr); ok && f.Name.Lowered() == "grouping" && f.Qualifier.IsEmpty() {
			found = true
		}
		return !found, nil
	}, stmt)
	if found {
		return errors.New(msgInvalidGroupFuncUse)
	}
	return nil
}

// rollupGroups returns s's grouping expressions without the marker, a
// position or an alias read as the select item it names.
func rollupGroups(s *ast.Select, items []*ast.AliasedExpr) []ast.Expr {
	groups := make([]ast.Expr, 0, len(s.GroupBy)-1)
	for _, g := range s.GroupBy[:len(s.GroupBy)-1] {
		if i := selectItemNamed(g, items); i >= 0 {
			g = items[i].Expr
		}
		groups = append(groups, g)
	}
	return groups
}

// selectItemNamed returns the index of the select item e names by
// position (an integer) or by alias (an unqualified name), -1 if none.
func selectItemNamed(e ast.Expr, items []*ast.AliasedExpr) int {
	switch e := e.(type) {
	case *ast.SQLVal:
		if e.Type != ast.IntVal {
			return -1
		}
		n, err := strconv.Atoi(string(e.Val))
		if err != nil || n < 1 || n > len(items) {
			return -1
		}
		return n - 1
	case *ast.ColName:
		if !e.Qualifier.IsEmpty() {
			return -1
		}
		for i, a := range items {
			if !a.As.IsEmpty() && a.As.Lowered() == e.Name.Lowered() {
				return i
			}
		}
	}
	return -1
}

// selectItemOf returns the index of the select item an ORDER BY item e
// is: by position, alias or the same expression; -1 if none.
func selectItemOf(e ast.Expr, items []*ast.AliasedExpr) int {
	if i := selectItemNamed(e, items); i >= 0 {
		return i
	}
	for i, a := range items {
		if sameRollupExpr(e, a.Expr) {
			return i
		}
	}
	return -1
}

// sameRollupExpr reports whether a and b are the same expression: the
// same column (a qualifier on one side only matches), or the same text
// but for case.
func sameRollupExpr(a, b ast.Expr) bool {
	ca, okA := a.(*ast.ColName)
	cb, okB := b.(*ast.ColName)
	if okA && okB {
		if !ca.Name.Equal(cb.Name) {
			return false
		}
		qa, qb := ca.Qualifier.Name.String(), cb.Qualifier.Name.String()
		return qa == "" || qb == "" || strings.EqualFold(qa, qb)
	}
	return strings.EqualFold(ast.String(a), ast.String(b))
}

// rollupSubstitute returns e with the expressions of rolled NULL outside
// aggregates and subqueries, and GROUPING(...) the mask of its
// arguments rolled up, an argument that is the alias of one of items
// (in HAVING and ORDER BY, where MySQL reads aliases; nil elsewhere)
// read as its expression. It changes e in place.
func rollupSubstitute(e ast.Expr, rolled []ast.Expr, items []*ast.AliasedExpr) ast.Expr {
	isRolled := func(x ast.Expr) bool {
		for _, r := range rolled {
			if sameRollupExpr(x, r) {
				return true
			}
		}
		return false
	}
	type swap struct{ from, to ast.Expr }
	var swaps []swap
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery, *ast.GroupConcatExpr:
			return false, nil
		case *ast.FuncExpr:
			name := n.Name.Lowered()
			if name == "grouping" && n.Qualifier.IsEmpty() {
				mask := 0
				for _, a := range n.Exprs {
					mask <<= 1
					ae, ok := a.(*ast.AliasedExpr)
					if !ok {
						continue
					}
					x := ae.Expr
					if c, ok := x.(*ast.ColName); ok && items != nil && c.Qualifier.IsEmpty() {
						if i := selectItemNamed(c, items); i >= 0 {
							x = items[i].Expr
						}
					}
					if isRolled(x) {
						mask |= 1
					}
				}
				swaps = append(swaps, swap{n, ast.NewIntVal([]byte(strconv.Itoa(mask)))})
				return false, nil
			}
			if rollupAggregates[name] {
				return false, nil
			}
		}
		if x, ok := node.(ast.Expr); ok && isRolled(x) {
			swaps = append(swaps, swap{x, &ast.NullVal{}})
			return false, nil
		}
		return true, nil
	}, e)
	for _, s := range swaps {
		e = ast.ReplaceExpr(e, s.from, s.to)
	}
	return e
}

// aliasesAsColumns returns e, a HAVING, with each unqualified name of
// a select item's alias, outside subqueries, written as that item's
// column in a level (percdb_rcN), whose value the level has computed
// with the rolled-up expressions NULL. It changes e in place.
func aliasesAsColumns(e ast.Expr, items []*ast.AliasedExpr) ast.Expr {
	var names []*ast.ColName
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			// GROUPING's arguments name what is rolled up
			// (rollupSubstitute reads an alias there).
			if n.Name.Lowered() == "grouping" && n.Qualifier.IsEmpty() {
				return false, nil
			}
		case *ast.ColName:
			names = append(names, n)
		}
		return true, nil
	}, e)
	for _, n := range names {
		if i := selectItemNamed(n, items); i >= 0 {
			e = ast.ReplaceExpr(e, n, &ast.ColName{Name: ast.NewColIdent(fmt.Sprintf("percdb_rc%d", i+1))})
		}
	}
	return e
}

// cloneSelect returns a copy of s that shares no node with it, by its
// text.
func cloneSelect(s *ast.Select) (*ast.Select, error) {
	parsed, err := ast.Parse(ast.String(s))
	if err != nil {
		return nil, fmt.Errorf("WITH ROLLUP: %w", err)
	}
	c, ok := parsed.(*ast.Select)
	if !ok {
		return nil, fmt.Errorf("WITH ROLLUP: %T", parsed)
	}
	return c, nil
}
