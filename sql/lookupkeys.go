package sql

import (
	"fmt"
	"math"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/sql/compat"
	"github.com/shopspring/decimal"
)

// A lookup join reads its inner table by the outer row's key values,
// converted to the index columns' types by GMS's LookupBuilder. That
// conversion clamps a value outside an integer column's range (300 into
// a TINYINT is 127) and rounds a fraction (1.5 into an INT is 2), and
// the lookup's answer is taken as the match: `JOIN tp ON tp.id = o.k`
// joined o.k = 300 to tp.id = 127, where MySQL, comparing the values as
// they are, matches nothing. Both the batched join (lookupjoin.go) and
// GMS's per-row join read the key so.
//
// exactLookupKeys wraps each such key expression of an equality lookup
// (not a null-safe one) in exactKey, which answers NULL for a value no
// row of the column can equal: a NULL key of an equality lookup reads
// nothing, in both joins. A key whose type fits in the column's (an INT
// key of a BIGINT column, the common case) is left as it is. A string
// key is read as MySQL compares a string with a number, as a DOUBLE
// (warning 1292 when it is no number): the semi lookup join of `s IN
// (SELECT id …)` read '1.5' as the row of 2 and 'ab' with no warning,
// so a strict UPDATE with that IN did not fail (docs/difftest.md, round
// longruns8).
func exactLookupKeys(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		ita, ok := n.(*plan.IndexedTableAccess)
		if !ok {
			return n, transform.SameTree, nil
		}
		exprs := ita.Expressions()
		if len(exprs) == 0 {
			return n, transform.SameTree, nil
		}
		cets := ita.Index().ColumnExpressionTypes()
		mask := ita.NullMask()
		var wrapped []gsql.Expression
		for i, e := range exprs {
			if i >= len(cets) || i < len(mask) && mask[i] {
				continue
			}
			col, ok := cets[i].Type.(types.NumberTypeImpl_)
			if !ok || !types.IsInteger(col) || !types.IsNumber(e.Type()) && !types.IsText(e.Type()) || keyFits(e.Type(), col) {
				continue
			}
			if wrapped == nil {
				wrapped = append([]gsql.Expression(nil), exprs...)
			}
			wrapped[i] = &exactKey{key: e, col: col}
		}
		if wrapped == nil {
			return n, transform.SameTree, nil
		}
		nn, err := ita.WithExpressions(wrapped...)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nn, transform.NewTree, nil
	})
}

// intWidth returns the width rank of an integer type and whether it is
// unsigned; ok is false for any other type.
func intWidth(t gsql.Type) (width int, unsigned, ok bool) {
	switch t.Type() {
	case sqltypes.Int8:
		return 1, false, true
	case sqltypes.Uint8:
		return 1, true, true
	case sqltypes.Int16:
		return 2, false, true
	case sqltypes.Uint16:
		return 2, true, true
	case sqltypes.Int24:
		return 3, false, true
	case sqltypes.Uint24:
		return 3, true, true
	case sqltypes.Int32:
		return 4, false, true
	case sqltypes.Uint32:
		return 4, true, true
	case sqltypes.Int64:
		return 8, false, true
	case sqltypes.Uint64:
		return 8, true, true
	}
	return 0, false, false
}

// keyFits reports whether every value of type key is a value of the
// integer column type col.
func keyFits(key, col gsql.Type) bool {
	kw, ku, ok := intWidth(key)
	if !ok {
		return false
	}
	cw, cu, _ := intWidth(col)
	switch {
	case ku == cu:
		return kw <= cw
	case ku:
		return kw < cw // unsigned into a wider signed
	default:
		return false // a negative key into an unsigned column
	}
}

// exactKey is a lookup's key value, or NULL when no value of the integer
// column col equals it (out of its range, or with a fraction): see
// exactLookupKeys.
type exactKey struct {
	key gsql.Expression
	col types.NumberTypeImpl_
}

var _ gsql.Expression = (*exactKey)(nil)

// Resolved implements sql.Expression.
func (e *exactKey) Resolved() bool { return e.key.Resolved() }

// String implements sql.Expression: the key's, so that EXPLAIN reads as
// it did.
func (e *exactKey) String() string { return e.key.String() }

// Type implements sql.Expression.
func (e *exactKey) Type() gsql.Type { return e.key.Type() }

// IsNullable implements sql.Expression.
func (e *exactKey) IsNullable() bool { return true }

// Children implements sql.Expression.
func (e *exactKey) Children() []gsql.Expression { return []gsql.Expression{e.key} }

// WithChildren implements sql.Expression.
func (e *exactKey) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, fmt.Errorf("exactKey: %d children, want 1", len(children))
	}
	return &exactKey{key: children[0], col: e.col}, nil
}

// Eval implements sql.Expression.
func (e *exactKey) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := e.key.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if s, ok := v.(string); ok {
		v = compat.StringAsDouble(ctx, s, false)
	}
	switch f := v.(type) {
	case float64:
		if f != math.Trunc(f) {
			return nil, nil
		}
	case float32:
		if float64(f) != math.Trunc(float64(f)) {
			return nil, nil
		}
	case decimal.Decimal:
		if !f.Equal(f.Truncate(0)) {
			return nil, nil
		}
	}
	if _, inRange, err := e.col.Convert(ctx, v); err != nil || inRange != gsql.InRange {
		return nil, nil
	}
	return v, nil
}
