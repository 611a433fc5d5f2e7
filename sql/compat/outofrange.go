package compat

import (
	"math"
	"math/big"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// GMS builds an index range over an integer column from a constant it
// converts to the column's type, and ignores that the conversion left
// the range: against a BIGINT UNSIGNED -5 wrapped to
// 18446744073709551611, so `bu >= -5` found only the largest values and
// `bu > -1` nearly none; against a BIGINT 9223372036854775808 was
// clipped to 9223372036854775807, so `bi >= 9223372036854775808` found
// the largest BIGINT. MySQL compares the numbers as they are: no value
// of the column is below the constant, or every one is.
//
// constantBeyondColumn rewrites a comparison of an integer column x
// with a constant outside x's type's range into the comparison with the
// type's bound that has the same answer for every value x can take,
// NULL included: x >= -5 of a BIGINT UNSIGNED is x >= 0, x = -5 or
// x < -5 is x < 0 (false, or NULL for a NULL x), and x <=> -5 is false.
// A DOUBLE zero beside an unsigned column becomes the integer 0: GMS
// converts it as 2^64 - 0 into the column's type, 9223372036854775808.
// The column's index range then is what MySQL reads. A constant beyond a
// narrower signed type (TINYINT against 300), which GMS clips to the
// type's bound rather than wrapping, is left to GMS: the answer is wrong
// only for a row holding that bound, and rewriting it would keep a
// prepared statement's plan from the plan cache for every such value.

// constantBeyondColumn returns e, a comparison of an integer column
// with a constant its type does not hold, as the comparison with the
// type's bound that answers the same, and whether it changed e.
func constantBeyondColumn(e gsql.Expression) (gsql.Expression, bool) {
	var flip bool
	switch e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
	default:
		return e, false
	}
	b := e.(expression.BinaryExpression)
	x, k := b.Left(), b.Right()
	kv, ok := signedConstant(k)
	if !ok {
		if kv, ok = signedConstant(x); !ok {
			return e, false
		}
		x, k, flip = k, x, true
	}
	if _, col := x.(*expression.GetField); !col {
		// Only a column's values are sure to be of its type (GMS
		// types some expressions narrower than their values).
		return e, false
	}
	lo, hi, ok := IntegerBounds(x.Type())
	if !ok {
		return e, false
	}
	below, above := beyond(kv, lo, hi)
	if (below || above) && !wraps(x.Type()) {
		// GMS clips such a constant to the narrower type's bound:
		// wrong only for a row holding that bound, and a prepared
		// statement's plan is kept for its next values only while
		// the parameter stays in it.
		return e, false
	}
	if !below && !above {
		if op := comparisonOp(e, flip); fractionBelowOne(kv) && types.IsUnsigned(x.Type()) && (op == ">" || op == ">=") {
			// GMS's index range floors the constant of x > k and x >=
			// k, and the DOUBLE 0 it floors 0.5 to reads as
			// 9223372036854775808 (below): `bu >= '0.5'` found only
			// the largest values. For an integer x both are x >= 1.
			return expression.NewGreaterThanOrEqual(x, expression.NewLiteral(uint64(1), types.Uint64)), true
		}
		if zeroFloat(kv) && types.IsUnsigned(x.Type()) {
			// GMS converts a DOUBLE 0 to an unsigned integer as
			// 2^64 - 0, which wraps to 9223372036854775808: `bu =
			// 0e0` read the index from there and found no row.
			ret, err := e.WithChildren(swapIf(flip, x, expression.NewLiteral(uint64(0), types.Uint64))...)
			return ret, err == nil
		}
		return e, false
	}
	// The comparison as x OP k, with x on the left.
	op := comparisonOp(e, flip)
	if op == "<=>" {
		return expression.NewLiteral(false, types.Boolean), true
	}
	// Below the range, x > k holds for every x; above, x < k does.
	holds := below && (op == ">" || op == ">=") || above && (op == "<" || op == "<=")
	switch {
	case below && holds:
		return expression.NewGreaterThanOrEqual(x, boundLiteral(lo, x.Type())), true
	case below:
		return expression.NewLessThan(x, boundLiteral(lo, x.Type())), true
	case holds:
		return expression.NewLessThanOrEqual(x, boundLiteral(hi, x.Type())), true
	}
	return expression.NewGreaterThan(x, boundLiteral(hi, x.Type())), true
}

// signedConstant returns the value of e when e is a constant
// (constantValue) or its negation: the parser reads -1.5 as the
// negation of 1.5 (an integer literal's sign only is folded in).
func signedConstant(e gsql.Expression) (any, bool) {
	var child gsql.Expression
	switch n := e.(type) {
	case *intNegation:
		child = n.Child
	case *expression.UnaryMinus:
		child = n.Child
	default:
		return constantValue(e)
	}
	if _, ok := constantValue(child); !ok {
		return nil, false
	}
	v, err := e.Eval(gsql.NewEmptyContext(), nil)
	if err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// comparisonOp returns e's operator as it reads with its operands
// swapped when flip.
func comparisonOp(e gsql.Expression, flip bool) string {
	var op, flipped string
	switch e.(type) {
	case *expression.Equals:
		op, flipped = "=", "="
	case *expression.NullSafeEquals:
		op, flipped = "<=>", "<=>"
	case *expression.LessThan:
		op, flipped = "<", ">"
	case *expression.LessThanOrEqual:
		op, flipped = "<=", ">="
	case *expression.GreaterThan:
		op, flipped = ">", "<"
	default:
		op, flipped = ">=", "<="
	}
	if flip {
		return flipped
	}
	return op
}

// IntegerBounds returns the smallest and largest values of t, an integer
// type; ok is false for other types.
func IntegerBounds(t gsql.Type) (lo, hi decimal.Decimal, ok bool) {
	var l int64
	var h uint64
	switch t.Type() {
	case sqltypes.Int8:
		l, h = math.MinInt8, math.MaxInt8
	case sqltypes.Uint8:
		h = math.MaxUint8
	case sqltypes.Int16:
		l, h = math.MinInt16, math.MaxInt16
	case sqltypes.Uint16:
		h = math.MaxUint16
	case sqltypes.Int24:
		l, h = -1<<23, 1<<23-1
	case sqltypes.Uint24:
		h = 1<<24 - 1
	case sqltypes.Int32:
		l, h = math.MinInt32, math.MaxInt32
	case sqltypes.Uint32:
		h = math.MaxUint32
	case sqltypes.Int64:
		l, h = math.MinInt64, math.MaxInt64
	case sqltypes.Uint64:
		h = math.MaxUint64
	default:
		return lo, hi, false
	}
	return decimal.NewFromInt(l), decimal.NewFromBigInt(new(big.Int).SetUint64(h), 0), true
}

// beyond reports whether v, a constant, is a number below lo or above
// hi. A string or another value that is no number is neither.
func beyond(v any, lo, hi decimal.Decimal) (below, above bool) {
	var d decimal.Decimal
	if neg, mag, ok := IntMagnitude(v); ok {
		d = decimal.NewFromBigInt(new(big.Int).SetUint64(mag), 0)
		if neg {
			d = d.Neg()
		}
	} else {
		switch x := v.(type) {
		case decimal.Decimal:
			d = x
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false, false
			}
			d = decimal.NewFromFloat(x)
		case float32:
			d = decimal.NewFromFloat32(x)
		default:
			return false, false
		}
	}
	return d.LessThan(lo), d.GreaterThan(hi)
}

// boundLiteral is b, a bound of the integer type t, as a BIGINT literal
// of t's signedness (which the index range converts to t exactly).
func boundLiteral(b decimal.Decimal, t gsql.Type) gsql.Expression {
	if types.IsUnsigned(t) {
		return expression.NewLiteral(b.BigInt().Uint64(), types.Uint64)
	}
	return expression.NewLiteral(b.IntPart(), types.Int64)
}

// fractionBelowOne reports whether v is a floating-point number strictly
// between 0 and 1.
func fractionBelowOne(v any) bool {
	switch f := v.(type) {
	case float64:
		return f > 0 && f < 1
	case float32:
		return f > 0 && f < 1
	}
	return false
}

// zeroFloat reports whether v is a floating-point zero.
func zeroFloat(v any) bool {
	switch f := v.(type) {
	case float64:
		return f == 0
	case float32:
		return f == 0
	}
	return false
}

// swapIf returns x and k as a comparison's operands: k first when flip.
func swapIf(flip bool, x, k gsql.Expression) []gsql.Expression {
	if flip {
		return []gsql.Expression{k, x}
	}
	return []gsql.Expression{x, k}
}

// wraps reports whether GMS's conversion of a constant beyond t wraps
// around rather than clipping: beyond an
// unsigned type, and beyond BIGINT or BIGINT UNSIGNED. Above an unsigned
// type GMS clips a signed constant but truncates an unsigned one to the
// type's width (convertToUint8 and its kind), and the parser types a
// literal above INT's range as INT UNSIGNED or BIGINT UNSIGNED: `tu <
// 2147483648` of a TINYINT UNSIGNED read the index below 0 and `u <
// 9223372036854775808` of an INT UNSIGNED likewise, finding no row where
// every one holds.
func wraps(t gsql.Type) bool {
	if types.IsUnsigned(t) {
		return true
	}
	switch t.Type() {
	case sqltypes.Int64, sqltypes.Uint64:
		return true
	}
	return false
}

// FoldedConstantComparisons applies constantBeyondColumn and
// decimalComparison again once GMS has folded constant expressions into
// literals (its simplifyFilters
// rule, which runs after RowComparisons): a constant that was no literal
// before is one now. A string that is not a number, compared with a
// number, is read as a DOUBLE (strnum.go), and GMS folds that into a
// DOUBLE literal: `bu = 'abc'` of an indexed BIGINT UNSIGNED became `bu =
// 0e0`, which GMS's index range read from 9223372036854775808, and the
// query found no row where MySQL finds bu = 0.
func FoldedConstantComparisons(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return foldedConstantComparisons(n)
}

func foldedConstantComparisons(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprsWithOpaque(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		if sq, ok := e.(*plan.Subquery); ok {
			q, same, err := foldedConstantComparisons(sq.Query)
			if err != nil || same {
				return e, transform.SameTree, err
			}
			return sq.WithQuery(q), transform.NewTree, nil
		}
		if d, ok := constantBeyondColumn(e); ok {
			return d, transform.NewTree, nil
		}
		// A DECIMAL against a DOUBLE constant compares as DOUBLEs
		// (decimal.go): `d0 = '3.5'` of a DECIMAL(6,0), whose string
		// is folded into the DOUBLE 3.5, was true for 4.
		if d, ok := decimalComparison(e); ok {
			return d, transform.NewTree, nil
		}
		if in, ok := e.(*expression.InTuple); ok {
			if d, ok := unsignedZeroIn(in); ok {
				return d, transform.NewTree, nil
			}
			if d, ok := numberInDoubles(in); ok {
				return d, transform.NewTree, nil
			}
		}
		return e, transform.SameTree, nil
	})
}

// unsignedZeroIn returns e, an IN list of an unsigned integer column,
// with each DOUBLE zero of its list an unsigned 0, and whether it
// changed e: GMS converts a DOUBLE 0 to the column's type as
// 9223372036854775808 (see constantBeyondColumn), so `bu IN ('abc', 7)`,
// whose 'abc' reads as 0e0, missed bu = 0.
func unsignedZeroIn(e *expression.InTuple) (gsql.Expression, bool) {
	list, ok := e.Right().(expression.Tuple)
	if _, col := e.Left().(*expression.GetField); !ok || !col || !types.IsUnsigned(e.Left().Type()) {
		return e, false
	}
	var items []gsql.Expression
	for i, it := range list {
		if v, ok := constantValue(it); !ok || !zeroFloat(v) {
			continue
		}
		if items == nil {
			items = append([]gsql.Expression(nil), list...)
		}
		items[i] = expression.NewLiteral(uint64(0), types.Uint64)
	}
	if items == nil {
		return e, false
	}
	return expression.NewInTuple(e.Left(), expression.NewTuple(items...)), true
}

// numberInDoubles returns e, an IN list of a DECIMAL or an integer
// whose list is of constants, a DOUBLE among them, with the left side
// converted to a DOUBLE (MySQL's comparison type of such a list), and
// whether it changed e: GMS converts the list's values to the left
// side's type, rounding or clipping them (`d0 IN ('3.5')` of a
// DECIMAL(6,0), whose string is folded into the DOUBLE 3.5, was true for
// 4; `tu IN ('0.5')` true for 0).
func numberInDoubles(e *expression.InTuple) (gsql.Expression, bool) {
	list, ok := e.Right().(expression.Tuple)
	if !ok || !types.IsNumber(e.Left().Type()) || types.IsFloat(e.Left().Type()) {
		return e, false
	}
	var doubles, others []gsql.Expression
	for _, it := range list {
		if _, ok := constantValue(it); !ok {
			// The DECIMAL is compared exactly with the others
			// (signedness.go makes mixed-sign integers such a list).
			return e, false
		}
		if types.IsFloat(it.Type()) {
			doubles = append(doubles, it)
		} else {
			others = append(others, it)
		}
	}
	if len(doubles) == 0 {
		return e, false
	}
	asDoubles := expression.NewInTuple(expression.NewConvert(e.Left(), expression.ConvertToDouble), expression.NewTuple(doubles...))
	if len(others) == 0 {
		return asDoubles, true
	}
	// MySQL compares each value of a list of mixed types with the left
	// side in the pair's own comparison type (Item_func_in with
	// several cmp_items): the DOUBLEs as DOUBLEs, the integers and
	// DECIMALs exactly. Compared as DOUBLEs, `bi IN ('abc',
	// 9223372036854775808)` was true for the largest BIGINT. x IN (a, b)
	// is x IN (a) OR x IN (b) in three-valued logic too (NULL when no
	// value matches and one is NULL).
	var exact gsql.Expression = expression.NewInTuple(e.Left(), expression.NewTuple(others...))
	if m, ok := mixedSignIn(exact.(*expression.InTuple)); ok {
		exact = m
	}
	return expression.NewOr(asDoubles, exact), true
}
