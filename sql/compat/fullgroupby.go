package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// ONLY_FULL_GROUP_BY, as MySQL 8 enforces it. A grouped query may read a
// column outside an aggregate only when the column is functionally
// dependent on the GROUP BY columns: grouped itself, equal in WHERE (or
// in a join's ON) to a constant or to such a column, or a column of a
// table whose primary key, or a unique key of NOT NULL columns, is. MySQL
// refuses any other with 1055 ("Expression #2 of SELECT list is not in
// GROUP BY clause and contains nonaggregated column 'db.t.b' which is not
// functionally dependent on columns in GROUP BY clause; this is
// incompatible with sql_mode=only_full_group_by"), an aggregate query
// without GROUP BY with 1140, and a DISTINCT query ordered by a column
// it does not select with 3065.
//
// GMS's own check (validateGroupBy) knows no functional dependency, so
// it refused `SELECT id, a FROM t GROUP BY id` (1105 "expression 't.a'
// doesn't appear in the group by expressions"), and it skips every
// GROUP BY under a Project, Having or Sort, so it let most of what MySQL
// refuses through, with an answer picked from any row of the group.
// FullGroupBy replaces it (NoGroupByValidation turns GMS's off).
//
// It runs first, on the plan GMS's builder made (Distinct over Project
// over Sort over Having over GroupBy), and walks every subquery, derived
// table and set operation side from there, since GMS analyzes those
// later with parts of the plan already rewritten. Where the dependency
// is not known it accepts rather than refuse a query MySQL takes: the
// columns of a derived table, CTE or view count as dependent (MySQL
// follows keys through some of them), every equality of a join's ON
// counts (MySQL counts an outer join's only in one direction), HAVING is
// not checked, and a subquery's references to the grouped query's
// columns are not checked.

// MySQL's codes for ONLY_FULL_GROUP_BY.
const (
	codeWrongFieldWithGroup   = 1055 // ER_WRONG_FIELD_WITH_GROUP_V2
	codeMixOfGroupFunc        = 1140 // ER_MIX_OF_GROUP_FUNC_AND_FIELDS_V2
	codeFieldInOrderNotSelect = 3065 // ER_FIELD_IN_ORDER_NOT_SELECT
)

// FullGroupBy is the analyzer rule; see the comment above. It checks the
// statement once, at the top (scope nil).
func FullGroupBy(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if scope != nil || !gsql.LoadSqlMode(ctx).ModeEnabled(gsql.OnlyFullGroupBy) {
		return n, transform.SameTree, nil
	}
	return n, transform.SameTree, checkGroupedNodes(ctx, n)
}

// NoGroupByValidation stands for GMS's validateGroupBy, which
// FullGroupBy replaces.
func NoGroupByValidation(analyzer.RuleFunc) analyzer.RuleFunc {
	return func(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		return n, transform.SameTree, nil
	}
}

// checkGroupedNodes checks each query block of n and of its subqueries.
func checkGroupedNodes(ctx *gsql.Context, n gsql.Node) error {
	var err error
	// inner are the Projects GMS's builder puts between a select list
	// and its GroupBy (the select list's aliases over the grouped
	// columns, and the columns the aggregates above read): not select
	// lists themselves.
	inner := map[*plan.Project]bool{}
	var walk func(n gsql.Node)
	walk = func(n gsql.Node) {
		if err != nil || n == nil {
			return
		}
		switch n := n.(type) {
		case *plan.Project:
			if !inner[n] {
				b, ok := blockUnder(n.Child)
				if ok {
					for _, p := range b.inner {
						inner[p] = true
					}
					err = checkProject(ctx, n, b)
				}
			}
		case *plan.Window:
			// A select list with window functions is not checked
			// (see above); its inner Projects are not select lists.
			if b, ok := blockUnder(n.Child); ok {
				for _, p := range b.inner {
					inner[p] = true
				}
			}
		case *plan.Distinct:
			if p, ok := n.Child.(*plan.Project); ok {
				err = checkDistinctOrder(ctx, p)
			}
		}
		if err != nil {
			return
		}
		if e, ok := n.(gsql.Expressioner); ok {
			for _, x := range e.Expressions() {
				if x == nil {
					continue
				}
				gsql.Inspect(x, func(x gsql.Expression) bool {
					if x == nil {
						return false
					}
					if sq, ok := x.(*plan.Subquery); ok {
						walk(sq.Query)
						return false
					}
					return err == nil
				})
			}
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	return err
}

// groupedBlock is one grouped query block: its GroupBy, the Sort and
// the aliases between it and the select list.
type groupedBlock struct {
	gb      *plan.GroupBy
	sort    *plan.Sort
	aliases map[gsql.ColumnId]gsql.Expression
	inner   []*plan.Project
}

// blockUnder finds the GroupBy under n, the child of a select list,
// through the nodes GMS's builder puts between them.
func blockUnder(n gsql.Node) (groupedBlock, bool) {
	b := groupedBlock{aliases: map[gsql.ColumnId]gsql.Expression{}}
	for {
		switch c := n.(type) {
		case *plan.GroupBy:
			b.gb = c
			return b, true
		case *plan.Sort:
			b.sort = c
			n = c.Child
		case *plan.Having:
			n = c.Child
		case *plan.Project:
			for _, e := range c.Projections {
				if a, ok := e.(*expression.Alias); ok {
					b.aliases[a.Id()] = a.Child
				}
			}
			b.inner = append(b.inner, c)
			n = c.Child
		default:
			return b, false
		}
	}
}

// checkProject checks the select list p of the grouped query block b,
// and its ORDER BY.
func checkProject(ctx *gsql.Context, p *plan.Project, b groupedBlock) error {
	src := newGroupSources(ctx, b.gb.Child)
	closed := src.dependent(b.gb.GroupByExprs)
	implicit := len(b.gb.GroupByExprs) == 0
	grouped := map[string]bool{}
	for _, g := range b.gb.GroupByExprs {
		grouped[strings.ToLower(g.String())] = true
		if a, ok := g.(*expression.Alias); ok {
			grouped[strings.ToLower(a.Child.String())] = true
			closed.Add(a.Id())
		}
	}
	ck := &groupCheck{src: src, closed: closed, grouped: grouped, aliases: b.aliases}
	if implicit && !ck.readsAggregate(p.Projections, b.gb) {
		// Aggregated only by an aggregate elsewhere: one of an outer
		// query's in a subquery's WHERE (`(SELECT hs.a FROM hs WHERE
		// hs.c = COUNT(*))`), which GMS's builder gives the subquery,
		// or one in HAVING. Not checked (see above).
		return nil
	}
	for i, e := range p.Projections {
		if a, ok := e.(*expression.Alias); ok {
			e = a.Child
		}
		if gf := ck.offending(e); gf != nil {
			if implicit {
				return mysql.NewSQLError(codeMixOfGroupFunc, "42000",
					"In aggregated query without GROUP BY, expression #%d of SELECT list contains nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by",
					i+1, fullColumnName(gf))
			}
			return wrongFieldWithGroup("SELECT list", i+1, gf)
		}
	}
	if b.sort == nil || implicit {
		return nil
	}
	for i, f := range b.sort.SortFields {
		if gf := ck.offending(f.Column); gf != nil {
			return wrongFieldWithGroup("ORDER BY clause", i+1, gf)
		}
	}
	return nil
}

// wrongFieldWithGroup is MySQL's 1055 for the n-th expression of the
// clause where, reading gf.
func wrongFieldWithGroup(where string, n int, gf *expression.GetField) error {
	return mysql.NewSQLError(codeWrongFieldWithGroup, "42000",
		"Expression #%d of %s is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by",
		n, where, fullColumnName(gf))
}

// fullColumnName is a column as MySQL's messages name it: db.table.column.
func fullColumnName(gf *expression.GetField) string {
	name := gf.Name()
	if gf.Table() != "" {
		name = gf.Table() + "." + name
		if gf.Database() != "" {
			name = gf.Database() + "." + name
		}
	}
	return name
}

// groupCheck finds the columns of an expression that are not
// functionally dependent on a block's GROUP BY.
type groupCheck struct {
	src     *groupSources
	closed  gsql.ColSet
	grouped map[string]bool
	aliases map[gsql.ColumnId]gsql.Expression
}

// offending returns the first column e reads outside an aggregate that
// is a column of the block's own tables and not dependent on its GROUP
// BY; nil when there is none.
func (c *groupCheck) offending(e gsql.Expression) *expression.GetField {
	var bad *expression.GetField
	var visit func(e gsql.Expression, depth int)
	visit = func(e gsql.Expression, depth int) {
		if e == nil {
			return
		}
		gsql.Inspect(e, func(x gsql.Expression) bool {
			if bad != nil || x == nil || c.grouped[strings.ToLower(x.String())] {
				return false
			}
			switch x := x.(type) {
			case gsql.Aggregation, *plan.Subquery:
				// Aggregates are the group's; a subquery's references are
				// not checked (see above).
				return false
			case *expression.GetField:
				id := x.Id()
				switch {
				case c.closed.Contains(id):
				case c.aliases[id] != nil && depth < 8:
					visit(c.aliases[id], depth+1)
				case c.src.checked.Contains(id):
					bad = x
				}
				return false
			}
			return true
		})
	}
	visit(e, 0)
	return bad
}

// readsAggregate reports whether an expression of exprs reads an
// aggregate of gb (through the block's aliases).
func (c *groupCheck) readsAggregate(exprs []gsql.Expression, gb *plan.GroupBy) bool {
	var aggs gsql.ColSet
	for _, e := range gb.SelectedExprs {
		if a, ok := e.(*expression.Alias); ok {
			e = a.Child
		}
		if _, ok := e.(gsql.Aggregation); !ok {
			continue
		}
		if ie, ok := e.(gsql.IdExpression); ok {
			aggs.Add(ie.Id())
		}
	}
	found := false
	var visit func(e gsql.Expression, depth int)
	visit = func(e gsql.Expression, depth int) {
		if e == nil {
			return
		}
		gsql.Inspect(e, func(x gsql.Expression) bool {
			if found || x == nil {
				return false
			}
			switch x := x.(type) {
			case gsql.Aggregation:
				found = true
			case *plan.Subquery:
				return false
			case *expression.GetField:
				if aggs.Contains(x.Id()) {
					found = true
				} else if c.aliases[x.Id()] != nil && depth < 8 {
					visit(c.aliases[x.Id()], depth+1)
				}
				return false
			}
			return !found
		})
	}
	for _, e := range exprs {
		visit(e, 0)
	}
	return found
}

// groupSources are the tables a GroupBy reads, with what is known of
// their keys, and the equalities of their WHERE and ON conditions.
type groupSources struct {
	// checked are the columns of base tables, which must be dependent;
	// lenient those of derived tables and other row sources.
	checked, lenient gsql.ColSet
	// keys are the column sets that determine a whole table: its
	// primary key and its unique keys of NOT NULL columns.
	keys []tableKey
	// equal are the pairs of columns an equality joins; constant the
	// columns an equality pins to a constant.
	equal    [][2]gsql.ColumnId
	constant gsql.ColSet
}

// tableKey is a key of a table and the table's columns.
type tableKey struct {
	key, all gsql.ColSet
}

// newGroupSources gathers the sources of n, a GroupBy's child, without
// entering subqueries or derived tables.
func newGroupSources(ctx *gsql.Context, n gsql.Node) *groupSources {
	s := &groupSources{}
	var conds []gsql.Expression
	var walk func(n gsql.Node)
	walk = func(n gsql.Node) {
		switch n := n.(type) {
		case *plan.Filter:
			conds = append(conds, n.Expression)
		case *plan.JoinNode:
			if n.Filter != nil {
				conds = append(conds, n.Filter)
			}
		case plan.TableIdNode:
			s.addTable(ctx, n)
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	for _, c := range conds {
		for _, e := range expression.SplitConjunction(c) {
			s.addEquality(e)
		}
	}
	return s
}

// addTable adds a row source: a base table's columns are checked and
// its keys known; any other source's columns are lenient.
func (s *groupSources) addTable(ctx *gsql.Context, n plan.TableIdNode) {
	cols := n.Columns()
	rt := tableUnderAlias(n) // strictpushdown.go
	sch := n.Schema()
	if rt == nil || cols.Len() != len(sch) {
		s.lenient = s.lenient.Union(cols)
		return
	}
	ids := make([]gsql.ColumnId, 0, len(sch))
	cols.ForEach(func(id gsql.ColumnId) { ids = append(ids, id) })
	s.checked = s.checked.Union(cols)
	byName := map[string]int{}
	var pk gsql.ColSet
	for i, c := range sch {
		byName[strings.ToLower(c.Name)] = i
		if c.PrimaryKey {
			pk.Add(ids[i])
		}
	}
	if !pk.Empty() {
		s.keys = append(s.keys, tableKey{key: pk, all: cols})
	}
	it, ok := rt.UnderlyingTable().(gsql.IndexAddressable)
	if !ok {
		return
	}
	idxs, err := it.GetIndexes(ctx)
	if err != nil {
		return // no unique keys known: stricter, never wrong for a primary key
	}
	for _, idx := range idxs {
		if !idx.IsUnique() || idx.IsSpatial() || idx.IsFullText() {
			continue
		}
		var key gsql.ColSet
		usable := true
		for _, e := range idx.Expressions() {
			name := strings.ToLower(e[strings.LastIndexByte(e, '.')+1:])
			i, ok := byName[name]
			if !ok || sch[i].Nullable {
				usable = false
				break
			}
			key.Add(ids[i])
		}
		if usable && !key.Empty() {
			s.keys = append(s.keys, tableKey{key: key, all: cols})
		}
	}
}

// addEquality records e when it is an equality of two columns, or of a
// column and an expression that reads none of the sources' columns.
func (s *groupSources) addEquality(e gsql.Expression) {
	eq, ok := e.(*expression.Equals)
	if !ok {
		return
	}
	l, lok := eq.Left().(*expression.GetField)
	r, rok := eq.Right().(*expression.GetField)
	switch {
	case lok && rok:
		s.equal = append(s.equal, [2]gsql.ColumnId{l.Id(), r.Id()})
	case lok && s.isConstant(eq.Right()):
		s.constant.Add(l.Id())
	case rok && s.isConstant(eq.Left()):
		s.constant.Add(r.Id())
	}
}

// isConstant reports whether e reads no column of the sources and no
// subquery: a constant within one group.
func (s *groupSources) isConstant(e gsql.Expression) bool {
	if e == nil {
		return false
	}
	ok := true
	transform.InspectExpr(e, func(x gsql.Expression) bool {
		switch x := x.(type) {
		case *plan.Subquery:
			ok = false
		case *expression.GetField:
			if s.checked.Contains(x.Id()) || s.lenient.Contains(x.Id()) {
				ok = false
			}
		}
		return !ok
	})
	return ok
}

// dependent returns the columns functionally dependent on the GROUP BY
// expressions groupBy: the closure of the grouped columns, the constant
// ones and the lenient ones under the equalities and keys.
func (s *groupSources) dependent(groupBy []gsql.Expression) gsql.ColSet {
	closed := s.lenient.Union(s.constant)
	for _, g := range groupBy {
		if gf, ok := g.(*expression.GetField); ok {
			closed.Add(gf.Id())
		}
	}
	for changed := true; changed; {
		changed = false
		for _, p := range s.equal {
			a, b := closed.Contains(p[0]), closed.Contains(p[1])
			if a != b {
				closed.Add(p[0])
				closed.Add(p[1])
				changed = true
			}
		}
		for _, k := range s.keys {
			if k.key.SubsetOf(closed) && !k.all.SubsetOf(closed) {
				closed = closed.Union(k.all)
				changed = true
			}
		}
	}
	return closed
}

// checkDistinctOrder is MySQL's 3065 for SELECT DISTINCT … ORDER BY an
// expression reading a column the select list does not give:
// Distinct(Project(Sort …)) as GMS's builder makes it.
func checkDistinctOrder(ctx *gsql.Context, p *plan.Project) error {
	var sort *plan.Sort
	for n := p.Child; sort == nil; {
		switch c := n.(type) {
		case *plan.Sort:
			sort = c
		case *plan.Having:
			n = c.Child
		default:
			return nil
		}
	}
	selected := map[string]bool{}
	var ids gsql.ColSet
	for _, e := range p.Projections {
		selected[strings.ToLower(e.String())] = true
		if a, ok := e.(*expression.Alias); ok {
			selected[strings.ToLower(a.Child.String())] = true
			ids.Add(a.Id())
			e = a.Child
		}
		if gf, ok := e.(*expression.GetField); ok {
			ids.Add(gf.Id())
		}
	}
	src := newGroupSources(ctx, sort.Child)
	for i, f := range sort.SortFields {
		if f.Column == nil {
			continue
		}
		var bad *expression.GetField
		gsql.Inspect(f.Column, func(x gsql.Expression) bool {
			if bad != nil || x == nil || selected[strings.ToLower(x.String())] {
				return false
			}
			switch x := x.(type) {
			case gsql.Aggregation, *plan.Subquery:
				return false
			case *expression.GetField:
				// The rows of a rollup (rollup.go) are made distinct
				// in percdb's own order, by columns it does not select.
				if !ids.Contains(x.Id()) && x.Table() != rollupMarker &&
					(src.checked.Contains(x.Id()) || src.lenient.Contains(x.Id())) {
					bad = x
				}
				return false
			}
			return true
		})
		if bad != nil {
			return mysql.NewSQLError(codeFieldInOrderNotSelect, "HY000",
				"Expression #%d of ORDER BY clause is not in SELECT list, references column '%s' which is not in SELECT list; this is incompatible with DISTINCT",
				i+1, fullColumnName(bad))
		}
	}
	return nil
}
