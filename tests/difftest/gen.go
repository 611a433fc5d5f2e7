package difftest

import (
	"fmt"
	"math/rand"
	"strings"
)

// kind is a column's type family; values and comparisons are drawn per
// kind.
type kind int

const (
	kInt kind = iota
	kBigint
	kDecimal
	kDouble
	kStrBin // VARCHAR under utf8mb4_bin
	kStrCI  // VARCHAR under utf8mb4_general_ci
	kDate
	kDatetime
	// The kinds below are drawn only with -difftest.types, so that the
	// seeds draw the schemas they drew before without it.
	kTinyU // TINYINT UNSIGNED
	kYear  // YEAR
	kChar  // CHAR(5) under utf8mb4_general_ci (trailing spaces dropped)
	kText  // TEXT under utf8mb4_bin (never indexed: a key needs a prefix)
	kTime  // TIME, a family of its own
	numKinds
)

// drawnKinds is the number of kinds genSchema draws columns from: all of
// them with allKinds (-difftest.types).
func drawnKinds(allKinds bool) int {
	if allKinds {
		return int(numKinds)
	}
	return int(kTinyU)
}

func (k kind) sqlType() string {
	switch k {
	case kInt:
		return "INT"
	case kBigint:
		return "BIGINT"
	case kDecimal:
		return "DECIMAL(10,2)"
	case kDouble:
		return "DOUBLE"
	case kStrBin:
		return "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
	case kStrCI:
		return "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
	case kDate:
		return "DATE"
	case kTinyU:
		return "TINYINT UNSIGNED"
	case kYear:
		return "YEAR"
	case kChar:
		return "CHAR(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
	case kText:
		return "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
	case kTime:
		return "TIME"
	default:
		return "DATETIME"
	}
}

func (k kind) numeric() bool { return k <= kDouble || k == kTinyU || k == kYear }
func (k kind) str() bool     { return k == kStrBin || k == kStrCI || k == kChar || k == kText }

// domain is the small set of literals a kind's values come from.
func (k kind) domain() []string {
	switch k {
	case kInt, kBigint:
		return []string{"0", "1", "2", "3", "5", "7", "-1"}
	case kDecimal:
		return []string{"0.00", "1.00", "1.50", "2.00", "2.50", "7.00", "-1.25"}
	case kDouble:
		return []string{"0", "1", "1.5", "2", "2.5", "-0.5", "7"}
	case kStrBin, kStrCI:
		return []string{"'a'", "'A'", "'b'", "'ab'", "'B'", "'a_b'", "'a%b'", "''", "'abc'"}
	case kDate:
		return []string{"'2020-01-01'", "'2020-02-29'", "'1999-12-31'", "'2021-06-15'"}
	case kTinyU:
		return []string{"0", "1", "2", "7", "127", "128", "255"}
	case kYear:
		return []string{"1999", "2000", "2020", "2021", "2155"}
	case kChar:
		return []string{"'a'", "'A'", "'b'", "'ab'", "'a '", "'a_b'", "''", "'abc'"}
	case kText:
		return []string{"'a'", "'A'", "'b'", "'ab'", "'a b'", "'a%b'", "''", "'abc'"}
	case kTime:
		return []string{"'10:30:00'", "'00:00:00'", "'23:59:59'", "'-01:00:00'", "'100:00:00'", "'00:00:01'"}
	default:
		return []string{"'2020-01-01 00:00:00'", "'2020-01-01 10:30:00'", "'2020-02-29 23:59:59'", "'1999-12-31 00:00:00'"}
	}
}

type column struct {
	name     string
	kind     kind
	nullable bool
}

type table struct {
	name string
	cols []column
	pk   []int // column positions of the primary key
	rows [][]string
	idx  []string // index definitions
}

func (t *table) createSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", t.name)
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", c.name, c.kind.sqlType())
		if !c.nullable {
			b.WriteString(" NOT NULL")
		}
	}
	pk := make([]string, len(t.pk))
	for i, p := range t.pk {
		pk[i] = t.cols[p].name
	}
	fmt.Fprintf(&b, ", PRIMARY KEY (%s)", strings.Join(pk, ", "))
	for _, ix := range t.idx {
		b.WriteString(", " + ix)
	}
	b.WriteString(")")
	return b.String()
}

func (t *table) insertSQL(row []string) string {
	return fmt.Sprintf("INSERT IGNORE INTO %s VALUES (%s)", t.name, strings.Join(row, ", "))
}

// schema is one seed's tables.
type schema struct{ tables []*table }

// genSchema makes two or three tables with rows, of every kind with
// allKinds.
func genSchema(r *rand.Rand, allKinds bool) *schema {
	s := &schema{}
	n := 2 + r.Intn(2)
	for ti := 0; ti < n; ti++ {
		t := &table{name: fmt.Sprintf("t%d", ti)}
		// The primary key: a, or (a, b).
		t.cols = append(t.cols, column{name: "a", kind: kInt})
		t.pk = []int{0}
		if r.Intn(3) == 0 {
			t.cols = append(t.cols, column{name: "b", kind: kInt})
			t.pk = append(t.pk, 1)
		}
		ncols := 2 + r.Intn(4)
		for i := 0; i < ncols; i++ {
			k := kind(r.Intn(drawnKinds(allKinds)))
			t.cols = append(t.cols, column{name: fmt.Sprintf("c%d", i), kind: k, nullable: r.Intn(3) > 0})
		}
		// Every table has a nullable INT column c9 so that joins on
		// integers are common.
		t.cols = append(t.cols, column{name: "c9", kind: kInt, nullable: true})
		nonKey := t.cols[len(t.pk):]
		for i := 0; i < r.Intn(3); i++ {
			c := nonKey[r.Intn(len(nonKey))]
			if c.kind == kText {
				continue
			}
			switch r.Intn(3) {
			case 0:
				t.idx = append(t.idx, fmt.Sprintf("KEY i%d (%s)", i, c.name))
			case 1:
				d := nonKey[r.Intn(len(nonKey))]
				if d.name != c.name && d.kind != kText {
					t.idx = append(t.idx, fmt.Sprintf("KEY i%d (%s, %s)", i, c.name, d.name))
				}
			default:
				t.idx = append(t.idx, fmt.Sprintf("UNIQUE KEY u%d (%s)", i, c.name))
			}
		}
		nrows := 3 + r.Intn(10)
		for i := 0; i < nrows; i++ {
			row := make([]string, len(t.cols))
			for j, c := range t.cols {
				switch {
				case j == 0:
					row[j] = fmt.Sprint(i + 1)
					if len(t.pk) == 2 {
						row[j] = fmt.Sprint(i/2 + 1)
					}
				case j == 1 && len(t.pk) == 2:
					row[j] = fmt.Sprint(i % 2)
				case c.nullable && r.Intn(5) == 0:
					row[j] = "NULL"
				default:
					d := c.kind.domain()
					row[j] = d[r.Intn(len(d))]
				}
			}
			t.rows = append(t.rows, row)
		}
		s.tables = append(s.tables, t)
	}
	return s
}

// source is a table of a query's FROM under an alias.
type source struct {
	t     *table
	alias string
}

// query is a SELECT in parts, so that the minimizer can drop them.
type query struct {
	with     string // a CTE definition "name AS (...)", or empty
	distinct bool
	items    []string
	from     string // the first table, "t0 x1"
	joins    []string
	where    []string // conjuncts
	groupBy  []string
	having   string
	orderBy  []string
	limit    string
	union    string   // "UNION [ALL] SELECT ...", appended as is
	ordered  bool     // ORDER BY fixes the order of the whole result
	srcs     []source // the tables of FROM and the joins
}

func (q *query) String() string {
	var b strings.Builder
	if q.with != "" {
		b.WriteString("WITH " + q.with + " ")
	}
	b.WriteString("SELECT ")
	if q.distinct {
		b.WriteString("DISTINCT ")
	}
	b.WriteString(strings.Join(q.items, ", "))
	b.WriteString(" FROM " + q.from)
	for _, j := range q.joins {
		b.WriteString(" " + j)
	}
	if len(q.where) > 0 {
		b.WriteString(" WHERE " + strings.Join(q.where, " AND "))
	}
	if len(q.groupBy) > 0 {
		b.WriteString(" GROUP BY " + strings.Join(q.groupBy, ", "))
	}
	if q.having != "" {
		b.WriteString(" HAVING " + q.having)
	}
	if q.union != "" {
		b.WriteString(" " + q.union)
	}
	if len(q.orderBy) > 0 {
		b.WriteString(" ORDER BY " + strings.Join(q.orderBy, ", "))
	}
	if q.limit != "" {
		b.WriteString(" LIMIT " + q.limit)
	}
	return b.String()
}

// gen draws expressions and queries over a schema.
type gen struct {
	r *rand.Rand
	s *schema
	// avoid is the table a data change writes: MySQL refuses its
	// subqueries reading it (error 1093), so they read another.
	avoid *table
	// wide draws the constructs of widegen.go as well: scalar
	// subqueries in the select list and HAVING, INTERSECT and EXCEPT,
	// window functions, string, temporal and DECIMAL functions. A run's
	// narrow queries draw from their own stream, so that widening the
	// generator does not change them.
	wide bool
	// wider draws the shapes of the seventh round as well (-difftest.wider:
	// CASE and IF of mixed types, dates as strings and date arithmetic,
	// string functions over mixed collations, window frames, INSERT ...
	// SELECT and UPDATE from a subquery or a joined row). Off in the
	// fixed run, whose ceiling was measured without them, until the
	// defects they find are fixed.
	wider bool
	// upserts draws the twenty-third round's ON DUPLICATE KEY UPDATE
	// values with a correlated scalar, IN or EXISTS subquery in the
	// application shapes (-difftest.upsertsubqueries; appDML). Off by default,
	// so that earlier runs of a seed draw the same statements.
	upserts bool
}

func (g *gen) pick(n int) int { return g.r.Intn(n) }

func (g *gen) table() *table { return g.s.tables[g.pick(len(g.s.tables))] }

// col picks a column of one of srcs, returning "alias.name" and it.
func (g *gen) col(srcs []source) (string, column) {
	s := srcs[g.pick(len(srcs))]
	c := s.t.cols[g.pick(len(s.t.cols))]
	return s.alias + "." + c.name, c
}

// colOf picks a column of kind family like k (numbers with numbers,
// strings with strings, dates with dates) from srcs, if there is one.
func (g *gen) colOf(srcs []source, k kind) (string, bool) {
	var cands []string
	for _, s := range srcs {
		for _, c := range s.t.cols {
			if family(c.kind) == family(k) {
				cands = append(cands, s.alias+"."+c.name)
			}
		}
	}
	if len(cands) == 0 {
		return "", false
	}
	return cands[g.pick(len(cands))], true
}

func family(k kind) int {
	switch {
	case k.numeric():
		return 0
	case k.str():
		return 1
	case k == kTime:
		return 3
	default:
		return 2
	}
}

// lit is a literal of kind k, now and then NULL or from another kind of
// the same family.
func (g *gen) lit(k kind) string {
	if g.pick(20) == 0 {
		return "NULL"
	}
	if k.numeric() && g.pick(4) == 0 {
		k = kind(g.pick(int(kDouble) + 1))
	}
	d := k.domain()
	return d[g.pick(len(d))]
}

var cmpOps = []string{"=", "<>", "<", "<=", ">", ">=", "<=>"}

// pred is a random condition over srcs; outer, when given, are the
// sources of an enclosing query a subquery may correlate with.
func (g *gen) pred(srcs, outer []source, depth int) string {
	c, col := g.col(srcs)
	switch n := g.pick(16); {
	case n < 5:
		return fmt.Sprintf("%s %s %s", c, cmpOps[g.pick(len(cmpOps))], g.lit(col.kind))
	case n < 7:
		if d, ok := g.colOf(srcs, col.kind); ok {
			return fmt.Sprintf("%s %s %s", c, cmpOps[g.pick(len(cmpOps))], d)
		}
		return c + " IS NULL"
	case n == 7:
		if g.pick(2) == 0 {
			return c + " IS NULL"
		}
		return c + " IS NOT NULL"
	case n == 8:
		items := make([]string, 1+g.pick(3))
		for i := range items {
			items[i] = g.lit(col.kind)
		}
		not := ""
		if g.pick(2) == 0 {
			not = "NOT "
		}
		return fmt.Sprintf("%s %sIN (%s)", c, not, strings.Join(items, ", "))
	case n == 9:
		return fmt.Sprintf("%s BETWEEN %s AND %s", c, g.lit(col.kind), g.lit(col.kind))
	case n == 10:
		if depth > 0 {
			return fmt.Sprintf("(%s OR %s)", g.pred(srcs, outer, depth-1), g.pred(srcs, outer, depth-1))
		}
		return fmt.Sprintf("NOT (%s)", g.pred(srcs, outer, 0))
	case n == 11:
		s, ok := g.colOf(srcs, kStrBin)
		if !ok {
			return c + " IS NOT NULL"
		}
		pats := []string{"'a%'", "'%b'", "'a\\_b'", "'a\\%b'", "'_'", "'%a%'", "'A%'", "'a|_b' ESCAPE '|'"}
		return fmt.Sprintf("%s LIKE %s", s, pats[g.pick(len(pats))])
	case n == 12:
		// Row constructor.
		d, dc := g.col(srcs)
		ops := []string{"=", "<>", "<", ">=", "IN", "NOT IN"}
		op := ops[g.pick(len(ops))]
		if strings.HasSuffix(op, "IN") {
			return fmt.Sprintf("(%s, %s) %s ((%s, %s), (%s, %s))", c, d, op, g.lit(col.kind), g.lit(dc.kind), g.lit(col.kind), g.lit(dc.kind))
		}
		return fmt.Sprintf("(%s, %s) %s (%s, %s)", c, d, op, g.lit(col.kind), g.lit(dc.kind))
	default:
		if depth <= 0 {
			return fmt.Sprintf("%s %s %s", c, cmpOps[g.pick(len(cmpOps))], g.lit(col.kind))
		}
		return g.subqueryPred(srcs, c, col, depth-1)
	}
}

// subqueryPred is an IN, NOT IN, EXISTS or scalar comparison with a
// subquery, correlated with srcs half the time.
func (g *gen) subqueryPred(srcs []source, c string, col column, depth int) string {
	t := g.table()
	for i := 0; t == g.avoid && i < 4; i++ {
		t = g.table()
	}
	inner := []source{{t, fmt.Sprintf("s%d", depth)}}
	var conds []string
	if g.pick(2) == 0 {
		conds = append(conds, g.pred(inner, nil, 0))
	}
	if g.pick(2) == 0 {
		ic, icol := g.col(inner)
		if oc, ok := g.colOf(srcs, icol.kind); ok {
			conds = append(conds, fmt.Sprintf("%s = %s", ic, oc))
		}
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	sel, ok := g.colOf(inner, col.kind)
	if !ok {
		sel = inner[0].alias + ".a"
	}
	from := fmt.Sprintf("%s %s", t.name, inner[0].alias)
	switch g.pick(5) {
	case 0:
		return fmt.Sprintf("%s IN (SELECT %s FROM %s%s)", c, sel, from, where)
	case 1:
		return fmt.Sprintf("%s NOT IN (SELECT %s FROM %s%s)", c, sel, from, where)
	case 2:
		return fmt.Sprintf("EXISTS (SELECT 1 FROM %s%s)", from, where)
	case 3:
		return fmt.Sprintf("NOT EXISTS (SELECT 1 FROM %s%s)", from, where)
	default:
		aggs := []string{"MAX", "MIN"}
		return fmt.Sprintf("%s %s (SELECT %s(%s) FROM %s%s)", c, cmpOps[g.pick(6)], aggs[g.pick(2)], sel, from, where)
	}
}

// scalar is a select item: a column, or a function of one.
func (g *gen) scalar(srcs []source) string {
	if g.wide && g.pick(2) == 0 {
		return g.wideScalar(srcs)
	}
	c, col := g.col(srcs)
	switch g.pick(12) {
	case 0:
		if col.kind.numeric() {
			return fmt.Sprintf("%s + %s", c, g.lit(kInt))
		}
	case 1:
		return fmt.Sprintf("COALESCE(%s, %s)", c, g.lit(col.kind))
	case 2:
		if col.kind.str() {
			return fmt.Sprintf("CONCAT(%s, 'x')", c)
		}
		if col.kind.numeric() {
			return fmt.Sprintf("ABS(%s)", c)
		}
	case 3:
		casts := []string{"SIGNED", "CHAR", "DECIMAL(10,2)"}
		if col.kind.numeric() {
			return fmt.Sprintf("CAST(%s AS %s)", c, casts[g.pick(len(casts))])
		}
		return fmt.Sprintf("CAST(%s AS CHAR)", c)
	case 4:
		return fmt.Sprintf("CASE WHEN %s THEN 1 ELSE 0 END", g.pred(srcs, nil, 0))
	case 5:
		if col.kind.str() {
			return fmt.Sprintf("LENGTH(%s)", c)
		}
	}
	return c
}

// selectQuery draws a SELECT.
func (g *gen) selectQuery() *query {
	q := &query{}
	t := g.table()
	srcs := []source{{t, "x1"}}
	q.from = t.name + " x1"
	// Joins.
	for i := 0; i < g.pick(3); i++ {
		g.addJoin(q, &srcs)
	}
	q.srcs = srcs
	for i := 0; i < g.pick(4); i++ {
		q.where = append(q.where, g.pred(srcs, nil, 1))
	}
	switch g.pick(6) {
	case 0: // GROUP BY with aggregates
		gc, _ := g.col(srcs)
		nc, ncol := g.col(srcs)
		q.groupBy = []string{gc}
		aggs := []string{"COUNT(*)", fmt.Sprintf("COUNT(%s)", nc), fmt.Sprintf("MIN(%s)", nc), fmt.Sprintf("MAX(%s)", nc), fmt.Sprintf("COUNT(DISTINCT %s)", nc)}
		if ncol.kind.numeric() {
			aggs = append(aggs, fmt.Sprintf("SUM(%s)", nc))
		}
		q.items = []string{gc, aggs[g.pick(len(aggs))], aggs[g.pick(len(aggs))]}
		if g.pick(3) == 0 {
			q.having = fmt.Sprintf("COUNT(*) %s %d", cmpOps[g.pick(6)], g.pick(3))
			if g.wide && g.pick(2) == 0 {
				q.having = g.wideHaving(srcs, gc)
			}
		}
	case 1: // aggregate without GROUP BY
		nc, _ := g.col(srcs)
		q.items = []string{"COUNT(*)", fmt.Sprintf("MAX(%s)", nc), fmt.Sprintf("COUNT(DISTINCT %s)", nc)}
	default:
		for i := 0; i < 1+g.pick(3); i++ {
			q.items = append(q.items, g.scalar(srcs))
		}
		q.distinct = g.pick(4) == 0
		if g.pick(3) == 0 {
			// ORDER BY every select item (by position): the order
			// is fixed up to rows that are equal, then a LIMIT.
			for i := range q.items {
				dir := ""
				if g.pick(2) == 0 {
					dir = " DESC"
				}
				q.orderBy = append(q.orderBy, fmt.Sprintf("%d%s", i+1, dir))
			}
			q.ordered = true
			if g.pick(2) == 0 {
				q.limit = fmt.Sprint(1 + g.pick(4))
				if g.pick(2) == 0 {
					q.limit += fmt.Sprintf(" OFFSET %d", g.pick(3))
				}
			}
		}
	}
	return q
}

// addJoin joins another table to q, on an equality of columns of the
// same family with *srcs, and adds it to *srcs.
func (g *gen) addJoin(q *query, srcs *[]source) {
	jt := g.table()
	alias := fmt.Sprintf("x%d", len(*srcs)+1)
	next := source{jt, alias}
	kinds := []string{"JOIN", "LEFT JOIN", "JOIN"}
	jk := kinds[g.pick(len(kinds))]
	// An equality on columns of the same family, sometimes two
	// (a composite key join), sometimes plus another condition.
	var on []string
	for k := 0; k < 1+g.pick(2); k++ {
		c, col := g.col([]source{next})
		if d, ok := g.colOf(*srcs, col.kind); ok {
			on = append(on, fmt.Sprintf("%s = %s", d, c))
		}
	}
	if len(on) == 0 {
		on = append(on, fmt.Sprintf("%s.c9 = %s.c9", (*srcs)[g.pick(len(*srcs))].alias, alias))
	}
	if g.pick(4) == 0 {
		on = append(on, g.pred([]source{next}, nil, 0))
	}
	q.joins = append(q.joins, fmt.Sprintf("%s %s %s ON %s", jk, jt.name, alias, strings.Join(on, " AND ")))
	*srcs = append(*srcs, next)
}

// query draws a statement to compare: mostly plain SELECTs, also
// UNIONs, derived tables and CTEs around one.
func (g *gen) query() *query {
	if g.wide && g.pick(4) == 0 {
		if q := g.wideQuery(); q != nil {
			return q
		}
	}
	q := g.selectQuery()
	switch g.pick(8) {
	case 0:
		if len(q.groupBy) > 0 || q.orderBy != nil {
			break
		}
		o := g.selectQuery()
		o.orderBy, o.limit, o.ordered = nil, "", false
		if len(o.items) != len(q.items) {
			break
		}
		all := ""
		if g.pick(2) == 0 {
			all = "ALL "
		}
		op := "UNION "
		if g.wide {
			op = []string{"UNION ", "INTERSECT ", "EXCEPT "}[g.pick(3)]
		}
		q.union = op + all + o.String()
	case 1:
		// Derived table: SELECT * FROM (q) AS z WHERE ...
		if q.orderBy != nil {
			break
		}
		for i := range q.items {
			q.items[i] = fmt.Sprintf("%s AS v%d", q.items[i], i)
		}
		inner := q.String()
		return &query{items: []string{"*"}, from: "(" + inner + ") AS z", where: []string{fmt.Sprintf("z.v0 IS NOT NULL OR z.v%d IS NULL", len(q.items)-1)}}
	case 2:
		if q.orderBy != nil {
			break
		}
		for i := range q.items {
			q.items[i] = fmt.Sprintf("%s AS v%d", q.items[i], i)
		}
		return &query{with: "cte AS (" + q.String() + ")", items: []string{"*"}, from: "cte"}
	}
	return q
}

// dmlTarget draws the table a data change writes (kept from its
// subqueries until g.avoid is reset), a column of it to set and a
// condition on it.
func (g *gen) dmlTarget() (*table, []source, column, string) {
	t := g.table()
	g.avoid = t
	srcs := []source{{t, t.name}}
	setCol := t.cols[len(t.pk)+g.pick(len(t.cols)-len(t.pk))]
	return t, srcs, setCol, g.pred(srcs, nil, 1)
}

// dml draws a data-changing statement.
func (g *gen) dml() string {
	t, srcs, setCol, where := g.dmlTarget()
	defer func() { g.avoid = nil }()
	n := 7
	if g.wider {
		n = 10
	}
	switch g.pick(n) {
	case 7:
		// INSERT ... SELECT of the table's own rows: each meets its
		// own key, so each is an update of the duplicate.
		return fmt.Sprintf("INSERT INTO %s SELECT * FROM %s WHERE %s ON DUPLICATE KEY UPDATE %s = %s",
			t.name, t.name, where, setCol.name, g.lit(setCol.kind))
	case 8:
		// UPDATE from a correlated scalar subquery of another table.
		o := g.table()
		if o == t {
			break
		}
		sel, ok := g.colOf([]source{{o, "o"}}, setCol.kind)
		if !ok || !setCol.nullable {
			break
		}
		aggs := []string{"MAX", "MIN"}
		return fmt.Sprintf("UPDATE %s SET %s = (SELECT %s(%s) FROM %s o WHERE o.c9 = %s.c9) WHERE %s",
			t.name, setCol.name, aggs[g.pick(2)], sel, o.name, t.name, where)
	case 9:
		// UPDATE ... JOIN that sets a column from the joined row.
		o := g.table()
		if o == t {
			break
		}
		sel, ok := g.colOf([]source{{o, o.name}}, setCol.kind)
		if !ok || !setCol.nullable {
			break
		}
		return fmt.Sprintf("UPDATE %s JOIN %s ON %s.a = %s.a SET %s.%s = %s WHERE %s",
			t.name, o.name, t.name, o.name, t.name, setCol.name, sel, where)
	case 0:
		return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", t.name, setCol.name, g.lit(setCol.kind), where)
	case 1:
		return fmt.Sprintf("DELETE FROM %s WHERE %s", t.name, where)
	case 2, 3:
		row := make([]string, len(t.cols))
		for j, c := range t.cols {
			if j < len(t.pk) {
				row[j] = fmt.Sprint(1 + g.pick(8))
				continue
			}
			row[j] = g.lit(c.kind)
			if !c.nullable && row[j] == "NULL" {
				row[j] = c.kind.domain()[0]
			}
		}
		if g.pick(2) == 0 {
			return fmt.Sprintf("REPLACE INTO %s VALUES (%s)", t.name, strings.Join(row, ", "))
		}
		return fmt.Sprintf("INSERT INTO %s VALUES (%s) ON DUPLICATE KEY UPDATE %s = %s", t.name, strings.Join(row, ", "), setCol.name, g.lit(setCol.kind))
	case 4:
		o := g.table()
		if o == t {
			break
		}
		return fmt.Sprintf("UPDATE %s JOIN %s ON %s.c9 = %s.c9 SET %s.%s = %s WHERE %s", t.name, o.name, t.name, o.name, t.name, setCol.name, g.lit(setCol.kind), where)
	case 5:
		// Multi-table DELETE: the rows of t that join a row of o.
		o := g.table()
		if o == t {
			break
		}
		c, col := g.col(srcs)
		d, ok := g.colOf([]source{{o, o.name}}, col.kind)
		if !ok {
			d = o.name + ".c9"
			c = t.name + ".c9"
		}
		return fmt.Sprintf("DELETE %s FROM %s JOIN %s ON %s = %s WHERE %s", t.name, t.name, o.name, c, d, where)
	}
	o := g.table()
	for i := 0; o == t && i < 4; i++ {
		o = g.table()
	}
	c, col := g.col(srcs)
	sel, ok := g.colOf([]source{{o, "o"}}, col.kind)
	if !ok {
		sel = "o.a"
	}
	return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s NOT IN (SELECT %s FROM %s o)", t.name, setCol.name, g.lit(setCol.kind), c, sel, o.name)
}
