package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/tablemeta"
)

// Under a PAD SPACE collation (every MySQL 8 collation but the _0900_
// ones and binary: utf8mb4_general_ci, utf8mb4_bin, latin1_swedish_ci,
// ...) strings compare as if the shorter were padded with spaces to the
// longer's length, so trailing spaces do not count: 'a' = 'a ' is 1, and
// GROUP BY, DISTINCT, joins, IN and UNIQUE indexes take them for one
// value. GMS compares every collation as NO PAD ('a' = 'a ' is 0).
// percdb takes a PAD SPACE string for its value without trailing spaces,
// in one place for each thing that tells strings apart:
//
//   - comparisons (=, <=>, <, <=, >, >=, BETWEEN, IN lists, CASE x WHEN) whose
//     operands are strings compared under a PAD SPACE collation compare
//     their operands without trailing spaces (PadSpaceComparisons, the
//     analyzer rule, and PadSpaceCompared, which the fast path's own
//     comparisons go through);
//   - hashes (DISTINCT, UNION, COUNT(DISTINCT), hash joins, IN
//     subqueries: stringKeyer in collation.go) and GROUP BY keys leave the
//     trailing spaces out;
//   - index keys leave them out (tablemeta.PadsSpaces sets
//     executor.IndexColumn.TrimTrailingSpaces), so that a lookup, a range
//     and a unique check see what a comparison sees.
//
// LIKE is not padded ('a ' LIKE 'a' is 0 in MySQL): GMS turns a LIKE
// without wildcards into =, which PadSpaceLiterals keeps it from doing for a
// PAD SPACE string. Trimming is PAD SPACE exactly for equality and for
// the order of strings whose characters sort above the space; a string
// that goes on, after the other's end, with a character below the space
// (a tab, a newline, a control character) sorts after it here and before
// it in MySQL ('a\t' < 'a' is 1 there), as in TiDB, whose collations
// trim too (docs/compatibility.md).

// PadSpaceComparisons is the analyzer rule; see the comment at the top
// of the file. It runs once the plan is final (with CollationKeys), so
// that GMS has built its index ranges from the operands as written
// (index keys drop the trailing spaces of their bounds themselves).
func PadSpaceComparisons(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		n, sameE, err := transform.OneNodeExprsWithNode(n, func(_ gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			return padSpaceExpr(ctx, e)
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		switch n.(type) {
		case *plan.Sort, *plan.TopN:
			// ORDER BY s sorts by the key of s: 'a' and 'a ' tie, and
			// the next sort field decides.
			return padSpaceSortFields(n, sameE)
		case *plan.Window:
			// OVER (PARTITION BY s ORDER BY s) partitions, sorts and
			// tells peers apart by the key of s.
			return padSpaceWindows(n.(*plan.Window), sameE)
		}
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return n, sameE, nil
		}
		// GROUP BY s groups by the key of s; the rows keep their
		// spelling (the group's first, as in MySQL).
		keys := trimmedKeys(gb.GroupByExprs)
		if keys == nil {
			return n, sameE, nil
		}
		ret := *gb
		ret.GroupByExprs = keys
		return &ret, transform.NewTree, nil
	})
}

// padSpaceSortFields returns n, a Sort or TopN, with its PAD SPACE
// string sort fields without trailing spaces.
func padSpaceSortFields(n gsql.Node, same transform.TreeIdentity) (gsql.Node, transform.TreeIdentity, error) {
	ex := n.(gsql.Expressioner)
	keys := trimmedKeys(ex.Expressions())
	if keys == nil {
		return n, same, nil
	}
	ret, err := ex.WithExpressions(keys...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ret, transform.NewTree, nil
}

// padSpaceWindows returns w with the PAD SPACE strings of its window
// functions' PARTITION BY and ORDER BY without trailing spaces. GMS
// tells partitions apart, sorts them and tells peers apart (and so do
// percdb's peer framers) by the window definition's expressions, each
// as its type compares, so each of these sees the key.
func padSpaceWindows(w *plan.Window, same transform.TreeIdentity) (gsql.Node, transform.TreeIdentity, error) {
	ret, sameW, err := windowFunctionsRewritten(w, "pad space windows", padSpaceWindow) // rangeframes.go
	if err != nil || sameW == transform.SameTree {
		return w, same, err
	}
	return ret, transform.NewTree, nil
}

// padSpaceWindow returns w with its PAD SPACE partition and sort
// expressions trimmed, or nil when it has none.
func padSpaceWindow(_ gsql.WindowAdaptableExpression, w *gsql.WindowDefinition) (*gsql.WindowDefinition, error) {
	keys := trimmedKeys(w.ToExpressions())
	if keys == nil {
		return nil, nil
	}
	return w.FromExpressions(keys)
}

// trimmedKeys returns exprs, grouping or sort keys, with the PAD SPACE
// strings among them without trailing spaces; nil when there is none
// (or each is already).
func trimmedKeys(exprs []gsql.Expression) []gsql.Expression {
	var keys []gsql.Expression
	for i, e := range exprs {
		if _, done := e.(*spaceTrimmed); done || !tablemeta.PadsSpaces(e.Type()) {
			continue
		}
		if keys == nil {
			keys = append([]gsql.Expression(nil), exprs...)
		}
		keys[i] = &spaceTrimmed{child: e}
	}
	return keys
}

// TrimmedField reports whether e is a column without its trailing
// spaces (a PAD SPACE string's sort field), whose evaluation fails only
// as the column's does.
func TrimmedField(e gsql.Expression) bool {
	t, ok := e.(*spaceTrimmed)
	if !ok {
		return false
	}
	_, ok = t.child.(*expression.GetField)
	return ok
}

// PadSpaceSortKey returns e, a sort key, without its trailing spaces when
// its type compares under PAD SPACE ('a' and 'a ' tie, and the next key
// orders them, as GMS's sorts do after PadSpaceComparisons), else e. The
// fast path's sorts use it.
func PadSpaceSortKey(e gsql.Expression) gsql.Expression {
	if keys := trimmedKeys([]gsql.Expression{e}); keys != nil {
		return keys[0]
	}
	return e
}

// PadSpaceCompared returns e with the operands of each comparison of
// strings under a PAD SPACE collation compared without their trailing
// spaces (the file's comment), and whether it changed anything.
func PadSpaceCompared(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, bool, error) {
	ret, same, err := padSpaceExpr(ctx, e)
	return ret, same == transform.NewTree, err
}

func padSpaceExpr(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	return transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.InTuple:
			return padSpaceOperands(ctx, e)
		case *expression.Between:
			return padSpaceOperands(ctx, e)
		case *expression.Case:
			// CASE x WHEN v compares x = v as it evaluates.
			return padSpaceCase(ctx, e)
		case *function.StrCmp, *field, *function.NullIf:
			return padSpaceFunction(ctx, e) // padspacefuncs.go
		case *aggregation.Max, *aggregation.Min:
			return padSpaceExtremumOf(e.(gsql.Aggregation))
		case *expression.HashInTuple:
			// Its hash of the list is made when it is built.
			ch := e.Children()
			if !padSpaceCompared(ctx, ch[0], ch[1]) {
				break
			}
			l, r := trimmedSpaces(ch[0]), trimmedSpaces(ch[1])
			if sameTrimmed(ch[0], l) && sameTrimmed(ch[1], r) {
				break
			}
			in, err := expression.NewHashInTuple(ctx, l, r)
			if err != nil {
				return nil, transform.SameTree, err
			}
			return in, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// padSpaceCase returns CASE x WHEN v1 ... with x and the v compared
// without trailing spaces when they are strings compared under a PAD
// SPACE collation; the THEN and ELSE values are left as they are.
func padSpaceCase(ctx *gsql.Context, c *expression.Case) (gsql.Expression, transform.TreeIdentity, error) {
	if c.Expr == nil {
		return c, transform.SameTree, nil
	}
	ops := []gsql.Expression{c.Expr}
	for _, b := range c.Branches {
		ops = append(ops, b.Cond)
	}
	if !padSpaceCompared(ctx, ops...) {
		return c, transform.SameTree, nil
	}
	expr := trimmedSpaces(c.Expr)
	changed := expr != c.Expr
	branches := make([]expression.CaseBranch, len(c.Branches))
	for i, b := range c.Branches {
		branches[i] = expression.CaseBranch{Cond: trimmedSpaces(b.Cond), Value: b.Value}
		changed = changed || branches[i].Cond != b.Cond
	}
	if !changed {
		return c, transform.SameTree, nil
	}
	return expression.NewCase(expr, branches, c.Else), transform.NewTree, nil
}

// padSpaceOperands returns the comparison e with its operands trimmed
// when they are strings compared under a PAD SPACE collation.
func padSpaceOperands(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	ch := e.Children()
	if !padSpaceCompared(ctx, ch...) {
		return e, transform.SameTree, nil
	}
	trimmed := make([]gsql.Expression, len(ch))
	changed := false
	for i, c := range ch {
		trimmed[i] = trimmedSpaces(c)
		changed = changed || !sameTrimmed(c, trimmed[i])
	}
	if !changed {
		return e, transform.SameTree, nil
	}
	ret, err := e.WithChildren(trimmed...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ret, transform.NewTree, nil
}

// padSpaceCompared reports whether GMS compares operands as strings
// under a PAD SPACE collation: each is a string (or NULL, or a tuple
// of them: an IN list), at least one is not NULL, and the collation
// they are compared in (MySQL's coercibility rules) is PAD SPACE.
func padSpaceCompared(ctx *gsql.Context, operands ...gsql.Expression) bool {
	var flat []gsql.Expression
	for _, o := range operands {
		if tup, ok := o.(expression.Tuple); ok {
			flat = append(flat, tup...)
			continue
		}
		flat = append(flat, o)
	}
	coll, coer := gsql.Collation_Unspecified, byte(0)
	strs := 0
	for _, o := range flat {
		t := o.Type()
		if t == types.Null {
			continue
		}
		if !types.IsTextOnly(t) {
			return false
		}
		c, k := gsql.GetCoercibility(ctx, o)
		if strs == 0 {
			coll, coer = c, k
		} else {
			coll, coer = gsql.ResolveCoercibility(coll, coer, c, k)
		}
		strs++
	}
	return strs > 0 && coll != gsql.Collation_binary && coll.PadAttribute() == "PAD SPACE"
}

// trimmedSpaces returns e (each element of a tuple) without trailing
// spaces.
func trimmedSpaces(e gsql.Expression) gsql.Expression {
	switch e := e.(type) {
	case *spaceTrimmed:
		return e
	case expression.Tuple:
		out := make(expression.Tuple, len(e))
		for i, x := range e {
			out[i] = trimmedSpaces(x)
		}
		return out
	}
	if e.Type() == types.Null {
		return e
	}
	return &spaceTrimmed{child: e}
}

// sameTrimmed reports whether trimmedSpaces returned e itself (a tuple:
// the same elements), so that a plan rewritten once is not again.
func sameTrimmed(e, trimmed gsql.Expression) bool {
	et, ok := e.(expression.Tuple)
	if !ok {
		return e == trimmed
	}
	tt := trimmed.(expression.Tuple)
	for i := range et {
		if et[i] != tt[i] {
			return false
		}
	}
	return true
}

// spaceTrimmed is a string without its trailing spaces (U+0020 only, as
// PAD SPACE pads with spaces), of the type and collation of the string.
type spaceTrimmed struct {
	child gsql.Expression
}

var (
	_ gsql.Expression         = (*spaceTrimmed)(nil)
	_ gsql.CollationCoercible = (*spaceTrimmed)(nil)
)

// Resolved implements sql.Expression.
func (t *spaceTrimmed) Resolved() bool { return t.child.Resolved() }

// String implements sql.Expression: the string's, so that EXPLAIN and
// the names GMS finds expressions by stay as written.
func (t *spaceTrimmed) String() string { return t.child.String() }

// DebugString shows the trim.
func (t *spaceTrimmed) DebugString() string { return fmt.Sprintf("pad_space(%s)", t.child) }

// Type implements sql.Expression.
func (t *spaceTrimmed) Type() gsql.Type { return t.child.Type() }

// IsNullable implements sql.Expression.
func (t *spaceTrimmed) IsNullable() bool { return t.child.IsNullable() }

// CollationCoercibility implements sql.CollationCoercible: the
// string's, so that the comparison's collation stays what it was.
func (t *spaceTrimmed) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, t.child)
}

// Eval implements sql.Expression.
func (t *spaceTrimmed) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		return strings.TrimRight(s, " "), nil
	}
	return v, nil
}

// Children implements sql.Expression.
func (t *spaceTrimmed) Children() []gsql.Expression { return []gsql.Expression{t.child} }

// WithChildren implements sql.Expression.
func (t *spaceTrimmed) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &spaceTrimmed{child: children[0]}, nil
}

// PadSpaceLiterals is the analyzer rule, run before GMS's
// simplifyFilters (and so before it builds index ranges), that
//
//   - writes the string literals compared with PAD SPACE strings without
//     their trailing spaces (which do not count): GMS's range builder
//     compares its bounds as NO PAD, and found s BETWEEN 'a ' AND 'a'
//     empty and s = 'a' OR s = 'a ' two ranges;
//   - keeps GMS from turning s LIKE 'abc' (no wildcards) into s = 'abc'
//     when s is a PAD SPACE string: LIKE compares every character,
//     trailing spaces included ('abc ' LIKE 'abc' is 0), and = would
//     not. The pattern is hidden from that rewrite, not changed.
func PadSpaceLiterals(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Like:
			if !tablemeta.PadsSpaces(e.LeftChild.Type()) {
				break
			}
			lit, ok := e.RightChild.(*expression.Literal)
			if !ok {
				break
			}
			ch := e.Children()
			ch[1] = &likePattern{Literal: lit}
			ret, err := e.WithChildren(ch...)
			if err != nil {
				return nil, transform.SameTree, err
			}
			return ret, transform.NewTree, nil
		case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.InTuple, *expression.Between:
			ch := e.Children()
			if !padSpaceCompared(ctx, ch...) {
				break
			}
			var trimmed []gsql.Expression
			for i, c := range ch {
				t, ok := trimmedLiteral(c)
				if !ok {
					continue
				}
				if trimmed == nil {
					trimmed = append([]gsql.Expression(nil), ch...)
				}
				trimmed[i] = t
			}
			if trimmed == nil {
				break
			}
			ret, err := e.WithChildren(trimmed...)
			if err != nil {
				return nil, transform.SameTree, err
			}
			return ret, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// trimmedLiteral returns e, a string literal or a tuple of them, without
// trailing spaces, and whether that changed it.
func trimmedLiteral(e gsql.Expression) (gsql.Expression, bool) {
	switch e := e.(type) {
	case *expression.Literal:
		s, ok := e.Value().(string)
		if !ok || !strings.HasSuffix(s, " ") {
			return e, false
		}
		return expression.NewLiteral(strings.TrimRight(s, " "), e.Type()), true
	case expression.Tuple:
		var out expression.Tuple
		for i, x := range e {
			t, ok := trimmedLiteral(x)
			if !ok {
				continue
			}
			if out == nil {
				out = append(expression.Tuple(nil), e...)
			}
			out[i] = t
		}
		if out == nil {
			return e, false
		}
		return out, true
	}
	return e, false
}

// likePattern is a LIKE pattern that GMS's simplifyFilters does not take
// for a literal (PadSpaceLiterals); it is the literal in every other way.
type likePattern struct {
	*expression.Literal
}

// WithChildren implements sql.Expression.
func (p *likePattern) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(p, len(children), 0)
	}
	return p, nil
}

// padSpaceExtremumOf returns agg, a MAX or MIN (not over a window) of a
// PAD SPACE string, as a padSpaceExtremum.
func padSpaceExtremumOf(agg gsql.Aggregation) (gsql.Expression, transform.TreeIdentity, error) {
	ch := agg.Children()
	if agg.Window() != nil || len(ch) != 1 || !tablemeta.PadsSpaces(ch[0].Type()) {
		return agg, transform.SameTree, nil
	}
	_, isMax := agg.(*aggregation.Max)
	return &padSpaceExtremum{Aggregation: agg, max: isMax}, transform.NewTree, nil
}

// padSpaceExtremum is MAX or MIN of a PAD SPACE string: GMS's buffers
// compare as NO PAD, so MAX over 'y' then 'y  ' replaced the first by
// the second, greater there; under PAD SPACE they are equal and MySQL
// keeps the first met. Its buffer compares the strings without trailing
// spaces and returns the kept value as it was written.
type padSpaceExtremum struct {
	gsql.Aggregation
	max bool
}

// NewBuffer implements sql.Aggregation.
func (a *padSpaceExtremum) NewBuffer() (gsql.AggregationBuffer, error) {
	child := a.Aggregation.Children()[0]
	return &padSpaceExtremumBuffer{expr: child, max: a.max}, nil
}

// WithChildren implements sql.Expression.
func (a *padSpaceExtremum) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	e, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &padSpaceExtremum{Aggregation: e.(gsql.Aggregation), max: a.max}, nil
}

// WithId implements sql.IdExpression.
func (a *padSpaceExtremum) WithId(id gsql.ColumnId) gsql.IdExpression {
	return &padSpaceExtremum{Aggregation: a.Aggregation.WithId(id).(gsql.Aggregation), max: a.max}
}

// padSpaceExtremumBuffer is one group's MAX or MIN of a PAD SPACE string.
type padSpaceExtremumBuffer struct {
	expr gsql.Expression
	max  bool
	val  any
}

// Update implements sql.AggregationBuffer.
func (b *padSpaceExtremumBuffer) Update(ctx *gsql.Context, row gsql.Row) error {
	v, err := b.expr.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	if b.val == nil {
		b.val = v
		return nil
	}
	cmp, err := b.expr.Type().Compare(ctx, trimmedValue(v), trimmedValue(b.val))
	if err != nil {
		return err
	}
	if b.max && cmp > 0 || !b.max && cmp < 0 {
		b.val = v
	}
	return nil
}

// trimmedValue is v without trailing spaces when it is a string.
func trimmedValue(v any) any {
	if s, ok := v.(string); ok {
		return strings.TrimRight(s, " ")
	}
	return v
}

// Eval implements sql.AggregationBuffer.
func (b *padSpaceExtremumBuffer) Eval(*gsql.Context) (any, error) { return b.val, nil }

// Dispose implements sql.Disposable.
func (b *padSpaceExtremumBuffer) Dispose() { expression.Dispose(b.expr) }
