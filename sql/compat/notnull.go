package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
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
//
// An INSERT's own rows follow the same rule: a NULL for a NOT NULL
// column of a multi-row VALUES or of an INSERT ... SELECT is the
// implicit default with warning 1048 outside a strict sql_mode (and
// under IGNORE in every mode), where GMS failed them with 1048; a
// single row of VALUES fails in every mode but under IGNORE, as MySQL's.
// FitRows (fit.go) puts implicitDefaultValue in such a row's value.
//
// A NOT NULL column without a DEFAULT that an INSERT leaves out is
// MySQL's 1364 "Field 'c' doesn't have a default value": an error
// under a strict sql_mode without IGNORE, else the implicit default
// with that warning, for one row too. GMS failed it in every mode,
// with 1105 (noDefaultValue).

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
	return implicitDefaultValue(ctx, d.typ, d.name), nil
}

// noDefaultValue returns what an INSERT stores in col, a NOT NULL
// column without a default that it leaves out: error 1364 when strict,
// else the implicit default with warning 1364 when warn. An ENUM's is its first
// member, silently in every mode (MySQL's
// check_that_all_fields_are_given_values passes over ENUMs).
func noDefaultValue(ctx *gsql.Context, col *gsql.Column, strict, warn bool) (any, error) {
	if types.IsEnum(col.Type) {
		return implicitZero(col.Type), nil
	}
	if strict {
		return nil, mysql.NewSQLError(mysql.ERNoDefaultForField, "HY000", "Field '%s' doesn't have a default value", col.Name)
	}
	if warn {
		ctx.Warn(mysql.ERNoDefaultForField, "Field '%s' doesn't have a default value", col.Name)
	}
	return implicitZero(col.Type), nil
}

// implicitDefaultValue returns the implicit default of column name of
// type typ, stored in place of a NULL, with warning 1048.
func implicitDefaultValue(ctx *gsql.Context, typ gsql.Type, name string) any {
	ctx.Warn(mysql.ERBadNullError, "Column '%s' cannot be null", name)
	return implicitZero(typ)
}

// implicitZero is the implicit default of a column of type typ: the
// type's zero, but an ENUM's first member (GMS's Zero is the empty
// string, index 0, which MySQL keeps for an invalid value).
func implicitZero(typ gsql.Type) any {
	if types.IsEnum(typ) {
		return uint16(1)
	}
	return typ.Zero()
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
