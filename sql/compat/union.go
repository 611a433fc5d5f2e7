package compat

import (
	"reflect"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
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
// GMS also types the union once, when it builds the plan, from the
// sides' types before any rule ran: percdb's rules that change a side's
// type (DATE + 0 an integer, AVG of integers a DECIMAL, exact
// arithmetic) left the union converting to a type chosen from the old
// ones (DATE + 0 was 19991231000000 in a UNION side), and when they ran
// on one side only, GMS's validation refused the union ("the schema of
// the left side of union does not match the right side").
//
// RetypeUnions, run once GMS has analyzed each side (after its
// finalizeUnions), types every set operation again from its sides' final
// types: it drops GMS's conversions, and where the sides' types differ
// converts both to MySQL's type in those cases and to GMS's otherwise (a
// number with a string is a string in both), and gives the union's ORDER
// BY the column's new type. INTERSECT and EXCEPT are typed as UNION.
// throughSetOps lets percdb's rules that walk the plan without entering
// GMS's opaque nodes reach the sides.

// RetypeUnions is the analyzer rule; see the comment above.
func RetypeUnions(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		// A recursive CTE's union is not among the nodes the walk
		// visits (its children are the union's sides): MySQL types it
		// by the anchor alone, as GMS does.
		s, ok := n.(*plan.SetOp)
		if !ok {
			return n, transform.SameTree, nil
		}
		return retypeSetOp(ctx, s)
	})
}

// retypeSetOp types s again from its sides' types; see the comment
// above.
func retypeSetOp(ctx *gsql.Context, s *plan.SetOp) (gsql.Node, transform.TreeIdentity, error) {
	lraw, lconv := unionSide(s.Left())
	rraw, rconv := unionSide(s.Right())
	ls, rs := lraw.Schema(), rraw.Schema()
	if len(ls) != len(rs) {
		return s, transform.SameTree, nil
	}
	lids, rids := sideColumnIds(lraw, len(ls)), sideColumnIds(rraw, len(rs))
	lps := make([]gsql.Expression, len(ls))
	rps := make([]gsql.Expression, len(rs))
	converted := false
	for i := range ls {
		lf := pinnedIfAmbiguous(sideField(ls[i], lids[i], lconv, i), ls, i)
		rf := pinnedIfAmbiguous(sideField(rs[i], rids[i], rconv, i), rs, i)
		lps[i], rps[i] = lf, rf
		if _, pinned := lf.(*pinnedField); pinned {
			lps[i] = expression.NewAlias(ls[i].Name, lf)
		}
		if _, pinned := rf.(*pinnedField); pinned {
			rps[i] = expression.NewAlias(rs[i].Name, rf)
		}
		if reflect.DeepEqual(ls[i].Type, rs[i].Type) {
			continue
		}
		converted = true
		if (ls[i].Type == types.Null) != (rs[i].Type == types.Null) {
			// A column of NULLs on one side takes the other side's
			// type, as in MySQL: a DATE union NULL is a DATE (GMS made
			// it a LONGTEXT, and wrote the zero date '0000-01-01'),
			// an INT union NULL an INT; the other side's values are
			// left as they are.
			if ls[i].Type == types.Null {
				lps[i] = expression.NewAlias(ls[i].Name, &nullOfType{UnaryExpression: expression.UnaryExpression{Child: lf}, typ: rs[i].Type})
			} else {
				rps[i] = expression.NewAlias(rs[i].Name, &nullOfType{UnaryExpression: expression.UnaryExpression{Child: rf}, typ: ls[i].Type})
			}
			continue
		}
		conv := unionConversion(ctx, lf, rf, sideExpr(lraw, i, lf), sideExpr(rraw, i, rf))
		lps[i] = expression.NewAlias(ls[i].Name, conv(lf))
		rps[i] = expression.NewAlias(rs[i].Name, conv(rf))
	}
	left, right := lraw, rraw
	if converted {
		left, right = plan.NewProject(lps, lraw), plan.NewProject(rps, rraw)
	}
	if lconv == nil && rconv == nil && !converted {
		return s, transform.SameTree, nil
	}
	ret, err := s.WithChildren(left, right)
	if err != nil {
		return s, transform.SameTree, err
	}
	u := ret.(*plan.SetOp)
	if len(u.SortFields) > 0 {
		sch := u.Schema()
		sf := make(gsql.SortFields, len(u.SortFields))
		copy(sf, u.SortFields)
		for i, f := range sf {
			if uc, ok := f.Column.(*unionColumn); ok && uc.pos < len(sch) {
				sf[i].Column = uc.withType(sch[uc.pos].Type)
				continue
			}
			gf, ok := f.Column.(*expression.GetField)
			if !ok {
				continue
			}
			for _, c := range sch {
				if c.Name == gf.Name() {
					sf[i].Column = fieldOfType(gf, c.Type, gf.IsNullable())
					break
				}
			}
		}
		u.SortFields = sf
	}
	return u, transform.NewTree, nil
}

// unionConversion returns the conversion of each side's column of a
// union to the type of the union of columns l and r (the sides'
// fields), made by le and re (for the collation of a string): one
// conversion for both, so that their types are the same.
func unionConversion(ctx *gsql.Context, l, r, le, re gsql.Expression) func(gsql.Expression) gsql.Expression {
	switch m := mergeTemporal([]gsql.Type{l.Type(), r.Type()}); m.kind {
	case mergeDate, mergeTime, mergeDatetime:
		// Temporal columns: MySQL's aggregate, with the most digits
		// (mergedtypes.go; GMS converted a DATETIME(2) with a DATE to
		// a DATETIME of none, and rounded 23:59:59.99 into the next
		// day).
		return func(e gsql.Expression) gsql.Expression {
			return &mergedResult{UnaryExpression: expression.UnaryExpression{Child: e}, typ: m.typ()}
		}
	}
	if cast, length, scale, ok := unionCast(l.Type(), r.Type()); ok {
		return func(e gsql.Expression) gsql.Expression { return unionConvert(e, cast, length, scale) }
	}
	cast := expression.GetConvertToType(l.Type(), r.Type())
	coll, collated := gsql.Collation_Unspecified, false
	if cast == expression.ConvertToChar {
		coll, collated = unionCollation(ctx, le, re)
	}
	return func(e gsql.Expression) gsql.Expression {
		src := e
		switch t := e.Type(); {
		case cast != expression.ConvertToChar:
		case types.IsEnum(t):
			src = expression.NewEnumToString(e)
		case types.IsDateType(t):
			// A DATE is written without a time of day, as MySQL
			// writes it in a string (GMS's conversion adds one).
			src = dateString(e)
		case isTimeType(t):
			src = &timeString{UnaryExpression: expression.UnaryExpression{Child: e}}
		case types.IsDatetimeType(t) || types.IsTimestampType(t):
			// With its n digits (datetext.go).
			src = &argText{UnaryExpression: expression.UnaryExpression{Child: e}}
		}
		var conv gsql.Expression = expression.NewConvertWithLengthAndScale(src, cast, 0, 0)
		if collated {
			conv = expression.NewCollatedExpression(conv, coll)
		}
		return conv
	}
}

// unionSide returns the side of a union as its select list makes it,
// and the projection that converted it to the union's types (GMS's, or
// an earlier run of RetypeUnions'), if there is one.
func unionSide(side gsql.Node) (gsql.Node, *plan.Project) {
	p, ok := side.(*plan.Project)
	if !ok || !isUnionConversion(p) {
		return side, nil
	}
	return p.Child, p
}

// isUnionConversion reports whether p is a union's conversion of its
// side's columns: column i of the side, named as it, as a field of no
// table (the union builder's; a select list's fields name their
// table), converted or not. A CAST of the side's own select list
// (SELECT CAST(d AS SIGNED) FROM t UNION ...) is not one: taken for one,
// it was dropped, and -1.25 came out of a CAST to SIGNED.
func isUnionConversion(p *plan.Project) bool {
	sch := p.Child.Schema()
	if len(p.Projections) != len(sch) {
		return false
	}
	for i, e := range p.Projections {
		name := sch[i].Name
		if fc, ok := e.(*fixedDoubleColumn); ok {
			// A side's DOUBLE column of fixed decimals, as
			// FixedDecimals marks a union side analyzed on its own:
			// still the conversion's field (conversionSource).
			e = fc.field
		}
		if a, ok := e.(*expression.Alias); ok {
			if a.Name() != name {
				return false
			}
			e = a.Child
		}
		gf, ok := conversionSource(e).(*expression.GetField)
		if !ok || gf.TableId() != 0 || gf.Name() != name {
			return false
		}
	}
	return true
}

// conversionSource returns the field a union conversion converts: below
// the conversions a union's conversion is made of, or e.
func conversionSource(e gsql.Expression) gsql.Expression {
	for {
		switch c := e.(type) {
		case *expression.Convert:
			e = c.Child
		case *integralDecimalCast:
			e = c.Child
		case *nullOfType:
			e = c.Child
		case *resultColumn:
			// The result column's MySQL type or nullability
			// (NullableResults) over the conversion.
			e = c.Child
		case *expression.CollatedExpression:
			e = c.Child()
		case *expression.EnumToString:
			e = c.Enum
		case *timeText:
			// A TIME under a union's conversion to text, which the TIME
			// rule (timevalues.go) reads as its text.
			e = c.Child
		case *timeNumber:
			e = c.Child
		case *function.DateFormat:
			// A DATE written as text by a union's conversion
			// (dateString); a user's DATE_FORMAT reads a field of a
			// table, which no union conversion does.
			if l, ok := c.RightChild.(*expression.Literal); !ok || l.Value() != "%Y-%m-%d" {
				return e
			}
			e = c.LeftChild
		case *castArgument:
			// A value cast to a DATE or DATETIME as MySQL reads it
			// (timevalues.go, numberdates.go).
			e = c.Child
		case *argText:
			// A DATETIME(n) cast to text with its n digits.
			e = c.Child
		case *fixedDouble:
			// A DOUBLE of fixed decimals (fixeddecimals.go): GMS
			// analyzes each side of a union on its own as a statement,
			// and FixedDecimals marks the side's result columns. A
			// prepared statement's union is typed again at execution,
			// over the sides as marked at its preparation: taken for
			// no conversion, the old one stayed, and a DATE column
			// converted to text became a DATETIME's text.
			e = c.Child
		case *fixedDoubleColumn:
			e = c.Child
		case *pinnedField:
			e = c.GetField
		default:
			return e
		}
	}
}

// sideField returns the field that reads column i of a union's side,
// of the column's type now: the one the old conversion read, if there
// was one, else a new field of no table, as GMS's union builder makes
// them, with the column's id where the side has one.
func sideField(col *gsql.Column, id gsql.ColumnId, conv *plan.Project, i int) *expression.GetField {
	if conv != nil {
		if gf, ok := conversionSource(unalias(conv.Projections[i])).(*expression.GetField); ok {
			return fieldOfType(gf, col.Type, col.Nullable)
		}
	}
	return expression.NewGetFieldWithTable(int(id), 0, col.Type, col.DatabaseSource, col.Source, col.Name, col.Nullable)
}

// pinnedIfAmbiguous returns gf, the field of column i of a union's side
// of schema sch, as a pinnedField when another column of the side has
// its name (case aside): GMS's execution indexes find a field whose id
// the side does not give (a select item's alias has none) by its name,
// the last column of that name first, so that in SELECT d AS v, dt AS V
// … UNION … the conversion of v read V's value.
func pinnedIfAmbiguous(gf *expression.GetField, sch gsql.Schema, i int) gsql.Expression {
	for j, c := range sch {
		if j != i && strings.EqualFold(c.Name, sch[i].Name) {
			return &pinnedField{GetField: gf.WithIndex(i).(*expression.GetField), width: len(sch)}
		}
	}
	return gf
}

// pinnedField is a field of a union's side read at its own index, which
// GMS's assignment of execution indexes (a switch on *GetField) leaves
// alone; see pinnedIfAmbiguous. The index counts from the end of the
// row, whose last width values are the side's: inside a correlated
// subquery GMS puts the outer scope's values first, and index i alone
// read one of those (tests/sqllogic wronganswers.test, a union with two
// columns named x in an IN subquery).
type pinnedField struct {
	*expression.GetField
	width int
}

// Eval implements gsql.Expression: the value at the field's index among
// the row's last width values.
func (p *pinnedField) Eval(_ *gsql.Context, row gsql.Row) (interface{}, error) {
	k := len(row) - p.width + p.Index()
	if k < 0 || k >= len(row) {
		return nil, expression.ErrIndexOutOfBounds.New(k, len(row))
	}
	return row[k], nil
}

// WithChildren implements gsql.Expression: a field has none.
func (p *pinnedField) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(p, len(children), 0)
	}
	return p, nil
}

// fieldOfType returns gf with type t.
func fieldOfType(gf *expression.GetField, t gsql.Type, nullable bool) *expression.GetField {
	return expression.NewGetFieldWithTable(int(gf.Id()), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), nullable).WithIndex(gf.Index()).(*expression.GetField)
}

// sideColumnIds returns the column ids of the n columns of a union's
// side where it names them (a select list's items; 0 where it does not,
// and a field of id 0 is found by its name).
func sideColumnIds(side gsql.Node, n int) []gsql.ColumnId {
	ids := make([]gsql.ColumnId, n)
	for {
		switch s := side.(type) {
		case *plan.Project:
			for i, p := range s.Projections {
				if ide, ok := p.(gsql.IdExpression); ok && i < n {
					ids[i] = ide.Id()
				}
			}
			return ids
		case *plan.SetOp:
			side = s.Left()
			continue
		}
		if c := side.Children(); len(c) == 1 && len(c[0].Schema()) == n {
			side = c[0]
			continue
		}
		return ids
	}
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

// unalias returns the expression e names, or e; below a result
// column's MySQL type or nullability (NullableResults), the expression.
func unalias(e gsql.Expression) gsql.Expression {
	if a, ok := e.(*expression.Alias); ok {
		e = a.Child
	}
	if rc, ok := e.(*resultColumn); ok {
		return rc.Child
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
	case types.IsTime(a) && types.IsTime(b) && types.IsDateType(a) != types.IsDateType(b),
		// A TIME with a DATE, DATETIME or TIMESTAMP is a DATETIME in
		// MySQL (GMS kept the first side's type: a DATE union a
		// TIME(dt) was a DATE, and lost the time of day).
		types.IsTime(a) && isTimeType(b), isTimeType(a) && types.IsTime(b):
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
	if cast == expression.ConvertToDatetime && isTimeType(e.Type()) {
		e = &timeDatetime{UnaryExpression: expression.UnaryExpression{Child: e}}
	}
	return expression.NewConvertWithLengthAndScale(e, cast, length, scale)
}

// timeDatetime is a TIME as a DATETIME: today at that time, as MySQL
// converts it (GMS's CONVERT(... , DATETIME) of a TIME is NULL; its
// DATETIME type converts it as MySQL does).
type timeDatetime struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*timeDatetime)(nil)

// Type implements sql.Expression.
func (t *timeDatetime) Type() gsql.Type { return types.DatetimeMaxPrecision }

// String implements sql.Expression: the TIME's own text.
func (t *timeDatetime) String() string { return t.Child.String() }

// Eval implements sql.Expression.
func (t *timeDatetime) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	d, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
	return d, err
}

// WithChildren implements sql.Expression.
func (t *timeDatetime) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &timeDatetime{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// nullOfType is a union side's column of NULLs (of type NULL) typed as
// the other side's column.
type nullOfType struct {
	expression.UnaryExpression
	typ gsql.Type
}

var _ gsql.Expression = (*nullOfType)(nil)

// Type implements sql.Expression.
func (n *nullOfType) Type() gsql.Type { return n.typ }

// IsNullable implements sql.Expression.
func (n *nullOfType) IsNullable() bool { return true }

// String implements sql.Expression.
func (n *nullOfType) String() string { return n.Child.String() }

// Eval implements sql.Expression: NULL, the only value of a column of
// type NULL.
func (n *nullOfType) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := n.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	v, _, err = n.typ.Convert(ctx, v)
	return v, err
}

// WithChildren implements sql.Expression.
func (n *nullOfType) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &nullOfType{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: n.typ}, nil
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
