package tablemeta

import (
	"context"
	"fmt"
	"strconv"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// GMS has one TIME type, of six fractional digits (types.Time, printed
// "time(6)"), and refuses TIME(0) to TIME(5). MySQL's TIME(n) keeps n
// digits: a value written is rounded to them, and it is written with
// exactly n (TIME(3): '12:00:00.500'). TimeType is such a column's type:
// GMS's TIME, whose methods it keeps (so that comparisons, functions and
// the row codec, which see a types.Timespan, treat it as any TIME), with
// the rounding, the text and the name of its precision.

// TimeType is the type of a TIME(n) column, n from 0 to 5.
type TimeType struct {
	types.TimespanType_
	// fsp is the number of fractional digits.
	fsp int
	// expr marks the TIME(6) of an expression (NewExprTimeType).
	expr bool
}

var (
	_ types.TimeType          = TimeType{}
	_ gsql.CollationCoercible = TimeType{}
)

// NewTimeType returns the type of TIME(fsp): GMS's own for 6.
func NewTimeType(fsp int) (gsql.Type, error) {
	switch {
	case fsp == 6:
		return types.Time, nil
	case fsp < 0 || fsp > 6:
		return nil, fmt.Errorf("TIME precision %d is out of range (0 to 6)", fsp)
	}
	return TimeType{fsp: fsp}, nil
}

// ExprTime6Length is the column length the TIME(6) of an expression
// announces: no TIME has it (MySQL's TIME(6) is 17 long, and so is GMS's
// TIME of any digits), so that the server, which sees column definitions
// and not types, can tell it and send MySQL's length and 6 decimals.
const ExprTime6Length = 18

// NewExprTimeType returns the type of an expression of TIME(fsp), such as
// CAST(x AS TIME(fsp)): NewTimeType's for 0 to 5; for 6 a TimeType that
// writes six digits, where GMS's TIME writes a fraction only when there
// is one (CAST('00:00:00' AS TIME(6)) is '00:00:00.000000' in MySQL).
func NewExprTimeType(fsp int) (gsql.Type, error) {
	if fsp == 6 {
		return TimeType{fsp: 6, expr: true}, nil
	}
	return NewTimeType(fsp)
}

// Precision returns the number of fractional digits.
func (t TimeType) Precision() int { return t.fsp }

// unit is the step, in microseconds, of t's values.
func (t TimeType) unit() int64 {
	u := int64(1)
	for range 6 - t.fsp {
		u *= 10
	}
	return u
}

// round rounds ts to t's precision, half away from zero, as MySQL does.
func (t TimeType) round(ts types.Timespan) types.Timespan {
	u := t.unit()
	m := ts.AsMicroseconds()
	neg := m < 0
	if neg {
		m = -m
	}
	m = (m + u/2) / u * u
	if neg {
		m = -m
	}
	return types.Time.MicrosecondsToTimespan(m)
}

// Convert implements sql.Type: the value rounded to t's precision. A
// date and time ('2020-01-02 03:04:05', as go-sql-driver sends a
// time.Time) gives its time, as in MySQL (GMS's TIME refuses it).
func (t TimeType) Convert(ctx context.Context, v any) (any, gsql.ConvertInRange, error) {
	if v == nil {
		return nil, gsql.InRange, nil
	}
	ts, err := t.ConvertToTimespan(v)
	if err != nil {
		s, isString := v.(string)
		if !isString {
			return nil, gsql.OutOfRange, err
		}
		dt, _, dtErr := types.DatetimeMaxPrecision.Convert(ctx, s)
		if dtErr != nil {
			return nil, gsql.OutOfRange, err
		}
		if ts, err = t.ConvertToTimespan(dt); err != nil {
			return nil, gsql.OutOfRange, err
		}
	}
	return t.round(ts), gsql.InRange, nil
}

// SQL implements sql.Type: the value with exactly t's fractional digits.
func (t TimeType) SQL(_ *gsql.Context, dest []byte, v any) (sqltypes.Value, error) {
	if v == nil {
		return sqltypes.NULL, nil
	}
	ts, err := t.ConvertToTimespan(v)
	if err != nil {
		return sqltypes.Value{}, err
	}
	return sqltypes.MakeTrusted(sqltypes.Time, t.appendText(dest, t.round(ts))), nil
}

// appendText appends the text of ts, rounded to t, to dest: [-]hh:mm:ss
// and a point and t's digits when it has any.
func (t TimeType) appendText(dest []byte, ts types.Timespan) []byte {
	m := ts.AsMicroseconds()
	if m < 0 {
		dest = append(dest, '-')
		m = -m
	}
	const second, minute, hour = 1_000_000, 60_000_000, 3_600_000_000
	dest = appendPadded(dest, m/hour, 2)
	dest = append(dest, ':')
	dest = appendPadded(dest, m/minute%60, 2)
	dest = append(dest, ':')
	dest = appendPadded(dest, m/second%60, 2)
	if t.fsp > 0 {
		dest = append(dest, '.')
		dest = appendPadded(dest, m%second/t.unit(), t.fsp)
	}
	return dest
}

// appendPadded appends v in decimal, with leading zeros to width digits.
func appendPadded(dest []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for range width - len(s) {
		dest = append(dest, '0')
	}
	return append(dest, s...)
}

// MaxTextResponseByteLength implements sql.Type: MySQL's column length
// of TIME(n), 10, and a point and n digits.
func (t TimeType) MaxTextResponseByteLength(*gsql.Context) uint32 {
	if t.expr {
		return ExprTime6Length
	}
	if t.fsp == 0 {
		return 10
	}
	return uint32(11 + t.fsp)
}

// Equals implements sql.Type.
func (t TimeType) Equals(other gsql.Type) bool {
	o, ok := other.(TimeType)
	return ok && o.fsp == t.fsp && o.expr == t.expr
}

// Promote implements sql.Type: GMS's TIME, of six digits.
func (t TimeType) Promote() gsql.Type { return types.Time }

// String implements sql.Type: the type as CREATE TABLE writes it, which
// is also how the catalog stores it (typeString, parseType).
func (t TimeType) String() string {
	if t.fsp == 0 {
		return "time"
	}
	return fmt.Sprintf("time(%d)", t.fsp)
}
