package difftest

import (
	"fmt"
	"math/rand"
	"strings"
)

// The values round (-difftest.values statements per seed): numbers at
// the edges of their types, on a table of its own (vt) whose columns are
// integers of both signednesses and sizes and DECIMALs. Its statements
// store values a column may not hold (INSERT, INSERT IGNORE, UPDATE with
// arithmetic that leaves the range, strings that are no numbers) under
// a strict sql_mode and without one, and read them back with
// comparisons of signed with unsigned integers, CASTs to DECIMAL(M,D),
// SIGNED and UNSIGNED, integer arithmetic that overflows, and strings
// compared with numbers. Besides the answers, the error codes and, for
// the data changes, the warnings' codes are compared: what MySQL stores
// and says there is all of the answer.

// valuesCol is a column of vt: its name, type and the literals of its
// range's edges.
type valuesCol struct{ name, typ string }

var valuesCols = []valuesCol{
	{"ti", "TINYINT"}, {"tu", "TINYINT UNSIGNED"}, {"i", "INT"}, {"u", "INT UNSIGNED"},
	{"bi", "BIGINT"}, {"bu", "BIGINT UNSIGNED"}, {"d", "DECIMAL(5,2)"}, {"d0", "DECIMAL(6,0)"},
}

// valuesLits are the values drawn for vt's columns: in range of some
// columns and not of others, and strings that are no numbers.
var valuesLits = []string{
	"0", "1", "-1", "7", "127", "128", "-129", "255", "256", "999.99", "-999.99", "1000", "12.345",
	"2147483647", "2147483648", "-2147483649", "4294967295", "4294967296", "9007199254740993",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551615",
	"1.5", "-2.5", "1e3", "'abc'", "'7x'", "' 12 '", "'3.5'", "NULL",
}

// valuesGen draws the values round's statements.
type valuesGen struct {
	r      *rand.Rand
	next   int  // the next primary key an INSERT takes
	upsert bool // draw INSERT ... ON DUPLICATE KEY UPDATE and REPLACE too (-difftest.upserts)
	strs   bool // index more columns and compare them with strings (-difftest.strings)
}

func (g *valuesGen) pick(n int) int { return g.r.Intn(n) }

func (g *valuesGen) col() string { return valuesCols[g.pick(len(valuesCols))].name }

func (g *valuesGen) lit() string { return valuesLits[g.pick(len(valuesLits))] }

// createSQL is vt's definition.
func (g *valuesGen) createSQL() string {
	var cols []string
	for _, c := range valuesCols {
		cols = append(cols, c.name+" "+c.typ)
	}
	keys := "KEY (bu), KEY (bi)"
	if g.strs {
		// Index reads are where GMS converts a string to the
		// column's type (sql/compat/keyconvert.go).
		keys += ", KEY (ti), KEY (tu), KEY (u), KEY (d0), KEY (d, i)"
	}
	return "CREATE TABLE vt (a INT PRIMARY KEY, " + strings.Join(cols, ", ") + ", " + keys + ")"
}

// valuesStrs are strings compared with vt's numeric columns: numbers
// with more digits after the point than a column keeps, beyond a
// column's range, with spaces, an exponent, and no numbers at all.
var valuesStrs = []string{
	"'3.5'", "'1.50'", "'0.5'", "'12.345'", "'-1'", "'1e3'", "' 12 '", "'255.5'", "'300'", "'-129'",
	"'abc'", "'7x'", "''", "'18446744073709551615'", "'-0'", "'2.005'",
}

// strPred is a condition comparing a column of vt with strings
// (-difftest.strings).
func (g *valuesGen) strPred() string {
	str := func() string { return valuesStrs[g.pick(len(valuesStrs))] }
	forms := []string{
		"%[1]s = %[2]s", "%[1]s < %[2]s", "%[1]s >= %[2]s", "%[1]s <=> %[2]s", "%[1]s IN (%[2]s, %[3]s)",
		"%[1]s IN (%[2]s, %[4]s)", "%[1]s NOT IN (%[2]s, %[3]s)", "%[1]s BETWEEN %[2]s AND %[4]s", "%[2]s > %[1]s",
	}
	return fmt.Sprintf(forms[g.pick(len(forms))], g.col(), str(), str(), g.numLit())
}

// seedRows are vt's first rows, each value in its column's range.
func (g *valuesGen) seedRows() []string {
	rows := []string{
		"(1, 0, 0, 0, 0, 0, 0, 0.00, 0)",
		"(2, 127, 255, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615, 999.99, 999999)",
		"(3, -128, 0, -2147483648, 0, -9223372036854775808, 0, -999.99, -999999)",
		"(4, 7, 7, 7, 7, 9007199254740992, 9007199254740993, 1.50, 2)",
		"(5, -1, 1, -1, 1, -1, 1, -1.25, -1)",
		"(6, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
	}
	g.next = len(rows) + 1
	return []string{"INSERT INTO vt VALUES " + strings.Join(rows, ", ")}
}

// mode is a sql_mode for the next statement: strict or not.
func (g *valuesGen) mode() string {
	if g.pick(2) == 0 {
		return sqlMode
	}
	return ""
}

// dml is a data change that may store values vt's columns do not hold.
func (g *valuesGen) dml() string {
	kinds := 3
	if g.upsert {
		kinds = 4
	}
	switch g.pick(kinds) {
	case 3:
		return g.upsertSQL()
	case 0:
		vals := make([]string, len(valuesCols))
		for i := range vals {
			vals[i] = g.lit()
		}
		ignore := ""
		if g.pick(4) == 0 {
			ignore = "IGNORE "
		}
		g.next++
		return fmt.Sprintf("INSERT %sINTO vt VALUES (%d, %s)", ignore, g.next-1, strings.Join(vals, ", "))
	default:
		c := g.col()
		sets := []string{
			c + " + 100", c + " * 1000", c + " - 300", g.lit(), g.col(), c + " * -1", c + " / 3", c + " + 0.5",
		}
		return fmt.Sprintf("UPDATE vt SET %s = %s WHERE %s", c, sets[g.pick(len(sets))], g.pred())
	}
}

// pred is a condition on vt's rows.
func (g *valuesGen) pred() string {
	if g.strs && g.pick(3) == 0 {
		return g.strPred()
	}
	preds := []string{
		"a = %d", "a <= %d", "%[2]s > %[3]s", "%[2]s = %[3]s", "%[2]s IN (%[3]s, %[4]s)", "%[2]s < %[4]s",
		"%[2]s = %[5]s", "%[2]s BETWEEN %[4]s AND %[3]s", "%[2]s IS NULL", "NOT (%[2]s >= %[4]s)",
	}
	return fmt.Sprintf(preds[g.pick(len(preds))], 1+g.pick(g.next), g.col(), g.col(), g.numLit(), g.lit())
}

// numLit is a number of valuesLits.
func (g *valuesGen) numLit() string {
	for {
		l := g.lit()
		if l != "NULL" && !strings.HasPrefix(l, "'") {
			return l
		}
	}
}

// query is a SELECT of expressions over vt's values.
func (g *valuesGen) query() string {
	exprs := []string{
		"%[1]s > %[2]s", "%[1]s = %[2]s", "%[1]s <=> %[2]s", "%[1]s IN (%[2]s, %[3]s)", "%[1]s + %[2]s",
		"%[1]s - %[2]s", "%[1]s * %[2]s", "-%[1]s", "%[1]s DIV 2", "%[1]s %% 7", "CAST(%[1]s AS DECIMAL(%[4]d,%[5]d))",
		"CAST(%[1]s AS SIGNED)", "CAST(%[1]s AS UNSIGNED)", "CAST(%[1]s AS DECIMAL)", "%[1]s = %[3]s",
		"%[1]s < %[3]s", "%[1]s + %[3]s", "ABS(%[1]s)", "GREATEST(%[1]s, %[2]s)", "COALESCE(%[1]s, %[3]s)",
		"CASE WHEN %[1]s > 0 THEN %[1]s ELSE %[2]s END", "%[1]s = '%[6]s'",
	}
	n := 1 + g.pick(3)
	items := []string{"a"}
	for i := 0; i < n; i++ {
		p := 1 + g.pick(8)
		s := g.pick(p + 1)
		strs := []string{"abc", "7x", " 12 ", "1e3", "-1"}
		items = append(items, fmt.Sprintf(exprs[g.pick(len(exprs))], g.col(), g.col(), g.numLit(), p, s, strs[g.pick(len(strs))]))
	}
	return fmt.Sprintf("SELECT %s FROM vt WHERE %s ORDER BY a", strings.Join(items, ", "), g.pred())
}

// upsertSQL is an INSERT ... ON DUPLICATE KEY UPDATE or a REPLACE of a
// row whose key is mostly one vt has: values a column may not hold,
// stored by the assignments (arithmetic that leaves the range, VALUES(c)
// of the row that did not go in, strings that are no numbers) or by the
// REPLACE's new row.
func (g *valuesGen) upsertSQL() string {
	key := 1 + g.pick(g.next)
	if key == g.next {
		g.next++
	}
	vals := make([]string, len(valuesCols))
	for i := range vals {
		vals[i] = g.lit()
	}
	row := fmt.Sprintf("(%d, %s)", key, strings.Join(vals, ", "))
	if g.pick(4) == 0 {
		return "REPLACE INTO vt VALUES " + row
	}
	ignore := ""
	if g.pick(4) == 0 {
		ignore = "IGNORE "
	}
	var sets []string
	for i := 0; i <= g.pick(2); i++ {
		c := g.col()
		exprs := []string{
			c + " + 100", c + " * 1000", c + " - 300", g.lit(), "VALUES(" + c + ")", "VALUES(" + g.col() + ") + " + c, c + " / 3", "-" + c,
		}
		sets = append(sets, c+" = "+exprs[g.pick(len(exprs))])
	}
	return fmt.Sprintf("INSERT %sINTO vt VALUES %s ON DUPLICATE KEY UPDATE %s", ignore, row, strings.Join(sets, ", "))
}
