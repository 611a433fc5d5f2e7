package compat

import (
	"math"
	"math/big"
	"strings"

	"github.com/shopspring/decimal"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// MySQL stores a value that does not fit a numeric column by sql_mode:
// under a strict mode (and without IGNORE) an INSERT or UPDATE fails,
// with 1264 "Out of range value for column 'x' at row N" for a number
// beyond the column's range, 1366 "Incorrect integer value: 'abc' for
// column 'x' at row N" for a string that is no number, and 1265 "Data
// truncated for column 'x' at row N" for one with text after its number
// ('12x'); otherwise the statement stores the nearest value the column
// holds (the largest or the smallest, 0 for no number, 12 for '12x') and
// warns with the same code. GMS fails in every mode, with 1105 ("Out of
// range value for column of Decimal type", "300 out of range for
// tinyint", "number has no digits"), and so an INSERT ... SELECT or an
// UPDATE outside strict mode stored nothing.
//
// FitInsert puts a FitRows over an INSERT's rows, and FitUpdate wraps
// the values an UPDATE sets in a fittedValue: each value GMS's own
// conversion refuses is made what MySQL stores (fitValue) before GMS
// converts it, or fails with MySQL's error. A value GMS converts is left
// to it: the workaround costs one conversion more per numeric value, and
// changes no value GMS stores.

// MySQL's codes for a value a column does not hold.
const (
	codeWarnOutOfRange      = 1264 // ER_WARN_DATA_OUT_OF_RANGE
	stateWarnOutOfRange     = "22003"
	codeWrongValueForField  = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	stateWrongValueForField = "HY000"
	codeDataTruncated       = 1265 // WARN_DATA_TRUNCATED
	stateDataTruncated      = "01000"
)

// strictMode reports whether ctx's sql_mode makes a bad value an error.
func strictMode(ctx *gsql.Context) bool {
	mode := gsql.LoadSqlMode(ctx)
	return mode.ModeEnabled("STRICT_TRANS_TABLES") || mode.ModeEnabled("STRICT_ALL_TABLES")
}

// FitRows is the rows an INSERT writes, each value of a numeric column
// made what MySQL stores (fitValue). Its rows end with the destination's
// columns (GMS's INSERT drops what comes before them: an outer scope's
// values).
type FitRows struct {
	plan.UnaryNode
	// Dest is the destination table's schema.
	Dest gsql.Schema
	// Ignore is INSERT IGNORE: bad values warn in every sql_mode.
	Ignore bool
	// Single is a source of one row of VALUES, whose NULL for a NOT
	// NULL column MySQL fails with 1048 in every sql_mode but under
	// IGNORE (notnull.go).
	Single bool
	// Deferred are the columns the INSERT leaves to their defaults
	// that have none: MySQL's 1364 (notnull.go).
	Deferred gsql.FastIntSet
}

var _ gsql.Node = (*FitRows)(nil)

// String implements sql.Node: the rows' own node (EXPLAIN shows no
// FitRows).
func (f *FitRows) String() string { return f.Child.String() }

// IsReadOnly implements sql.Node.
func (f *FitRows) IsReadOnly() bool { return f.Child.IsReadOnly() }

// WithChildren implements sql.Node.
func (f *FitRows) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(f, len(children), 1)
	}
	ret := *f
	ret.Child = children[0]
	return &ret, nil
}

// FitInsert returns n with its rows under a FitRows when its destination
// has a numeric, YEAR or date column or a NOT NULL one, and whether it
// changed n (not when they already are).
func FitInsert(n *plan.InsertInto) (*plan.InsertInto, bool) {
	if n.Source == nil {
		return n, false
	}
	if _, done := n.Source.(*FitRows); done {
		return n, false
	}
	dest := n.Destination.Schema()
	if !hasFittedColumn(dest) && !hasNotNullColumn(dest) {
		return n, false
	}
	return n.WithSource(&FitRows{UnaryNode: plan.UnaryNode{Child: n.Source}, Dest: dest, Ignore: n.Ignore,
		Single: SingleRow(n.Source), Deferred: n.DeferredDefaults}), true
}

// hasFittedColumn reports whether the values of a column of sch are
// fitted.
func hasFittedColumn(sch gsql.Schema) bool {
	for _, c := range sch {
		if fitted(c.Type) {
			return true
		}
	}
	return false
}

// hasNotNullColumn reports whether a column of sch is NOT NULL (and no
// AUTO_INCREMENT or generated column, whose NULL GMS replaces).
func hasNotNullColumn(sch gsql.Schema) bool {
	for _, c := range sch {
		if !c.Nullable && !c.AutoIncrement && c.Generated == nil {
			return true
		}
	}
	return false
}

// fitted reports whether values stored in a column of type t are fitted
// (fitValue): a number's, a YEAR's, or a date's (zerodates.go).
func fitted(t gsql.Type) bool {
	return types.IsNumber(t) || types.IsYear(t) || types.IsTime(t)
}

// yearDecimal returns the integer MySQL stores of v, a DECIMAL, in a
// YEAR column, rounded half away from zero (2.5 is 3, the year 2003;
// 69.5 is 70, 1970), where GMS's conversion cut the fraction (2002,
// 2069); nil for any other value, which GMS converts as MySQL does (a
// DOUBLE is cut by MySQL too).
func yearDecimal(v any) any {
	d, ok := v.(decimal.Decimal)
	if !ok || d.IsInteger() {
		return nil
	}
	return d.Round(0).IntPart()
}

// fitRowsIter fits the values of each row of child; rowNum counts the
// rows, as MySQL's messages do.
type fitRowsIter struct {
	child  gsql.RowIter
	dest   gsql.Schema
	strict bool
	rowNum int
	// nulls puts the implicit default in place of a NULL for a NOT
	// NULL column (notnull.go); deferred are the columns left to a
	// default they do not have.
	nulls    bool
	deferred gsql.FastIntSet
	// warned are the deferred columns warned of: MySQL checks them
	// once a statement, not once a row.
	warned gsql.FastIntSet
	// div fails a row whose values divided by zero (zerodates.go).
	div divisionWatch
}

// NewFitRowsIter returns the rows of child, the rows of f, with their
// values fitted to f's destination.
func NewFitRowsIter(ctx *gsql.Context, f *FitRows, child gsql.RowIter) gsql.RowIter {
	strict := !f.Ignore && strictMode(ctx)
	return &fitRowsIter{child: child, dest: f.Dest, strict: strict, div: newDivisionWatch(ctx, strict),
		nulls: f.Ignore || (!strict && !f.Single), deferred: f.Deferred}
}

// Next implements sql.RowIter.
func (it *fitRowsIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := it.child.Next(ctx)
	if err != nil {
		return row, err
	}
	if err := it.div.check(); err != nil {
		return nil, err
	}
	it.rowNum++
	off := len(row) - len(it.dest)
	if off < 0 {
		return row, nil // GMS's INSERT reports the short row
	}
	var out gsql.Row
	for i, col := range it.dest {
		v := row[off+i]
		if v == nil && !col.Nullable && !col.AutoIncrement && col.Generated == nil {
			var dv any
			if it.deferred.Contains(i) {
				if dv, err = noDefaultValue(ctx, col, it.strict, !it.warned.Contains(i)); err != nil {
					return nil, err
				}
				it.warned.Add(i)
			} else if it.nulls {
				dv = implicitDefaultValue(ctx, col.Type, col.Name)
			} else {
				continue // GMS's 1048
			}
			if out == nil {
				out = row.Copy()
			}
			out[off+i] = dv
			continue
		}
		if v == nil || !fitted(col.Type) {
			continue
		}
		fv, err := fitValue(ctx, col.Type, col.Name, v, it.rowNum, it.strict)
		if err != nil {
			return nil, err
		}
		if fv != nil {
			if out == nil {
				out = row.Copy()
			}
			out[off+i] = fv
		}
	}
	if out != nil {
		return out, nil
	}
	return row, nil
}

// Close implements sql.RowIter.
func (it *fitRowsIter) Close(ctx *gsql.Context) error { return it.child.Close(ctx) }

// FitUpdate returns the SET expressions of an UPDATE with each value of
// a numeric column fitted (fittedValue), and whether it changed any (not
// when they already are). strict is the statement's sql_mode without
// IGNORE; the expressions share one count of rows, the first of them
// counting.
func FitUpdate(ctx *gsql.Context, exprs []gsql.Expression, ignore bool) ([]gsql.Expression, bool) {
	counter := new(int)
	strict := !ignore && strictMode(ctx)
	var out []gsql.Expression
	for i, e := range exprs {
		set, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		gf, ok := set.LeftChild.(*expression.GetField)
		if !ok || !fitted(gf.Type()) {
			continue
		}
		if _, done := set.RightChild.(*fittedValue); done {
			return exprs, false
		}
		if _, done := set.RightChild.(*implicitDefault); done {
			return exprs, false
		}
		if _, isDefault := set.RightChild.(*gsql.ColumnDefaultValue); isDefault {
			continue // GMS evaluates a default itself (applyUpdateExpressionsWithIgnore)
		}
		if out == nil {
			out = append([]gsql.Expression(nil), exprs...)
		}
		fv := &fittedValue{UnaryExpression: expression.UnaryExpression{Child: set.RightChild},
			typ: gf.Type(), name: gf.Name(), strict: strict, rowNum: counter, counts: !anyFitted(out[:i])}
		out[i] = expression.NewSetField(gf, fv)
	}
	return out, out != nil
}

// anyFitted reports whether an expression of exprs sets a fittedValue.
func anyFitted(exprs []gsql.Expression) bool {
	for _, e := range exprs {
		if set, ok := e.(*expression.SetField); ok {
			if _, f := set.RightChild.(*fittedValue); f {
				return true
			}
		}
	}
	return false
}

// fittedValue is the value of an UPDATE's SET for a numeric column,
// fitted to the column. The fittedValues of one statement share rowNum,
// which the first of them, evaluated first for each row, advances.
type fittedValue struct {
	expression.UnaryExpression
	typ    gsql.Type
	name   string
	strict bool
	rowNum *int
	counts bool
}

var _ gsql.Expression = (*fittedValue)(nil)

// Type implements sql.Expression.
func (f *fittedValue) Type() gsql.Type { return f.Child.Type() }

// String implements sql.Expression: the value's own text.
func (f *fittedValue) String() string { return f.Child.String() }

// Eval implements sql.Expression.
func (f *fittedValue) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if f.counts {
		*f.rowNum++
	}
	div := newValueWatch(ctx, f.strict)
	v, err := f.Child.Eval(ctx, row)
	if err == nil {
		err = div.check() // zerodates.go
	}
	if err != nil || v == nil {
		return v, err
	}
	fv, err := fitValue(ctx, f.typ, f.name, v, max(*f.rowNum, 1), f.strict)
	if err != nil || fv == nil {
		return v, err
	}
	return fv, nil
}

// WithChildren implements sql.Expression.
func (f *fittedValue) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(f, len(children), 1)
	}
	ret := *f
	ret.Child = children[0]
	return &ret, nil
}

// fitValue returns what MySQL stores of v in a column of type typ, named
// name, as the rowNum-th row of a statement, when GMS's conversion
// refuses v; nil when GMS converts v (or v is no number MySQL reads:
// GMS's error stands). Under strict, a value MySQL would change is an
// error; otherwise a warning.
func fitValue(ctx *gsql.Context, typ gsql.Type, name string, v any, rowNum int, strict bool) (any, error) {
	if types.IsYear(typ) {
		return yearDecimal(v), nil
	}
	if types.IsTime(typ) {
		return fitDate(ctx, typ, name, v, rowNum, strict)
	}
	// GMS's conversion to an integer type cannot be asked: it wraps
	// some values it reports in range (4294967295 + 100 into an INT
	// UNSIGNED was 99). An integer is checked against the type's bounds
	// as it is, any other number by fitValue; a DECIMAL or floating-point
	// type is GMS's to judge.
	if minMag, maxMag, isInt := intBounds(typ); isInt {
		// MySQL stores a DOUBLE in an integer column rounded half to
		// even (Field_long::store(double) and the others: rint), 2.5
		// as 2 and -0.5 as 0; GMS rounds half away from zero (3, -1).
		// The halves are made the integer MySQL stores first.
		if f, ok := floatOf(v); ok && math.RoundToEven(f) != math.Round(f) {
			v = int64(math.RoundToEven(f)) // a half: below 2^52
			if neg, mag, ok := IntMagnitude(v); ok && (neg && mag <= minMag || !neg && mag <= maxMag) {
				return v, nil
			}
		}
		if neg, mag, ok := IntMagnitude(v); ok && (neg && mag <= minMag || !neg && mag <= maxMag) {
			return nil, nil
		}
	} else if _, inRange, err := typ.Convert(ctx, v); err == nil && inRange == gsql.InRange {
		return nil, nil
	}
	d, str, ok := decimalValue(v)
	if !ok {
		return nil, nil
	}
	bad := func(code int, state, format string, args ...any) error {
		if strict {
			return mysql.NewSQLError(code, state, format, args...)
		}
		ctx.Warn(code, format, args...)
		return nil
	}
	if str != nil {
		num, whole := numberPrefix(*str)
		switch {
		case num == "":
			if err := bad(codeWrongValueForField, stateWrongValueForField, "Incorrect %s value: '%s' for column '%s' at row %d",
				numberKind(typ), *str, name, rowNum); err != nil {
				return nil, err
			}
			d = decimal.Zero
		case !whole:
			if err := bad(codeDataTruncated, stateDataTruncated, "Data truncated for column '%s' at row %d", name, rowNum); err != nil {
				return nil, err
			}
			fallthrough
		default:
			pd, err := decimal.NewFromString(num)
			if err != nil {
				return nil, nil
			}
			d = pd
		}
	}
	lo, hi, scale, ok := numberRange(typ)
	if !ok {
		return nil, nil
	}
	if scale >= 0 {
		d = d.Round(scale)
	}
	switch {
	case d.LessThan(lo):
		d = lo
	case d.GreaterThan(hi):
		d = hi
	case str == nil && isDecimalInto(v, typ):
		// A DECIMAL in an integer column's range: GMS converts it
		// through a DOUBLE (6148914691236517205.0000 stored
		// 6148914691236516864), MySQL rounds it exactly.
		return storedAs(ctx, typ, d)
	case str == nil:
		return nil, nil // a number in range: GMS rounds it as before
	default:
		return storedAs(ctx, typ, d)
	}
	if err := bad(codeWarnOutOfRange, stateWarnOutOfRange, "Out of range value for column '%s' at row %d", name, rowNum); err != nil {
		return nil, err
	}
	return storedAs(ctx, typ, d)
}

// floatOf returns v, a FLOAT or DOUBLE value, as a float64.
func floatOf(v any) (float64, bool) {
	switch f := v.(type) {
	case float64:
		return f, true
	case float32:
		return float64(f), true
	}
	return 0, false
}

// isDecimalInto reports whether v is a DECIMAL value stored into typ, an
// integer type.
func isDecimalInto(v any, typ gsql.Type) bool {
	_, ok := v.(decimal.Decimal)
	return ok && types.IsInteger(typ)
}

// storedAs converts d, which typ holds, to typ's value.
func storedAs(ctx *gsql.Context, typ gsql.Type, d decimal.Decimal) (any, error) {
	var v any = d
	if types.IsFloat(typ) {
		f, _ := d.Float64()
		v = f
	} else if types.IsInteger(typ) {
		if d.IsNegative() {
			v = d.IntPart()
		} else {
			v = d.BigInt().Uint64()
		}
	}
	out, inRange, err := typ.Convert(ctx, v)
	if err != nil || inRange != gsql.InRange {
		return nil, nil // not what fitValue expects: GMS's error stands
	}
	return out, nil
}

// numberKind names typ's values as MySQL's 1366 does.
func numberKind(typ gsql.Type) string {
	switch {
	case types.IsInteger(typ):
		return "integer"
	case types.IsDecimal(typ):
		return "decimal"
	}
	return "double"
}

// numberPrefix returns the number at the start of s, as MySQL reads a
// string stored in a numeric column, and whether s is that number alone
// (with spaces around it); "" when s starts with no number.
func numberPrefix(s string) (string, bool) {
	m := numberPrefixRE.FindString(s)
	if m == "" {
		return "", false
	}
	return strings.TrimSpace(m), strings.TrimSpace(s[len(m):]) == ""
}

// decimalValue returns v as a decimal, or, for a string, the string
// (str non-nil, the decimal unset); ok is false for a value of no
// numeric reading (a date, JSON, NaN).
func decimalValue(v any) (d decimal.Decimal, str *string, ok bool) {
	switch x := v.(type) {
	case int8:
		return decimal.NewFromInt(int64(x)), nil, true
	case int16:
		return decimal.NewFromInt(int64(x)), nil, true
	case int32:
		return decimal.NewFromInt(int64(x)), nil, true
	case int64:
		return decimal.NewFromInt(x), nil, true
	case int:
		return decimal.NewFromInt(int64(x)), nil, true
	case uint8:
		return decimal.NewFromInt(int64(x)), nil, true
	case uint16:
		return decimal.NewFromInt(int64(x)), nil, true
	case uint32:
		return decimal.NewFromInt(int64(x)), nil, true
	case uint64:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(x), 0), nil, true
	case float32:
		return floatDecimal(float64(x))
	case float64:
		return floatDecimal(x)
	case decimal.Decimal:
		return x, nil, true
	case decimal.NullDecimal:
		return x.Decimal, nil, x.Valid
	case string:
		return decimal.Decimal{}, &x, true
	case []byte:
		s := string(x)
		return decimal.Decimal{}, &s, true
	}
	return decimal.Decimal{}, nil, false
}

// floatDecimal returns f as a decimal, unless it is NaN or infinite.
func floatDecimal(f float64) (decimal.Decimal, *string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return decimal.Decimal{}, nil, false
	}
	return decimal.NewFromFloat(f), nil, true
}

// numberRange returns the smallest and largest values of a numeric type
// and the scale its values are rounded to (-1: not rounded, a
// floating-point type).
func numberRange(typ gsql.Type) (lo, hi decimal.Decimal, scale int32, ok bool) {
	if dt, isDec := typ.(gsql.DecimalType); isDec {
		p, s := int32(dt.Precision()), int32(dt.Scale())
		hi = decimal.New(1, p-s).Sub(decimal.New(1, -s))
		return hi.Neg(), hi, s, true
	}
	if minMag, maxMag, isInt := intBounds(typ); isInt {
		lo = decimal.NewFromBigInt(new(big.Int).SetUint64(minMag), 0).Neg()
		return lo, decimal.NewFromBigInt(new(big.Int).SetUint64(maxMag), 0), 0, true
	}
	switch typ.Type() {
	case sqltypes.Float32:
		hi = decimal.NewFromFloat(math.MaxFloat32)
		return hi.Neg(), hi, -1, true
	case sqltypes.Float64:
		hi = decimal.NewFromFloat(math.MaxFloat64)
		return hi.Neg(), hi, -1, true
	}
	return lo, hi, 0, false
}

// FitUpdatePlan returns u with the values its UpdateSource sets fitted
// (FitUpdate), and whether it changed u.
func FitUpdatePlan(ctx *gsql.Context, u *plan.Update) (gsql.Node, bool, error) {
	return rewriteUpdateSources(u, func(exprs []gsql.Expression, ignore bool) ([]gsql.Expression, bool) {
		out, ok := FitUpdate(ctx, exprs, ignore)
		if !ok {
			out = exprs
		}
		// NULL into a NOT NULL column (notnull.go).
		if nd, changed := implicitDefaults(out, ignore || !strictMode(ctx)); changed {
			out, ok = nd, true
		}
		return out, ok
	})
}

// rewriteUpdateSources returns u with the assignments of each of its
// UpdateSources as f returns them, and whether f changed any.
func rewriteUpdateSources(u *plan.Update, f func(exprs []gsql.Expression, ignore bool) ([]gsql.Expression, bool)) (gsql.Node, bool, error) {
	changed := false
	ret, _, err := transform.Node(u, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		src, ok := n.(*plan.UpdateSource)
		if !ok {
			return n, transform.SameTree, nil
		}
		exprs, ok := f(src.UpdateExprs, src.Ignore)
		if !ok {
			return n, transform.SameTree, nil
		}
		changed = true
		return plan.NewUpdateSource(src.Child, src.Ignore, exprs), transform.NewTree, nil
	})
	if err != nil || !changed {
		return u, false, err
	}
	return ret, true, nil
}

// intBounds returns the magnitudes of the smallest and the largest
// values of an integer type; isInt is false for other types.
func intBounds(typ gsql.Type) (minMag, maxMag uint64, isInt bool) {
	if !types.IsInteger(typ) {
		return 0, 0, false
	}
	switch typ.Type() {
	case sqltypes.Int8:
		return 1 << 7, 1<<7 - 1, true
	case sqltypes.Uint8:
		return 0, 1<<8 - 1, true
	case sqltypes.Int16:
		return 1 << 15, 1<<15 - 1, true
	case sqltypes.Uint16:
		return 0, 1<<16 - 1, true
	case sqltypes.Int24:
		return 1 << 23, 1<<23 - 1, true
	case sqltypes.Uint24:
		return 0, 1<<24 - 1, true
	case sqltypes.Int32:
		return 1 << 31, 1<<31 - 1, true
	case sqltypes.Uint32:
		return 0, 1<<32 - 1, true
	case sqltypes.Int64:
		return 1 << 63, 1<<63 - 1, true
	case sqltypes.Uint64:
		return 0, math.MaxUint64, true
	}
	return 0, 0, false
}
