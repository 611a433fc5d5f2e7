package difftest

import (
	"fmt"
	"strings"
)

// The application shapes (-difftest.apps N per seed): constructs
// applications write often that the narrow and wide queries do not
// draw. They come from a stream of their own, so the other queries and
// data changes of a seed stay what they were:
//
//   - recursive CTEs: a sequence joined to a table, and a walk along
//     c9 -> a (a parent pointer) with a depth bound;
//   - GROUP BY ... WITH ROLLUP, GROUP BY an expression, aggregates of
//     expressions (SUM(CASE ...), COUNT(DISTINCT x, y), SUM(DISTINCT)),
//     GROUP_CONCAT with ORDER BY and SEPARATOR;
//   - LIMIT in subqueries: a derived table with ORDER BY ... LIMIT, a
//     scalar subquery with ORDER BY ... LIMIT 1, an IN subquery over
//     such a derived table (MySQL refuses LIMIT in an IN subquery
//     itself, 1235: drawn too, both servers must refuse it);
//   - ANY/SOME/ALL subqueries;
//   - ORDER BY a column not selected, with LIMIT;
//   - a CTE used twice (joined to itself);
//   - data changes: INSERT [IGNORE] ... SELECT from another table (ON
//     DUPLICATE KEY UPDATE from a literal or the selected row), REPLACE
//     ... SELECT, UPDATE and DELETE with ORDER BY ... LIMIT, UPDATE of
//     two tables of a join, UPDATE through a LEFT JOIN and from a
//     grouped derived table, DELETE from one or both tables of a join
//     (with aliases, DELETE ... FROM and DELETE FROM ... USING), DELETE
//     WHERE EXISTS and UPDATE WHERE ... IN (SELECT ...) ORDER BY ...
//     LIMIT.
//
// Every ORDER BY that a LIMIT cuts ends with the primary key, so that
// the rows kept are defined.

// appQuery draws a query of an application shape.
func (g *gen) appQuery() *query {
	switch g.pick(11) {
	case 0:
		return g.recursiveSeq()
	case 1:
		return g.recursiveWalk()
	case 2:
		return g.rollupQuery()
	case 3:
		return g.exprGroupQuery()
	case 4:
		return g.limitedDerived()
	case 5:
		return g.limitedScalar()
	case 6:
		return g.limitedIn()
	case 7:
		return g.quantified()
	case 8:
		return g.orderByHidden()
	case 9:
		return g.cteTwice()
	default:
		return g.groupConcat()
	}
}

// pkOf is the primary key columns of t under alias.
func pkOf(t *table, alias string) []string {
	var pk []string
	for _, p := range t.pk {
		pk = append(pk, alias+"."+t.cols[p].name)
	}
	return pk
}

// recursiveSeq is a sequence 1..n from a recursive CTE, left joined to a
// table on c9 and counted per step.
func (g *gen) recursiveSeq() *query {
	t := g.table()
	n := 2 + g.pick(6)
	nc, _ := g.col([]source{{t, "x1"}})
	q := &query{
		with:    fmt.Sprintf("RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < %d)", n),
		items:   []string{"seq.n", "COUNT(x1.a)", fmt.Sprintf("MAX(%s)", nc)},
		from:    "seq",
		joins:   []string{fmt.Sprintf("LEFT JOIN %s x1 ON x1.c9 = seq.n", t.name)},
		groupBy: []string{"seq.n"},
		srcs:    []source{{t, "x1"}},
	}
	if g.pick(2) == 0 {
		q.joins[0] += " AND " + g.pred([]source{{t, "x1"}}, nil, 0)
	}
	return q
}

// recursiveWalk follows c9 as a pointer to a from each row a predicate
// picks, at most a few steps (rows may point in a cycle).
func (g *gen) recursiveWalk() *query {
	t := g.table()
	start := g.pred([]source{{t, t.name}}, nil, 0)
	depth := 1 + g.pick(4)
	val, _ := g.col([]source{{t, "x"}})
	w := fmt.Sprintf("RECURSIVE walk (a, c9, v, depth) AS ("+
		"SELECT %[1]s.a, %[1]s.c9, %[2]s, 0 FROM %[1]s WHERE %[3]s "+
		"UNION ALL SELECT x.a, x.c9, %[4]s, walk.depth + 1 FROM %[1]s x JOIN walk ON x.a = walk.c9 WHERE walk.depth < %[5]d)",
		t.name, t.name+"."+strings.TrimPrefix(val, "x."), start, val, depth)
	q := &query{with: w, from: "walk"}
	switch g.pick(3) {
	case 0:
		q.items = []string{"walk.a", "walk.c9", "walk.v", "walk.depth"}
	case 1:
		q.items = []string{"walk.depth", "COUNT(*)", "COUNT(DISTINCT walk.a)"}
		q.groupBy = []string{"walk.depth"}
	default:
		q.distinct = true
		q.items = []string{"walk.a", "walk.v"}
	}
	return q
}

// groupSelect is the FROM and WHERE of a grouped query: one table, or
// two joined.
func (g *gen) groupSelect() *query {
	t := g.table()
	srcs := []source{{t, "x1"}}
	q := &query{from: t.name + " x1"}
	if g.pick(3) == 0 {
		g.addJoin(q, &srcs)
	}
	q.srcs = srcs
	if g.pick(2) == 0 {
		q.where = append(q.where, g.pred(srcs, nil, 1))
	}
	return q
}

// aggOf is an aggregate of a column of srcs.
func (g *gen) aggOf(srcs []source) string {
	c, col := g.col(srcs)
	aggs := []string{"COUNT(*)", "COUNT(%s)", "MIN(%s)", "MAX(%s)", "COUNT(DISTINCT %s)"}
	if col.kind.numeric() {
		aggs = append(aggs, "SUM(%s)", "AVG(%s)", "SUM(DISTINCT %s)")
	}
	return strings.ReplaceAll(aggs[g.pick(len(aggs))], "%s", c)
}

// rollupQuery is GROUP BY one or two columns WITH ROLLUP.
func (g *gen) rollupQuery() *query {
	q := g.groupSelect()
	a, _ := g.col(q.srcs)
	q.groupBy = []string{a}
	if g.pick(2) == 0 {
		if b, _ := g.col(q.srcs); b != a {
			q.groupBy = append(q.groupBy, b)
		}
	}
	q.items = append(append([]string(nil), q.groupBy...), "COUNT(*)", g.aggOf(q.srcs))
	q.groupBy[len(q.groupBy)-1] += " WITH ROLLUP"
	if g.pick(3) == 0 {
		q.having = fmt.Sprintf("COUNT(*) > %d", g.pick(3))
	}
	return q
}

// exprGroupQuery groups by an expression (by its alias or position) and
// aggregates expressions.
func (g *gen) exprGroupQuery() *query {
	q := g.groupSelect()
	c, col := g.col(q.srcs)
	var key string
	switch {
	case col.kind.numeric():
		key = []string{"%s DIV 2", "%s > 1", "FLOOR(%s)", "COALESCE(%s, -9)"}[g.pick(4)]
	case col.kind.str():
		key = []string{"LEFT(%s, 1)", "UPPER(%s)", "CHAR_LENGTH(%s)", "%s LIKE 'a%%'"}[g.pick(4)]
	default:
		key = []string{"YEAR(%s)", "MONTH(%s)", "DATE(%s)", "%s > '2020-01-01'"}[g.pick(4)]
	}
	key = strings.ReplaceAll(strings.ReplaceAll(key, "%s", c), "%%", "%")
	p := g.pred(q.srcs, nil, 0)
	n, ok := g.colOf(q.srcs, kInt)
	if !ok {
		n = "x1.a"
	}
	d, _ := g.col(q.srcs)
	aggs := []string{
		fmt.Sprintf("SUM(CASE WHEN %s THEN 1 ELSE 0 END)", p),
		fmt.Sprintf("COUNT(CASE WHEN %s THEN 1 END)", p),
		fmt.Sprintf("MAX(IF(%s, %s, NULL))", p, n),
		fmt.Sprintf("COUNT(DISTINCT %s, %s)", n, d),
		fmt.Sprintf("SUM(%s * 2 + 1)", n),
		fmt.Sprintf("AVG(DISTINCT %s)", n),
		g.aggOf(q.srcs),
	}
	q.items = []string{key + " AS k", aggs[g.pick(len(aggs))], aggs[g.pick(len(aggs))]}
	if g.pick(2) == 0 {
		q.groupBy = []string{"k"}
	} else {
		q.groupBy = []string{"1"}
	}
	if g.pick(3) == 0 {
		q.having = fmt.Sprintf("COUNT(*) %s %d", cmpOps[g.pick(6)], 1+g.pick(2))
	}
	return q
}

// limitedDerived reads a derived table of the first rows of a table in
// some order, joined to another table or filtered.
func (g *gen) limitedDerived() *query {
	t := g.table()
	in := []source{{t, "d1"}}
	c, _ := g.col(in)
	dir := []string{"", " DESC"}[g.pick(2)]
	order := append([]string{c + dir}, pkOf(t, "d1")...)
	inner := fmt.Sprintf("SELECT d1.a, d1.c9, %s AS v FROM %s d1", c, t.name)
	if g.pick(2) == 0 {
		inner += " WHERE " + g.pred(in, nil, 0)
	}
	inner += fmt.Sprintf(" ORDER BY %s LIMIT %d", strings.Join(order, ", "), 1+g.pick(4))
	if g.pick(3) == 0 {
		inner += fmt.Sprintf(" OFFSET %d", g.pick(3))
	}
	q := &query{from: "(" + inner + ") AS z", items: []string{"z.a", "z.v"}}
	if g.pick(2) == 0 {
		o := g.table()
		q.joins = []string{fmt.Sprintf("%s %s x2 ON x2.c9 = z.c9", []string{"JOIN", "LEFT JOIN"}[g.pick(2)], o.name)}
		oc, _ := g.col([]source{{o, "x2"}})
		q.items = append(q.items, oc)
		q.srcs = []source{{o, "x2"}}
	}
	if g.pick(3) == 0 {
		q.items = []string{"COUNT(*)", "MAX(z.v)"}
	}
	return q
}

// limitedScalar is a scalar subquery with ORDER BY ... LIMIT 1 in the
// select list or WHERE: the latest row of another table with the same
// c9.
func (g *gen) limitedScalar() *query {
	q := g.selectQuery()
	q.orderBy, q.limit, q.ordered, q.distinct = nil, "", false, false
	if len(q.groupBy) > 0 || q.items[0] == "COUNT(*)" {
		q.items, q.groupBy, q.having = []string{q.srcs[0].alias + ".a"}, nil, ""
	}
	t := g.table()
	in := []source{{t, "sl"}}
	c, col := g.col(in)
	dir := []string{"", " DESC"}[g.pick(2)]
	sub := fmt.Sprintf("(SELECT %s FROM %s sl WHERE sl.c9 = %s.c9 ORDER BY %s LIMIT 1)",
		c, t.name, q.srcs[g.pick(len(q.srcs))].alias, strings.Join(append([]string{c + dir}, pkOf(t, "sl")...), ", "))
	if g.pick(2) == 0 {
		q.items = append(q.items, sub)
	} else {
		q.where = append(q.where, fmt.Sprintf("%s %s %s", sub, cmpOps[g.pick(len(cmpOps))], g.lit(col.kind)))
	}
	return q
}

// limitedIn is an IN subquery whose rows a LIMIT cuts: through a
// derived table, as applications write it, or (once in four) directly,
// which MySQL refuses with 1235.
func (g *gen) limitedIn() *query {
	q := g.selectQuery()
	q.orderBy, q.limit, q.ordered = nil, "", false
	c, col := g.col(q.srcs)
	t := g.table()
	in := []source{{t, "li"}}
	sel, ok := g.colOf(in, col.kind)
	if !ok {
		sel = "li.a"
	}
	order := strings.Join(append([]string{sel}, pkOf(t, "li")...), ", ")
	not := []string{"", "NOT "}[g.pick(2)]
	n := 1 + g.pick(3)
	if g.pick(4) == 0 {
		q.where = append(q.where, fmt.Sprintf("%s %sIN (SELECT %s FROM %s li ORDER BY %s LIMIT %d)", c, not, sel, t.name, order, n))
	} else {
		q.where = append(q.where, fmt.Sprintf("%s %sIN (SELECT dv FROM (SELECT %s AS dv FROM %s li ORDER BY %s LIMIT %d) AS dl)", c, not, sel, t.name, order, n))
	}
	return q
}

// quantified compares a column with ANY, SOME or ALL of a subquery,
// correlated half the time.
func (g *gen) quantified() *query {
	q := g.selectQuery()
	c, col := g.col(q.srcs)
	t := g.table()
	in := []source{{t, "qa"}}
	sel, ok := g.colOf(in, col.kind)
	if !ok {
		return q
	}
	where := ""
	if g.pick(2) == 0 {
		where = " WHERE " + g.pred(in, nil, 0)
	} else if g.pick(2) == 0 {
		where = fmt.Sprintf(" WHERE qa.c9 = %s.c9", q.srcs[g.pick(len(q.srcs))].alias)
	}
	quant := []string{"ANY", "SOME", "ALL"}[g.pick(3)]
	q.where = append(q.where, fmt.Sprintf("%s %s %s (SELECT %s FROM %s qa%s)", c, cmpOps[g.pick(6)], quant, sel, t.name, where))
	return q
}

// orderByHidden orders by columns it does not select, then the primary
// key, and keeps the first rows.
func (g *gen) orderByHidden() *query {
	t := g.table()
	srcs := []source{{t, "x1"}}
	q := &query{from: t.name + " x1", srcs: srcs, ordered: true}
	for i := 0; i < 1+g.pick(2); i++ {
		c, _ := g.col(srcs)
		q.items = append(q.items, c)
	}
	if g.pick(2) == 0 {
		q.where = append(q.where, g.pred(srcs, nil, 1))
	}
	h, _ := g.col(srcs)
	dir := []string{"", " DESC"}[g.pick(2)]
	if g.pick(3) == 0 {
		h = "COALESCE(" + h + ", 0)"
	}
	q.orderBy = append([]string{h + dir}, pkOf(t, "x1")...)
	q.limit = fmt.Sprint(1 + g.pick(5))
	if g.pick(2) == 0 {
		q.limit += fmt.Sprintf(" OFFSET %d", g.pick(4))
	}
	return q
}

// cteTwice defines a CTE of a grouped or filtered table and joins it to
// itself.
func (g *gen) cteTwice() *query {
	t := g.table()
	in := []source{{t, "ct"}}
	c, _ := g.col(in)
	var body string
	if g.pick(2) == 0 {
		body = fmt.Sprintf("SELECT ct.c9 AS k, COUNT(*) AS n, MAX(%s) AS m FROM %s ct GROUP BY ct.c9", c, t.name)
	} else {
		body = fmt.Sprintf("SELECT ct.c9 AS k, ct.a AS n, %s AS m FROM %s ct WHERE %s", c, t.name, g.pred(in, nil, 0))
	}
	q := &query{
		with:  "cte AS (" + body + ")",
		from:  "cte c1",
		joins: []string{fmt.Sprintf("%s cte c2 ON c1.k = c2.k", []string{"JOIN", "LEFT JOIN"}[g.pick(2)])},
		items: []string{"c1.k", "c1.n", "c2.m"},
	}
	if g.pick(2) == 0 {
		q.where = []string{"c1.n " + cmpOps[g.pick(6)] + " " + fmt.Sprint(g.pick(3))}
	}
	return q
}

// groupConcat is GROUP_CONCAT in a grouped query, its order fixed by the
// primary key after the value.
func (g *gen) groupConcat() *query {
	t := g.table()
	srcs := []source{{t, "x1"}}
	q := &query{from: t.name + " x1", srcs: srcs}
	gc, _ := g.col(srcs)
	v, col := g.col(srcs)
	for col.kind == kTime {
		v, col = g.col(srcs) // GROUP_CONCAT of TIME: another engineer's (wrong6)
	}
	dir := []string{"", " DESC"}[g.pick(2)]
	order := strings.Join(append([]string{v + dir}, pkOf(t, "x1")...), ", ")
	sep := []string{"", " SEPARATOR '|'", " SEPARATOR ''"}[g.pick(3)]
	agg := fmt.Sprintf("GROUP_CONCAT(%s ORDER BY %s%s)", v, order, sep)
	if col.kind.numeric() && g.pick(3) == 0 {
		agg = fmt.Sprintf("GROUP_CONCAT(DISTINCT %s ORDER BY %s%s)", v, v+dir, sep)
	}
	q.items = []string{gc, agg}
	q.groupBy = []string{gc}
	if g.pick(3) == 0 {
		q.items, q.groupBy = []string{agg}, nil
	}
	if g.pick(2) == 0 {
		q.where = append(q.where, g.pred(srcs, nil, 0))
	}
	return q
}

// appDML draws a data-changing statement of an application shape.
func (g *gen) appDML() string {
	t, _, setCol, where := g.dmlTarget()
	defer func() { g.avoid = nil }()
	o := g.table()
	for i := 0; o == t && i < 4; i++ {
		o = g.table()
	}
	order := strings.Join(append([]string{setCol.name + []string{"", " DESC"}[g.pick(2)]}, pkOf(t, t.name)...), ", ")
	switch g.pick(10) {
	case 0:
		if o == t {
			break
		}
		items := g.insertSelectItems(t, o)
		// Two rows may still meet on a unique secondary key: which
		// is inserted (and which ignored, or updates it) is the
		// order of the SELECT's rows, so the statement orders them
		// by o's primary key, as an application that cares does.
		ins := []string{"INSERT", "INSERT IGNORE"}[g.pick(2)]
		stmt := fmt.Sprintf("%s INTO %s SELECT %s FROM %s o WHERE %s ORDER BY %s", ins, t.name, strings.Join(items, ", "), o.name, g.pred([]source{{o, "o"}}, nil, 0), strings.Join(pkOf(o, "o"), ", "))
		switch g.pick(3) {
		case 0:
			stmt += fmt.Sprintf(" ON DUPLICATE KEY UPDATE %s = %s", setCol.name, g.lit(setCol.kind))
		case 1:
			// The new value from the selected row.
			if s, ok := g.colOfKind([]source{{o, "o"}}, setCol.kind); ok && setCol.nullable {
				stmt += fmt.Sprintf(" ON DUPLICATE KEY UPDATE %s = %s", setCol.name, s)
			}
		case 2:
			if g.upserts && setCol.nullable {
				stmt += " ON DUPLICATE KEY UPDATE " + g.upsertSubquery(t, o, setCol)
			}
		}
		return stmt
	case 1:
		return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s ORDER BY %s LIMIT %d", t.name, setCol.name, g.lit(setCol.kind), where, order, 1+g.pick(3))
	case 2:
		return fmt.Sprintf("DELETE FROM %s WHERE %s ORDER BY %s LIMIT %d", t.name, where, order, 1+g.pick(3))
	case 3:
		if o == t {
			break
		}
		// UPDATE of both tables of a join: each row once, however
		// many rows it joins.
		oc := o.cols[len(o.pk)+g.pick(len(o.cols)-len(o.pk))]
		return fmt.Sprintf("UPDATE %s JOIN %s ON %s.c9 = %s.c9 SET %s.%s = %s, %s.%s = %s WHERE %s",
			t.name, o.name, t.name, o.name, t.name, setCol.name, g.lit(setCol.kind), o.name, oc.name, g.lit(oc.kind), where)
	case 5:
		if o == t {
			break
		}
		// REPLACE ... SELECT, in the source's key order.
		return fmt.Sprintf("REPLACE INTO %s SELECT %s FROM %s o WHERE %s ORDER BY %s", t.name, strings.Join(g.insertSelectItems(t, o), ", "),
			o.name, g.pred([]source{{o, "o"}}, nil, 0), strings.Join(pkOf(o, "o"), ", "))
	case 6:
		if o == t {
			break
		}
		// DELETE of one or both tables of a join, under aliases, in
		// both syntaxes.
		srcs := []source{{t, "a"}, {o, "b"}}
		w := g.pred(srcs, nil, 1)
		targets := []string{"a", "b", "a, b"}[g.pick(3)]
		if g.pick(2) == 0 {
			return fmt.Sprintf("DELETE %s FROM %s AS a JOIN %s AS b ON a.c9 = b.c9 WHERE %s", targets, t.name, o.name, w)
		}
		return fmt.Sprintf("DELETE FROM %s USING %s AS a JOIN %s AS b ON a.c9 = b.c9 WHERE %s", targets, t.name, o.name, w)
	case 7:
		if o == t {
			break
		}
		// UPDATE through a LEFT JOIN: the rows with no match, or
		// every row; a literal, so that which of several joined rows
		// is first does not matter.
		srcs := []source{{t, "a"}, {o, "b"}}
		w := "b.a IS NULL"
		if g.pick(2) == 0 {
			w = g.pred(srcs, nil, 1)
		}
		return fmt.Sprintf("UPDATE %s a LEFT JOIN %s b ON a.c9 = b.c9 SET a.%s = %s WHERE %s", t.name, o.name, setCol.name, g.lit(setCol.kind), w)
	case 8:
		if o == t || !setCol.kind.numeric() || setCol.kind == kYear || setCol.kind == kTinyU {
			break
		}
		// UPDATE from a grouped derived table: one row a key.
		agg := []string{"COUNT(*)", "MAX(d.a)", "MIN(d.a)"}[g.pick(3)]
		return fmt.Sprintf("UPDATE %s JOIN (SELECT d.c9, %s AS n FROM %s d GROUP BY d.c9) AS g ON %s.c9 = g.c9 SET %s.%s = g.n WHERE %s",
			t.name, agg, o.name, t.name, t.name, setCol.name, where)
	case 9:
		if o == t {
			break
		}
		// DELETE of the rows another table has a match for, by an
		// EXISTS and by a join with ORDER BY ... LIMIT on one table.
		if g.pick(2) == 0 {
			return fmt.Sprintf("DELETE FROM %s WHERE EXISTS (SELECT 1 FROM %s o WHERE o.c9 = %s.c9) AND %s", t.name, o.name, t.name, where)
		}
		return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s.c9 IN (SELECT o.c9 FROM %s o) ORDER BY %s LIMIT %d", t.name, setCol.name, g.lit(setCol.kind), t.name, o.name, order, 1+g.pick(3))
	default:
		if o == t {
			break
		}
		return fmt.Sprintf("DELETE %s, %s FROM %s JOIN %s ON %s.c9 = %s.c9 WHERE %s",
			t.name, o.name, t.name, o.name, t.name, o.name, where)
	}
	return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s ORDER BY %s LIMIT 1", t.name, setCol.name, g.lit(setCol.kind), where, order)
}

// insertSelectItems is the select list of an INSERT (or REPLACE) of
// o's rows into t under new keys: each column from one of o's of the
// same kind (family) or a literal.
func (g *gen) insertSelectItems(t, o *table) []string {
	items := make([]string, len(t.cols))
	for j, c := range t.cols {
		switch {
		case j == 0:
			// One primary key per row of o (b is below 10), so
			// that which of two selected rows comes first
			// (undefined without an ORDER BY) does not decide
			// which one is inserted and which updates it. Two
			// rows may still meet on a unique secondary key.
			key := "o.a"
			if len(o.pk) == 2 {
				key = "o.a * 10 + o.b"
			}
			items[j] = fmt.Sprintf("%s + %d", key, 10+g.pick(3)*10)
		case j < len(t.pk):
			items[j] = "0"
		default:
			if s, ok := g.colOfKind([]source{{o, "o"}}, c.kind); ok && (c.nullable || g.pick(2) == 0) {
				items[j] = s
			} else if s, ok := g.colOf([]source{{o, "o"}}, c.kind); ok && c.nullable && g.pick(2) == 0 {
				items[j] = s
			} else {
				items[j] = c.kind.domain()[g.pick(len(c.kind.domain()))]
			}
		}
	}
	return items
}

// upsertSubquery draws an ON DUPLICATE KEY UPDATE assignment of setCol, a
// nullable column of t, whose value reads o in a subquery correlated with
// the row that met the duplicate: a scalar MAX, an IN or an EXISTS
// (-difftest.upsertsubqueries).
func (g *gen) upsertSubquery(t, o *table, setCol column) string {
	own := t.name + "." + setCol.name
	x, ok := g.colOfKind([]source{{o, "sq"}}, setCol.kind)
	if !ok {
		return fmt.Sprintf("%s = %s", setCol.name, g.lit(setCol.kind))
	}
	switch g.pick(3) {
	case 0:
		return fmt.Sprintf("%s = (SELECT MAX(%s) FROM %s sq WHERE %s <> %s)", setCol.name, x, o.name, x, own)
	case 1:
		return fmt.Sprintf("%s = CASE WHEN %s IN (SELECT %s FROM %s sq WHERE %s IS NOT NULL) THEN %s ELSE %s END",
			setCol.name, own, x, o.name, x, g.lit(setCol.kind), own)
	default:
		return fmt.Sprintf("%s = IF(EXISTS (SELECT 1 FROM %s sq WHERE %s = %s), %s, %s)",
			setCol.name, o.name, x, own, g.lit(setCol.kind), own)
	}
}
