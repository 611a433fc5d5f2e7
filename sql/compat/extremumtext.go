package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// GREATEST and LEAST of strings only, and of a mix of numbers and
// strings: MySQL 8 compares
// them as strings ("If the arguments comprise a mix of numbers and
// strings, they are compared as strings", MySQL 8.0's reference; 5.7
// and MariaDB compare them as numbers), under the strings' collation,
// and returns the chosen argument as a string (the aggregate of a
// number's and a string's type is a string: Item_func_min_max's
// resolve_type). GMS compared them as DOUBLEs and failed on a DECIMAL
// (1105 "unsupported type for greatest/least argument:
// decimal.Decimal"): LEAST(d, '10') of a DECIMAL d. textExtremum is
// MySQL's. A prepared statement's parameter counts as neither (MySQL
// types it from the others; compat_numeric.go), and a temporal
// argument keeps GMS's comparison.

// textExtremum is GREATEST or LEAST of numbers and strings, compared as
// strings.
type textExtremum struct {
	name string // "greatest" or "least"
	args []gsql.Expression
	typ  gsql.Type // a string under the arguments' collation
}

var _ gsql.FunctionExpression = (*textExtremum)(nil)
var _ gsql.CollationCoercible = (*textExtremum)(nil)

// newTextExtremum returns the textExtremum of args, and false unless
// they mix numbers and strings (and NULLs) only.
func newTextExtremum(name string, args []gsql.Expression) (gsql.Expression, bool) {
	anyNumber, anyText := false, false
	for _, a := range args {
		if _, param := a.(*expression.BindVar); param {
			return nil, false
		}
		if _, param := a.(*paramMarker); param {
			return nil, false
		}
		switch t := a.Type(); {
		case t == types.Null:
		case types.IsNumber(t):
			anyNumber = true
		case types.IsText(t):
			anyText = true
		default:
			return nil, false
		}
	}
	if !anyText || !anyNumber && !collatedTexts(args) {
		return nil, false
	}
	return &textExtremum{name: name, args: args, typ: types.CreateLongText(extremumCollation(args))}, true
}

// collatedTexts reports whether args, strings (and NULLs), are all
// utf8mb4 strings under a collation that is not binary: GREATEST and
// LEAST of strings only compare them by that collation (LEAST('a', 'B')
// is 'a' under a case-insensitive one), where GMS compared their bytes.
// Binary strings, and those of other character sets, stay GMS's.
func collatedTexts(args []gsql.Expression) bool {
	one := oneCharacterSet(args)
	for _, a := range args {
		t := a.Type()
		if t == types.Null {
			continue
		}
		tc, ok := t.(gsql.TypeWithCollation)
		if !ok || types.IsBinaryType(t) || tc.Collation() == gsql.Collation_binary {
			return false
		}
		if tc.Collation().CharacterSet() != gsql.Collation_Default.CharacterSet() && !one {
			// Another character set than utf8mb4's converts to
			// utf8mb4 when a utf8mb4 argument's derivation is as
			// strong or stronger: a literal of the connection's
			// (utf8mb3) to a column's (MySQL's
			// MY_COLL_ALLOW_COERCIBLE_CONV), and any string to
			// Unicode's superset of the same derivation
			// (MY_COLL_ALLOW_SUPERSET_CONV: GREATEST(_utf8mb4'a',
			// 'B') is 'B'); else GMS's.
			if _, coer := gsql.GetCoercibility(gsql.NewEmptyContext(), a); !utf8mb4AsStrong(args, coer) {
				return false
			}
		}
	}
	return true
}

// oneCharacterSet reports whether args' strings are all of one
// character set (utf8mb3 literals of the connection's, say): they
// compare under their collation as utf8mb4 ones do (GREATEST('a', 'B')
// is 'B' under utf8mb3_general_ci; GMS compared bytes).
func oneCharacterSet(args []gsql.Expression) bool {
	var cs gsql.CharacterSetID
	seen := false
	for _, a := range args {
		tc, ok := a.Type().(gsql.TypeWithCollation)
		if !ok || !types.IsText(a.Type()) {
			continue
		}
		c := tc.Collation().CharacterSet()
		if seen && c != cs {
			return false
		}
		cs, seen = c, true
	}
	return seen
}

// utf8mb4AsStrong reports whether an argument of args is a utf8mb4
// string of derivation coer or stronger (a lower coercibility).
func utf8mb4AsStrong(args []gsql.Expression, coer byte) bool {
	c, ok := strongestUtf8mb4(args)
	if !ok {
		return false
	}
	_, k := gsql.GetCoercibility(gsql.NewEmptyContext(), c)
	return k <= coer
}

// strongestUtf8mb4 returns the utf8mb4 string argument of args of the
// strongest derivation, the first among equals; false when there is
// none.
func strongestUtf8mb4(args []gsql.Expression) (gsql.Expression, bool) {
	var best gsql.Expression
	bestK := byte(255)
	for _, a := range args {
		if !types.IsText(a.Type()) {
			continue
		}
		if c, k := gsql.GetCoercibility(gsql.NewEmptyContext(), a); c.CharacterSet() == gsql.Collation_Default.CharacterSet() && k < bestK {
			best, bestK = a, k
		}
	}
	return best, best != nil
}

// extremumCollation returns the collation MySQL aggregates from the
// string arguments (numbers have the weakest coercibility).
func extremumCollation(args []gsql.Expression) gsql.CollationID {
	ctx := gsql.NewEmptyContext()
	one := oneCharacterSet(args)
	coll, coer := gsql.Collation_binary, byte(7)
	if agg, err := aggregateCollations(ctx, "", args); err == nil && agg.known {
		// Two columns of one derivation: the _bin one, or the
		// character set's _bin collation (collagg.go).
		coll, args = agg.coll, nil
	}
	for _, a := range args {
		c, k := coercibility(ctx, a)
		if coer == 7 {
			coll, coer = c, k
			continue
		}
		coll, coer = gsql.ResolveCoercibility(coll, coer, c, k)
	}
	if coll == gsql.Collation_binary || coll == gsql.Collation_Unspecified || coll.CharacterSet() != gsql.Collation_Default.CharacterSet() && !one {
		// Converted to utf8mb4 (collatedTexts): the collation of the
		// strongest utf8mb4 argument.
		if strongest, ok := strongestUtf8mb4(args); ok {
			if c, _ := gsql.GetCoercibility(ctx, strongest); c != gsql.Collation_binary {
				return c
			}
		}
		return gsql.Collation_Default
	}
	return coll
}

// FunctionName implements sql.FunctionExpression.
func (e *textExtremum) FunctionName() string { return e.name }

// Description implements sql.FunctionExpression.
func (e *textExtremum) Description() string { return "MySQL's " + strings.ToUpper(e.name) }

// Resolved implements sql.Expression.
func (e *textExtremum) Resolved() bool { return expression.ExpressionsResolved(e.args...) }

// String implements sql.Expression.
func (e *textExtremum) String() string {
	parts := make([]string, len(e.args))
	for i, a := range e.args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", e.name, strings.Join(parts, ","))
}

// Type implements sql.Expression.
func (e *textExtremum) Type() gsql.Type { return e.typ }

// CollationCoercibility implements sql.CollationCoercible.
func (e *textExtremum) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return e.typ.(gsql.TypeWithCollation).Collation(), 2
}

// IsNullable implements sql.Expression.
func (e *textExtremum) IsNullable() bool { return true }

// Children implements sql.Expression.
func (e *textExtremum) Children() []gsql.Expression { return e.args }

// WithChildren implements sql.Expression.
func (e *textExtremum) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(e.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(e, len(children), len(e.args))
	}
	if t, ok := newTextExtremum(e.name, children); ok {
		return t, nil
	}
	return buildExtremum(e.name, children, make([]bool, len(children)))
}

// Eval implements sql.Expression: NULL when an argument is NULL.
func (e *textExtremum) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	var best string
	for i, a := range e.args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		s, err := numberOrText(ctx, a.Type(), v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.ToUpper(e.name), err)
		}
		if i == 0 {
			best = s
			continue
		}
		c, err := e.typ.Compare(ctx, s, best)
		if err != nil {
			return nil, err
		}
		if e.name == "greatest" && c > 0 || e.name == "least" && c < 0 {
			best = s
		}
	}
	return best, nil
}

// numberOrText returns v, a value of type t, as MySQL writes it as a
// string: a DECIMAL with its scale's digits.
func numberOrText(ctx *gsql.Context, t gsql.Type, v any) (string, error) {
	if dt, ok := t.(gsql.DecimalType); ok {
		d, err := exactDecimal(ctx, v)
		if err != nil {
			return "", err
		}
		return d.StringFixed(int32(dt.Scale())), nil
	}
	if d, ok := v.(decimal.Decimal); ok {
		return d.String(), nil
	}
	s, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return "", err
	}
	return s.(string), nil
}
