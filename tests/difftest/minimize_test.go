package difftest

import (
	"fmt"
	"strings"
)

// minimizeQuery shrinks a query that answers differently, and the rows
// it runs on, while it still answers differently: it drops clauses,
// conditions, joins and select items one at a time, then rows one at a
// time. It returns the smallest statement with both answers and leaves
// the tables holding the smallest rows (reproduction prints them) until
// restore.
func (r *run) minimizeQuery(q *query, prepared bool) (string, []any, outcome, outcome) {
	differs := func(c *query) (string, []any, outcome, outcome, bool) {
		text := c.String()
		var args []any
		if prepared {
			text, args = parameterize(text)
		}
		a := r.p.query(r.ctx, text, args...)
		b := r.m.query(r.ctx, text, args...)
		return text, args, a, b, !same(a, b, c.ordered)
	}
	cur := *q
	for changed := true; changed; {
		changed = false
		for _, c := range smallerQueries(&cur) {
			if _, _, _, _, d := differs(c); d {
				cur = *c
				changed = true
				break
			}
		}
	}
	// Rows: drop each while the query still differs.
	rows := make([][][]string, len(r.schema.tables))
	for i, tb := range r.schema.tables {
		rows[i] = append([][]string(nil), tb.rows...)
	}
	for ti := range rows {
		for i := 0; i < len(rows[ti]); {
			try := append(append([][]string(nil), rows[ti][:i]...), rows[ti][i+1:]...)
			r.loadRows(ti, try)
			if _, _, _, _, d := differs(&cur); d {
				rows[ti] = try
				continue
			}
			r.loadRows(ti, rows[ti])
			i++
		}
	}
	r.minRows = rows
	text, args, a, b, _ := differs(&cur)
	return text, args, a, b
}

// smallerQueries returns the queries one step smaller than q.
func smallerQueries(q *query) []*query {
	var out []*query
	add := func(f func(c *query)) {
		c := *q
		c.items = append([]string(nil), q.items...)
		c.joins = append([]string(nil), q.joins...)
		c.where = append([]string(nil), q.where...)
		c.orderBy = append([]string(nil), q.orderBy...)
		f(&c)
		out = append(out, &c)
	}
	if q.union != "" {
		add(func(c *query) { c.union = "" })
	}
	for i := range q.where {
		add(func(c *query) { c.where = append(c.where[:i], c.where[i+1:]...) })
	}
	for i := range q.joins {
		add(func(c *query) { c.joins = append(c.joins[:i], c.joins[i+1:]...) })
		if strings.HasPrefix(q.joins[i], "LEFT JOIN") {
			add(func(c *query) { c.joins[i] = strings.TrimPrefix(c.joins[i], "LEFT ") })
		}
	}
	if q.limit != "" {
		add(func(c *query) { c.limit = "" })
	}
	if len(q.orderBy) > 0 && q.limit == "" {
		add(func(c *query) { c.orderBy, c.ordered = nil, false })
	}
	if q.having != "" {
		add(func(c *query) { c.having = "" })
	}
	if q.distinct {
		add(func(c *query) { c.distinct = false })
	}
	if len(q.items) > 1 && len(q.orderBy) == 0 && q.union == "" {
		for i := range q.items {
			add(func(c *query) { c.items = append(c.items[:i], c.items[i+1:]...) })
		}
	}
	return out
}

// loadRows makes table ti hold rows on both servers.
func (r *run) loadRows(ti int, rows [][]string) {
	tb := r.schema.tables[ti]
	for _, tgt := range []*target{r.p, r.m} {
		tgt.exec(r.ctx, "DELETE FROM "+tb.name)
		for _, row := range rows {
			tgt.exec(r.ctx, tb.insertSQL(row))
		}
	}
}

// restore loads the schema's own rows again after a minimization.
func (r *run) restore() {
	for ti, tb := range r.schema.tables {
		r.loadRows(ti, tb.rows)
	}
	r.minRows = nil
}

// reproduction prints the statements that make the minimized data, and
// restores the full data.
func (r *run) reproduction() string {
	var b strings.Builder
	for ti, tb := range r.schema.tables {
		b.WriteString(tb.createSQL() + ";\n")
		rows := tb.rows
		if r.minRows != nil {
			rows = r.minRows[ti]
		}
		if len(rows) > 0 {
			vals := make([]string, len(rows))
			for i, row := range rows {
				vals[i] = "(" + strings.Join(row, ", ") + ")"
			}
			fmt.Fprintf(&b, "INSERT INTO %s VALUES %s;\n", tb.name, strings.Join(vals, ", "))
		}
	}
	r.restore()
	return b.String()
}
