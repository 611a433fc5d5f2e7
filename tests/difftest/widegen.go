package difftest

import (
	"fmt"
	"strings"
)

// The wide constructs: what a gen with wide set draws besides the
// narrow queries of gen.go. They reach parts of the engine the narrow
// queries do not: scalar subqueries in the select list and in HAVING,
// joins of four tables, INTERSECT and EXCEPT, window functions, and the
// string, temporal and DECIMAL functions applications use.

// wideScalar is a select item: a function of a column of srcs chosen by
// the column's type family, or a scalar subquery.
func (g *gen) wideScalar(srcs []source) string {
	n := 6
	if g.wider {
		n = 8
	}
	switch g.pick(n) {
	case 0:
		return g.scalarSubquery(srcs)
	case 1:
		if !g.wider {
			break
		}
		if m, ok := g.mixedCollations(srcs); ok {
			return m
		}
	}
	c, col := g.col(srcs)
	var fns, wider []string
	switch {
	case col.kind.numeric():
		fns = []string{
			"ROUND(%s, 1)", "ROUND(%s)", "TRUNCATE(%s, 1)", "%s * 1.5", "%s / 3", "FLOOR(%s)", "CEIL(%s)",
			"MOD(%s, 2)", "%s DIV 2", "%s - 0.25", "GREATEST(%s, 1)", "LEAST(%s, 2.5)", "SIGN(%s)",
			"IF(%s > 1, 'big', 'small')", "NULLIF(%s, 1)", "%s * %s", "-%s", "CAST(%s AS DECIMAL(6,1))",
			"CAST(%s AS UNSIGNED)", "CAST(%s AS DOUBLE)", "IFNULL(%s, 0.5)", "%s %% 3",
		}
		wider = []string{
			// CASE and IF of mixed types, numbers as strings.
			"CASE WHEN %s > 1 THEN %s ELSE 'x' END", "CASE %s WHEN 1 THEN 'one' WHEN 2 THEN 2.5 ELSE NULL END",
			"IF(%s IS NULL, 'none', %s)", "CONCAT(%s, '')", "LEAST(%s, '10')", "GREATEST(%s, '2')",
			"CASE WHEN %s < 0 THEN -1 WHEN %s = 0 THEN 0.0 ELSE %s END", "LENGTH(%s)",
		}
	case col.kind.str():
		fns = []string{
			"UPPER(%s)", "LOWER(%s)", "SUBSTRING(%s, 2)", "SUBSTRING(%s, 1, 2)", "REPLACE(%s, 'a', 'x')",
			"TRIM(%s)", "LPAD(%s, 4, '*')", "RPAD(%s, 3, '.')", "CONCAT_WS('-', %s, 'z')", "LEFT(%s, 1)",
			"RIGHT(%s, 1)", "REVERSE(%s)", "LOCATE('b', %s)", "INSTR(%s, 'b')", "CHAR_LENGTH(%s)",
			"%s = 'A'", "%s < 'b'", "STRCMP(%s, 'a')", "%s COLLATE utf8mb4_bin = 'A'", "UPPER(%s) = 'AB'",
			"%s LIKE 'A%%'", "ASCII(%s)", "HEX(%s)", "REPEAT(%s, 2)", "FIELD(%s, 'a', 'b')", "%s + 0",
		}
	case col.kind == kTime:
		fns = []string{
			"HOUR(%s)", "MINUTE(%s)", "SECOND(%s)", "TIME_TO_SEC(%s)", "%s + 0", "ADDTIME(%s, '01:00:00')",
			"SUBTIME(%s, '00:30:00')", "TIME_FORMAT(%s, '%%H.%%i')", "CAST(%s AS CHAR)", "%s > '10:00:00'",
			"SEC_TO_TIME(TIME_TO_SEC(%s) + 60)", "CAST(%s AS SIGNED)", "%s + INTERVAL 1 HOUR",
		}
	default:
		fns = []string{
			"YEAR(%s)", "MONTH(%s)", "DAY(%s)", "DAYOFWEEK(%s)", "DATE_ADD(%s, INTERVAL 1 DAY)",
			"DATE_SUB(%s, INTERVAL 1 MONTH)", "DATEDIFF(%s, '2020-01-01')", "DATE_FORMAT(%s, '%%Y/%%m/%%d %%H')",
			"LAST_DAY(%s)", "TIMESTAMPDIFF(DAY, '2020-01-01', %s)", "DATE(%s)", "%s + INTERVAL 1 HOUR",
			"EXTRACT(YEAR_MONTH FROM %s)", "WEEKDAY(%s)", "DAYNAME(%s)", "QUARTER(%s)", "TO_DAYS(%s)",
			"%s + 0", "CAST(%s AS DATE)", "CAST(%s AS DATETIME)", "%s > '2020-01-01'", "DAYOFYEAR(%s)",
			"UNIX_TIMESTAMP(%s) - UNIX_TIMESTAMP('2020-01-01')", "TIME(%s)", "HOUR(%s)",
		}
		wider = []string{
			// Dates as strings, and date arithmetic.
			"CONCAT(%s, '|')", "LENGTH(%s)", "SUBSTRING(%s, 6)", "%s LIKE '%%-29%%'", "LEFT(%s, 7)",
			"TIMESTAMPDIFF(HOUR, '2020-01-01', %s)", "DATE_ADD(%s, INTERVAL 90 MINUTE)", "ADDDATE(%s, 31)",
			"%s - INTERVAL 1 YEAR", "WEEK(%s)", "YEARWEEK(%s)", "MAKEDATE(YEAR(%s), 60)",
			"DATE_ADD(%s, INTERVAL '1:30' HOUR_MINUTE)", "TIMESTAMPADD(MONTH, 1, %s)",
			"CASE WHEN %s > '2020-01-01' THEN %s ELSE 'early' END", "IF(%s IS NULL, 0, %s)",
			"STR_TO_DATE(DATE_FORMAT(%s, '%%d/%%m/%%Y'), '%%d/%%m/%%Y')",
		}
	}
	if g.wider {
		fns = append(fns, wider...)
	}
	f := fns[g.pick(len(fns))]
	// Some use the column twice; %% is a %, as in a format (the lists
	// are written as formats, but this is no Sprintf: "%s %% 3" went
	// out as x %% 3, a syntax error on both servers).
	return strings.ReplaceAll(strings.ReplaceAll(f, "%s", c), "%%", "%")
}

// mixedCollations is a string function or comparison of a utf8mb4_bin
// and a utf8mb4_general_ci column of srcs, when there are both.
func (g *gen) mixedCollations(srcs []source) (string, bool) {
	b, okB := g.colOfKind(srcs, kStrBin)
	c, okC := g.colOfKind(srcs, kStrCI)
	if !okB || !okC {
		return "", false
	}
	fns := []string{
		"CONCAT(%[1]s, %[2]s)", "%[1]s = %[2]s", "%[1]s < %[2]s", "LEAST(%[1]s, %[2]s)", "GREATEST(%[2]s, %[1]s)",
		"CASE WHEN %[1]s IS NULL THEN %[2]s ELSE %[1]s END", "COALESCE(%[2]s, %[1]s)", "STRCMP(%[1]s, %[2]s)",
		"INSTR(%[2]s, %[1]s)", "CONCAT(%[2]s, 'x') = CONCAT(%[1]s, 'X')", "FIELD(%[1]s, %[2]s, 'a')",
	}
	return fmt.Sprintf(fns[g.pick(len(fns))], b, c), true
}

// colOfKind picks a column of kind k from srcs, if there is one.
func (g *gen) colOfKind(srcs []source, k kind) (string, bool) {
	var cands []string
	for _, s := range srcs {
		for _, c := range s.t.cols {
			if c.kind == k {
				cands = append(cands, s.alias+"."+c.name)
			}
		}
	}
	if len(cands) == 0 {
		return "", false
	}
	return cands[g.pick(len(cands))], true
}

// scalarSubquery is a subquery of one value in a select list: an
// aggregate of another table, correlated with srcs half the time.
func (g *gen) scalarSubquery(srcs []source) string {
	t := g.table()
	in := source{t, "sq"}
	ic, icol := g.col([]source{in})
	aggs := []string{"MAX(%s)", "MIN(%s)", "COUNT(%s)", "COUNT(*)"}
	if icol.kind.numeric() {
		aggs = append(aggs, "SUM(%s)", "AVG(%s)")
	}
	agg := strings.ReplaceAll(aggs[g.pick(len(aggs))], "%s", ic)
	where := ""
	if g.pick(2) == 0 {
		if oc, ok := g.colOf(srcs, icol.kind); ok {
			where = fmt.Sprintf(" WHERE %s = %s", ic, oc)
		}
	} else if g.pick(2) == 0 {
		where = " WHERE " + g.pred([]source{in}, nil, 0)
	}
	return fmt.Sprintf("(SELECT %s FROM %s sq%s)", agg, t.name, where)
}

// wideHaving is a HAVING with a subquery, for a query grouped by gc.
func (g *gen) wideHaving(srcs []source, gc string) string {
	t := g.table()
	in := source{t, "hs"}
	switch g.pick(3) {
	case 0:
		return fmt.Sprintf("COUNT(*) >= (SELECT COUNT(*) FROM %s hs WHERE %s)", t.name, g.pred([]source{in}, nil, 0))
	case 1:
		ic, icol := g.col([]source{in})
		_, gcol := g.colNamed(srcs, gc)
		if family(icol.kind) != family(gcol.kind) {
			ic = "hs.a"
		}
		return fmt.Sprintf("%s IN (SELECT %s FROM %s hs)", gc, ic, t.name)
	default:
		return fmt.Sprintf("EXISTS (SELECT 1 FROM %s hs WHERE hs.c9 = COUNT(*))", t.name)
	}
}

// colNamed returns the column "alias.name" of srcs.
func (g *gen) colNamed(srcs []source, ref string) (string, column) {
	alias, name, _ := strings.Cut(ref, ".")
	for _, s := range srcs {
		if s.alias != alias {
			continue
		}
		for _, c := range s.t.cols {
			if c.name == name {
				return ref, c
			}
		}
	}
	return ref, column{name: name, kind: kInt}
}

// wideQuery draws a query of a wide shape, or nil for a narrow one.
func (g *gen) wideQuery() *query {
	switch g.pick(4) {
	case 0:
		return g.windowQuery()
	case 1:
		return g.setOpQuery()
	case 2:
		// Four tables: a narrow query with another join.
		q := g.selectQuery()
		if len(q.joins) < 2 {
			return nil
		}
		srcs := q.srcs
		g.addJoin(q, &srcs)
		return q
	default:
		// A function of a column in WHERE.
		q := g.selectQuery()
		q.where = append(q.where, fmt.Sprintf("COALESCE(%s, 0) %s %s", g.wideScalar(q.srcs), cmpOps[g.pick(6)], g.lit(kInt)))
		return q
	}
}

// windowQuery is a query of one table with window functions. Every
// window that numbers rows orders by the whole primary key, so that the
// answer is defined.
func (g *gen) windowQuery() *query {
	t := g.table()
	srcs := []source{{t, "x1"}}
	var pk []string
	for _, p := range t.pk {
		pk = append(pk, "x1."+t.cols[p].name)
	}
	order := strings.Join(pk, ", ")
	part, _ := g.col(srcs)
	num, ok := g.colOf(srcs, kInt)
	if !ok {
		num = "x1.a"
	}
	val, _ := g.col(srcs)
	fns := []string{
		fmt.Sprintf("ROW_NUMBER() OVER (PARTITION BY %s ORDER BY %s)", part, order),
		fmt.Sprintf("RANK() OVER (ORDER BY %s)", part),
		fmt.Sprintf("DENSE_RANK() OVER (PARTITION BY %s ORDER BY %s)", part, val),
		fmt.Sprintf("SUM(%s) OVER (PARTITION BY %s)", num, part),
		fmt.Sprintf("AVG(%s) OVER (PARTITION BY %s)", num, part),
		fmt.Sprintf("COUNT(*) OVER ()"),
		fmt.Sprintf("COUNT(%s) OVER (PARTITION BY %s)", val, part),
		fmt.Sprintf("LAG(%s) OVER (ORDER BY %s)", val, order),
		fmt.Sprintf("LEAD(%s, 1) OVER (ORDER BY %s)", val, order),
		fmt.Sprintf("FIRST_VALUE(%s) OVER (PARTITION BY %s ORDER BY %s)", val, part, order),
		fmt.Sprintf("SUM(%s) OVER (ORDER BY %s ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)", num, order),
		fmt.Sprintf("SUM(%s) OVER (ORDER BY %s)", num, order),
		fmt.Sprintf("MAX(%s) OVER (PARTITION BY %s)", val, part),
		fmt.Sprintf("MIN(%s) OVER (PARTITION BY %s)", num, part),
	}
	frames := []string{
		// Frames, and the functions that read them.
		fmt.Sprintf("SUM(%s) OVER (PARTITION BY %s ORDER BY %s ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)", num, part, order),
		fmt.Sprintf("AVG(%s) OVER (ORDER BY %s ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)", num, order),
		fmt.Sprintf("COUNT(%s) OVER (ORDER BY %s ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)", val, order),
		fmt.Sprintf("MAX(%s) OVER (ORDER BY %s RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)", num, order),
		fmt.Sprintf("LAST_VALUE(%s) OVER (ORDER BY %s ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)", val, order),
		fmt.Sprintf("NTH_VALUE(%s, 2) OVER (PARTITION BY %s ORDER BY %s ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)", val, part, order),
		fmt.Sprintf("NTILE(2) OVER (ORDER BY %s)", order),
		fmt.Sprintf("CUME_DIST() OVER (ORDER BY %s)", part),
		fmt.Sprintf("PERCENT_RANK() OVER (PARTITION BY %s ORDER BY %s)", part, order),
		// Not LAG's default (a third argument): MariaDB 10.11 refuses it.
		fmt.Sprintf("LAG(%s, 2) OVER (PARTITION BY %s ORDER BY %s)", num, part, order),
	}
	if g.wider {
		fns = append(fns, frames...)
	}
	q := &query{from: t.name + " x1"}
	q.items = append(q.items, pk...)
	for i := 0; i < 1+g.pick(2); i++ {
		q.items = append(q.items, fns[g.pick(len(fns))])
	}
	if g.pick(2) == 0 {
		q.where = append(q.where, g.pred(srcs, nil, 0))
	}
	return q
}

// setOpQuery is a UNION, INTERSECT or EXCEPT of two selects of the same
// number of columns.
func (g *gen) setOpQuery() *query {
	ops := []string{"UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"}
	op := ops[g.pick(len(ops))]
	n := 1 + g.pick(2)
	side := func() *query {
		t := g.table()
		srcs := []source{{t, "x1"}}
		q := &query{from: t.name + " x1"}
		for i := 0; i < n; i++ {
			q.items = append(q.items, g.scalar(srcs))
		}
		if g.pick(2) == 0 {
			q.where = append(q.where, g.pred(srcs, nil, 0))
		}
		return q
	}
	l, r := side(), side()
	l.union = op + " " + r.String()
	return l
}
