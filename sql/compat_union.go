package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// Where the two sides of a UNION give a column different types, GMS
// converts both to one type of its choosing (expression.GetConvertToType)
// that is not MySQL's: an INT and a DECIMAL(2,1) become a DECIMAL with no
// scale, which the ORDER BY of the union then still compares as the INT
// (SELECT 1 UNION SELECT 0.5 ORDER BY 1 gave 1, 0.5); an INT and a
// DOUBLE, a DECIMAL and a DOUBLE, a DATE and a DATETIME become strings.
// MySQL's rules (the type of a UNION column aggregated over its rows):
//
//	any DOUBLE or FLOAT with numbers    DOUBLE
//	DECIMAL with integers or DECIMALs   DECIMAL(max integer digits + max scale, max scale)
//	DATE with DATETIME or TIMESTAMP     DATETIME
//
// unionTypes, run before GMS resolves unions, replaces GMS's conversions
// in those cases with MySQL's type, and gives the union's ORDER BY the
// column's new type. Other mixes keep GMS's (a number with a string is
// a string in both).

// unionTypes is the analyzer rule; see the comment above.
func unionTypes(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		// INTERSECT and EXCEPT type their columns as UNION does.
		s, ok := n.(*plan.SetOp)
		if !ok {
			return n, transform.SameTree, nil
		}
		lp, lok := s.Left().(*plan.Project)
		rp, rok := s.Right().(*plan.Project)
		if !lok || !rok || len(lp.Projections) != len(rp.Projections) {
			return n, transform.SameTree, nil
		}
		var lps, rps []gsql.Expression
		for i := range lp.Projections {
			lsrc, lconv := setOpConvertSource(lp.Projections[i], lp.Child, i)
			rsrc, rconv := setOpConvertSource(rp.Projections[i], rp.Child, i)
			if !lconv && !rconv {
				continue
			}
			cast, length, scale, ok := unionCast(lsrc.Type(), rsrc.Type())
			coll, collated := gsql.Collation_Unspecified, false
			if !ok && types.IsText(lp.Projections[i].Type()) {
				coll, collated = unionCollation(ctx, sideExpr(lp.Child, i, lsrc), sideExpr(rp.Child, i, rsrc))
			}
			if !ok && !collated {
				continue
			}
			if lps == nil {
				lps = append([]gsql.Expression(nil), lp.Projections...)
				rps = append([]gsql.Expression(nil), rp.Projections...)
			}
			if collated {
				lps[i] = expression.NewAlias(lp.Projections[i].(gsql.Nameable).Name(), expression.NewCollatedExpression(unalias(lp.Projections[i]), coll))
				rps[i] = expression.NewAlias(rp.Projections[i].(gsql.Nameable).Name(), expression.NewCollatedExpression(unalias(rp.Projections[i]), coll))
				continue
			}
			lps[i] = expression.NewAlias(lp.Projections[i].(gsql.Nameable).Name(), unionConvert(lsrc, cast, length, scale))
			rps[i] = expression.NewAlias(rp.Projections[i].(gsql.Nameable).Name(), unionConvert(rsrc, cast, length, scale))
		}
		if lps == nil {
			return n, transform.SameTree, nil
		}
		ret, err := s.WithChildren(plan.NewProject(lps, lp.Child), plan.NewProject(rps, rp.Child))
		if err != nil {
			return n, transform.SameTree, err
		}
		u := ret.(*plan.SetOp)
		if len(u.SortFields) > 0 {
			sch := u.Schema()
			sf := make(gsql.SortFields, len(u.SortFields))
			copy(sf, u.SortFields)
			for i, f := range sf {
				gf, ok := f.Column.(*expression.GetField)
				if !ok {
					continue
				}
				for _, c := range sch {
					if c.Name == gf.Name() {
						sf[i].Column = expression.NewGetFieldWithTable(int(gf.Id()), int(gf.TableId()), c.Type, gf.Database(), gf.Table(), gf.Name(), gf.IsNullable()).WithIndex(gf.Index())
						break
					}
				}
			}
			u.SortFields = sf
		}
		return u, transform.NewTree, nil
	})
}

// setOpConvertSource returns the column GMS converted for a side of a
// union, and whether there was one; otherwise p. GMS's conversion is a
// projection over the side, Alias(Convert(GetField)) named as the
// side's column i it converts. A CAST of the side's own select list
// (SELECT CAST(d AS SIGNED) FROM t UNION ...) is not one: taken for
// one, it was dropped, and -1.25 came out of a CAST to SIGNED.
func setOpConvertSource(p gsql.Expression, side gsql.Node, i int) (gsql.Expression, bool) {
	a, ok := p.(*expression.Alias)
	if !ok {
		return p, false
	}
	c, ok := a.Child.(*expression.Convert)
	if !ok {
		return p, false
	}
	gf, ok := c.Child.(*expression.GetField)
	if sch := side.Schema(); !ok || i >= len(sch) || sch[i].Name != a.Name() || gf.Name() != a.Name() {
		return p, false
	}
	return gf, true
}

// unionCollation returns the collation MySQL gives a union column that
// GMS converts to a string (CHAR, under the server's default collation
// utf8mb4_0900_bin whatever the sides'), and whether it differs from
// GMS's: the sides' collations aggregated by their coercibility, as
// MySQL aggregates them (a column's over a literal's, any string's over
// a number's or a date's, a _bin collation over another of its
// character set). A VARCHAR under utf8mb4_general_ci with an INT, or with
// a longer string of the same collation, stays utf8mb4_general_ci, so
// UNION (DISTINCT) tells 'b' and 'B' apart no more than MySQL.
func unionCollation(ctx *gsql.Context, l, r gsql.Expression) (gsql.CollationID, bool) {
	lc, lk := coercibility(ctx, l)
	rc, rk := coercibility(ctx, r)
	coll, k := gsql.ResolveCoercibility(lc, lk, rc, rk)
	if k > 4 || coll == gsql.Collation_binary || coll == gsql.Collation_Unspecified || coll == gsql.Collation_Default ||
		coll.CharacterSet() != gsql.Collation_Default.CharacterSet() {
		return coll, false
	}
	return coll, true
}

// coercibility returns the collation and coercibility of e as MySQL
// counts them: numbers and dates 5, NULL 6 (GMS gives a column of any
// type 2).
func coercibility(ctx *gsql.Context, e gsql.Expression) (gsql.CollationID, byte) {
	switch t := e.Type(); {
	case t == types.Null:
		return gsql.Collation_binary, 6
	case !types.IsText(t):
		return gsql.Collation_binary, 5
	}
	return gsql.GetCoercibility(ctx, e)
}

// sideExpr returns the expression that makes column i of a union's
// side: the projection of side, when side projects, else field (the
// column as the union reads it).
func sideExpr(side gsql.Node, i int, field gsql.Expression) gsql.Expression {
	if p, ok := side.(*plan.Project); ok && i < len(p.Projections) {
		return unalias(p.Projections[i])
	}
	return field
}

// unalias returns the expression e names, or e.
func unalias(e gsql.Expression) gsql.Expression {
	if a, ok := e.(*expression.Alias); ok {
		return a.Child
	}
	return e
}

// unionCast returns the conversion to MySQL's type of a union of
// columns of types a and b, where it differs from GMS's.
func unionCast(a, b gsql.Type) (cast string, length, scale int, ok bool) {
	switch {
	case a == types.Null || b == types.Null:
		return "", 0, 0, false
	case types.IsNumber(a) && types.IsNumber(b):
		if types.IsFloat(a) || types.IsFloat(b) {
			return expression.ConvertToDouble, 0, 0, true
		}
		if !types.IsDecimal(a) && !types.IsDecimal(b) {
			if types.IsUnsigned(a) != types.IsUnsigned(b) && (a.Type() == sqltypes.Uint64 || b.Type() == sqltypes.Uint64) {
				// A BIGINT UNSIGNED with a signed integer:
				// DECIMAL(20,0), which holds both (GMS converts both
				// to BIGINT, which clamps the unsigned values above
				// 2^63 - 1).
				return integralDecimal, 20, 0, true
			}
			return "", 0, 0, false
		}
		ia, sa := numericDigits(a)
		ib, sb := numericDigits(b)
		scale = max(sa, sb)
		length = min(max(ia, ib)+scale, 65)
		if scale == 0 {
			// GMS's conversion takes a scale of 0 for "none given" and
			// converts to DECIMAL(65,30): a BIGINT's worth of digits is
			// converted to BIGINT, more by percdb's conversion.
			if length > 18 {
				return integralDecimal, length, 0, true
			}
			return expression.ConvertToSigned, 0, 0, true
		}
		return expression.ConvertToDecimal, length, scale, true
	case types.IsTime(a) && types.IsTime(b) && types.IsDateType(a) != types.IsDateType(b):
		return expression.ConvertToDatetime, 0, 0, true
	}
	return "", 0, 0, false
}

// integralDecimal is unionCast's name for a conversion to DECIMAL(n,0),
// which GMS's conversion cannot make (a scale of 0 is its "none given").
const integralDecimal = "percdb_integral_decimal"

// unionConvert returns the conversion of e that unionCast names.
func unionConvert(e gsql.Expression, cast string, length, scale int) gsql.Expression {
	if cast == integralDecimal {
		return &integralDecimalCast{UnaryExpression: expression.UnaryExpression{Child: e}, typ: types.MustCreateDecimalType(uint8(length), 0)}
	}
	return expression.NewConvertWithLengthAndScale(e, cast, length, scale)
}

// integralDecimalCast converts an integer to a DECIMAL of scale 0.
type integralDecimalCast struct {
	expression.UnaryExpression
	typ gsql.Type
}

var _ gsql.Expression = (*integralDecimalCast)(nil)

// Type implements sql.Expression.
func (c *integralDecimalCast) Type() gsql.Type { return c.typ }

// String implements sql.Expression.
func (c *integralDecimalCast) String() string { return c.Child.String() }

// Eval implements sql.Expression.
func (c *integralDecimalCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	return exactDecimal(ctx, v)
}

// WithChildren implements sql.Expression.
func (c *integralDecimalCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	return &integralDecimalCast{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: c.typ}, nil
}

// numericDigits returns the digits before and after the point of a
// number type (of an integer type: as MySQL counts them).
func numericDigits(t gsql.Type) (intDigits, scale int) {
	if d, ok := t.(gsql.DecimalType); ok {
		return int(d.Precision()) - int(d.Scale()), int(d.Scale())
	}
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8:
		return 3, 0
	case sqltypes.Int16, sqltypes.Uint16:
		return 5, 0
	case sqltypes.Int24, sqltypes.Uint24:
		return 8, 0
	case sqltypes.Int32, sqltypes.Uint32:
		return 10, 0
	case sqltypes.Uint64:
		return 20, 0
	}
	return 19, 0
}
