package compat

import (
	"math"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS reads the value of a compound INTERVAL unit (HOUR_MINUTE,
// DAY_SECOND, YEAR_MONTH, ...) by a strict pattern per unit, '1:30' for
// HOUR_MINUTE, and fails the statement on anything else: a negative
// interval ('-1:30'), one with fields left out ('1:30' DAY_SECOND, a
// number such as 90), a fraction of a second with fewer than six digits
// ('1.5' SECOND_MICROSECOND, which GMS takes for 5 microseconds).
// MySQL (get_interval_value, get_interval_info) reads such a value as
// text: an optional '-' for the sign, then the fields' digits, any run
// of other characters between them; fields left out are the leading
// ones; a microsecond field of fewer than six digits is a fraction (its
// digits padded with zeros); more fields than the unit has make the
// interval invalid, and the result NULL.
//
// compoundIntervals rewrites each INTERVAL v UNIT of a compound unit in
// the parsed statement as INTERVAL percdb_interval(v, 'UNIT') SMALLEST,
// the same interval as a signed count of the unit's smallest field
// (MINUTE for HOUR_MINUTE, MONTH for YEAR_MONTH), which GMS adds as it
// adds any simple interval, and which types the result as the compound
// unit does (a DATE plus minutes is a DATETIME either way).

// intervalFunctionName is the function compoundIntervals calls.
const intervalFunctionName = "percdb_interval"

// compoundUnitFields are the fields of each compound unit, the largest
// first, and smallestField the unit GMS adds their count in.
var compoundUnitFields = map[string][]string{
	"YEAR_MONTH":         {"YEAR", "MONTH"},
	"DAY_HOUR":           {"DAY", "HOUR"},
	"DAY_MINUTE":         {"DAY", "HOUR", "MINUTE"},
	"DAY_SECOND":         {"DAY", "HOUR", "MINUTE", "SECOND"},
	"DAY_MICROSECOND":    {"DAY", "HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"HOUR_MINUTE":        {"HOUR", "MINUTE"},
	"HOUR_SECOND":        {"HOUR", "MINUTE", "SECOND"},
	"HOUR_MICROSECOND":   {"HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"MINUTE_SECOND":      {"MINUTE", "SECOND"},
	"MINUTE_MICROSECOND": {"MINUTE", "SECOND", "MICROSECOND"},
	"SECOND_MICROSECOND": {"SECOND", "MICROSECOND"},
}

// fieldsPerNext is how many of the next smaller field one of a field is.
var fieldsPerNext = map[string]int64{"YEAR": 12, "DAY": 24, "HOUR": 60, "MINUTE": 60, "SECOND": 1_000_000}

// intervalFunctions is percdb_interval, by name.
var intervalFunctions = map[string]gsql.Function{
	intervalFunctionName: gsql.Function2{Name: intervalFunctionName, Fn: func(v, unit gsql.Expression) gsql.Expression {
		return newTemporalFunc(intervalFunctionName, intervalCount, fixedType(types.Int64), v, unit)
	}},
}

// compoundIntervals rewrites stmt's compound INTERVAL units; see the
// comment at the top of the file. query is the statement's text, which
// tells whether it can have one.
func compoundIntervals(stmt ast.Statement, query string) ast.Statement {
	if stmt == nil || !containsFoldASCII(query, "interval") {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		iv, ok := node.(*ast.IntervalExpr)
		if !ok {
			return true, nil
		}
		unit := strings.ToUpper(iv.Unit)
		fields, ok := compoundUnitFields[unit]
		if !ok {
			return true, nil
		}
		iv.Expr = &ast.FuncExpr{Name: ast.NewColIdent(intervalFunctionName), Exprs: ast.SelectExprs{
			&ast.AliasedExpr{Expr: iv.Expr},
			&ast.AliasedExpr{Expr: ast.NewStrVal([]byte(unit))},
		}}
		iv.Unit = fields[len(fields)-1]
		return true, nil
	}, stmt)
	return stmt
}

// intervalCount is percdb_interval(v, unit): v read as an interval of
// the compound unit, as a count of its smallest field; NULL when v is
// not one.
func intervalCount(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	text, _, err := types.LongText.Convert(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	unit, _, err := types.LongText.Convert(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	fields, ok := compoundUnitFields[strings.ToUpper(unit.(string))]
	if !ok {
		return nil, nil
	}
	n, ok := parseCompoundInterval(text.(string), fields)
	if !ok {
		return nil, nil
	}
	return n, nil
}

// parseCompoundInterval reads s as an interval of the compound unit of
// fields (MySQL's get_interval_info) and returns it as a signed count of
// the last field; false when s is not one or the count overflows.
func parseCompoundInterval(s string, fields []string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	n := len(fields)
	values := make([]int64, n)
	got := 0
	fracDigits := 0
	i := 0
	for got < n {
		start := i
		var v int64
		for i < len(s) && isDigit(s[i]) {
			if v > (math.MaxInt64-10)/10 {
				return 0, false
			}
			v = v*10 + int64(s[i]-'0')
			i++
		}
		fracDigits = i - start
		values[got] = v
		got++
		for i < len(s) && !isDigit(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
	}
	if i != len(s) {
		return 0, false // more fields than the unit has
	}
	// Fewer fields than the unit has are its last ones.
	copy(values[n-got:], values[:got])
	for k := 0; k < n-got; k++ {
		values[k] = 0
	}
	if fields[n-1] == "MICROSECOND" && fracDigits < 6 {
		for ; fracDigits < 6; fracDigits++ {
			values[n-1] *= 10
		}
	}
	var total int64
	for k := range fields {
		if k > 0 {
			per := fieldsPerNext[fields[k-1]]
			if total > (math.MaxInt64-values[k])/per {
				return 0, false
			}
			total *= per
		}
		if total > math.MaxInt64-values[k] {
			return 0, false
		}
		total += values[k]
	}
	if neg {
		total = -total
	}
	return total, true
}

// containsFoldASCII reports whether s contains sub (lower-case ASCII)
// in any letter case.
func containsFoldASCII(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
