package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS evaluates x IN (SELECT c …) by converting x to c's type and
// looking it up among the subquery's values: a string x that is no
// number beside an INT c failed the conversion and was not found, so
// `'ab' IN (SELECT 0)` was 0 with no warning, and '1.5' beside an INT
// was rounded to 2. MySQL compares a string with a number as DOUBLEs
// (MySQL 8 reference manual, Type Conversion in Expression Evaluation):
// 'ab' is 0 there, with warning 1292 "Truncated incorrect DOUBLE value",
// and 1.5 is not 2. MixedInSubqueries, an analyzer rule run once the
// subqueries are analysed, puts doubleInSubquery in place of an IN
// subquery of one column that meets a string with a number; an IN that
// GMS made a semi join (a WHERE's) is not one any more and is left as
// planned.

// MixedInSubqueries is the analyzer rule; see the comment above.
func MixedInSubqueries(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.SubqueryIsSet() {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		in, ok := e.(*plan.InSubquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		sq, ok := in.Right().(*plan.Subquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		lt, rt := in.Left().Type(), sq.Type()
		if types.NumColumns(lt) != 1 || types.NumColumns(rt) != 1 {
			return e, transform.SameTree, nil
		}
		if !(types.IsText(lt) && types.IsNumber(rt)) && !(types.IsNumber(lt) && types.IsText(rt)) {
			return e, transform.SameTree, nil
		}
		return &doubleInSubquery{left: in.Left(), sq: sq}, transform.NewTree, nil
	})
}

// doubleInSubquery is left IN (sq) of a string and a number, compared
// as DOUBLEs: true when a value of sq equals left, else NULL when left
// or a value of sq is NULL (NULL IN an empty subquery is false), else
// false.
type doubleInSubquery struct {
	left gsql.Expression
	sq   *plan.Subquery
}

var _ gsql.Expression = (*doubleInSubquery)(nil)

// Resolved implements sql.Expression.
func (d *doubleInSubquery) Resolved() bool { return d.left.Resolved() && d.sq.Resolved() }

// String implements sql.Expression: the IN's own text.
func (d *doubleInSubquery) String() string {
	return fmt.Sprintf("(%s IN %s)", d.left, d.sq)
}

// Type implements sql.Expression.
func (d *doubleInSubquery) Type() gsql.Type { return types.Boolean }

// IsNullable implements sql.Expression.
func (d *doubleInSubquery) IsNullable() bool { return true }

// Children implements sql.Expression.
func (d *doubleInSubquery) Children() []gsql.Expression { return []gsql.Expression{d.left, d.sq} }

// WithChildren implements sql.Expression.
func (d *doubleInSubquery) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 2 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 2)
	}
	sq, ok := children[1].(*plan.Subquery)
	if !ok {
		return plan.NewInSubquery(children[0], children[1]), nil
	}
	return &doubleInSubquery{left: children[0], sq: sq}, nil
}

// Eval implements sql.Expression. The left side is evaluated first, as
// GMS's InSubquery evaluates it.
func (d *doubleInSubquery) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	lv, err := d.left.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	values, err := d.sq.EvalMultiple(ctx, row)
	if err != nil {
		return nil, err
	}
	if lv == nil {
		if len(values) == 0 {
			return false, nil
		}
		return nil, nil
	}
	x, err := inValueAsDouble(ctx, lv, d.left)
	if err != nil {
		return nil, err
	}
	sawNull := false
	for _, v := range values {
		if v == nil {
			sawNull = true
			continue
		}
		y, err := inValueAsDouble(ctx, v, nil)
		if err != nil {
			return nil, err
		}
		if x == y {
			return true, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return false, nil
}

// inValueAsDouble returns v, a value of e (nil for a subquery's value), as the
// DOUBLE MySQL reads it as beside a string or a number: a string by its
// numeric prefix, warning 1292 when it is no number as a whole (once a
// statement for a constant e).
func inValueAsDouble(ctx *gsql.Context, v any, e gsql.Expression) (float64, error) {
	if s, ok := v.(string); ok {
		return StringAsDouble(ctx, s, e != nil && isConstant(e)), nil
	}
	f, _, err := types.Float64.Convert(ctx, v)
	if err != nil {
		return 0, fmt.Errorf("IN subquery value %v as DOUBLE: %w", v, err)
	}
	return f.(float64), nil
}
