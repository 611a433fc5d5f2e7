package compat

import (
	"math"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// FLOOR and CEIL (CEILING) as MySQL's Item_func_int_val. GMS types both
// INT (32 bits) for any argument that is not an integer, so FLOOR of a
// DECIMAL or DOUBLE beyond 2^31 came back as 2147483647 (FLOOR(1e20),
// CEIL(3000000000.5)), and FLOOR of a string -2147483648; of a DATETIME
// GMS failed (1105 "is not a valid Decimal"). MySQL types the result by
// its argument: an integer is itself, a DECIMAL with fewer than
// 18 whole digits is a BIGINT and a wider one a DECIMAL of scale 0,
// and everything else (DOUBLE, FLOAT, a string) is a DOUBLE. A temporal
// argument is read as its digits first (timevalues.go's
// numberFunctions).

// intValFunction is FLOOR, CEIL or CEILING (name), rounding by round.
func intValFunction(name string, round func(float64) float64, roundDecimal func(decimal.Decimal) decimal.Decimal) gsql.Function {
	return gsql.Function1{Name: name, Fn: func(x gsql.Expression) gsql.Expression {
		if types.IsText(x.Type()) {
			// Its numeric prefix, warning 1292 (strnum.go).
			x = &stringNumber{UnaryExpression: expression.UnaryExpression{Child: x}}
		}
		f := newTemporalFunc(name, func(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
			return intValOf(ctx, vals[0], intValInteger(args[0].Type()), round, roundDecimal)
		}, intValType, x)
		f.nullOnlyOfNull = true
		return f
	}}
}

// intValType is FLOOR's and CEIL's type for their argument args[0].
func intValType(args []gsql.Expression) gsql.Type {
	t := args[0].Type()
	switch {
	case types.IsInteger(t):
		return t // the value as it is
	case intValInteger(t):
		return types.Int64
	case types.IsDecimal(t):
		return types.MustCreateDecimalType(uint8(min(decimalDigits(t), decimalMaxPrecision)), 0)
	default:
		return types.Float64
	}
}

// intValInteger reports whether FLOOR and CEIL of an argument of type t
// are integers: of an integer, or of a DECIMAL of fewer than 19 digits
// (decimalDigits). It allocates nothing: the evaluation asks it per row.
func intValInteger(t gsql.Type) bool {
	return types.IsInteger(t) || types.IsDecimal(t) && decimalDigits(t) < 19
}

// decimalDigits is the length Item_func_int_val weighs of a DECIMAL t:
// its whole digits, and one more for a fraction. From 19 (its text less
// the fraction is DECIMAL_LONGLONG_DIGITS - 2 = 20 characters or more,
// the sign included) FLOOR and CEIL are a DECIMAL of that many digits.
func decimalDigits(t gsql.Type) int {
	dt := t.(gsql.DecimalType)
	digits := int(dt.Precision()) - int(dt.Scale())
	if dt.Scale() > 0 {
		digits++
	}
	return digits
}

// intValOf is v rounded to a whole number: an integer when integer
// says the function's type is one (intValInteger).
func intValOf(ctx *gsql.Context, v any, integer bool, round func(float64) float64, roundDecimal func(decimal.Decimal) decimal.Decimal) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case decimal.Decimal:
		r := roundDecimal(x)
		if integer {
			return r.IntPart(), nil
		}
		return r, nil
	case float64:
		return round(x), nil
	case float32:
		return round(float64(x)), nil
	}
	if integer {
		return v, nil
	}
	f, ok := doubleOf(ctx, v)
	if !ok {
		return nil, nil
	}
	return round(f), nil
}

// intValFunctions are FLOOR, CEIL and CEILING, by name.
var intValFunctions = map[string]gsql.Function{
	"floor":   intValFunction("floor", math.Floor, decimal.Decimal.Floor),
	"ceil":    intValFunction("ceil", math.Ceil, decimal.Decimal.Ceil),
	"ceiling": intValFunction("ceiling", math.Ceil, decimal.Decimal.Ceil),
}
