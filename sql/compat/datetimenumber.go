package compat

import (
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// A DATE, DATETIME or TIMESTAMP read as a number. MySQL reads one as its
// digits (Item::val_int and val_decimal of a temporal value): a DATE as
// YYYYMMDD, a DATETIME as YYYYMMDDhhmmss, with the type's fractional
// digits after the point, the zero date as 0. GMS read it so in + and -
// only, and there the zero date (which it holds as 0000-01-01) as
// 101000000; CAST(d AS SIGNED), CAST(d AS DECIMAL) and CAST(d AS DOUBLE)
// gave the Unix time (or 0.00), SUM and AVG summed Unix times, ABS was
// NULL, and a DATE in a bit operation was read as a DATETIME
// (20200102000000). datetimeNumber gives such operands their number.

// isDateOrDatetime reports whether t is a DATE, DATETIME or TIMESTAMP.
func isDateOrDatetime(t gsql.Type) bool {
	return t != nil && (types.IsDateType(t) || types.IsDatetimeType(t) || types.IsTimestampType(t))
}

// datetimeNumber is a DATE, DATETIME or TIMESTAMP read as a number.
type datetimeNumber struct {
	expression.UnaryExpression
	date   bool // a DATE: YYYYMMDD
	digits int  // fractional digits of a DATETIME or TIMESTAMP
}

var _ gsql.Expression = (*datetimeNumber)(nil)

// newDatetimeNumber is e, of a DATE, DATETIME or TIMESTAMP type, read as
// a number.
func newDatetimeNumber(e gsql.Expression) gsql.Expression {
	n := &datetimeNumber{UnaryExpression: expression.UnaryExpression{Child: e}, date: types.IsDateType(e.Type())}
	if dt, ok := e.Type().(gsql.DatetimeType); ok && !n.date {
		n.digits = dt.Precision()
	}
	return n
}

// Type implements sql.Expression: BIGINT without fractional digits,
// else DECIMAL(14+n, n).
func (d *datetimeNumber) Type() gsql.Type {
	if d.digits == 0 {
		return types.Int64
	}
	return types.MustCreateDecimalType(uint8(14+d.digits), uint8(d.digits))
}

// String implements sql.Expression: the operand's own text.
func (d *datetimeNumber) String() string { return d.Child.String() }

// Eval implements sql.Expression.
func (d *datetimeNumber) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if zero, _ := zeroParts(v); zero {
		if d.digits == 0 {
			return int64(0), nil
		}
		return decimal.New(0, -int32(d.digits)), nil
	}
	t, ok := v.(time.Time)
	if !ok {
		// A string or a number: GMS's conversion, as its + read it.
		if t, err = types.DatetimeMaxPrecision.ConvertWithoutRangeCheck(ctx, v); err != nil {
			return nil, err
		}
	}
	t = t.UTC()
	day := int64(t.Year())*10000 + int64(t.Month())*100 + int64(t.Day())
	if d.date {
		return day, nil
	}
	whole := day*1000000 + int64(t.Hour())*10000 + int64(t.Minute())*100 + int64(t.Second())
	if d.digits == 0 {
		return whole, nil
	}
	return decimal.New(whole, 0).Add(decimal.New(int64(t.Nanosecond()/1000), -6)).Truncate(int32(d.digits)), nil
}

// WithChildren implements sql.Expression.
func (d *datetimeNumber) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &datetimeNumber{UnaryExpression: expression.UnaryExpression{Child: children[0]}, date: d.date, digits: d.digits}, nil
}

// numberOperands gives e's temporal operands their numbers: a TIME's
// (timeNumber) and a DATE's, DATETIME's or TIMESTAMP's (datetimeNumber).
func numberOperands(e gsql.Expression) (gsql.Expression, bool) {
	out := replacedChildren(e.Children(), func(_ int, c gsql.Expression) gsql.Expression {
		switch {
		case isTimeType(c.Type()):
			return newTimeNumber(c)
		case isDateOrDatetime(c.Type()):
			if _, done := c.(*datetimeNumber); done {
				return nil
			}
			return newDatetimeNumber(c)
		}
		return nil
	})
	if out == nil {
		return e, false
	}
	ret, err := e.WithChildren(out...)
	if err != nil {
		return e, false
	}
	return ret, true
}

// numberOperandsTree is numberOperands for a rewrite rule.
func numberOperandsTree(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	if ret, changed := numberOperands(e); changed {
		return ret, transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}
