package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/vitess/go/mysql"
)

// An assignment of NULL to a NOT NULL column in an UPDATE, or in the
// ON DUPLICATE KEY UPDATE of an INSERT, is error 1048 under a strict
// sql_mode; with IGNORE, or outside a strict sql_mode, MySQL stores the
// column's implicit default (0, '', the zero date) and warns 1048
// "Column 'c' cannot be null". GMS's UPDATE did that only with IGNORE,
// as a note in its own words; its upsert, and percdb's table editor
// under it, failed the statement with 1048 even under INSERT IGNORE
// (`INSERT IGNORE … SELECT … ON DUPLICATE KEY UPDATE c = NULL` changed
// nothing where MySQL updates the rows). implicitDefaults puts the
// implicit default in the value of each such assignment, for FitUpdate
// when the statement is lenient: IGNORE, or outside a strict sql_mode
// (but for an upsert of one row of VALUES, which MySQL fails with 1048
// in every sql_mode, as its INSERT of a NULL). Otherwise the error
// stays GMS's and the table editor's.

// implicitDefaults returns exprs with the value of each SET of a NOT
// NULL column wrapped in an implicitDefault when lenient, and whether it
// wrapped any (none when they already are, or lenient is false).
func implicitDefaults(exprs []gsql.Expression, lenient bool) ([]gsql.Expression, bool) {
	if !lenient {
		return exprs, false
	}
	var out []gsql.Expression
	for i, e := range exprs {
		set, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		if _, done := set.RightChild.(*implicitDefault); done {
			return exprs, false
		}
		gf, ok := set.LeftChild.(*expression.GetField)
		// A DEFAULT is GMS's to evaluate.
		if !ok || gf.IsNullable() {
			continue
		}
		if _, isDefault := set.RightChild.(*gsql.ColumnDefaultValue); isDefault {
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), exprs...)
		}
		out[i] = expression.NewSetField(gf, &implicitDefault{
			UnaryExpression: expression.UnaryExpression{Child: set.RightChild},
			typ:             gf.Type(), name: gf.Name()})
	}
	return out, out != nil
}

// implicitDefault is the value assigned to a NOT NULL column: the
// column's implicit default, with warning 1048, in place of NULL.
type implicitDefault struct {
	expression.UnaryExpression
	typ  gsql.Type
	name string
}

var _ gsql.Expression = (*implicitDefault)(nil)

// Type implements sql.Expression.
func (d *implicitDefault) Type() gsql.Type { return d.Child.Type() }

// IsNullable implements sql.Expression: it is never NULL.
func (d *implicitDefault) IsNullable() bool { return false }

// String implements sql.Expression: the value's own text.
func (d *implicitDefault) String() string { return d.Child.String() }

// Eval implements sql.Expression.
func (d *implicitDefault) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err != nil || v != nil {
		return v, err
	}
	ctx.Warn(mysql.ERBadNullError, "Column '%s' cannot be null", d.name)
	return d.typ.Zero(), nil
}

// WithChildren implements sql.Expression.
func (d *implicitDefault) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	ret := *d
	ret.Child = children[0]
	return &ret, nil
}
