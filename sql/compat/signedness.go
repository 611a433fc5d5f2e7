package compat

import (
	"math"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS compares a signed integer with an unsigned one as DOUBLEs
// (comparison.castLeftAndRight), which hold 53 bits: a BIGINT UNSIGNED
// 9007199254740993 was equal to a BIGINT 9007199254740992, and to the
// constant 9007199254740992. In an IN list it converts each value to the
// left side's type instead, so -1 became 18446744073709551615 and a
// BIGINT UNSIGNED 18446744073709551615 was IN (-1). MySQL compares
// integers exactly, whatever their signedness. mixedSignComparison
// rewrites such a comparison:
//
//   - a constant below 2^53 is left as it is (a DOUBLE holds it;
//     exactAsDouble); a larger one that the other side's type holds
//     becomes a literal of that type, so both sides are of one
//     signedness and GMS compares them exactly, keeping index ranges;
//   - otherwise both sides are compared as DECIMAL(20,0), which holds
//     every BIGINT and BIGINT UNSIGNED exactly.
//
// An IN list with values of the other signedness is rewritten the same
// way, value by value.

// mixedSignComparison returns e, a comparison of a signed and an
// unsigned integer, made exact, and whether it changed e.
func mixedSignComparison(e gsql.Expression) (gsql.Expression, bool) {
	switch e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
	default:
		return e, false
	}
	b := e.(expression.BinaryExpression)
	if exactAsDouble(b.Left(), true) || exactAsDouble(b.Right(), true) {
		return e, false
	}
	l, r, ok := sameSign(b.Left(), b.Right())
	if !ok {
		return e, false
	}
	ret, err := e.WithChildren(l, r)
	if err != nil {
		return e, false
	}
	return ret, true
}

// mixedSignIn returns an IN list whose left side and values mix signed
// and unsigned integers made exact (mixedSignComparison), and whether
// it changed e.
func mixedSignIn(e *expression.InTuple) (gsql.Expression, bool) {
	left := e.Left()
	list, ok := e.Right().(expression.Tuple)
	if !ok || !types.IsInteger(left.Type()) {
		return e, false
	}
	items := make([]gsql.Expression, len(list))
	copy(items, list)
	changed, wide := false, false
	for i, it := range list {
		if !mixedSigns(left.Type(), it.Type()) || exactAsDouble(it, false) {
			continue
		}
		l, r, ok := sameSign(left, it)
		if !ok {
			continue
		}
		changed = true
		if l != left {
			// The left side must be wide: compare every value as a
			// DECIMAL(20,0).
			wide = true
			break
		}
		items[i] = r
	}
	if !changed {
		return e, false
	}
	if wide {
		left = exactInteger(left)
		for i, it := range list {
			if types.IsInteger(it.Type()) {
				items[i] = exactInteger(it)
			} else {
				items[i] = it
			}
		}
	}
	return expression.NewInTuple(left, expression.NewTuple(items...)), true
}

// exactAsDouble reports whether e is a constant integer that GMS's
// comparison as DOUBLEs, or its IN list's conversion to the other side's
// type, gets right: of at most 53 bits, and not negative unless neg.
// Such a constant is left as it is: percdb's plan cache finds a
// statement's parameters by their literals in the plan (plancache.go),
// and a plan cached for a small constant stays right for its next
// values below 2^53.
func exactAsDouble(e gsql.Expression, neg bool) bool {
	v, ok := constantValue(e)
	if !ok {
		return false
	}
	n, mag, ok := IntMagnitude(v)
	return ok && mag < 1<<53 && (neg || !n)
}

// mixedSigns reports whether a and b are integers of two signednesses.
func mixedSigns(a, b gsql.Type) bool {
	return types.IsInteger(a) && types.IsInteger(b) &&
		(types.IsSigned(a) && types.IsUnsigned(b) || types.IsUnsigned(a) && types.IsSigned(b))
}

// sameSign returns l and r, integers of two signednesses, as
// expressions GMS compares exactly; ok is false when they are not such
// integers.
func sameSign(l, r gsql.Expression) (gsql.Expression, gsql.Expression, bool) {
	if !mixedSigns(l.Type(), r.Type()) {
		return l, r, false
	}
	if lit, ok := literalOfType(r, l.Type()); ok {
		return l, lit, true
	}
	if lit, ok := literalOfType(l, r.Type()); ok {
		return lit, r, true
	}
	return exactInteger(l), exactInteger(r), true
}

// literalOfType returns the constant integer e as a literal of the
// 64-bit integer type of typ's signedness, when that type holds it.
func literalOfType(e gsql.Expression, typ gsql.Type) (gsql.Expression, bool) {
	v, ok := constantValue(e)
	if !ok {
		return nil, false
	}
	neg, mag, ok := IntMagnitude(v)
	if !ok {
		return nil, false
	}
	if types.IsUnsigned(typ) {
		if neg {
			return nil, false
		}
		return expression.NewLiteral(mag, types.Uint64), true
	}
	if !neg && mag > math.MaxInt64 {
		return nil, false
	}
	if neg {
		return expression.NewLiteral(-int64(mag), types.Int64), true // mag <= 1<<63: -int64 wraps to MinInt64 exactly
	}
	return expression.NewLiteral(int64(mag), types.Int64), true
}

// IntMagnitude returns v, a Go integer of any size and signedness, as a
// sign and a magnitude, so that integers of every type compare exactly;
// ok is false for any other value.
func IntMagnitude(v any) (neg bool, mag uint64, ok bool) {
	switch x := v.(type) {
	case int8:
		return x < 0, absInt(int64(x)), true
	case int16:
		return x < 0, absInt(int64(x)), true
	case int32:
		return x < 0, absInt(int64(x)), true
	case int64:
		return x < 0, absInt(x), true
	case int:
		return x < 0, absInt(int64(x)), true
	case uint8:
		return false, uint64(x), true
	case uint16:
		return false, uint64(x), true
	case uint32:
		return false, uint64(x), true
	case uint64:
		return false, x, true
	case uint:
		return false, uint64(x), true
	}
	return false, 0, false
}

// absInt returns |v| as a uint64 (MinInt64's too).
func absInt(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// exactInteger is e, an integer, as a DECIMAL(20,0): exact for every
// signed and unsigned 64-bit value.
func exactInteger(e gsql.Expression) gsql.Expression {
	c := expression.NewConvertWithLengthAndScale(e, expression.ConvertToDecimal, 20, 0)
	return &decimalCast{UnaryExpression: expression.UnaryExpression{Child: e}, gms: c, precision: 20, scale: 0}
}
