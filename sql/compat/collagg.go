package compat

import (
	"fmt"
	"strings"

	"github.com/dolthub/vitess/go/mysql"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL gives an expression whose value is one of several strings (IF,
// IFNULL, COALESCE, CASE, GREATEST, LEAST) the collation it aggregates
// from those strings (DTCollation::aggregate), and compares two strings
// under the aggregate of theirs:
//
//   - the argument of least derivation (coercibility) wins: an explicit
//     COLLATE (0) over a column's (implicit, 2) over a literal's
//     (coercible, 4); numbers and NULLs take no part;
//   - two of one derivation and character set under different
//     collations: the _bin one, if one is; else the character set's
//     _bin collation of derivation NONE (1), which a string result may
//     have but a comparison may not (1267 Illegal mix of collations);
//   - two explicit COLLATEs that differ: 1267 (1270 for three
//     arguments, 1271 for more).
//
// GMS typed COALESCE(ci, bin) of a utf8mb4_general_ci and a utf8mb4_bin
// column as utf8mb4_0900_bin, IFNULL and IF as their first argument's
// collation and CASE as binary, so a UNION with such a column told 'a'
// from 'A' no more (the difftest's wide seeds 10313 and 10348), and it
// compared a utf8mb4_general_ci column with a utf8mb4_unicode_ci one
// where MySQL refuses.

// derivation names, by coercibility, as MySQL writes them in 1267.
var derivationNames = [...]string{"EXPLICIT", "NONE", "IMPLICIT", "SYSCONST", "COERCIBLE", "NUMERIC", "IGNORABLE"}

// derivationNone is the coercibility of a string that aggregates two
// collations of one derivation and neither _bin (DERIVATION_NONE).
const derivationNone = 1

// collationArg is one string argument's collation and derivation.
type collationArg struct {
	coll gsql.CollationID
	coer byte
}

// aggregatedCollation is the outcome of aggregating the collations of
// some strings.
type aggregatedCollation struct {
	coll gsql.CollationID
	coer byte
	// known is false when an argument's character set differs from
	// another's (MySQL converts to a superset there, which percdb
	// leaves to GMS) or no argument is a string.
	known bool
}

// aggregateCollations aggregates the collations of args' strings as
// MySQL's DTCollation::aggregate for a string result; op names the
// operation in the error MySQL raises for two explicit collations that
// differ.
func aggregateCollations(ctx *gsql.Context, op string, args []gsql.Expression) (aggregatedCollation, error) {
	var strs []collationArg
	for _, a := range args {
		if a == nil || !types.IsText(a.Type()) {
			continue
		}
		coll, coer := operandCollation(ctx, a)
		if coer > 6 || coll == gsql.Collation_Unspecified {
			return aggregatedCollation{}, nil
		}
		strs = append(strs, collationArg{coll, coer})
	}
	if len(strs) == 0 {
		return aggregatedCollation{}, nil
	}
	agg := aggregatedCollation{coll: strs[0].coll, coer: strs[0].coer, known: true}
	for _, s := range strs[1:] {
		if s.coll.CharacterSet() != agg.coll.CharacterSet() {
			next, ok := acrossCharsets(agg, s)
			if !ok {
				return aggregatedCollation{}, nil
			}
			agg = next
			continue
		}
		switch {
		case agg.coer < s.coer, s.coll == agg.coll:
		case s.coer < agg.coer:
			agg.coll, agg.coer = s.coll, s.coer
		case agg.coer == 0:
			return agg, illegalCollationMix(op, strs)
		case isBinCollation(agg.coll):
		case isBinCollation(s.coll):
			agg.coll = s.coll
		default:
			bin, ok := binCollationOf(agg.coll)
			if !ok {
				return aggregatedCollation{}, nil
			}
			agg.coll, agg.coer = bin, derivationNone
		}
	}
	return agg, nil
}

// acrossCharsets aggregates a and b of different character sets as
// DTCollation::aggregate does for a string result: a binary string over
// a character string of its derivation or weaker; utf8mb4 over utf8mb3
// (its superset) of its derivation or weaker; the stronger of a column's
// (or explicit) collation and a literal's or a system constant's (3 or
// more), which converts. False where MySQL fails (left to GMS).
func acrossCharsets(a aggregatedCollation, b collationArg) (aggregatedCollation, bool) {
	take := func() (aggregatedCollation, bool) {
		return aggregatedCollation{coll: b.coll, coer: b.coer, known: true}, true
	}
	switch {
	case a.coll == gsql.Collation_binary:
		if a.coer <= b.coer {
			return a, true
		}
		return take()
	case b.coll == gsql.Collation_binary:
		if b.coer <= a.coer {
			return take()
		}
		return a, true
	case a.coll.CharacterSet() == gsql.CharacterSet_utf8mb4 && b.coll.CharacterSet() == gsql.CharacterSet_utf8mb3 && a.coer <= b.coer:
		return a, true
	case b.coll.CharacterSet() == gsql.CharacterSet_utf8mb4 && a.coll.CharacterSet() == gsql.CharacterSet_utf8mb3 && b.coer <= a.coer:
		return take()
	case a.coer < b.coer && b.coer >= 3:
		return a, true
	case b.coer < a.coer && a.coer >= 3:
		return take()
	}
	return aggregatedCollation{}, false
}

// utf8Superset reports whether a and b, of derivations ak and bk, are
// collations of utf8mb3 and utf8mb4, one each, that MySQL aggregates by
// converting the utf8mb3 string to utf8mb4, its superset
// (MY_COLL_ALLOW_SUPERSET_CONV): GMS compared them as binary strings
// (_utf8mb4'a' = 'A' of a utf8mb3 connection was 0; MySQL 1). A utf8mb3
// literal under another collation than the character set's default is
// left to GMS: GMS folds a literal's COLLATE into its type and forgets
// that it is explicit, which wins in MySQL (_utf8mb4'a' = 'A' COLLATE
// utf8mb3_bin is 0).
func utf8Superset(a gsql.CollationID, ak byte, b gsql.CollationID, bk byte) bool {
	ac, bc := a.CharacterSet(), b.CharacterSet()
	switch {
	case ac == gsql.CharacterSet_utf8mb4 && bc == gsql.CharacterSet_utf8mb3:
		return bk < 3 || b == gsql.Collation_utf8mb3_general_ci
	case ac == gsql.CharacterSet_utf8mb3 && bc == gsql.CharacterSet_utf8mb4:
		return ak < 3 || a == gsql.Collation_utf8mb3_general_ci
	}
	return false
}

// comparedCollation returns the collation MySQL compares l and r under
// when both are strings of one character set (or of utf8mb3 and
// utf8mb4) and different collations,
// and the error it raises when the aggregate is no collation a
// comparison may use (derivation NONE, or two explicit ones). known is
// false when GMS's comparison stays.
func comparedCollation(ctx *gsql.Context, op string, l, r gsql.Expression) (gsql.CollationID, bool, error) {
	if !types.IsText(l.Type()) || !types.IsText(r.Type()) {
		return 0, false, nil
	}
	lc, lk := operandCollation(ctx, l)
	rc, rk := operandCollation(ctx, r)
	if lc == rc || lk > 6 || rk > 6 || lc.CharacterSet() != rc.CharacterSet() && !utf8Superset(lc, lk, rc, rk) {
		return 0, false, nil
	}
	agg, err := aggregateCollations(ctx, op, []gsql.Expression{l, r})
	if err != nil {
		return 0, false, err
	}
	if !agg.known {
		return 0, false, nil
	}
	if agg.coer == derivationNone && lk != derivationNone && rk != derivationNone {
		// Two columns of different collations, neither _bin: MySQL
		// refuses (1267); percdb keeps GMS's comparison under the
		// left one's, which joins of a utf8mb4_0900_ai_ci column
		// (percdb's default) with a utf8mb4_general_ci one rely on
		// (docs/compatibility.md).
		return 0, false, nil
	}
	if agg.coer == derivationNone {
		return 0, false, illegalCollationMix(op, []collationArg{{lc, lk}, {rc, rk}})
	}
	glc, glk := gsql.GetCoercibility(ctx, l)
	grc, grk := gsql.GetCoercibility(ctx, r)
	if gms, _ := gsql.ResolveCoercibility(glc, glk, grc, grk); gms == agg.coll {
		// GMS's comparison resolves the collation alike.
		return 0, false, nil
	}
	return agg.coll, true, nil
}

// operandCollation returns the collation and derivation of string e: a
// scalar subquery's are its column's (implicit), which GMS does not
// give; anything else's are GMS's.
func operandCollation(ctx *gsql.Context, e gsql.Expression) (gsql.CollationID, byte) {
	if sq, ok := e.(*plan.Subquery); ok {
		if t, ok := sq.Type().(gsql.TypeWithCollation); ok {
			return t.Collation(), 2
		}
	}
	return gsql.GetCoercibility(ctx, e)
}

// illegalCollationMix is MySQL's error for strings whose collations do
// not aggregate (my_coll_agg_error): 1267 names two, 1270 three, 1271
// none.
func illegalCollationMix(op string, args []collationArg) error {
	name := func(a collationArg) string {
		d := "IGNORABLE"
		if int(a.coer) < len(derivationNames) {
			d = derivationNames[a.coer]
		}
		return fmt.Sprintf("%s,%s", a.coll.Name(), d)
	}
	switch len(args) {
	case 2:
		return mysql.NewSQLError(mysql.ERCantAggregate2Collations, "HY000",
			"Illegal mix of collations (%s) and (%s) for operation '%s'", name(args[0]), name(args[1]), op)
	case 3:
		return mysql.NewSQLError(mysql.ERCantAggregate3Collations, "HY000",
			"Illegal mix of collations (%s), (%s), (%s) for operation '%s'", name(args[0]), name(args[1]), name(args[2]), op)
	}
	return mysql.NewSQLError(mysql.ERCantAggregateNCollations, "HY000", "Illegal mix of collations for operation '%s'", op)
}

// binCollationOf returns the _bin collation of c's character set
// (utf8mb4_bin for utf8mb4, as MySQL's get_charset_by_csname with
// MY_CS_BINSORT).
func binCollationOf(c gsql.CollationID) (gsql.CollationID, bool) {
	name := c.CharacterSet().Name() + "_bin"
	bin, err := gsql.ParseCollation("", name, false)
	if err != nil || bin.CharacterSet() != c.CharacterSet() {
		return 0, false
	}
	return bin, true
}

// operationName is the name MySQL gives function e in 1267.
func operationName(e gsql.Expression) string {
	if f, ok := e.(gsql.FunctionExpression); ok {
		return strings.ToLower(f.FunctionName())
	}
	return "case"
}

// resultCollation returns e, whose value is one of values, under the
// collation MySQL aggregates from values' strings when that is not the
// collation (or derivation) GMS gives e; true when e stays as it is.
func resultCollation(ctx *gsql.Context, e gsql.Expression, values []gsql.Expression) (gsql.Expression, bool, error) {
	// A string result: e typed as a string (numbers among the values
	// take no part in the aggregate, as MySQL's DERIVATION_NUMERIC), or
	// strings (and NULLs) only, which GMS may type binary (CASE).
	allText, anyText := true, false
	for _, v := range values {
		switch t := v.Type(); {
		case t == types.Null:
		case types.IsText(t):
			anyText = true
		default:
			allText = false
		}
	}
	if !anyText || !allText && !types.IsText(e.Type()) {
		return e, true, nil
	}
	agg, err := aggregateCollations(ctx, operationName(e), values)
	if err != nil {
		return e, true, err
	}
	if !agg.known || agg.coer > 2 {
		return e, true, nil
	}
	coll, coer := gsql.GetCoercibility(ctx, e)
	t, isText := e.Type().(gsql.TypeWithCollation)
	if coll == agg.coll && coer == agg.coer && isText && types.IsText(e.Type()) && t.Collation() == agg.coll {
		return e, true, nil
	}
	var typ gsql.Type = types.CreateLongText(agg.coll)
	if isText && types.IsText(e.Type()) {
		if nt, err := t.WithNewCollation(agg.coll); err == nil {
			typ = nt
		}
	}
	return withDerivation(e, typ, agg.coll, agg.coer), false, nil
}

// choiceValueArgs returns the children of e, an IF, CASE, COALESCE or
// IFNULL, that are its values (choiceValues).
func choiceValueArgs(e gsql.Expression) []gsql.Expression {
	indexes, _ := choiceValues(e)
	children := e.Children()
	values := make([]gsql.Expression, len(indexes))
	for i, at := range indexes {
		values[i] = children[at]
	}
	return values
}

// comparisonOperator is the operator of comparison e as MySQL names it
// in 1267.
func comparisonOperator(e gsql.Expression) string {
	switch e.(type) {
	case *expression.Equals:
		return "="
	case *expression.NullSafeEquals:
		return "<=>"
	case *expression.LessThan:
		return "<"
	case *expression.LessThanOrEqual:
		return "<="
	case *expression.GreaterThan:
		return ">"
	case *expression.GreaterThanOrEqual:
		return ">="
	}
	return "="
}

// collatedOperand returns operand e of a comparison under coll, the
// comparison's collation, when e's is another.
func collatedOperand(ctx *gsql.Context, e gsql.Expression, coll gsql.CollationID) gsql.Expression {
	if c, _ := gsql.GetCoercibility(ctx, e); c == coll {
		return e
	}
	if t, ok := e.Type().(gsql.TypeWithCollation); ok && t.Collation() == coll {
		return e
	}
	return withCollation(e, coll)
}
