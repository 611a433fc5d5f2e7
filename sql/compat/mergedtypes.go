package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// The type of a value chosen among several (IF, CASE, COALESCE, IFNULL,
// GREATEST, LEAST, a UNION column) when a TIME, DATE or DATETIME is
// among them. MySQL aggregates the types pairwise (Field::
// field_type_merge): temporal types of one kind stay that kind with the
// most fractional digits; a DATE, TIME, DATETIME or TIMESTAMP with
// another of them is a DATETIME; a temporal type with a number or a
// string is a VARCHAR, each value written in its own text (the TIME
// 10:00:00 as '10:00:00', the number 1 as '1'). GMS typed them by the
// first operand or by its own table: IF(c, 1, t) of a TIME t was a
// BIGINT and failed ("Timespan not valid for bigint"), IF(c, t, 1)
// answered the TIME 00:00:01, CASE of an INT, a DATE and a TIME wrote
// the TIME as '', IF(c, t, d) of a TIME and a DATE wrote the DATE as
// 00:00:00, and an IF of DATETIME(2)s wrote six digits. mergeTemporal is
// MySQL's aggregate, and every one of those functions and the UNION take
// their type from it (branchtext.go, timevalues.go's GREATEST and
// LEAST, union.go).

// mergeKind is the kind of MySQL's aggregate of types one of which is
// temporal.
type mergeKind int

const (
	// mergeNone: no temporal type among them (other rules type them).
	mergeNone mergeKind = iota
	// mergeText: a temporal type with a number, a string or another
	// type: a string of each value's own text.
	mergeText
	// mergeDate, mergeTime, mergeDatetime: that temporal type.
	mergeDate
	mergeTime
	mergeDatetime
)

// temporalMerge is MySQL's aggregate of types one of which is temporal.
type temporalMerge struct {
	kind   mergeKind
	digits int // fractional digits of a TIME or DATETIME
}

// temporalKind returns the merge kind of t alone and its fractional
// digits, mergeNone when t is not temporal.
func temporalKind(t gsql.Type) (mergeKind, int) {
	switch {
	case isTimeType(t):
		return mergeTime, timeDigits(t)
	case types.IsDateType(t):
		return mergeDate, 0
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		if dt, ok := t.(gsql.DatetimeType); ok {
			return mergeDatetime, dt.Precision()
		}
		return mergeDatetime, 6
	}
	return mergeNone, 0
}

// mergeTemporal returns MySQL's aggregate of ts (NULLs left out); its
// kind is mergeNone when none of ts is temporal.
func mergeTemporal(ts []gsql.Type) temporalMerge {
	m := temporalMerge{kind: mergeNone}
	other := false
	for _, t := range ts {
		if t == nil || t == types.Null {
			continue
		}
		k, d := temporalKind(t)
		switch {
		case k == mergeNone:
			other = true
		case m.kind == mergeNone:
			m = temporalMerge{kind: k, digits: d}
		default:
			if m.kind != k {
				m.kind = mergeDatetime
			}
			m.digits = max(m.digits, d)
		}
	}
	if m.kind != mergeNone && other {
		return temporalMerge{kind: mergeText}
	}
	if m.kind == mergeDate {
		m.digits = 0
	}
	return m
}

// typ returns the temporal type m names (nil for mergeNone and
// mergeText).
func (m temporalMerge) typ() gsql.Type {
	switch m.kind {
	case mergeDate:
		return types.Date
	case mergeTime:
		return timeType(m.digits)
	case mergeDatetime:
		return types.MustCreateDatetimeType(sqltypes.Datetime, m.digits)
	}
	return nil
}

// ownText returns e, a temporal or numeric value, as MySQL writes it in
// a string: a TIME or DATETIME with its type's digits, a DATE without a
// time of day, a number as CAST(x AS CHAR) writes it. A string (or
// NULL) is returned as it is.
func ownText(e gsql.Expression) gsql.Expression {
	switch t := e.Type(); {
	case t == types.Null || types.IsText(t):
		return e
	case isTimeType(t):
		return newTimeString(e)
	case types.IsDateType(t):
		return dateString(e)
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		return &argText{UnaryExpression: expression.UnaryExpression{Child: e}}
	}
	return expression.NewConvert(e, expression.ConvertToChar)
}

// mergedResult is a choice among temporal values (IF, CASE, COALESCE,
// IFNULL) typed as MySQL's aggregate of them: GMS's IF took the first
// value's type promoted to six digits and did not convert the other's
// value (a DATE written as the TIME 00:00:00); each value is converted
// to the aggregate (a TIME is today at that time in a DATETIME).
type mergedResult struct {
	expression.UnaryExpression
	typ gsql.Type
}

var _ functionWrapper = (*mergedResult)(nil)

// Type implements sql.Expression.
func (t *mergedResult) Type() gsql.Type { return t.typ }

// String implements sql.Expression: the function's own text.
func (t *mergedResult) String() string { return t.Child.String() }

func (t *mergedResult) wrapped() gsql.Expression { return t.Child }

// Eval implements sql.Expression.
func (t *mergedResult) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if isTimeType(t.typ) {
		ts, _, err := timeOf(v)
		return ts, err
	}
	ret, _, err := t.typ.Convert(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("%s as %s: %w", t.Child, t.typ, err)
	}
	return ret, nil
}

// WithChildren implements sql.Expression.
func (t *mergedResult) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &mergedResult{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: t.typ}, nil
}
