package difftest

import (
	"fmt"
	"strings"
)

// The rollup shapes (-difftest.rollup N per seed), session 38's round
// on issue 23: GROUP BY ... WITH ROLLUP where applications put it (in a
// derived table, a CTE, under EXISTS correlated with the outer row),
// unions whose first side names two columns alike ordered by position,
// a union side with its own ORDER BY ... LIMIT, and recursive CTEs
// feeding a union. They draw from a stream of their own, after every
// other, so that turning them on changes nothing before. Left out:
// GROUPING() (MariaDB has none) and ORDER BY with ROLLUP (MariaDB
// refuses it, 1221); sql/testdata/values/rollup*.txt hold those.

// rollupShape draws a query of a rollup shape.
func (g *gen) rollupShape() *query {
	switch g.pick(6) {
	case 0:
		return g.existsRollup()
	case 1:
		return g.derivedRollup()
	case 2:
		return g.unionSameNames()
	case 3:
		return g.unionSideLimit()
	case 4:
		return g.recursiveUnion()
	default:
		return g.cteRollup()
	}
}

// rollupOf returns the GROUP BY of one or two columns of srcs, WITH
// ROLLUP, and the columns.
func (g *gen) rollupOf(srcs []source) (string, []string) {
	a, _ := g.col(srcs)
	cols := []string{a}
	if g.pick(2) == 0 {
		if b, _ := g.col(srcs); b != a {
			cols = append(cols, b)
		}
	}
	return strings.Join(cols, ", ") + " WITH ROLLUP", cols
}

// existsRollup is [NOT] EXISTS over a rollup correlated with the outer
// row on c9, now and then with a HAVING.
func (g *gen) existsRollup() *query {
	t := g.table()
	out := []source{{t, "x1"}}
	o := g.table()
	in := []source{{o, "x2"}}
	group, cols := g.rollupOf(in)
	not := []string{"", "NOT "}[g.pick(2)]
	sub := fmt.Sprintf("SELECT %s, COUNT(*) FROM %s x2 WHERE x2.c9 = x1.c9", strings.Join(cols, ", "), o.name)
	if g.pick(2) == 0 {
		sub += " AND " + g.pred(in, nil, 1)
	}
	sub += " GROUP BY " + group
	if g.pick(3) == 0 {
		sub += fmt.Sprintf(" HAVING COUNT(*) > %d", g.pick(3))
	}
	a, _ := g.col(out)
	return &query{
		items: append([]string{a}, pkOf(t, "x1")...),
		from:  t.name + " x1",
		where: []string{not + "EXISTS (" + sub + ")"},
		srcs:  out,
	}
}

// derivedRollup reads a rollup as a derived table, filtering on its
// count and on a rolled-up column being NULL or not.
func (g *gen) derivedRollup() *query {
	t := g.table()
	in := []source{{t, "x2"}}
	group, cols := g.rollupOf(in)
	items := make([]string, len(cols))
	outer := make([]string, len(cols))
	for i, c := range cols {
		items[i] = fmt.Sprintf("%s AS k%d", c, i+1)
		outer[i] = fmt.Sprintf("d.k%d", i+1)
	}
	agg := g.aggOf(in)
	body := fmt.Sprintf("SELECT %s, COUNT(*) AS n, %s AS m FROM %s x2 GROUP BY %s", strings.Join(items, ", "), agg, t.name, group)
	q := &query{
		items: append(outer, "d.n", "d.m"),
		from:  "(" + body + ") d",
	}
	switch g.pick(3) {
	case 0:
		q.where = []string{fmt.Sprintf("d.n > %d", g.pick(3))}
	case 1:
		q.where = []string{fmt.Sprintf("d.k%d IS %sNULL", len(cols), []string{"", "NOT "}[g.pick(2)])}
	}
	return q
}

// unionSameNames is a union whose first side names two columns alike,
// ordered by their positions (and LIMIT now and then): every column is
// in the ORDER BY, so the order is defined.
func (g *gen) unionSameNames() *query {
	t := g.table()
	src := []source{{t, "x1"}}
	a, ca := g.col(src)
	b, ok := g.colOf(src, ca.kind)
	if !ok {
		b = a
	}
	o := g.table()
	osrc := []source{{o, "x2"}}
	c, ok := g.colOf(osrc, ca.kind)
	if !ok {
		c = "NULL"
	}
	d, ok := g.colOf(osrc, ca.kind)
	if !ok {
		d = "NULL"
	}
	name := []string{"v", "V"}[g.pick(2)]
	order := []string{"1", "2"}
	if g.pick(2) == 0 {
		order = []string{"2", "1"}
	}
	for i := range order {
		if g.pick(2) == 0 {
			order[i] += " DESC"
		}
	}
	q := &query{
		items:   []string{a + " AS v", b + " AS " + name},
		from:    t.name + " x1",
		union:   fmt.Sprintf("%s SELECT %s, %s FROM %s x2 WHERE %s", []string{"UNION", "UNION ALL"}[g.pick(2)], c, d, o.name, g.pred(osrc, nil, 1)),
		orderBy: order,
		ordered: true,
		srcs:    src,
	}
	return g.someWhereLimit(q, src, 5)
}

// unionSideLimit is a union whose second side has its own ORDER BY ...
// LIMIT (by its primary key, so the rows kept are defined), the whole
// ordered by every column.
func (g *gen) unionSideLimit() *query {
	t := g.table()
	src := []source{{t, "x1"}}
	a, ca := g.col(src)
	o := g.table()
	osrc := []source{{o, "x2"}}
	c, ok := g.colOf(osrc, ca.kind)
	if !ok {
		c = "NULL"
	}
	side := fmt.Sprintf("(SELECT %s, x2.c9 FROM %s x2 WHERE %s ORDER BY %s LIMIT %d)",
		c, o.name, g.pred(osrc, nil, 1), strings.Join(pkOf(o, "x2"), ", "), 1+g.pick(3))
	q := &query{
		items:   []string{a, "x1.c9"},
		from:    t.name + " x1",
		union:   []string{"UNION", "UNION ALL"}[g.pick(2)] + " " + side,
		orderBy: []string{"1", "2"},
		ordered: true,
		srcs:    src,
	}
	return g.someWhereLimit(q, src, 4)
}

// someWhereLimit gives q, over src, a WHERE half the time and a LIMIT
// of 1 to most half the time.
func (g *gen) someWhereLimit(q *query, src []source, most int) *query {
	if g.pick(2) == 0 {
		q.where = []string{g.pred(src, nil, 1)}
	}
	if g.pick(2) == 0 {
		q.limit = fmt.Sprint(1 + g.pick(most))
	}
	return q
}

// recursiveUnion is a recursive CTE's sequence, twice under one name,
// in a union with a table's c9, ordered by position.
func (g *gen) recursiveUnion() *query {
	t := g.table()
	n := 2 + g.pick(5)
	order := []string{"1", "2 DESC"}
	if g.pick(2) == 0 {
		order = []string{"2", "1 DESC"}
	}
	return &query{
		with:    fmt.Sprintf("RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < %d)", n),
		items:   []string{"n", "n * 2 AS n"},
		from:    "seq",
		union:   fmt.Sprintf("%s SELECT c9, a FROM %s", []string{"UNION", "UNION ALL"}[g.pick(2)], t.name),
		orderBy: order,
		ordered: true,
		limit:   fmt.Sprint(2 + g.pick(6)),
	}
}

// cteRollup is a rollup in a CTE (with a column list or without) joined
// back to a table on its first key.
func (g *gen) cteRollup() *query {
	t := g.table()
	in := []source{{t, "x2"}}
	group, cols := g.rollupOf(in)
	body := fmt.Sprintf("SELECT %s, COUNT(*) FROM %s x2 GROUP BY %s", strings.Join(cols, ", "), t.name, group)
	names := []string{"k1"}
	for i := 2; i <= len(cols); i++ {
		names = append(names, fmt.Sprintf("k%d", i))
	}
	names = append(names, "n")
	o := g.table()
	return &query{
		with:  fmt.Sprintf("r (%s) AS (%s)", strings.Join(names, ", "), body),
		items: []string{"r.k1", "r.n", "x1.c9"},
		from:  "r",
		joins: []string{fmt.Sprintf("LEFT JOIN %s x1 ON x1.c9 = r.n", o.name)},
	}
}
