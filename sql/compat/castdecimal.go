package compat

import (
	"fmt"
	"reflect"

	"github.com/shopspring/decimal"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS's CAST(x AS DECIMAL(M,D)) (expression.Convert) gets three things
// wrong: a value beyond the type's range becomes 0.00 (a constant) or
// stays as it is (a column), where MySQL gives the largest value of the
// type with warning 1264; DECIMAL, DECIMAL(M) and DECIMAL(M,0) are GMS's
// DECIMAL(65,30), so CAST(2.5 AS DECIMAL) was 2.5 where MySQL rounds to
// DECIMAL(10,0)'s 3; and a string with text after its number ('3.5x')
// became 0, where MySQL reads the number (3.5) and warns with 1292.
// decimalCast takes such a CAST's place for numbers and strings: the
// value, read exactly, is rounded half away from zero to D decimals and
// clipped to M digits, with MySQL's warnings. Other values (dates, hex
// blobs) are left to GMS's conversion.

// Warning 1292's text for a string that is not a DECIMAL as a whole.
const truncatedDecimalFormat = "Truncated incorrect DECIMAL value: '%s'"

// decimalCast is CAST(x AS DECIMAL(precision, scale)) as MySQL computes
// it; gms is the CAST it replaces, which evaluates what it does not.
type decimalCast struct {
	expression.UnaryExpression
	gms              *expression.Convert
	precision, scale int32
}

var _ gsql.Expression = (*decimalCast)(nil)

// castToDecimal returns e as a decimalCast when it is a CAST to DECIMAL
// of a number or a string.
func castToDecimal(e gsql.Expression) (gsql.Expression, bool) {
	c, ok := e.(*expression.Convert)
	if !ok {
		return e, false
	}
	if convertTarget(c) != expression.ConvertToDecimal {
		return e, false
	}
	// GMS keeps M and D unexported; its Type() has lost them when D is
	// 0 (DECIMAL(65,30)).
	v := reflect.ValueOf(c).Elem()
	ct := c.Child.Type()
	if !types.IsNumber(ct) && !types.IsText(ct) {
		return e, false
	}
	m, d := int32(v.FieldByName("typeLength").Int()), int32(v.FieldByName("typeScale").Int())
	if m == 0 {
		m, d = 10, 0 // MySQL's DECIMAL
	}
	if m > decimalMaxPrecision || d > decimalMaxScale || d > m || d < 0 {
		return e, false
	}
	return &decimalCast{UnaryExpression: expression.UnaryExpression{Child: c.Child}, gms: c, precision: m, scale: d}, true
}

// Type implements sql.Expression.
func (c *decimalCast) Type() gsql.Type {
	return types.MustCreateDecimalType(uint8(c.precision), uint8(c.scale))
}

// IsNullable implements sql.Expression.
func (c *decimalCast) IsNullable() bool { return c.Child.IsNullable() }

// String implements sql.Expression, as MySQL writes the CAST.
func (c *decimalCast) String() string {
	return fmt.Sprintf("CAST(%s AS DECIMAL(%d,%d))", c.Child.String(), c.precision, c.scale)
}

// Eval implements sql.Expression.
func (c *decimalCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	d, str, ok := decimalValue(v)
	if !ok {
		return c.gms.Eval(ctx, row)
	}
	if str != nil {
		num, whole := numberPrefix(*str)
		if !whole {
			ctx.Warn(codeTruncatedWrongValue, truncatedDecimalFormat, *str)
		}
		if d, err = decimalOrZero(num); err != nil {
			return c.gms.Eval(ctx, row)
		}
	}
	d = d.Round(c.scale)
	lo, hi, _, _ := numberRange(c.Type())
	switch {
	case d.GreaterThan(hi):
		d = hi
	case d.LessThan(lo):
		d = lo
	default:
		return d, nil
	}
	ctx.Warn(codeWarnOutOfRange, "Out of range value for column '%s' at row 1", c.String())
	return d, nil
}

// decimalOrZero returns the decimal num writes, 0 for "".
func decimalOrZero(num string) (decimal.Decimal, error) {
	if num == "" {
		return decimal.Zero, nil
	}
	return decimal.NewFromString(num)
}

// WithChildren implements sql.Expression.
func (c *decimalCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	gms, err := c.gms.WithChildren(children[0])
	if err != nil {
		return nil, err
	}
	ret := *c
	ret.Child = children[0]
	ret.gms = gms.(*expression.Convert)
	return &ret, nil
}
