package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// sqlMode is set on both servers: MySQL 8's default, percdb's too (so
// that percdb's fast path, which runs under the default only, is tested).
const sqlMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// outcome is what one server answered to one statement.
type outcome struct {
	err      error
	rows     [][]string // values as text, NULL as "NULL"
	affected int64
}

// target is one server with a database of the run's.
type target struct {
	name string
	db   *sql.DB
}

// exec runs a data-changing statement.
func (t *target) exec(ctx context.Context, stmt string) outcome {
	res, err := t.db.ExecContext(ctx, stmt)
	if err != nil {
		return outcome{err: err}
	}
	n, err := res.RowsAffected()
	return outcome{affected: n, err: err}
}

// query runs a query, with args as a prepared statement when given.
func (t *target) query(ctx context.Context, q string, args ...any) outcome {
	rows, err := t.db.QueryContext(ctx, q, args...)
	if err != nil {
		return outcome{err: err}
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return outcome{err: err}
	}
	var out outcome
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return outcome{err: err}
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out.rows = append(out.rows, row)
	}
	out.err = rows.Err()
	return out
}

// tableRows reads a whole table, in primary key order.
func (t *target) tableRows(ctx context.Context, name string) outcome {
	return t.query(ctx, "SELECT * FROM "+name+" ORDER BY 1, 2")
}

// same reports whether two outcomes agree: both failed, or both gave the
// same rows (in the same order when ordered) and affected-row counts.
// Numbers are compared as numbers (1.50 = 1.5, to 1e-9 relative), the
// rest as text.
func same(a, b outcome, ordered bool) bool {
	if (a.err != nil) != (b.err != nil) {
		return false
	}
	if a.err != nil {
		return true
	}
	if a.affected != b.affected || len(a.rows) != len(b.rows) {
		return false
	}
	ra, rb := normRows(a.rows), normRows(b.rows)
	if ordered {
		// The order is compared with letter case folded: rows that a
		// case-insensitive collation sorts as equal ('a' and 'A') may
		// come in either order. The rows themselves are compared below.
		for i := range ra {
			if strings.ToLower(ra[i]) != strings.ToLower(rb[i]) {
				return false
			}
		}
	}
	sort.Strings(ra)
	sort.Strings(rb)
	for i := range ra {
		if ra[i] != rb[i] {
			return false
		}
	}
	return true
}

// normRows renders rows as comparable lines.
func normRows(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		vals := make([]string, len(r))
		for j, v := range r {
			vals[j] = normValue(v)
		}
		out[i] = strings.Join(vals, "\x00")
	}
	return out
}

var numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$`)

// normValue gives a number one spelling: exact decimals without trailing
// zeros, and doubles rounded to 12 significant digits.
func normValue(v string) string {
	if !numberRE.MatchString(v) {
		return v
	}
	if !strings.ContainsAny(v, "e") {
		if r, ok := new(big.Rat).SetString(v); ok {
			f, _ := r.Float64()
			if math.Abs(f) < 1e15 {
				return strconv.FormatFloat(f, 'g', 12, 64)
			}
			return r.RatString()
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	return strconv.FormatFloat(f, 'g', 12, 64)
}

// describe renders an outcome for a report.
func describe(o outcome) string {
	if o.err != nil {
		return "error: " + o.err.Error()
	}
	var b strings.Builder
	if o.affected != 0 {
		fmt.Fprintf(&b, "%d rows affected\n", o.affected)
	}
	for _, r := range o.rows {
		b.WriteString("  " + strings.Join(r, " | ") + "\n")
	}
	if len(o.rows) == 0 && o.affected == 0 {
		b.WriteString("  (no rows)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// literalRE finds the literals of a generated query that become
// parameters of its prepared form: quoted strings and numbers that
// stand alone (not part of a name like t0 or x1, not a LIMIT count, an
// ORDER BY position or a type's length).
var literalRE = regexp.MustCompile(`'(?:[^'\\]|\\.)*'|(?:^|[\s(,=<>])(-?[0-9]+(?:\.[0-9]+)?)`)

// parameterize returns q with its literals as ? and their values. Numbers
// go as int64 or as their text, strings as strings; a query with clauses
// where MySQL takes no parameters keeps them inline.
func parameterize(q string) (string, []any) {
	var args []any
	cut := len(q)
	for _, kw := range []string{" ORDER BY ", " LIMIT ", " GROUP BY ", " HAVING "} {
		if i := strings.Index(q, kw); i >= 0 && i < cut {
			cut = i
		}
	}
	head := literalRE.ReplaceAllStringFunc(q[:cut], func(m string) string {
		if strings.HasPrefix(m, "'") {
			if strings.Contains(m, `\`) || strings.Contains(m, "ESCAPE") {
				return m
			}
			args = append(args, m[1:len(m)-1])
			return "?"
		}
		lead := ""
		num := m
		if c := m[0]; c < '0' || c > '9' {
			if c != '-' {
				lead, num = m[:1], m[1:]
			}
		}
		if i, err := strconv.ParseInt(num, 10, 64); err == nil {
			args = append(args, i)
		} else {
			args = append(args, num)
		}
		return lead + "?"
	})
	// CAST(x AS DECIMAL(?,?)) would be a syntax error.
	if strings.Contains(head, "DECIMAL(?") {
		return q, nil
	}
	return head + q[cut:], args
}
