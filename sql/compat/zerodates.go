package compat

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// NO_ZERO_DATE and NO_ZERO_IN_DATE, as MySQL 8 applies them to the
// values an INSERT or UPDATE stores in a DATE, DATETIME or TIMESTAMP
// column (Field_temporal::store, check_date): the zero date
// ('0000-00-00', the number 0) under NO_ZERO_DATE, and a date with a
// zero month or day ('2020-00-10', '2020-01-00') under NO_ZERO_IN_DATE,
// are an error under a strict sql_mode without IGNORE, 1292 "Incorrect
// date value: '0000-00-00' for column 'd' at row 1"; otherwise warning
// 1264 "Out of range value for column 'd' at row 1", the zero date
// stored. GMS stored the zero date in every mode and refused a zero
// part in every mode (1105 "Incorrect datetime value"). Without
// NO_ZERO_IN_DATE MySQL stores '2020-00-10' as it is, which GMS's
// dates cannot hold: GMS's error stands there.
//
// A DATE or DATETIME read from another column (INSERT … SELECT,
// REPLACE … SELECT, UPDATE … SET d = e.d of a zero date) is judged too,
// as MySQL judges it: GMS reads '0000-00-00' and '0000-01-01' as one
// time.Time, which percdb stores and writes as the zero date, so the
// year-0 date is refused with it (MySQL's range starts at 1000-01-01).

// datePrefix matches the date part of a date or datetime string in the
// delimited form MySQL reads: year, month, day.
var datePrefix = regexp.MustCompile(`^\s*([0-9]{1,4})[-/.:]([0-9]{1,2})[-/.:]([0-9]{1,2})(?:$|[ T])`)

// zeroParts reports whether v, a value for a date column, is the zero
// date (zero) or a date with a zero month or day but not the zero date
// (inDate).
func zeroParts(v any) (zero, inDate bool) {
	switch v := v.(type) {
	case string:
		m := datePrefix.FindStringSubmatch(v)
		if m == nil {
			return false, false
		}
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		if y == 0 && mo == 0 && d == 0 {
			return true, false
		}
		return false, mo == 0 || d == 0
	case time.Time:
		// A date read from a column or made by an expression: GMS's
		// zero date. GMS cannot tell it from '0000-01-01', which percdb
		// stores and writes as the zero date all the same.
		return v.Equal(zeroDatetime), false
	default:
		_, mag, ok := IntMagnitude(v)
		return ok && mag == 0, false
	}
}

// fitDate returns what MySQL stores of v in the date column name of
// type typ, as the rowNum-th row of a statement, under the session's
// NO_ZERO_DATE and NO_ZERO_IN_DATE: nil to store v as GMS converts it,
// the zero date in place of a date with a zero part, or MySQL's error
// under strict.
func fitDate(ctx *gsql.Context, typ gsql.Type, name string, v any, rowNum int, strict bool) (any, error) {
	zero, inDate := zeroParts(v)
	if !zero && !inDate {
		return nil, nil
	}
	mode := gsql.LoadSqlMode(ctx)
	if zero && !mode.ModeEnabled("NO_ZERO_DATE") || inDate && !mode.ModeEnabled("NO_ZERO_IN_DATE") {
		return nil, nil
	}
	if strict {
		kind := "datetime"
		if typ.Type() == sqltypes.Date {
			kind = "date"
		}
		text := fmt.Sprint(v)
		if _, ok := v.(time.Time); ok {
			text = types.ZeroDateStr
			if kind == "datetime" {
				text = types.ZeroTimestampDatetimeStr
			}
		}
		return nil, mysql.NewSQLError(mysql.ERTruncatedWrongValue, "22007",
			"Incorrect %s value: '%s' for column '%s' at row %d", kind, text, name, rowNum)
	}
	ctx.Warn(codeWarnOutOfRange, "Out of range value for column '%s' at row %d", name, rowNum)
	if inDate {
		return types.ZeroTimestampDatetimeStr, nil
	}
	return nil, nil
}

// ZeroDateDefault is MySQL's 1067 "Invalid default value for 'd'" for a
// CREATE TABLE whose DATE, DATETIME or TIMESTAMP column defaults to a
// zero date (or one with a zero part) that NO_ZERO_DATE (NO_ZERO_IN_DATE)
// under a strict sql_mode refuses; nil otherwise.
func ZeroDateDefault(ctx *gsql.Context, sch gsql.Schema) error {
	if !strictMode(ctx) {
		return nil
	}
	mode := gsql.LoadSqlMode(ctx)
	for _, c := range sch {
		if c.Default == nil || !types.IsTime(c.Type) || !c.Default.IsLiteral() {
			continue
		}
		v, err := c.Default.Expr.Eval(ctx, nil)
		if err != nil {
			continue // GMS's own check reports it
		}
		zero, inDate := zeroParts(v)
		if zero && mode.ModeEnabled("NO_ZERO_DATE") || inDate && mode.ModeEnabled("NO_ZERO_IN_DATE") {
			return mysql.NewSQLError(mysql.ERInvalidDefault, "42000", "Invalid default value for '%s'", c.Name)
		}
	}
	return nil
}

// ERROR_FOR_DIVISION_BY_ZERO: MySQL 8 makes a division by zero (x / 0,
// x DIV 0, x % 0) NULL with warning 1365 "Division by 0", and under a
// strict sql_mode with this mode, in an INSERT or UPDATE without IGNORE,
// the statement's error (its abort-on-warning). GMS warns in every mode
// and never fails: the rows an INSERT writes and the values an UPDATE
// sets fail when evaluating them raised a warning 1365.

// CodeDivisionByZero is MySQL's ER_DIVISION_BY_ZERO.
const CodeDivisionByZero = 1365

// DivisionCounter is a session that counts the warnings 1365 it raised.
type DivisionCounter interface {
	DivisionsByZero() int
}

// divisionWatch fails a statement's row when a division by zero was
// warned of while it was evaluated, under strict
// ERROR_FOR_DIVISION_BY_ZERO; its zero value watches nothing.
type divisionWatch struct {
	ctx     *gsql.Context
	counter DivisionCounter
	seen    int
}

// newDivisionWatch returns the watch of ctx's statement: active when
// strict (the statement's strict mode without IGNORE) and the sql_mode
// has ERROR_FOR_DIVISION_BY_ZERO.
// The sql_mode is read only once a division by zero was seen.
func newDivisionWatch(ctx *gsql.Context, strict bool) divisionWatch {
	w := newValueWatch(ctx, strict)
	if w.counter == nil {
		return w
	}
	c := w.counter
	// The statement's divisions so far (GMS folds those of constants
	// while planning) are its warnings 1365: the first check fails on
	// them.
	seen := c.DivisionsByZero()
	for _, w := range ctx.Session.Warnings() {
		if w.Code == CodeDivisionByZero {
			seen--
		}
	}
	return divisionWatch{ctx: ctx, counter: c, seen: seen}
}

// newValueWatch returns the watch of one value's evaluation: it fails
// on the divisions by zero from now on only, at the cost of no more
// than reading a counter (an UPDATE's values, row by row; a SET of a
// constant GMS folds while planning is not seen).
func newValueWatch(ctx *gsql.Context, strict bool) divisionWatch {
	c, ok := ctx.Session.(DivisionCounter)
	if !strict || !ok {
		return divisionWatch{}
	}
	return divisionWatch{ctx: ctx, counter: c, seen: c.DivisionsByZero()}
}

// check returns MySQL's error 1365 when a division by zero was warned of
// since the last check and the sql_mode has ERROR_FOR_DIVISION_BY_ZERO.
func (w *divisionWatch) check() error {
	if w.counter == nil {
		return nil
	}
	n := w.counter.DivisionsByZero()
	if n == w.seen {
		return nil
	}
	w.seen = n
	if !gsql.LoadSqlMode(w.ctx).ModeEnabled("ERROR_FOR_DIVISION_BY_ZERO") {
		return nil
	}
	return mysql.NewSQLError(CodeDivisionByZero, "22012", "Division by 0")
}
