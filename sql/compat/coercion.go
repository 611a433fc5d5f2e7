package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL gives the result of a string function the collation of its
// arguments (the column's, over a literal's), and CAST(x AS CHAR) the
// connection's, and compares two strings
// of one character set, one under a _bin collation and one not, under
// the _bin one. GMS types CONCAT(s, 'x') as a LONGTEXT of its default
// collation, so it sorted and told apart the values of a
// case-insensitive s by their bytes; and it compared a utf8mb4_bin
// column with a utf8mb4_general_ci one case-insensitively ('a' = 'A').
//
// collationOf (called from the RowComparisons rule, which walks every
// expression) marks such expressions with the collation MySQL gives
// them, as an explicit COLLATE would.

// collationOf rewrites e, when it is a string function whose arguments
// give it another collation than its type's, or a comparison of strings
// of a _bin and another collation of one character set.
func collationOf(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, bool, error) {
	if f, ok := e.(gsql.FunctionExpression); ok && collatedResultFunctions[f.FunctionName()] {
		ret, same := argumentCollation(ctx, e)
		return ret, same, nil
	}
	switch e := e.(type) {
	case *function.Concat, *function.Lower, *function.Upper:
		ret, same := argumentCollation(ctx, e)
		return ret, same, nil
	case *function.Coalesce, *function.IfNull, *expression.Case, *function.If:
		// MySQL aggregates the collations of the values (collagg.go);
		// GMS typed COALESCE(ci, bin) utf8mb4_0900_bin, IF and IFNULL
		// as their first value, CASE binary.
		return resultCollation(ctx, e, choiceValueArgs(e))
	case *function.NullIf:
		// NULLIF(a, b) is a or NULL: a's collation (GMS: binary).
		return resultCollation(ctx, e, []gsql.Expression{e.LeftChild})
	case *expression.Convert:
		// CAST(x AS CHAR) has the connection's collation in MySQL; GMS
		// types it with its default (binary) one.
		t, ok := e.Type().(gsql.TypeWithCollation)
		if !ok || !types.IsText(e.Type()) || ctx == nil || ctx.Session == nil {
			return e, true, nil
		}
		coll := ctx.Session.GetCollation()
		if coll == t.Collation() || coll.CharacterSet() != t.Collation().CharacterSet() {
			return e, true, nil
		}
		return withCollation(e, coll), false, nil
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
		b := e.(expression.BinaryExpression)
		l, r := b.Left(), b.Right()
		if ret, ok := subqueryCollation(ctx, e, l, r); ok {
			return ret, false, nil
		}
		if coll, ok, err := comparedCollation(ctx, comparisonOperator(e), l, r); err != nil {
			return e, true, err
		} else if !ok {
			return e, true, nil
		} else {
			l, r = collatedOperand(ctx, l, coll), collatedOperand(ctx, r, coll)
		}
		ret, err := e.WithChildren(l, r)
		if err != nil {
			return e, true, nil
		}
		return ret, false, nil
	}
	return e, true, nil
}

// collatedResultFunctions are GMS's string functions, besides CONCAT,
// LOWER and UPPER, whose result MySQL gives its string arguments'
// collation and GMS its default one (SELECT DISTINCT LPAD(s, 4, '*') of a
// case-insensitive s kept '***b' and '***B' apart), by name.
// SUBSTRING_INDEX, INSERT (percdb's, stringfunctions.go) and ELT too;
// REPEAT's own coercibility weighs its count, so it fell back to GMS's
// collation (SELECT DISTINCT REPEAT(s, 2) kept 'AA' and 'aa' apart: the
// difftest's wide run, seeds 10263 and 10282).
var collatedResultFunctions = map[string]bool{
	"lpad": true, "rpad": true, "substring": true, "left": true, "right": true, "trim": true,
	"ltrim": true, "rtrim": true, "reverse": true, "repeat": true, "replace": true, "concat_ws": true,
	"substring_index": true, "insert": true, "elt": true,
}

// argumentCollation returns e, a string function, marked with the
// collation its arguments give it when that is not its type's; true
// when e stays as it is.
func argumentCollation(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, bool) {
	t, ok := e.Type().(gsql.TypeWithCollation)
	if _, isText := e.Type().(gsql.StringType); !isText || !ok {
		return e, true
	}
	coll, coer := gsql.GetCoercibility(ctx, e)
	if coer > 2 {
		// GMS's own answer for the function is not its arguments'
		// (REPEAT's weighs the count, percdb's INSERT has none): the
		// strongest of its string arguments', as MySQL aggregates them
		// (agg_arg_charsets_for_string_result).
		var ok bool
		if coll, ok = strongestArgCollation(ctx, e); ok {
			coer = 2
		}
	}
	// Only a collation that comes from a column (coercibility 2,
	// implicit) or an explicit COLLATE (0) is the argument's own.
	if coer > 2 || coll == t.Collation() || coll.CharacterSet() != t.Collation().CharacterSet() {
		return e, true
	}
	return withCollation(e, coll), false
}

// strongestArgCollation returns the collation of the argument of a
// COALESCE, IFNULL or CASE (its results, not its conditions) that MySQL
// takes for the result: the one of least coercibility among the string
// arguments, when that is a column's (implicit) or an explicit COLLATE,
// and no other argument of that coercibility has another collation.
func strongestArgCollation(ctx *gsql.Context, e gsql.Expression) (gsql.CollationID, bool) {
	var args []gsql.Expression
	switch e := e.(type) {
	case *expression.Case:
		for _, b := range e.Branches {
			args = append(args, b.Value)
		}
		if e.Else != nil {
			args = append(args, e.Else)
		}
	default:
		args = e.Children()
	}
	best, bestCoer, clash := gsql.CollationID(0), byte(7), false
	for _, a := range args {
		if !types.IsText(a.Type()) {
			continue
		}
		coll, coer := gsql.GetCoercibility(ctx, a)
		switch {
		case coer < bestCoer:
			best, bestCoer, clash = coll, coer, false
		case coer == bestCoer && coll != best:
			clash = true
		}
	}
	if bestCoer > 2 || clash {
		return 0, false
	}
	return best, true
}

// subqueryCollation returns comparison e of l and r with its scalar
// subquery of a string column marked with the column's collation, when
// the other side is a string of weaker coercibility (a literal, a
// parameter) under another collation of the character set: MySQL
// compares under the subquery's collation (its column's, implicit),
// GMS under the other side's, so (SELECT c FROM t) <= 'B' of a
// utf8mb4_bin 'ab' was true (found by the difftest's application run).
// False when e is no such comparison.
func subqueryCollation(ctx *gsql.Context, e, l, r gsql.Expression) (gsql.Expression, bool) {
	sides := []gsql.Expression{l, r}
	for i, side := range sides {
		sq, ok := side.(*plan.Subquery)
		if !ok {
			continue
		}
		coll, ok := stringCollation(sq)
		other := sides[1-i]
		if !ok || !types.IsText(other.Type()) {
			continue
		}
		oc, coer := gsql.GetCoercibility(ctx, other)
		if coer <= 2 || oc == coll || oc.CharacterSet() != coll.CharacterSet() {
			continue
		}
		out := append([]gsql.Expression(nil), sides...)
		out[i] = withCollation(sq, coll)
		ret, err := e.WithChildren(out...)
		if err != nil {
			return e, false
		}
		return ret, true
	}
	return e, false
}

// stringCollation returns the collation of a column, string function or
// scalar subquery of a string type.
func stringCollation(e gsql.Expression) (gsql.CollationID, bool) {
	switch e.(type) {
	case *expression.GetField, *expression.CollatedExpression, *derivedCollation, *plan.Subquery:
		// A scalar subquery's value has the collation of its column
		// (MIN(s.c) that of s.c), as a column's has.
	default:
		return 0, false
	}
	if !types.IsText(e.Type()) {
		return 0, false
	}
	t, ok := e.Type().(gsql.TypeWithCollation)
	if !ok {
		return 0, false
	}
	return t.Collation(), true
}

// isBinCollation reports whether c is a _bin collation.
func isBinCollation(c gsql.CollationID) bool {
	name := c.Name()
	return len(name) > 4 && name[len(name)-4:] == "_bin"
}

// derivedCollation is a string expression under the collation MySQL
// derives for it. Unlike COLLATE it keeps the expression's text, by
// which GMS finds aggregates and grouping expressions in the plan.
type derivedCollation struct {
	gsql.Expression
	typ  gsql.Type
	coll gsql.CollationID
	coer byte // MySQL's derivation: 2 (implicit) but for an aggregate of NONE (collagg.go)
}

// withCollation returns e under collation c.
func withCollation(e gsql.Expression, c gsql.CollationID) gsql.Expression {
	if d, ok := e.(*derivedCollation); ok {
		e = d.Expression
	}
	t, err := e.Type().(gsql.TypeWithCollation).WithNewCollation(c)
	if err != nil {
		return e
	}
	return &derivedCollation{Expression: e, typ: t, coll: c, coer: 2}
}

// withDerivation returns e, whose values are strings, typed t under
// collation c of derivation (coercibility) coer.
func withDerivation(e gsql.Expression, t gsql.Type, c gsql.CollationID, coer byte) gsql.Expression {
	if d, ok := e.(*derivedCollation); ok {
		e = d.Expression
	}
	return &derivedCollation{Expression: e, typ: t, coll: c, coer: coer}
}

// Type implements sql.Expression.
func (d *derivedCollation) Type() gsql.Type { return d.typ }

// CollationCoercibility implements sql.CollationCoercible: implicit, as a
// column's, or the aggregate's derivation.
func (d *derivedCollation) CollationCoercibility(*gsql.Context) (gsql.CollationID, byte) {
	return d.coll, d.coer
}

// Children implements sql.Expression.
func (d *derivedCollation) Children() []gsql.Expression { return []gsql.Expression{d.Expression} }

// WithChildren implements sql.Expression.
func (d *derivedCollation) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	if d.coer != 2 {
		return withDerivation(children[0], d.typ, d.coll, d.coer), nil
	}
	return withCollation(children[0], d.coll), nil
}

// Eval implements sql.Expression.
func (d *derivedCollation) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Expression.Eval(ctx, row)
	if b, ok := v.([]byte); ok && err == nil && types.IsText(d.typ) {
		// A CASE GMS typed binary, now a string.
		return string(b), nil
	}
	return v, err
}
