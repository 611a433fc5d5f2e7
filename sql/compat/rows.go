package compat

import (
	"fmt"
	"math"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// GMS compares row constructors as whole values and ignores NULL: with
// a = 7 and b NULL, (a, b) <> (7, 1), (a, b) NOT IN ((7, 1)) and
// (b, a) >= (3, 6) were all true, where MySQL says NULL (the pair that
// decides is unknown), and SELECT (7, NULL) NOT IN ((7, 1)) failed with
// "value not nil". MySQL compares rows pair by pair, left to right:
//
//	(a, b) = (c, d)   is  a = c AND b = d
//	(a, b) <> (c, d)  is  a <> c OR b <> d
//	(a, b) < (c, d)   is  a < c OR (a = c AND b < d)   (so for <=, >, >=)
//	(a, b) <=> (c, d) is  a <=> c AND b <=> d
//	r IN (r1, r2)     is  r = r1 OR r = r2
//
// and three-valued AND and OR give exactly its NULLs. RowComparisons
// rewrites row comparisons into those forms where a NULL can occur
// (a nullable column or a NULL anywhere in either row); comparisons of
// rows that cannot hold NULL are left to GMS, which gets them right and
// can hash a long IN list.

// RowComparisons is the analyzer rule; see the comment above. It runs
// first, over the whole statement, subqueries included, and also gives
// LIKE its default escape (parse.go) and CAST(date AS CHAR) MySQL's
// format.
func RowComparisons(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return RowComparisonsIn(ctx, n)
}

// RowComparisonsIn is RowComparisons of the plan n, for callers outside
// the analyzer (the row-iterator builder's one-table UPDATE and DELETE,
// sql/compat_exec.go).
func RowComparisonsIn(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		// A set operation's conversion of its sides to its types is
		// GMS's, and is made again once the sides are analyzed
		// (union.go, RetypeUnions), which has to tell it from
		// the sides' own expressions.
		if p, ok := n.(*plan.Project); ok && isUnionConversion(p) {
			return n, transform.SameTree, nil
		}
		m, same, err := nodeExprsOnce(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if sq, ok := e.(*plan.Subquery); ok {
				q, same, err := RowComparisonsIn(ctx, sq.Query)
				if err != nil || same {
					return e, transform.SameTree, err
				}
				return sq.WithQuery(q), transform.NewTree, nil
			}
			if h, ok := e.(*expression.HashInTuple); ok {
				return unhashedIn(ctx, h)
			}
			e, same, err := expandRowComparison(e)
			if err != nil {
				return e, transform.SameTree, err
			}
			ret, sameColl, err := collationOf(ctx, e)
			if err != nil {
				return e, transform.SameTree, err
			}
			if !sameColl {
				return ret, transform.NewTree, nil
			}
			return e, same, nil
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		// DECIMAL columns compared in the select list (between.go).
		if p, ok := m.(*plan.Project); ok {
			if q, ok := exactProjections(p); ok {
				return q, transform.NewTree, nil
			}
		}
		return m, same, nil
	})
}

// nodeExprsOnce applies f to the expressions of n alone (not of its
// children), bottom up with exprOnce.
func nodeExprsOnce(n gsql.Node, f transform.ExprFunc) (gsql.Node, transform.TreeIdentity, error) {
	return eachNodeExpr(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) { // sql/compat/dateshift.go
		return exprOnce(e, f)
	})
}

// exprOnce is transform.Expr (bottom up) except below a derivedCollation:
// the expression it wraps already has its collation, so only its
// children are visited. Visiting it again would wrap it again, report a
// new tree on every pass, and the execution builder, which runs the rule
// until the plan stops changing (compatBuilder.Build), would never stop:
// `UPDATE t SET v = CONCAT(v, ',', ?)` from a connection whose collation
// differs from the column's overflowed the stack.
func exprOnce(e gsql.Expression, f transform.ExprFunc) (gsql.Expression, transform.TreeIdentity, error) {
	if w, ok := e.(functionWrapper); ok {
		// Likewise a typed date function (dateArithmetic) and the
		// TIME functions of timevalues.go: only the function's
		// arguments are visited.
		inner, same, err := childrenOnce(w.wrapped(), f)
		if err != nil || same {
			return e, transform.SameTree, err
		}
		ret, err := e.WithChildren(inner)
		return ret, transform.NewTree, err
	}
	d, derived := e.(*derivedCollation)
	if derived {
		e = d.Expression
	}
	e, sameChildren, err := childrenOnce(e, f)
	if err != nil {
		return nil, transform.SameTree, err
	}
	if derived {
		if sameChildren {
			return d, transform.SameTree, nil
		}
		return withCollation(e, d.coll), transform.NewTree, nil
	}
	ne, same, err := f(e)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ne, same && transform.TreeIdentity(sameChildren), nil
}

// childrenOnce applies exprOnce to the children of e and returns e with
// the children it gave, and whether they are all the same.
func childrenOnce(e gsql.Expression, f transform.ExprFunc) (gsql.Expression, bool, error) {
	children := e.Children()
	var newChildren []gsql.Expression
	for i, c := range children {
		nc, same, err := exprOnce(c, f)
		if err != nil {
			return nil, false, err
		}
		if !same {
			if newChildren == nil {
				newChildren = append([]gsql.Expression(nil), children...)
			}
			newChildren[i] = nc
		}
	}
	if newChildren == nil {
		return e, true, nil
	}
	ne, err := e.WithChildren(newChildren...)
	return ne, false, err
}

// unhashedIn returns the IN list h as expandRowComparison rewrites it,
// as a plain IN list, when a rewrite applies; h itself otherwise. GMS's
// short analysis of a one-table UPDATE or DELETE (applyHashIn) hashes an
// IN list of constants before any rule of percdb's runs, each item
// converted to the left side's type: `bu NOT IN ('-129')` of a BIGINT
// UNSIGNED hashed '-129' as 0, so the UPDATE skipped the rows of 0 that
// a SELECT of the same WHERE returns (and warned 1292, which MySQL does
// not). A HashInTuple also keeps its hashes when its children change
// (WithChildren), so the rewrite is evaluated as an InTuple, which
// converts item by item, and the warnings of the discarded hashing are
// taken back.
func unhashedIn(ctx *gsql.Context, h *expression.HashInTuple) (gsql.Expression, transform.TreeIdentity, error) {
	in := expression.NewInTuple(h.Left(), h.Right())
	d, same, err := expandRowComparison(in)
	if err != nil || same == transform.SameTree {
		return h, transform.SameTree, err
	}
	forgetHashWarnings(ctx, in)
	return d, transform.NewTree, nil
}

// forgetHashWarnings takes back the warnings GMS's hashing of the IN
// list in gave (expression.newInMap, through convertOrTruncate): one
// "Truncated incorrect <type> value: <item>" for each constant item that
// did not convert to the left side's type, promoted (`i IN ('abc', 1)`
// of an INT warned "bigint" besides MySQL's DOUBLE warning). A session whose warnings are
// locked keeps them all.
func forgetHashWarnings(ctx *gsql.Context, in *expression.InTuple) {
	list, ok := in.Right().(expression.Tuple)
	if !ok || ctx == nil || ctx.Session == nil || ctx.Session.WarningCount() == 0 {
		return
	}
	// The hashing converts to the left side's type promoted (an INT's
	// BIGINT, a DECIMAL(5,2)'s DECIMAL(65,2)), a string to its own.
	t := in.Left().Type()
	if !types.IsTextOnly(t) {
		t = t.Promote()
	}
	drop := map[string]int{}
	for _, it := range list {
		v, ok := constantValue(it)
		if !ok || v == nil || types.IsDecimal(it.Type()) || types.IsFloat(it.Type()) {
			continue
		}
		if _, _, err := t.Convert(ctx, v); err != nil {
			drop[fmt.Sprintf("Truncated incorrect %s value: %v", t.String(), v)]++
		}
	}
	if len(drop) == 0 {
		return
	}
	ws := ctx.Session.Warnings() // newest first
	ctx.Session.ClearWarnings()
	if ctx.Session.WarningCount() != 0 {
		return
	}
	for i := len(ws) - 1; i >= 0; i-- {
		if w := ws[i]; w.Code == codeTruncatedWrongValue && drop[w.Message] > 0 {
			drop[w.Message]--
			continue
		}
		ctx.Session.Warn(ws[i])
	}
}

// expandRowComparison rewrites e when it is a row comparison that may
// meet a NULL (and the other cases the rule handles).
func expandRowComparison(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	if d, ok := dateTextArguments(e); ok {
		// A DATE read as a string (datetext.go).
		return d, transform.NewTree, nil
	}
	if d, ok := temporalNumberBranches(e); ok {
		// IF, CASE, COALESCE of dates and numbers (datetext.go).
		return d, transform.NewTree, nil
	}
	// An integer compared with a constant beyond its type (outofrange.go).
	if d, ok := constantBeyondColumn(e); ok {
		return d, transform.NewTree, nil
	}
	if d, ok := decimalComparison(e); ok {
		return d, transform.NewTree, nil
	}
	if d, ok := decimalBetween(e); ok {
		return d, transform.NewTree, nil
	}
	// BETWEEN and IN lists of mixed numbers (between.go).
	if d, ok, err := numericBetween(e); ok || err != nil {
		return d, transform.NewTree, err
	}
	if in, ok := e.(*expression.InTuple); ok {
		if d, ok, err := decimalInColumns(in); ok || err != nil {
			return d, transform.NewTree, err
		}
	}
	if d, ok := dateArithmetic(e); ok {
		return d, transform.NewTree, nil
	}
	// CONVERT_TZ, TIME and TIMEDIFF with their arguments' fractional
	// digits (fspresults.go).
	if d, ok := constantDigits(e); ok {
		return d, transform.NewTree, nil
	}
	if d, ok := fractionalSeconds(e); ok {
		return d, transform.NewTree, nil
	}
	if d, ok := dateAddDigits(e); ok {
		return d, transform.NewTree, nil
	}
	// Strings of an IN list of numbers read as numbers (strnum.go).
	if in, ok := e.(*expression.InTuple); ok {
		if d, ok := stringNumberIn(in); ok {
			// Its integers of the other signedness are compared
			// exactly still (signedness.go): the rewritten list is
			// not visited again, and `bu IN ('abc', -1)` was true for
			// 18446744073709551615.
			if in, ok := d.(*expression.InTuple); ok {
				if m, ok := mixedSignIn(in); ok {
					d = m
				}
			}
			return d, transform.NewTree, nil
		}
	}
	// A TIME in an IN list of numbers, or in the list of a number, is
	// its number HHMMSS[.f], as in a comparison (temporalAsNumber).
	if in, ok := e.(*expression.InTuple); ok {
		if d, ok := timeNumberIn(in); ok {
			return d, transform.NewTree, nil
		}
	}
	// Signed and unsigned integers compared exactly (signedness.go).
	if d, ok := mixedSignComparison(e); ok {
		return d, transform.NewTree, nil
	}
	if in, ok := e.(*expression.InTuple); ok {
		if d, ok := mixedSignIn(in); ok {
			return d, transform.NewTree, nil
		}
	}
	// CAST(x AS DECIMAL(M,D)) rounds and clips (castdecimal.go).
	if d, ok := castToDecimal(e); ok {
		return d, transform.NewTree, nil
	}
	// CAST(x AS SIGNED) of an unsigned x keeps its bits (castsigned.go).
	if d, ok := castToSigned(e); ok {
		return d, transform.NewTree, nil
	}
	// CAST(s AS SIGNED|UNSIGNED) of a string reads its leading digits
	// (caststring.go).
	if d, ok := castStringToInt(e); ok {
		return d, transform.NewTree, nil
	}
	// CAST(s AS DOUBLE) of a string reads its numeric prefix and warns
	// (caststring.go).
	if d, ok := castStringToDouble(e); ok {
		return d, transform.NewTree, nil
	}
	// A string function of a non-string argument typed as a string
	// (textresults.go).
	if d, ok := textResults(e); ok {
		return d, transform.NewTree, nil
	}
	// A string count of a string function read by its leading digits
	// (stringcounts.go); its DOUBLE string arguments then as below.
	if d, ok := stringCounts(e); ok {
		if dd, ok := doubleStrings(d); ok {
			d = dd
		}
		return d, transform.NewTree, nil
	}
	// A DOUBLE written in a string as MySQL writes it (doubletext.go).
	if d, ok := doubleStrings(e); ok {
		if c, ok := castToChar(d); ok {
			d = c
		}
		return d, transform.NewTree, nil
	}
	// CAST(x AS CHAR(N)) that cuts x warns (castchar.go).
	if d, ok := castToChar(e); ok {
		return d, transform.NewTree, nil
	}
	// &, |, ^, << and >> of two numbers on 64 bits (bitops.go).
	if d, ok := numericBitOp(e); ok {
		return d, transform.NewTree, nil
	}
	// A YEAR compared with a number that is no year (year.go).
	if d, ok := yearComparison(e); ok {
		return d, transform.NewTree, nil
	}
	if d, ok := yearBranches(e); ok {
		// Then typed as such values are (widenedDecimalCoalesce).
		if w, same, err := expandRowComparison(d); err != nil || same == transform.NewTree {
			return w, transform.NewTree, err
		}
		return d, transform.NewTree, nil
	}
	// A string compared with a number is read as strtod reads it
	// (strnum.go).
	if d, ok := stringNumberComparison(e); ok {
		return d, transform.NewTree, nil
	}
	switch e := e.(type) {
	case *intArithmetic:
		// A DATE in arithmetic with a number is its number YYYYMMDD,
		// as in comparisons (temporalAsNumber): GMS read it as a
		// DATETIME, so d + 0 was 20200229000000, not 20200229. A
		// string operand is a number there too (d + '1' is
		// 20200102).
		l, r := e.LeftChild, e.RightChild
		switch {
		case types.IsDateType(l.Type()) && wholeTemporal(l) && arithNumber(r):
			l = &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: l}}
		case types.IsDateType(r.Type()) && wholeTemporal(r) && arithNumber(l):
			r = &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: r}}
		case fractionalDatetime(l) > 0 && arithNumber(r):
			// A DATETIME(n) or TIMESTAMP(n) is the DECIMAL
			// YYYYMMDDhhmmss.f of n digits (NOW(3) + 0 is
			// 20261127093012.345; GMS dropped the fraction).
			l = &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: l}, digits: fractionalDatetime(l)}
		case fractionalDatetime(r) > 0 && arithNumber(l):
			r = &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: r}, digits: fractionalDatetime(r)}
		default:
			return e, transform.SameTree, nil
		}
		ret, err := e.WithChildren(l, r)
		return ret, transform.NewTree, err
	case *expression.UnaryMinus, *intNegation:
		// -d of a DATE is -YYYYMMDD, of a DATETIME(n) -YYYYMMDDhhmmss.f
		// (GMS negated the date's value, -0).
		var n *temporalNumber
		switch c := e.Children()[0]; {
		case wholeTemporal(c):
			n = &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: c}}
		case fractionalDatetime(c) > 0:
			n = &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: c}, digits: fractionalDatetime(c)}
		default:
			return e, transform.SameTree, nil
		}
		return expression.NewUnaryMinus(n), transform.NewTree, nil
	case *plan.Subquery:
		// Handled by RowComparisonsIn, which has the context.
	case *expression.Not:
		if eq, ok := e.Child.(*expression.Equals); ok {
			if l, r, ok := nullableRows(eq.Left(), eq.Right()); ok {
				return expression.NewNot(rowsEqual(l, r)), transform.NewTree, nil
			}
		}
	case *expression.Equals:
		if ret, ok := temporalAsNumber(e); ok {
			return ret, transform.NewTree, nil
		}
		if l, r, ok := nullableRows(e.Left(), e.Right()); ok {
			return rowsEqual(l, r), transform.NewTree, nil
		}
	case *expression.NullSafeEquals:
		if types.IsText(e.Left().Type()) || types.IsText(e.Right().Type()) {
			// GMS's <=> compares strings by their bytes, not under
			// their collation as = does ('a' <=> 'A' is 0 under a
			// case-insensitive collation; MySQL says 1).
			l, r := e.Left(), e.Right()
			return expression.NewOr(
				expression.NewAnd(expression.NewIsNull(l), expression.NewIsNull(r)),
				expression.NewIsTrue(expression.NewEquals(l, r)),
			), transform.NewTree, nil
		}
		if l, r, ok := nullableRows(e.Left(), e.Right()); ok {
			parts := make([]gsql.Expression, len(l))
			for i := range l {
				parts[i] = expression.NewNullSafeEquals(l[i], r[i])
			}
			return expression.JoinAnd(parts...), transform.NewTree, nil
		}
	case *expression.LessThan:
		if ret, ok := temporalAsNumber(e); ok {
			return ret, transform.NewTree, nil
		}
		return rowOrder(e, e.Left(), e.Right(), func(a, b gsql.Expression) gsql.Expression { return expression.NewLessThan(a, b) })
	case *expression.LessThanOrEqual:
		if ret, ok := temporalAsNumber(e); ok {
			return ret, transform.NewTree, nil
		}
		return rowOrder(e, e.Left(), e.Right(), func(a, b gsql.Expression) gsql.Expression { return expression.NewLessThanOrEqual(a, b) })
	case *expression.GreaterThan:
		if ret, ok := temporalAsNumber(e); ok {
			return ret, transform.NewTree, nil
		}
		return rowOrder(e, e.Left(), e.Right(), func(a, b gsql.Expression) gsql.Expression { return expression.NewGreaterThan(a, b) })
	case *expression.GreaterThanOrEqual:
		if ret, ok := temporalAsNumber(e); ok {
			return ret, transform.NewTree, nil
		}
		return rowOrder(e, e.Left(), e.Right(), func(a, b gsql.Expression) gsql.Expression { return expression.NewGreaterThanOrEqual(a, b) })
	case *expression.Convert:
		// CAST(DATE AS CHAR): GMS formats the date as a DATETIME
		// ('2021-06-15 00:00:00'); MySQL gives '2021-06-15'.
		if types.IsText(e.Type()) && types.IsDateType(e.Child.Type()) {
			ret, err := e.WithChildren(dateString(e.Child))
			return ret, transform.NewTree, err
		}
		// CAST(double AS SIGNED) (not UNSIGNED, which GMS converts on
		// its own terms): GMS rounds half away from zero
		// (2.5 to 3); MySQL converts an approximate value with the C
		// library's rint, half to even (2.5 to 2, 3.5 to 4).
		// CAST(DECIMAL or DOUBLE AS UNSIGNED): numeric.go.
		if e.Type() == types.Uint64 && (types.IsFloat(e.Child.Type()) || types.IsDecimal(e.Child.Type())) {
			return &unsignedCast{UnaryExpression: expression.UnaryExpression{Child: e.Child}, name: e.String()}, transform.NewTree, nil
		}
		if e.Type() == types.Int64 && types.IsFloat(e.Child.Type()) {
			if _, done := e.Child.(*roundHalfEven); !done {
				ret, err := e.WithChildren(&roundHalfEven{UnaryExpression: expression.UnaryExpression{Child: e.Child}})
				return ret, transform.NewTree, err
			}
		}
	case *function.Coalesce, *function.IfNull:
		// IFNULL of a number and a string: GMS types it by
		// its first argument and fails converting the string
		// ('strconv.ParseFloat: parsing "x"', mid-result, which drops a
		// prepared statement's connection); MySQL types it as a
		// string, as GMS types COALESCE, which means the same.
		if f, ok := e.(*function.IfNull); ok && (mixesNumberAndText(f.LeftChild, f.RightChild) || mixesTemporalAndNumber(f.LeftChild, f.RightChild)) {
			c, err := function.NewCoalesce(f.LeftChild, f.RightChild)
			return c, transform.NewTree, err
		}
		// IFNULL of two numbers of different types: GMS types it by its
		// first argument and converts the second into that type
		// (IFNULL(int_col, 2.5e0) of a NULL was 3, IFNULL(uint_col, -1)
		// 4294967295, IFNULL(bigint_col, 18446744073709551615)
		// 9223372036854775807). MySQL types IFNULL as COALESCE of the
		// two, which GMS types right; an integer and a DECIMAL are typed
		// by widenedDecimalCoalesce.
		if f, ok := e.(*function.IfNull); ok {
			if c, ok := numbersIfNull(f.LeftChild, f.RightChild); ok {
				return c, transform.NewTree, nil
			}
		}
		// IFNULL of a TIME and another type is the COALESCE it means
		// (GMS types it as the TIME and fails on a string: "value x is
		// not a valid Time"), whose TIME is written as a string below.
		if f, ok := e.(*function.IfNull); ok && isTimeType(f.LeftChild.Type()) != isTimeType(f.RightChild.Type()) &&
			f.LeftChild.Type() != types.Null && f.RightChild.Type() != types.Null {
			c, err := function.NewCoalesce(f.LeftChild, f.RightChild)
			if err != nil {
				return e, transform.SameTree, err
			}
			e = c
		}
		if w, ok := widenedDecimalCoalesce(e); ok {
			return w, transform.NewTree, nil
		}
		// A TIME among values of other types: GMS types the result as
		// a string and fails converting the TIME value to it
		// (COALESCE(TIME(dt), 0): "incompatible conversion to SQL type:
		// '00:00:00'->longtext"); the TIME is written as a string, as
		// MySQL's result is.
		children := e.Children()
		if types.IsText(e.Type()) {
			var out []gsql.Expression
			for i, c := range children {
				if isTimeType(c.Type()) {
					if out == nil {
						out = append([]gsql.Expression(nil), children...)
					}
					out[i] = &timeString{UnaryExpression: expression.UnaryExpression{Child: c}}
				}
			}
			if out != nil {
				ret, err := e.WithChildren(out...)
				return ret, transform.NewTree, err
			}
		}
		// A DATE among string values, or a result that is a string (a
		// DATE with a number): the DATE is written as MySQL writes it in
		// a string (GMS passes the date through, sent formatted as a
		// DATETIME, or types IFNULL by its first argument and fails on
		// the string).
		if !mixesDateAndText(children...) && !types.IsText(e.Type()) {
			break
		}
		var out []gsql.Expression
		for i, c := range children {
			if types.IsDateType(c.Type()) {
				if out == nil {
					out = append([]gsql.Expression(nil), children...)
				}
				out[i] = dateString(c)
			}
		}
		if out != nil {
			ret, err := e.WithChildren(out...)
			return ret, transform.NewTree, err
		}
	case *decimalCoalesce:
		// Made as IFNULL was built (numeric.go), before its
		// arguments were typed: typed again now that they are.
		if w, ok := widenedDecimalCoalesce(e); ok {
			return w, transform.NewTree, nil
		}
	case *function.If:
		ch := e.Children()
		if w, ok := widenedDecimalChoice(e, ch[1:]); ok {
			return w, transform.NewTree, nil
		}
	case *expression.Case:
		values := []gsql.Expression{e.Else}
		for _, b := range e.Branches {
			values = append(values, b.Value)
		}
		if w, ok := widenedDecimalChoice(e, values); ok {
			return w, transform.NewTree, nil
		}
		if !mixesDateAndText(values...) {
			break
		}
		changed := false
		c := *e
		c.Branches = append([]expression.CaseBranch(nil), e.Branches...)
		for i, b := range c.Branches {
			if types.IsDateType(b.Value.Type()) {
				c.Branches[i].Value = dateString(b.Value)
				changed = true
			}
		}
		if c.Else != nil && types.IsDateType(c.Else.Type()) {
			c.Else = dateString(c.Else)
			changed = true
		}
		if changed {
			return &c, transform.NewTree, nil
		}
	case *expression.Like:
		if e.Escape == nil {
			return likeBackslashEscape(e), transform.NewTree, nil
		}
	case *expression.InTuple, *expression.HashInTuple:
		// HashInTuple is GMS's IN of a list of literals (GMS's short
		// path for a one-table UPDATE or DELETE makes it before
		// percdb's builder sees the statement).
		in := e.(expression.BinaryExpression)
		left, ok := in.Left().(expression.Tuple)
		list, lok := in.Right().(expression.Tuple)
		if !ok || !lok || len(left) < 2 {
			break
		}
		nullable := hasNullable(left)
		for _, r := range list {
			rt, ok := r.(expression.Tuple)
			if !ok || len(rt) != len(left) {
				return e, transform.SameTree, nil
			}
			nullable = nullable || hasNullable(rt) || !sameTypes(left, rt)
		}
		// A list whose values are of other types than the row's is
		// expanded too: GMS converts each value to its column's type
		// (2.50 into an INT column is 3, and (1.5, 3) was in ((1.5,
		// 2.50))); pair by pair, = compares as MySQL does.
		if !nullable {
			break
		}
		alts := make([]gsql.Expression, len(list))
		for i, r := range list {
			alts[i] = rowsEqual(left, r.(expression.Tuple))
		}
		return expression.JoinOr(alts...), transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// sameTypes reports whether the values of b have the types of those of a.
func sameTypes(a, b expression.Tuple) bool {
	for i := range a {
		if !a[i].Type().Equals(b[i].Type()) {
			return false
		}
	}
	return true
}

// mixesDateAndText reports whether es has a DATE and a string.
func mixesDateAndText(es ...gsql.Expression) bool {
	var date, text bool
	for _, e := range es {
		if e == nil {
			continue
		}
		date = date || types.IsDateType(e.Type())
		text = text || types.IsText(e.Type())
	}
	return date && text
}

// mixesNumberAndText reports whether one of a and b is a string and the
// other a number (a DATE with a string is written as a string below).
func mixesNumberAndText(a, b gsql.Expression) bool {
	at, bt := a.Type(), b.Type()
	return types.IsText(at) && types.IsNumber(bt) || types.IsText(bt) && types.IsNumber(at)
}

// mixesNumberTypes reports whether a and b are numbers of different
// types (INT and DOUBLE, INT UNSIGNED and a negative literal's BIGINT).
func mixesNumberTypes(a, b gsql.Expression) bool {
	at, bt := a.Type(), b.Type()
	return types.IsNumber(at) && types.IsNumber(bt) && !at.Equals(bt)
}

// numbersIfNull returns IFNULL(a, b) of two numbers of different types
// as MySQL types it: the COALESCE of them (an integer and a DECIMAL
// widened, widenedDecimalCoalesce). It reports false for other
// arguments.
func numbersIfNull(a, b gsql.Expression) (gsql.Expression, bool) {
	if !mixesNumberTypes(a, b) {
		return nil, false
	}
	c, err := function.NewCoalesce(a, b)
	if err != nil {
		return nil, false
	}
	if w, ok := widenedDecimalCoalesce(c); ok {
		return w, true
	}
	return c, true
}

// mixesTemporalAndNumber reports whether one of a and b is a DATE,
// DATETIME or TIMESTAMP and the other a number: IFNULL of them is a
// string in MySQL (IFNULL(dt, 0) of a NULL dt is '0'), where GMS types
// it by its first argument (0000-00-00 00:00:00).
func mixesTemporalAndNumber(a, b gsql.Expression) bool {
	at, bt := a.Type(), b.Type()
	return types.IsTime(at) && types.IsNumber(bt) || types.IsTime(bt) && types.IsNumber(at)
}

// timeString is the TIME of its child as MySQL writes it in a string,
// '00:00:00' ('-838:59:59', '12:00:00.500000').
type timeString struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*timeString)(nil)

// Type implements sql.Expression.
func (t *timeString) Type() gsql.Type { return types.LongText }

// String implements sql.Expression: the TIME's own text.
func (t *timeString) String() string { return t.Child.String() }

// Eval implements sql.Expression.
func (t *timeString) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	ts, err := types.Time.ConvertToTimespan(v)
	if err != nil {
		return nil, err
	}
	if n := argDigits(t.Child); n < 6 {
		// A TIME(n) of fewer than six digits has n (TIME('10:00:00.5')
		// is '10:00:00.5', not GMS's '10:00:00.500000').
		sv, err := timeType(n).SQL(ctx, nil, ts)
		if err != nil {
			return nil, err
		}
		return sv.ToString(), nil
	}
	return ts.String(), nil
}

// WithChildren implements sql.Expression.
func (t *timeString) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &timeString{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// dateString is the DATE e as MySQL writes it in a string, '2021-06-15'.
func dateString(e gsql.Expression) gsql.Expression {
	return function.NewDateFormat(e, expression.NewLiteral("%Y-%m-%d", types.LongText))
}

// nullableRows returns l and r as rows of the same width, at least two,
// when either may hold a NULL.
func nullableRows(l, r gsql.Expression) (expression.Tuple, expression.Tuple, bool) {
	lt, ok := l.(expression.Tuple)
	if !ok || len(lt) < 2 {
		return nil, nil, false
	}
	rt, ok := r.(expression.Tuple)
	if !ok || len(rt) != len(lt) || !hasNullable(lt) && !hasNullable(rt) && sameTypes(lt, rt) {
		// Rows of one type each side and no NULL: GMS compares them
		// as MySQL does. Values of other types GMS converts to the
		// left's ((a, c) < (2.50, ...) with an INT a compared 3).
		return nil, nil, false
	}
	lt, rt = RowYears(lt, rt)
	return lt, rt, true
}

// RowYears returns the rows l and r with each YEAR column whose
// counterpart is a constant from 1 to 99 read as a signed integer: MySQL
// converts such a constant to its year (20 is 2020) only where it meets
// the column itself (year.go), not as an element of a row, which
// compares the numbers ((y, a) < (5, 1) is false for the year 1999).
// The elements of a row comparison become comparisons of their own,
// which would otherwise convert the constant (here and in
// planrules.RowExpansion).
func RowYears(l, r expression.Tuple) (expression.Tuple, expression.Tuple) {
	var lo, ro expression.Tuple
	for i := range l {
		a, b := l[i], r[i]
		switch {
		case yearColumn(a) && twoDigitYear(b):
			a = expression.NewConvert(a, expression.ConvertToSigned)
		case yearColumn(b) && twoDigitYear(a):
			b = expression.NewConvert(b, expression.ConvertToSigned)
		default:
			continue
		}
		if lo == nil {
			lo, ro = append(expression.Tuple(nil), l...), append(expression.Tuple(nil), r...)
		}
		lo[i], ro[i] = a, b
	}
	if lo == nil {
		return l, r
	}
	return lo, ro
}

func hasNullable(t expression.Tuple) bool {
	for _, e := range t {
		if e.IsNullable() {
			return true
		}
	}
	return false
}

// rowsEqual is l1 = r1 AND l2 = r2 AND ..., nested rows compared the
// same way.
func rowsEqual(l, r expression.Tuple) gsql.Expression {
	l, r = RowYears(l, r)
	parts := make([]gsql.Expression, len(l))
	for i := range l {
		parts[i] = expression.NewEquals(l[i], r[i])
		if e, same, _ := expandRowComparison(parts[i]); !same {
			parts[i] = e
		}
	}
	return expression.JoinAnd(parts...)
}

// rowOrder rewrites the row comparison e, l op r, as l1 op' r1 OR (l1 = r1
// AND (l2 op' r2 OR ...)), where op' is the strict form of op for every
// pair but the last and op itself for the last.
func rowOrder(e, l, r gsql.Expression, op func(a, b gsql.Expression) gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	lt, rt, ok := nullableRows(l, r)
	if !ok {
		return e, transform.SameTree, nil
	}
	var strict func(a, b gsql.Expression) gsql.Expression
	switch e.(type) {
	case *expression.LessThan, *expression.LessThanOrEqual:
		strict = func(a, b gsql.Expression) gsql.Expression { return expression.NewLessThan(a, b) }
	default:
		strict = func(a, b gsql.Expression) gsql.Expression { return expression.NewGreaterThan(a, b) }
	}
	last := len(lt) - 1
	ret := op(lt[last], rt[last])
	for i := last - 1; i >= 0; i-- {
		ret = expression.NewOr(strict(lt[i], rt[i]), expression.NewAnd(expression.NewEquals(lt[i], rt[i]), ret))
	}
	return ret, transform.NewTree, nil
}

// A merge join's first condition orders its inputs and tells it which
// side to advance: a comparison that meets a NULL (ErrNilOperand) makes
// it skip the row. Two defects of GMS's: a merge join on several columns
// compares them as one row, and GMS's row comparison ignores NULL, so
// (x1.c0, x1.c1) = (x2.c0, x2.c1) joined rows whose c1 were both NULL;
// and when it looks ahead for more matches it takes a comparison that
// failed with ErrNilOperand (which returns 0 with the error) for an equal
// one, so a NULL key after a match joined again. NullRejectingMergeKeys,
// called by percdb's row-iterator builder (sql/compat_exec.go) as it builds
// a merge join, wraps the join's first condition in a mergeComparer, which reports a NULL in either key (a row key
// with a NULL in it included) as ErrNilOperand with a result that is not
// "equal".
func NullRejectingMergeKeys(j *plan.JoinNode) (gsql.Node, transform.TreeIdentity, error) {
	if !j.Op.IsMerge() || j.Filter == nil {
		return j, transform.SameTree, nil
	}
	conds := expression.SplitConjunction(j.Filter)
	cmp, ok := conds[0].(expression.Comparer)
	if !ok {
		return j, transform.SameTree, nil
	}
	if _, done := cmp.(*mergeComparer); done {
		return j, transform.SameTree, nil
	}
	conds[0] = newMergeComparer(cmp)
	ret, err := j.WithExpressions(expression.JoinAnd(conds...))
	return ret, transform.NewTree, err
}

// mergeComparer is a merge join's key comparison that fails with
// ErrNilOperand, and a non-zero result, when either key has a NULL.
type mergeComparer struct {
	expression.Comparer
	left, right gsql.Expression
}

var _ expression.Comparer = (*mergeComparer)(nil)

func newMergeComparer(c expression.Comparer) *mergeComparer {
	m := &mergeComparer{Comparer: c, left: c.Left(), right: c.Right()}
	if t, ok := m.left.(expression.Tuple); ok {
		m.left = &anyNull{t}
	}
	if t, ok := m.right.(expression.Tuple); ok {
		m.right = &anyNull{t}
	}
	return m
}

// Left implements expression.Comparer: the left key, NULL when it has a
// NULL (the merge join advances the side whose key is NULL).
func (c *mergeComparer) Left() gsql.Expression { return c.left }

// Right implements expression.Comparer.
func (c *mergeComparer) Right() gsql.Expression { return c.right }

// Compare implements expression.Comparer.
func (c *mergeComparer) Compare(ctx *gsql.Context, row gsql.Row) (int, error) {
	for _, side := range []gsql.Expression{c.left, c.right} {
		v, err := side.Eval(ctx, row)
		if err != nil {
			return 0, err
		}
		if v == nil {
			return 1, expression.ErrNilOperand.New()
		}
	}
	return c.Comparer.Compare(ctx, row)
}

// Eval implements sql.Expression.
func (c *mergeComparer) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if _, err := c.Compare(ctx, row); expression.ErrNilOperand.Is(err) {
		return nil, nil
	}
	return c.Comparer.Eval(ctx, row)
}

// WithChildren implements sql.Expression.
func (c *mergeComparer) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	e, err := c.Comparer.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if cmp, ok := e.(expression.Comparer); ok {
		return newMergeComparer(cmp), nil
	}
	return e, nil
}

// anyNull is a row that is NULL when any of its values is.
type anyNull struct{ expression.Tuple }

// Eval implements sql.Expression.
func (t *anyNull) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Tuple.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if vals, ok := v.([]any); ok {
		for _, x := range vals {
			if x == nil {
				return nil, nil
			}
		}
	}
	return v, nil
}

// GMS types COALESCE (and IFNULL) of an integer and a DECIMAL as that
// DECIMAL, and converts the integer into it: COALESCE(a, 1.00) of an INT
// 12 failed with "Out of range value for column of Decimal type" (the
// DECIMAL(3,2) of the literal). IFNULL it types by its first argument:
// IFNULL(a, 0.5) of an INT column gave 1 for a NULL a. MySQL types both
// as a DECIMAL wide enough for every argument: the largest integer part
// and the largest scale. widenedDecimalCoalesce puts a decimalCoalesce
// of that type in their place.
func widenedDecimalCoalesce(e gsql.Expression) (gsql.Expression, bool) {
	if c, done := e.(*decimalCoalesce); done {
		// Typed again once its arguments are: made as the function
		// was built (numeric.go's ifnull), an argument's type could
		// still be GMS's (an IF's DECIMAL(65,2)).
		typ, ok := widenedDecimal(c.orig.Type(), c.orig.Children())
		if !ok || typ.Equals(c.typ) || !expression.ExpressionsResolved(c.orig.Children()...) {
			return e, false
		}
		return &decimalCoalesce{orig: c.orig, typ: typ}, true
	}
	typ, ok := widenedDecimal(e.Type(), e.Children())
	if !ok {
		return e, false
	}
	return &decimalCoalesce{orig: e, typ: typ}, true
}

// IF(c, x, y) and CASE ... THEN x ... ELSE y END of DECIMALs and
// integers are typed by MySQL as COALESCE is (the largest integer part
// and the largest scale of the values); GMS typed IF as its first value
// (IF(c, d, 1.500) of a DECIMAL(10,2) d was 1.50) and CASE as a DECIMAL
// of scale 10 or more. widenedDecimalChoice puts a decimalChoice of
// MySQL's type in their place.
func widenedDecimalChoice(e gsql.Expression, values []gsql.Expression) (gsql.Expression, bool) {
	if _, done := e.(*decimalChoice); done {
		return e, false
	}
	var present []gsql.Expression
	for _, v := range values {
		if v != nil {
			present = append(present, v)
		}
	}
	if !anyDecimal(present) {
		return e, false
	}
	typ, ok := widenedDecimal(types.Null, present)
	if !ok {
		return e, false
	}
	return &decimalChoice{decimalCoalesce{orig: e, typ: typ}}, true
}

// decimalChoice is an IF or CASE of numbers typed as MySQL types it: the
// value it chooses as a DECIMAL of typ.
type decimalChoice struct {
	decimalCoalesce
}

// WithChildren implements sql.Expression.
func (c *decimalChoice) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	orig, err := c.orig.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &decimalChoice{decimalCoalesce{orig: orig, typ: c.typ}}, nil
}

// Eval implements sql.Expression.
func (c *decimalChoice) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := c.orig.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	return c.convert(ctx, v)
}

// widenedDecimal returns the DECIMAL MySQL gives an expression of type
// t (GMS's: a DECIMAL, or an integer or NULL over a DECIMAL) over
// values: the largest integer part and scale of the values (an integer
// counting its digits as MySQL's decimal_precision does), not GMS's
// (IFNULL(IF(c, NULL, d), -12) of a DECIMAL(5,2) d was GMS's
// DECIMAL(65,2)); false when one is neither a number nor NULL, or when
// it is wider than DECIMAL(65).
func widenedDecimal(t gsql.Type, values []gsql.Expression) (gsql.DecimalType, bool) {
	intDigits, scale := 0, 0
	if _, ok := t.(gsql.DecimalType); !ok && t != types.Null && (!types.IsInteger(t) || !anyDecimal(values)) {
		return nil, false
	}
	wider := false
	for _, a := range values {
		t := a.Type()
		switch {
		case types.IsInteger(t):
			// The integer's digits as MySQL counts them for a DECIMAL
			// (decimal_precision: a literal 1 one, an INT column 10);
			// its values are converted to the DECIMAL even when it
			// widens nothing (GMS's IFNULL(d, 1) gave the integer 1).
			intDigits, wider = max(intDigits, integerDigits(a)), true
		case types.IsDecimal(t):
			d := t.(gsql.DecimalType)
			if n := int(d.Precision()) - int(d.Scale()); n > intDigits {
				intDigits, wider = n, true
			}
			if int(d.Scale()) > scale {
				scale, wider = int(d.Scale()), true
			}
		case t == types.Null:
		default:
			return nil, false
		}
	}
	if !wider || intDigits+scale > 65 {
		return nil, false
	}
	typ, err := types.CreateDecimalType(uint8(intDigits+scale), uint8(scale))
	if err != nil {
		return nil, false
	}
	return typ, true
}

// anyDecimal reports whether one of exprs is typed DECIMAL.
func anyDecimal(exprs []gsql.Expression) bool {
	for _, e := range exprs {
		if types.IsDecimal(e.Type()) {
			return true
		}
	}
	return false
}

// decimalCoalesce is a COALESCE or IFNULL of numbers typed as MySQL
// types it: its first non-NULL argument as a DECIMAL of typ.
type decimalCoalesce struct {
	orig gsql.Expression
	typ  gsql.DecimalType
}

var _ gsql.Expression = (*decimalCoalesce)(nil)

// Resolved implements sql.Expression.
func (c *decimalCoalesce) Resolved() bool { return c.orig.Resolved() }

// String implements sql.Expression: the COALESCE's own text, by which
// GMS finds it in a projection.
func (c *decimalCoalesce) String() string { return c.orig.String() }

// Type implements sql.Expression.
func (c *decimalCoalesce) Type() gsql.Type { return c.typ }

// IsNullable implements sql.Expression.
func (c *decimalCoalesce) IsNullable() bool { return c.orig.IsNullable() }

// Children implements sql.Expression.
func (c *decimalCoalesce) Children() []gsql.Expression { return c.orig.Children() }

// WithChildren implements sql.Expression.
func (c *decimalCoalesce) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	orig, err := c.orig.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &decimalCoalesce{orig: orig, typ: c.typ}, nil
}

// Eval implements sql.Expression.
func (c *decimalCoalesce) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	for _, a := range c.orig.Children() {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		return c.convert(ctx, v)
	}
	return nil, nil
}

// convert returns v as a DECIMAL of c's type.
func (c *decimalCoalesce) convert(ctx *gsql.Context, v any) (any, error) {
	d, _, err := c.typ.Convert(ctx, v)
	if dd, ok := d.(decimal.Decimal); ok && err == nil {
		// With the type's scale written out (0.5, 5.0), as MySQL
		// sends it.
		return dd.Round(int32(c.typ.Scale())), nil
	}
	return d, err
}

// MySQL compares a DATE or DATETIME with a number as numbers, the date
// read as YYYYMMDD and the datetime as YYYYMMDDhhmmss (sql/item_cmpfunc.cc,
// Arg_comparator::can_compare_as_dates: date[time] + number is not
// compared as dates); GMS converts the number to a date, which for most
// numbers fails, and the comparison was NULL: x.dt >= (SELECT MAX(s.a)
// ...) matched nothing. temporalAsNumber puts the date's number in its
// place in such a comparison (not for fractional seconds, which the
// integer would drop).
func temporalAsNumber(e gsql.Expression) (gsql.Expression, bool) {
	return withOperands(e, func(l, r gsql.Expression) (gsql.Expression, gsql.Expression, bool) {
		switch {
		case wholeTemporal(l) && isNumeric(r):
			return &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: l}}, r, true
		case wholeTemporal(r) && isNumeric(l):
			return l, &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: r}}, true
		case isTimeType(l.Type()) && isNumeric(r):
			// A TIME is its number HHMMSS[.f] (TIME'10:00:00' >
			// 95959; GMS read the number as a TIME, 9:59:59 as
			// 00:00:00 and the comparison was false).
			return newTimeNumber(l), r, true
		case isTimeType(r.Type()) && isNumeric(l):
			return l, newTimeNumber(r), true
		}
		return l, r, false
	})
}

// timeNumberIn returns in with its TIME operands read as numbers when
// the others are numbers: t IN (10203.125) of the TIME 01:02:03.125 is
// true (GMS read the numbers as TIMEs, 00:00:00).
func timeNumberIn(in *expression.InTuple) (gsql.Expression, bool) {
	list, ok := in.Right().(expression.Tuple)
	if !ok {
		return in, false
	}
	operands := append([]gsql.Expression{in.Left()}, list...)
	anyTime := false
	for _, o := range operands {
		switch {
		case isTimeType(o.Type()):
			anyTime = true
		case !isNumeric(o):
			return in, false
		}
	}
	if !anyTime {
		return in, false
	}
	for i, o := range operands {
		if isTimeType(o.Type()) {
			operands[i] = newTimeNumber(o)
		}
	}
	return expression.NewInTuple(operands[0], expression.NewTuple(operands[1:]...)), true
}

// wholeTemporal reports whether e is a DATE, or a DATETIME or TIMESTAMP
// without fractional seconds.
func wholeTemporal(e gsql.Expression) bool {
	if _, done := e.(*temporalNumber); done {
		return false
	}
	t := e.Type()
	if !types.IsTime(t) {
		return false
	}
	dt, ok := t.(gsql.DatetimeType)
	return ok && (types.IsDateType(t) || dt.Precision() == 0)
}

// isNumeric reports whether e has a number type (not a string, not NULL).
func isNumeric(e gsql.Expression) bool {
	t := e.Type()
	return types.IsNumber(t) && !types.IsText(t)
}

// arithNumber reports whether e is read as a number in arithmetic with
// a date: a number, or a string (read as a DOUBLE).
func arithNumber(e gsql.Expression) bool {
	return isNumeric(e) || types.IsText(e.Type())
}

// fractionalDatetime returns the fractional digits of e when it is a
// DATETIME(n) or TIMESTAMP(n) not yet read as a number; 0 otherwise.
func fractionalDatetime(e gsql.Expression) int {
	if _, done := e.(*temporalNumber); done {
		return 0
	}
	t := e.Type()
	if !types.IsTime(t) || types.IsDateType(t) {
		return 0
	}
	dt, ok := t.(gsql.DatetimeType)
	if !ok {
		return 0
	}
	return dt.Precision()
}

// temporalNumber is a DATE as the integer YYYYMMDD, a DATETIME as
// YYYYMMDDhhmmss, or with digits, a DATETIME(n) as the DECIMAL
// YYYYMMDDhhmmss.f of that many digits.
type temporalNumber struct {
	expression.UnaryExpression
	digits int
}

var _ gsql.Expression = (*temporalNumber)(nil)

// Type implements sql.Expression.
func (t *temporalNumber) Type() gsql.Type {
	if t.digits > 0 {
		return types.MustCreateDecimalType(uint8(14+t.digits), uint8(t.digits))
	}
	return types.Int64
}

// String implements sql.Expression: the date's own text.
func (t *temporalNumber) String() string { return t.Child.String() }

// Eval implements sql.Expression.
func (t *temporalNumber) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	tm, ok := v.(time.Time)
	if !ok {
		dt, ok := t.Child.Type().(gsql.DatetimeType)
		if !ok {
			return nil, nil
		}
		if tm, err = dt.ConvertWithoutRangeCheck(ctx, v); err != nil {
			return nil, nil
		}
	}
	n := int64(tm.Year())*10000 + int64(tm.Month())*100 + int64(tm.Day())
	if !types.IsDateType(t.Child.Type()) {
		n = n*1000000 + int64(tm.Hour())*10000 + int64(tm.Minute())*100 + int64(tm.Second())
	}
	if t.digits > 0 {
		unit := int64(math.Pow10(6 - t.digits))
		frac := int64(tm.Nanosecond()/1000) / unit
		return decimal.New(n, 0).Add(decimal.New(frac, -int32(t.digits))), nil
	}
	return n, nil
}

// WithChildren implements sql.Expression.
func (t *temporalNumber) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: children[0]}, digits: t.digits}, nil
}
