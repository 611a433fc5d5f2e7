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
func unionTypes(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.SetOp)
		if !ok || s.SetOpType != plan.UnionType {
			return n, transform.SameTree, nil
		}
		lp, lok := s.Left().(*plan.Project)
		rp, rok := s.Right().(*plan.Project)
		if !lok || !rok || len(lp.Projections) != len(rp.Projections) {
			return n, transform.SameTree, nil
		}
		var lps, rps []gsql.Expression
		for i := range lp.Projections {
			lsrc, lconv := setOpConvertSource(lp.Projections[i])
			rsrc, rconv := setOpConvertSource(rp.Projections[i])
			if !lconv && !rconv {
				continue
			}
			cast, length, scale, ok := unionCast(lsrc.Type(), rsrc.Type())
			if !ok {
				continue
			}
			if lps == nil {
				lps = append([]gsql.Expression(nil), lp.Projections...)
				rps = append([]gsql.Expression(nil), rp.Projections...)
			}
			lps[i] = expression.NewAlias(lp.Projections[i].(gsql.Nameable).Name(), expression.NewConvertWithLengthAndScale(lsrc, cast, length, scale))
			rps[i] = expression.NewAlias(rp.Projections[i].(gsql.Nameable).Name(), expression.NewConvertWithLengthAndScale(rsrc, cast, length, scale))
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

// setOpConvertSource returns the expression GMS converted for a side of a
// union (Alias(Convert(e))), and whether there was one; otherwise p.
func setOpConvertSource(p gsql.Expression) (gsql.Expression, bool) {
	if a, ok := p.(*expression.Alias); ok {
		if c, ok := a.Child.(*expression.Convert); ok {
			return c.Child, true
		}
	}
	return p, false
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
			return "", 0, 0, false
		}
		ia, sa := numericDigits(a)
		ib, sb := numericDigits(b)
		scale = max(sa, sb)
		length = min(max(ia, ib)+scale, 65)
		if scale == 0 {
			// GMS's conversion takes a scale of 0 for "none given" and
			// converts to DECIMAL(65,30); an integral decimal is a
			// BIGINT's worth of digits in practice.
			if length > 18 {
				return "", 0, 0, false
			}
			return expression.ConvertToSigned, 0, 0, true
		}
		return expression.ConvertToDecimal, length, scale, true
	case types.IsTime(a) && types.IsTime(b) && types.IsDateType(a) != types.IsDateType(b):
		return expression.ConvertToDatetime, 0, 0, true
	}
	return "", 0, 0, false
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
