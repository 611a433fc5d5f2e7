package compat

import (
	"fmt"
	"hash/fnv"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// A hash join (HashLookup) converts both sides' key values to the type
// of the probe side's key and uses the result as a Go map key. Two
// defects follow:
//
//   - a DECIMAL key is a decimal.Decimal, which holds a pointer: equal
//     decimals are different map keys, so a join on a DECIMAL column
//     (d = i, or d1 = d2) found almost none of its matches;
//   - a key of another kind is converted to the probe side's type, which
//     MySQL does not do: it compares an INT with a DOUBLE or DECIMAL as
//     numbers, a string with a number as doubles ('7.0' = 7), a DATE with
//     a DATETIME as DATETIMEs, so equal values could land in different
//     buckets (or the conversion fail the query).
//
// The join condition itself is evaluated on every pair a bucket yields,
// so a key only has to put values that compare equal into the same
// bucket. comparableHashKeys makes it so: a pair of numeric keys of which
// one is DECIMAL or floating point becomes a pair of float64 keys (equal
// numbers give equal doubles; unequal ones that collide are told apart by
// the condition), and a pair of keys of different kinds (a number and a
// string, a date and a string, DATE and DATETIME) becomes a constant,
// which leaves the condition alone to decide, as a nested loop would.

// comparableHashKeys returns the probe and entry keys of a hash join with
// the pairs rewritten as above.
func comparableHashKeys(left, right gsql.Expression) (gsql.Expression, gsql.Expression, transform.TreeIdentity) {
	lt, lok := left.(expression.Tuple)
	rt, rok := right.(expression.Tuple)
	if !lok || !rok {
		if lok || rok {
			return left, right, transform.SameTree
		}
		l, r, same := comparableHashKey(left, right)
		return l, r, same
	}
	if len(lt) != len(rt) {
		return left, right, transform.SameTree
	}
	var ls, rs []gsql.Expression
	for i := range lt {
		l, r, same := comparableHashKey(lt[i], rt[i])
		if same {
			continue
		}
		if ls == nil {
			ls, rs = append([]gsql.Expression(nil), lt...), append([]gsql.Expression(nil), rt...)
		}
		ls[i], rs[i] = l, r
	}
	if ls == nil {
		return left, right, transform.SameTree
	}
	return expression.NewTuple(ls...), expression.NewTuple(rs...), transform.NewTree
}

// comparableHashKey rewrites one pair of keys.
func comparableHashKey(l, r gsql.Expression) (gsql.Expression, gsql.Expression, transform.TreeIdentity) {
	if _, ok := l.(*numericHashKey); ok {
		return l, r, transform.SameTree
	}
	a, b := l.Type(), r.Type()
	if a == types.Null || b == types.Null {
		return l, r, transform.SameTree
	}
	switch {
	case types.IsNumber(a) && types.IsNumber(b):
		if types.IsDecimal(a) || types.IsDecimal(b) || types.IsFloat(a) || types.IsFloat(b) {
			return &numericHashKey{child: l}, &numericHashKey{child: r}, transform.NewTree
		}
		return l, r, transform.SameTree
	case types.IsNumber(a) || types.IsNumber(b),
		types.IsText(a) != types.IsText(b),
		types.IsTime(a) && types.IsTime(b) && types.IsDateType(a) != types.IsDateType(b):
		return sameBucket(), sameBucket(), transform.NewTree
	}
	return l, r, transform.SameTree
}

// sameBucket is a key that puts every row into one bucket.
func sameBucket() gsql.Expression { return expression.NewLiteral(int64(0), types.Int64) }

// numericHashKey is a number as a float64, the hash key of a number
// compared with numbers of other types.
type numericHashKey struct{ child gsql.Expression }

var _ gsql.Expression = (*numericHashKey)(nil)

// Resolved implements sql.Expression.
func (k *numericHashKey) Resolved() bool { return k.child.Resolved() }

// String implements sql.Expression.
func (k *numericHashKey) String() string { return fmt.Sprintf("numeric_hash(%s)", k.child) }

// Type implements sql.Expression.
func (k *numericHashKey) Type() gsql.Type { return types.Float64 }

// IsNullable implements sql.Expression.
func (k *numericHashKey) IsNullable() bool { return k.child.IsNullable() }

// Children implements sql.Expression.
func (k *numericHashKey) Children() []gsql.Expression { return []gsql.Expression{k.child} }

// WithChildren implements sql.Expression.
func (k *numericHashKey) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	return &numericHashKey{child: children[0]}, nil
}

// Eval implements sql.Expression.
func (k *numericHashKey) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := k.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	var f float64
	switch v := v.(type) {
	case decimal.Decimal:
		f = v.InexactFloat64()
	case float64:
		f = v
	default:
		c, _, err := types.Float64.Convert(ctx, v)
		if err != nil {
			// Not a number after all: one bucket for all such values,
			// the join condition decides.
			return float64(0), nil
		}
		f = c.(float64)
	}
	if f == 0 {
		f = 0 // -0 and 0 are one key
	}
	return f, nil
}

// A lookup join (IndexedTableAccess keyed by the outer row) converts its
// key to the index column's type and does not check the join condition
// the lookup stands for: x1.a = x2.c0, an INT column looked up by the
// DECIMAL 1.50, found the row of a = 2, and x1.dt = x2.d, a DATE column
// looked up by the DATETIME '2020-02-29 23:59:59', found the row of
// '2020-02-29' (MySQL compares a DATE and a DATETIME as DATETIMEs).
// exactLookupKeys wraps such keys (a DECIMAL or floating-point key into
// an INT or DECIMAL column, a DATETIME or TIMESTAMP key into a DATE
// column, a TIME read as a number into a number column) so that a value
// the column's type cannot hold exactly is a NULL key, which matches
// nothing, as the comparison would.
func exactLookupKeys(n *plan.IndexedTableAccess) (gsql.Node, transform.TreeIdentity, error) {
	keys := n.Expressions()
	idx := n.Index()
	if len(keys) == 0 || idx == nil {
		return n, transform.SameTree, nil
	}
	cols := idx.ColumnExpressionTypes()
	var out []gsql.Expression
	for i, k := range keys {
		if i >= len(cols) {
			break
		}
		if _, ok := k.(*exactKey); ok {
			continue
		}
		kt, ct := k.Type(), cols[i].Type
		numeric := (types.IsDecimal(kt) || types.IsFloat(kt)) && (types.IsInteger(ct) || types.IsDecimal(ct))
		temporal := types.IsTime(kt) && !types.IsDateType(kt) && types.IsDateType(ct)
		// A TIME key into a number column: GMS's conversion of a
		// TIME to a number fails, so the lookup found nothing; MySQL
		// compares the TIME's number, HHMMSS[.ffffff].
		timeNumber := isTimeType(kt) && types.IsNumber(ct)
		if !numeric && !temporal && !timeNumber {
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), keys...)
		}
		if timeNumber {
			k = newTimeNumber(k)
		}
		out[i] = &exactKey{child: k, typ: ct}
	}
	if out == nil {
		return n, transform.SameTree, nil
	}
	ret, err := n.WithExpressions(out...)
	if err != nil {
		return n, transform.SameTree, err
	}
	return ret, transform.NewTree, nil
}

// exactKey is a lookup key that is NULL when typ (a number type, or
// DATE) cannot hold its value exactly.
type exactKey struct {
	child gsql.Expression
	typ   gsql.Type
}

var _ gsql.Expression = (*exactKey)(nil)

// Resolved implements sql.Expression.
func (k *exactKey) Resolved() bool { return k.child.Resolved() }

// String implements sql.Expression.
func (k *exactKey) String() string { return fmt.Sprintf("exact_key(%s)", k.child) }

// Type implements sql.Expression.
func (k *exactKey) Type() gsql.Type { return k.child.Type() }

// IsNullable implements sql.Expression.
func (k *exactKey) IsNullable() bool { return true }

// Children implements sql.Expression.
func (k *exactKey) Children() []gsql.Expression { return []gsql.Expression{k.child} }

// WithChildren implements sql.Expression.
func (k *exactKey) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	return &exactKey{child: children[0], typ: k.typ}, nil
}

// Eval implements sql.Expression.
func (k *exactKey) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := k.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	c, _, err := k.typ.Convert(ctx, v)
	if err != nil {
		return nil, nil
	}
	if types.IsTime(k.typ) {
		// A DATETIME into a DATE column: exact when it has no time of day.
		t, tok := v.(time.Time)
		d, dok := c.(time.Time)
		if !tok || !dok || !t.Equal(d) {
			return nil, nil
		}
		return v, nil
	}
	a, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return nil, nil
	}
	b, _, err := types.InternalDecimalType.Convert(ctx, c)
	if err != nil || !a.(decimal.Decimal).Equal(b.(decimal.Decimal)) {
		return nil, nil
	}
	return v, nil
}

// GMS evaluates x IN (SELECT c ...) by converting x to c's type and
// looking it up in a hash of c's values: a DOUBLE 1.5 against INT values
// became 2 and was found. numberKeyer keys both sides as MySQL compares
// them: as doubles when either is floating point, else as exact
// decimals; collatedIn (collation.go) looks the key of x up.
type numberKeyer struct{ float bool }

// newInKeyer returns the keyer for x IN (SELECT c) with x of type a and c
// of type b, when GMS's conversion of x to b would be wrong: numbers of
// which one is DECIMAL or floating point (numberKeyer), or a DATE and a
// DATETIME or TIMESTAMP (datetimeKeyer: MySQL compares them as DATETIMEs,
// GMS cut the DATETIME to a DATE), or a TIME and a number
// (timeNumberKeyer: MySQL compares them as numbers, GMS found no match).
func newInKeyer(a, b gsql.Type) (valueKeyer, bool) {
	if types.IsTime(a) && types.IsTime(b) && types.IsDateType(a) != types.IsDateType(b) {
		return datetimeKeyer{}, true
	}
	if (isTimeType(a) && types.IsNumber(b)) || (types.IsNumber(a) && isTimeType(b)) {
		return timeNumberKeyer{}, true
	}
	k, ok := newNumberKeyer(a, b)
	return k, ok
}

// datetimeKeyer keys DATEs and DATETIMEs as DATETIMEs.
type datetimeKeyer struct{}

// key implements valueKeyer.
func (datetimeKeyer) key(ctx *gsql.Context, v any) (uint64, error) {
	t, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
	if err != nil {
		return 0, err
	}
	return uint64(t.(time.Time).UnixNano()), nil
}

// timeNumberKeyer keys TIMEs and numbers as numbers, a TIME as
// HHMMSS.ffffff (00:00:08 is 8).
type timeNumberKeyer struct{}

// key implements valueKeyer.
func (timeNumberKeyer) key(ctx *gsql.Context, v any) (uint64, error) {
	var d decimal.Decimal
	if ts, ok := v.(types.Timespan); ok {
		d = timeDecimal(ts)
	} else {
		x, _, err := types.InternalDecimalType.Convert(ctx, v)
		if err != nil {
			return 0, err
		}
		d = x.(decimal.Decimal)
	}
	h := fnv.New64a()
	h.Write([]byte(d.String()))
	return h.Sum64(), nil
}

// newNumberKeyer returns the keyer for numbers of types a and b of which
// one is DECIMAL or floating point, when the types differ.
func newNumberKeyer(a, b gsql.Type) (numberKeyer, bool) {
	if !types.IsNumber(a) || !types.IsNumber(b) || a.Equals(b) {
		return numberKeyer{}, false
	}
	if !(types.IsDecimal(a) || types.IsDecimal(b) || types.IsFloat(a) || types.IsFloat(b)) {
		return numberKeyer{}, false
	}
	return numberKeyer{float: types.IsFloat(a) || types.IsFloat(b)}, true
}

// key implements valueKeyer.
func (k numberKeyer) key(ctx *gsql.Context, v any) (uint64, error) {
	h := fnv.New64a()
	if k.float {
		f, _, err := types.Float64.Convert(ctx, v)
		if err != nil {
			return 0, err
		}
		x := f.(float64)
		if x == 0 {
			x = 0
		}
		fmt.Fprintf(h, "%v", x)
		return h.Sum64(), nil
	}
	d, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return 0, err
	}
	h.Write([]byte(d.(decimal.Decimal).String()))
	return h.Sum64(), nil
}
