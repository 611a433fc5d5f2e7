package compat

import (
	"fmt"
	"math"

	"github.com/shopspring/decimal"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// DECIMAL comparisons of filters without GMS's per-row text round trip.
// GMS compares two values of one DECIMAL type by converting each to the
// type again (DecimalType.Compare): a column's type rounds every value
// whose exponent is not the type's scale, which is every value with a
// fraction, by formatting it as text and parsing the text back
// (StringFixed, NewFromString). A comparison ExactDecimalColumns made
// exact converts each side to a common DECIMAL first (CAST, the same
// round trip and a bounds check) and then compares the converted values
// that way: four round trips a row. TPC-C's consistency check 3.3.2.12
// (`c1 + c_ytd_payment <> sm` over 30,000 customers) and any filter such
// as `c_balance + c_ytd_payment <> c_id` spent most of their CPU there.
//
// FastDecimalComparisons replaces such comparisons by decimalCompare,
// which evaluates the two sides and, when both values are decimals or
// integers that the type holds exactly (no digit beyond its scale, and
// inside its bounds where a CAST checks them), compares them with
// decimal.Cmp: that is what GMS's conversions give, since they leave
// such a value's number as it is. Any other value (a NULL aside: NULL
// compares to NULL) is compared by the original comparison over
// literals of the two values, so that rounding, clipping, warnings and
// errors stay GMS's (with percdb's fixes around it).
//
// A DECIMAL beside a column typed DOUBLE (ExactDecimalColumns casts the
// DECIMAL to DOUBLE) is compared exactly when the column's value is a
// DECIMAL: a derived table's column that reads a SUM or AVG of exact
// numbers, which percdb computes as MySQL's DECIMAL (ExactAggregates), is
// typed DOUBLE outside the derived table (GMS's type of the aggregate).
// MySQL's column is a DECIMAL and compares exactly: as doubles,
// 12345678901234567.01 <> 12345678901234567.02 was false. A DOUBLE value
// is compared as GMS compares it.
//
// Only the comparisons of a Filter's condition are replaced (the
// row-iterator builder's, sql/compat_exec.go): a join's condition is
// read by GMS's merge join, which needs its comparisons as they are.

// FastDecimalComparisons returns e with its comparisons of two DECIMALs
// of one type (a CAST to one DECIMAL each, or two values of one DECIMAL
// type) replaced by decimalCompare, and whether it replaced any.
func FastDecimalComparisons(e gsql.Expression) (gsql.Expression, bool) {
	changed := false
	ret, _, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		d, ok := newDecimalCompare(e)
		if !ok {
			return e, transform.SameTree, nil
		}
		changed = true
		return d, transform.NewTree, nil
	})
	if err != nil || !changed {
		return e, false
	}
	return ret, true
}

// decimalCompare is a comparison of two DECIMAL values of one type, with
// a fast path for values the type holds exactly. See the comment at the
// top of the file.
type decimalCompare struct {
	// cmp is the comparison replaced (Equals, LessThan, ...).
	cmp expression.BinaryExpression
	// left and right are the values compared: cmp's children, or the
	// children of its CASTs (casts) to one DECIMAL.
	left, right gsql.Expression
	casts       bool
	// mistyped says the comparison is of a DECIMAL cast to DOUBLE (the
	// side marked leftCast or rightCast) and a column typed DOUBLE whose
	// values are compared exactly when they are DECIMALs.
	mistyped            bool
	leftCast, rightCast bool
	// scale is the digits after the point the type holds; limit, where
	// bounded (a CAST checks its bounds), bounds the absolute values it
	// holds.
	scale   int32
	bounded bool
	limit   decimal.Decimal
	// want says which results of Cmp make the comparison true.
	want func(int) bool
}

var _ gsql.Expression = (*decimalCompare)(nil)

// comparisonWant returns which results of a three-way comparison make e,
// a comparison, true.
func comparisonWant(e gsql.Expression) (func(int) bool, bool) {
	switch e.(type) {
	case *expression.Equals:
		return func(c int) bool { return c == 0 }, true
	case *expression.LessThan:
		return func(c int) bool { return c < 0 }, true
	case *expression.LessThanOrEqual:
		return func(c int) bool { return c <= 0 }, true
	case *expression.GreaterThan:
		return func(c int) bool { return c > 0 }, true
	case *expression.GreaterThanOrEqual:
		return func(c int) bool { return c >= 0 }, true
	}
	// (NULL-safe equality answers NULLs otherwise: left to GMS.)
	return nil, false
}

// newDecimalCompare returns e as a decimalCompare when e is a comparison
// of two DECIMAL values of one type.
func newDecimalCompare(e gsql.Expression) (*decimalCompare, bool) {
	want, ok := comparisonWant(e)
	if !ok {
		return nil, false
	}
	b := e.(expression.BinaryExpression)
	l, r := b.Left(), b.Right()
	if d, ok := newMistypedCompare(b, want); ok {
		return d, true
	}
	lt, rt := l.Type(), r.Type()
	if !types.IsDecimal(lt) || !types.TypesEqual(lt, rt) {
		return nil, false
	}
	dt, ok := lt.(gsql.DecimalType)
	if !ok {
		return nil, false
	}
	d := &decimalCompare{cmp: b, left: l, right: r, scale: int32(dt.Scale()), want: want}
	lc, lcast := l.(*expression.Convert)
	rc, rcast := r.(*expression.Convert)
	if lcast != rcast {
		return nil, false
	}
	if lcast {
		// CASTs to one DECIMAL (ExactDecimalColumns') of numbers: the
		// values are the CASTs' arguments, held exactly when inside the
		// DECIMAL's bounds too.
		if !types.IsNumber(lc.Child.Type()) || !types.IsNumber(rc.Child.Type()) {
			return nil, false
		}
		d.left, d.right, d.casts = lc.Child, rc.Child, true
		d.bounded = true
		d.limit = decimal.New(1, int32(dt.Precision())-int32(dt.Scale()))
	}
	return d, true
}

// newMistypedCompare returns b as a decimalCompare when it compares a
// DECIMAL cast to DOUBLE with a column typed DOUBLE (ExactDecimalColumns'
// rewrite), in either order: values that are both exact numbers are
// compared exactly.
func newMistypedCompare(b expression.BinaryExpression, want func(int) bool) (*decimalCompare, bool) {
	l, r := b.Left(), b.Right()
	lc, lcast := l.(*expression.Convert)
	rc, rcast := r.(*expression.Convert)
	var dec, col gsql.Expression
	switch {
	case lcast && !rcast:
		dec, col = lc.Child, r
	case rcast && !lcast:
		dec, col = rc.Child, l
	default:
		return nil, false
	}
	if !types.IsDecimal(dec.Type()) || !types.IsFloat(col.Type()) || !types.IsFloat(b.Left().Type()) || !types.IsFloat(b.Right().Type()) {
		return nil, false
	}
	if _, ok := col.(*expression.GetField); !ok {
		return nil, false
	}
	d := &decimalCompare{cmp: b, left: l, right: r, want: want, mistyped: true, scale: math.MaxInt32}
	if lcast {
		d.left, d.leftCast = lc.Child, true
	} else {
		d.right, d.rightCast = rc.Child, true
	}
	return d, true
}

// exact returns v as a decimal when it is a decimal or an integer the
// comparison's type holds exactly.
func (d *decimalCompare) exact(v any) (decimal.Decimal, bool) {
	if d.mistyped {
		if _, ok := v.(decimal.Decimal); !ok {
			// An integer or a double in the DOUBLE column: GMS's
			// comparison as doubles.
			return decimal.Decimal{}, false
		}
	}
	var x decimal.Decimal
	if dv, ok := v.(decimal.Decimal); ok {
		x = dv
	} else if n, ok := smallInt(v); ok {
		x = decimal.NewFromInt(n)
	} else {
		return x, false
	}
	if -x.Exponent() > d.scale {
		return x, false // the type would round it
	}
	if d.bounded && !x.Abs().LessThan(d.limit) {
		return x, false // the CAST would clip it
	}
	return x, true
}

// Eval implements gsql.Expression.
func (d *decimalCompare) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	// Both sides are evaluated, as GMS's comparison evaluates them.
	lv, err := d.left.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	rv, err := d.right.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if lv == nil || rv == nil {
		return nil, nil
	}
	if a, ok := d.exact(lv); ok {
		if b, ok := d.exact(rv); ok {
			return d.want(a.Cmp(b)), nil
		}
	}
	return d.slow(ctx, lv, rv)
}

// slow compares lv and rv with the original comparison.
func (d *decimalCompare) slow(ctx *gsql.Context, lv, rv any) (any, error) {
	l := gsql.Expression(expression.NewLiteral(lv, d.left.Type()))
	r := gsql.Expression(expression.NewLiteral(rv, d.right.Type()))
	c, err := d.withValues(l, r)
	if err != nil {
		return nil, err
	}
	return c.Eval(ctx, nil)
}

// withValues returns the original comparison of l and r (in its CASTs).
func (d *decimalCompare) withValues(l, r gsql.Expression) (gsql.Expression, error) {
	var err error
	if d.casts || d.leftCast {
		if l, err = d.cmp.Left().WithChildren(l); err != nil {
			return nil, err
		}
	}
	if d.casts || d.rightCast {
		if r, err = d.cmp.Right().WithChildren(r); err != nil {
			return nil, err
		}
	}
	return d.cmp.WithChildren(l, r)
}

// Resolved implements gsql.Expression.
func (d *decimalCompare) Resolved() bool { return d.cmp.Resolved() }

// String implements gsql.Expression: the comparison's.
func (d *decimalCompare) String() string { return d.cmp.String() }

// Type implements gsql.Expression.
func (d *decimalCompare) Type() gsql.Type { return d.cmp.Type() }

// IsNullable implements gsql.Expression.
func (d *decimalCompare) IsNullable() bool { return d.cmp.IsNullable() }

// Children implements gsql.Expression: the values compared.
func (d *decimalCompare) Children() []gsql.Expression {
	return []gsql.Expression{d.left, d.right}
}

// WithChildren implements gsql.Expression.
func (d *decimalCompare) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 2 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 2)
	}
	c, err := d.withValues(children[0], children[1])
	if err != nil {
		return nil, err
	}
	b, ok := c.(expression.BinaryExpression)
	if !ok {
		return nil, fmt.Errorf("decimal comparison: %T is not a binary expression", c)
	}
	out := *d
	out.cmp, out.left, out.right = b, children[0], children[1]
	return &out, nil
}

// CollationCoercibility implements gsql.CollationCoercible: the
// comparison's.
func (d *decimalCompare) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, d.cmp)
}
