package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// INSERT IGNORE … ON DUPLICATE KEY UPDATE c = NULL of a NOT NULL column:
// MySQL 8 stores the column's implicit default (0, '', the zero date)
// with warning 1048 "Column 'c' cannot be null", as INSERT IGNORE and
// UPDATE IGNORE do (IGNORE downgrades the error of Field::check_constraints
// to a warning). GMS passed the NULL to the table's editor, whose 1048
// failed the statement under IGNORE too. UpsertNullDefaults wraps the
// value of each such assignment of an IGNORE statement in nullDefault.
// Without IGNORE the statement fails 1048 in every sql_mode (MySQL's
// single-row INSERT checks NULLs as errors; MariaDB 10.11 agrees).

// codeBadNull is MySQL's ER_BAD_NULL_ERROR.
const codeBadNull = 1048

// UpsertNullDefaults returns n with its ON DUPLICATE KEY UPDATE values of
// NOT NULL columns made their column's implicit default, with a warning,
// where they are NULL, when n is INSERT IGNORE; and whether it changed n
// (not when it already has). It runs after FitUpsert: the implicit
// default is stored as it is, not fitted (a zero date is no 1264 under
// NO_ZERO_DATE).
func UpsertNullDefaults(n *plan.InsertInto) (*plan.InsertInto, bool) {
	if !n.Ignore || len(n.OnDupExprs) == 0 {
		return n, false
	}
	out, ok := nullDefaults(n.OnDupExprs)
	if !ok {
		return n, false
	}
	m := *n
	m.OnDupExprs = out
	return &m, true
}

// UPDATE SET c = NULL of a NOT NULL column outside strict mode: MySQL 8
// stores the implicit default with warning 1048 (mysql_update checks
// fields with CHECK_FIELD_WARN); GMS failed it 1048 unless IGNORE (with
// IGNORE GMS stores the default itself). UpdateNullDefaults wraps such
// values as UpsertNullDefaults does; it runs after FitUpdatePlan.

// UpdateNullDefaults returns u with the values its SET assigns to NOT
// NULL columns made the column's implicit default where they are NULL,
// with a warning, when the sql_mode is not strict and u is not IGNORE;
// and whether it changed u.
func UpdateNullDefaults(ctx *gsql.Context, u *plan.Update) (gsql.Node, bool, error) {
	if u.Ignore || strictMode(ctx) {
		return u, false, nil
	}
	return rewriteUpdateSources(u, func(exprs []gsql.Expression, _ bool) ([]gsql.Expression, bool) {
		return nullDefaults(exprs)
	})
}

// nullDefaults returns exprs, assignments, with the value of each to a
// NOT NULL column wrapped in nullDefault, and whether it wrapped any
// (none when they already are).
func nullDefaults(exprs []gsql.Expression) ([]gsql.Expression, bool) {
	var out []gsql.Expression
	for i, e := range exprs {
		set, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		gf, ok := set.LeftChild.(*expression.GetField)
		if !ok || gf.IsNullable() {
			continue
		}
		switch set.RightChild.(type) {
		case *nullDefault:
			return exprs, false
		case *gsql.ColumnDefaultValue:
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), exprs...)
		}
		out[i] = expression.NewSetField(gf, &nullDefault{UnaryExpression: expression.UnaryExpression{Child: set.RightChild},
			typ: gf.Type(), name: gf.Name()})
	}
	return out, out != nil
}

// nullDefault is the value assigned to a NOT NULL column: its child's,
// or, where that is NULL, the column type's implicit default with
// warning 1048.
type nullDefault struct {
	expression.UnaryExpression
	typ  gsql.Type
	name string
}

var _ gsql.Expression = (*nullDefault)(nil)

// Type implements sql.Expression.
func (d *nullDefault) Type() gsql.Type { return d.typ }

// IsNullable implements sql.Expression.
func (d *nullDefault) IsNullable() bool { return false }

// String implements sql.Expression: the value's own text.
func (d *nullDefault) String() string { return d.Child.String() }

// Eval implements sql.Expression.
func (d *nullDefault) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err != nil || v != nil {
		return v, err
	}
	ctx.Session.Warn(&gsql.Warning{Level: "Warning", Code: codeBadNull, Message: fmt.Sprintf("Column '%s' cannot be null", d.name)})
	return d.typ.Zero(), nil
}

// WithChildren implements sql.Expression.
func (d *nullDefault) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	out := *d
	out.Child = children[0]
	return &out, nil
}
