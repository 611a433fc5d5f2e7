package compat

import (
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// GMS types +, - and * of a DECIMAL and an integer as the DECIMAL
// operand (x.c9 * 1.5 of an INT c9 was DECIMAL(2,1)), and * of two
// DECIMALs with the larger precision plus the scales (DECIMAL(10,2) *
// DECIMAL(10,2) was DECIMAL(14,4)): types too narrow for their values.
// The value itself is exact, but wherever it is converted to its type it
// did not fit: in a UNION, 7 * 1.5 UNION ALL SELECT 0.25 gave 0.00 for
// 10.50 (the column DECIMAL(3,2)), and so did a derived table's column.
// exactArithmeticType is MySQL's type (Item_func_additive_op and
// Item_func_mul's result_precision): for + and -, the scale of the
// larger scale and one more integer digit than the wider operand; for *,
// the sum of the precisions and of the scales; an integer operand counts
// as DECIMAL(digits, 0). compat_arith.go's intArithmetic, which every
// such operator is, types itself by it when not both operands are
// integers.

// exactArithmeticType returns MySQL's type of a, +, - or * of exact
// numbers one of which is a DECIMAL; GMS's type otherwise.
func exactArithmeticType(a *expression.Arithmetic) gsql.Type {
	gms := a.Type()
	if !types.IsDecimal(gms) {
		return gms
	}
	lp, ls, lok := operandDigits(a.LeftChild)
	rp, rs, rok := operandDigits(a.RightChild)
	if !lok || !rok {
		return gms
	}
	var p, s int
	switch a.Op {
	case sqlparser.PlusStr, sqlparser.MinusStr:
		s = max(ls, rs)
		p = max(lp-ls, rp-rs) + s + 1
	case sqlparser.MultStr:
		s = min(ls+rs, decimalMaxScale)
		p = lp + rp
	default:
		return gms
	}
	p = min(max(p, s, 1), decimalMaxPrecision)
	return types.MustCreateDecimalType(uint8(p), uint8(s))
}

// operandDigits returns the precision and scale of an exact operand: a
// DECIMAL's, an integer literal's digits, an integer type's.
func operandDigits(e gsql.Expression) (precision, scale int, ok bool) {
	if lit, isLit := e.(*expression.Literal); isLit && types.IsInteger(lit.Type()) {
		// The literal's own digits (a Go integer of some width); no
		// conversion, which would need a context (a session) per call.
		if s, isInt := integerText(lit.Value()); isInt {
			return len(strings.TrimPrefix(s, "-")), 0, true
		}
	}
	return exactDigits(e.Type())
}

// integerText returns the decimal text of v, a Go integer of any width,
// and whether v is one.
func integerText(v any) (string, bool) {
	switch n := v.(type) {
	case int8:
		return strconv.FormatInt(int64(n), 10), true
	case int16:
		return strconv.FormatInt(int64(n), 10), true
	case int32:
		return strconv.FormatInt(int64(n), 10), true
	case int64:
		return strconv.FormatInt(n, 10), true
	case int:
		return strconv.FormatInt(int64(n), 10), true
	case uint8:
		return strconv.FormatUint(uint64(n), 10), true
	case uint16:
		return strconv.FormatUint(uint64(n), 10), true
	case uint32:
		return strconv.FormatUint(uint64(n), 10), true
	case uint64:
		return strconv.FormatUint(n, 10), true
	case uint:
		return strconv.FormatUint(uint64(n), 10), true
	}
	return "", false
}
