package compat

import (
	"fmt"
	"strings"
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Quantified comparisons: x op ANY (subquery), x op SOME (...), x op ALL
// (...), for op one of =, <>, !=, <, <=, >, >=. The vitess grammar GMS
// parses with has none of them, and GMS has no expression for them.
//
// = ANY (= SOME) and <> ALL are IN and NOT IN, which GMS evaluates
// (and plans as semi and anti joins); rewriteSyntax writes them so. The
// others are written, on the parse error, as a call the grammar takes:
//
//	x < ANY (SELECT ...)   ->   x < percdb_any((SELECT ...))
//
// and quantifiedComparisons then turns each such comparison of the
// parsed statement into
//
//	percdb_quantified('<', 'any', x, (SELECT ...)) = TRUE
//
// the comparison node kept in its place (the grammar's tree has no
// parent links; x = TRUE is x in three-valued logic). percdb_quantified
// (quantifiedExpr) evaluates x once, the subquery's rows with
// EvalMultiple (which GMS caches when the subquery is not correlated),
// and compares x with each row by GMS's own comparison of those two
// types, in MySQL's three-valued logic (Item_allany_subselect):
//
//   - ANY is TRUE when some row compares TRUE, else NULL when some row
//     compares NULL (a NULL row, or x NULL over a non-empty subquery),
//     else FALSE (an empty subquery: FALSE);
//   - ALL is FALSE when some row compares FALSE, else NULL when some
//     row compares NULL, else TRUE (an empty subquery: TRUE).
//
// A rewrite into SQL GMS already evaluates was the other way: x > ANY
// (S) as x > (SELECT MIN(c) FROM (S)) with NULL guards needs S three
// times (its count, its count of NULLs, its minimum) or a derived table
// over S, which GMS cannot correlate (S may read the outer row), and an
// EXISTS form (EXISTS (SELECT 1 FROM (S) q WHERE x > q.c)) has the same
// derived table. The expression reads S once per outer row, or once per
// statement when S is not correlated; its cost is a comparison per row
// of S per outer row.
//
// A row on the left, (a, b) < ANY (SELECT a, b ...), is 1241 (GMS's
// validation of operands), as in MySQL, whose Item_allany_subselect
// takes one column (single_value_transformer); (a, b) = ANY and (a, b)
// <> ALL are IN and NOT IN, which take rows. A subquery with LIMIT is
// MySQL's 1235 "LIMIT & IN/ALL/ANY/SOME subquery".

// The names of the grammar's stand-ins and of the function.
const (
	quantifiedAnyMarker = "percdb_any"
	quantifiedAllMarker = "percdb_all"
	quantifiedFunction  = "percdb_quantified"
)

// quantifiedComparisons rewrites the stand-ins rewriteSyntax wrote for
// the quantified comparisons of stmt, as the comment at the top of the
// file says, in place.
func quantifiedComparisons(stmt ast.Statement) (ast.Statement, error) {
	if stmt == nil {
		return stmt, nil
	}
	var ferr error
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if ferr != nil {
			return false, nil
		}
		c, ok := node.(*ast.ComparisonExpr)
		if !ok {
			return true, nil
		}
		f, ok := c.Right.(*ast.FuncExpr)
		if !ok || len(f.Exprs) != 1 || !f.Qualifier.IsEmpty() {
			return true, nil
		}
		quantifier := ""
		switch f.Name.Lowered() {
		case quantifiedAnyMarker:
			quantifier = "any"
		case quantifiedAllMarker:
			quantifier = "all"
		default:
			return true, nil
		}
		arg, ok := f.Exprs[0].(*ast.AliasedExpr)
		if !ok {
			return true, nil
		}
		sq, ok := arg.Expr.(*ast.Subquery)
		if !ok {
			return true, nil
		}
		if subqueryHasLimit(sq) {
			ferr = errNotSupportedYet("LIMIT & IN/ALL/ANY/SOME subquery")
			return false, nil
		}
		op := c.Operator
		if op == ast.NotEqualStr || op == "!=" {
			op = "<>"
		}
		c.Left = &ast.FuncExpr{Name: ast.NewColIdent(quantifiedFunction), Exprs: ast.SelectExprs{
			&ast.AliasedExpr{Expr: ast.NewStrVal([]byte(op))},
			&ast.AliasedExpr{Expr: ast.NewStrVal([]byte(quantifier))},
			&ast.AliasedExpr{Expr: c.Left},
			&ast.AliasedExpr{Expr: sq},
		}}
		c.Operator = ast.EqualStr
		c.Right = ast.BoolVal(true)
		return true, nil
	}, stmt)
	if ferr != nil {
		return nil, ferr
	}
	return stmt, nil
}

// subqueryHasLimit reports whether sq's own query has a LIMIT.
func subqueryHasLimit(sq *ast.Subquery) bool {
	switch s := sq.Select.(type) {
	case *ast.Select:
		return s.Limit != nil
	case *ast.SetOp:
		return s.Limit != nil
	case *ast.ParenSelect:
		return subqueryHasLimit(&ast.Subquery{Select: s.Select})
	}
	return false
}

// quantifiedFunctions holds percdb_quantified(op, quantifier, x,
// subquery), by lower-case name. It is not changed after the package is
// initialized.
var quantifiedFunctions = map[string]gsql.Function{
	quantifiedFunction: gsql.FunctionN{Name: quantifiedFunction, Fn: newQuantifiedExpr},
}

// quantifiedExpr is x op ANY|ALL (subquery).
type quantifiedExpr struct {
	op  string // =, <>, <, <=, >, >=
	all bool
	// left is x, sub the subquery (a *plan.Subquery, or an expression
	// of one row a rule put in its place).
	left, sub gsql.Expression
	// cmp compares the row {x's value, a value of the subquery}, nil
	// until the children are resolved.
	cmp gsql.Expression
	// ordered is set for <, <=, > and >= of two numeric types: x op
	// ANY|ALL is then x compared with the subquery's least or greatest
	// value (a number's conversion for the comparison keeps the order),
	// which evalExtremum finds once for the rows of a subquery that is
	// not correlated.
	ordered bool
	// summary is evalExtremum's, for the rows it was made from.
	summary struct {
		sync.Mutex
		rows     *any // the first of those rows (their cache's array)
		n        int
		nonNull  int
		min, max any
		sawNull  bool
	}
}

var _ gsql.FunctionExpression = (*quantifiedExpr)(nil)

// newQuantifiedExpr builds percdb_quantified from its four arguments.
func newQuantifiedExpr(args ...gsql.Expression) (gsql.Expression, error) {
	if len(args) != 4 {
		return nil, gsql.ErrInvalidArgumentNumber.New(quantifiedFunction, 4, len(args))
	}
	op, err := literalString(args[0])
	if err != nil {
		return nil, err
	}
	q, err := literalString(args[1])
	if err != nil {
		return nil, err
	}
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
	default:
		return nil, fmt.Errorf("%s: unknown comparison %q", quantifiedFunction, op)
	}
	if q != "any" && q != "all" {
		return nil, fmt.Errorf("%s: unknown quantifier %q", quantifiedFunction, q)
	}
	e := &quantifiedExpr{op: op, all: q == "all", left: args[2], sub: args[3]}
	e.build()
	return e, nil
}

// literalString is the string value of a literal argument.
func literalString(e gsql.Expression) (string, error) {
	l, ok := e.(*expression.Literal)
	if !ok {
		return "", fmt.Errorf("%s: %s is not a literal", quantifiedFunction, e)
	}
	s, ok := l.Value().(string)
	if !ok {
		return "", fmt.Errorf("%s: %s is not a string", quantifiedFunction, e)
	}
	return strings.ToLower(s), nil
}

// build sets e.cmp from the types of e's children.
func (e *quantifiedExpr) build() {
	e.cmp = nil
	if !e.left.Resolved() || !e.sub.Resolved() {
		return
	}
	e.ordered = e.op != "=" && e.op != "<>" && types.IsNumber(e.left.Type()) && types.IsNumber(e.sub.Type())
	l := expression.NewGetField(0, e.left.Type(), "left", true)
	r := expression.NewGetField(1, e.sub.Type(), "right", true)
	switch e.op {
	case "=":
		e.cmp = expression.NewEquals(l, r)
	case "<>":
		e.cmp = expression.NewNot(expression.NewEquals(l, r))
	case "<":
		e.cmp = expression.NewLessThan(l, r)
	case "<=":
		e.cmp = expression.NewLessThanOrEqual(l, r)
	case ">":
		e.cmp = expression.NewGreaterThan(l, r)
	case ">=":
		e.cmp = expression.NewGreaterThanOrEqual(l, r)
	}
}

// FunctionName implements sql.FunctionExpression.
func (e *quantifiedExpr) FunctionName() string { return quantifiedFunction }

// Description implements sql.FunctionExpression.
func (e *quantifiedExpr) Description() string {
	return "compares a value with every row of a subquery (ANY, SOME, ALL)"
}

// Resolved implements sql.Expression.
func (e *quantifiedExpr) Resolved() bool { return e.left.Resolved() && e.sub.Resolved() }

// IsNullable implements sql.Expression.
func (e *quantifiedExpr) IsNullable() bool { return true }

// Type implements sql.Expression.
func (e *quantifiedExpr) Type() gsql.Type { return types.Boolean }

// Children implements sql.Expression.
func (e *quantifiedExpr) Children() []gsql.Expression {
	return []gsql.Expression{e.left, e.sub}
}

// WithChildren implements sql.Expression.
func (e *quantifiedExpr) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 2 {
		return nil, gsql.ErrInvalidChildrenNumber.New(e, len(children), 2)
	}
	n := &quantifiedExpr{op: e.op, all: e.all, left: children[0], sub: children[1]}
	n.build()
	return n, nil
}

// String implements sql.Expression.
func (e *quantifiedExpr) String() string {
	q := "ANY"
	if e.all {
		q = "ALL"
	}
	return fmt.Sprintf("(%s %s %s %s)", e.left, e.op, q, e.sub)
}

// Eval implements sql.Expression: see the comment at the top of the
// file.
func (e *quantifiedExpr) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if e.cmp == nil {
		return nil, fmt.Errorf("%s: unresolved %s", quantifiedFunction, e)
	}
	left, err := e.left.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	var rows []any
	if sq, ok := e.sub.(*plan.Subquery); ok {
		rows, err = sq.EvalMultiple(ctx, row)
	} else {
		var v any
		v, err = e.sub.Eval(ctx, row)
		rows = []any{v}
	}
	if err != nil {
		return nil, err
	}
	if sq, ok := e.sub.(*plan.Subquery); ok && e.ordered && sq.CanCacheResults() {
		return e.evalExtremum(ctx, left, rows)
	}
	pair := gsql.Row{left, nil}
	sawNull := false
	for _, r := range rows {
		pair[1] = r
		v, err := e.cmp.Eval(ctx, pair)
		if err != nil {
			return nil, err
		}
		if v == nil {
			sawNull = true
			continue
		}
		t, err := gsql.ConvertToBool(ctx, v)
		if err != nil {
			return nil, err
		}
		if t != e.all {
			// ANY: a row compared TRUE; ALL: one compared FALSE.
			return t, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return e.all, nil
}

// evalExtremum is Eval over rows, a not correlated subquery's, when
// e.ordered: x < ANY (S) is x < MAX(S), x < ALL (S) is x < MIN(S) (and
// dually for >), the NULLs of S deciding as in Eval when that is not
// TRUE (ANY) or not FALSE (ALL). The least and greatest values are
// found once for the rows GMS cached for the statement.
func (e *quantifiedExpr) evalExtremum(ctx *gsql.Context, left any, rows []any) (any, error) {
	if len(rows) == 0 {
		return e.all, nil
	}
	if left == nil {
		return nil, nil
	}
	e.summary.Lock()
	defer e.summary.Unlock()
	sm := &e.summary
	if sm.rows != &rows[0] || sm.n != len(rows) {
		sm.rows, sm.n, sm.nonNull, sm.min, sm.max, sm.sawNull = &rows[0], len(rows), 0, nil, nil, false
		typ := e.sub.Type()
		for _, r := range rows {
			if r == nil {
				sm.sawNull = true
				continue
			}
			if sm.nonNull == 0 {
				sm.min, sm.max = r, r
			} else {
				if c, err := typ.Compare(ctx, r, sm.min); err != nil {
					sm.rows = nil
					return nil, err
				} else if c < 0 {
					sm.min = r
				}
				if c, err := typ.Compare(ctx, r, sm.max); err != nil {
					sm.rows = nil
					return nil, err
				} else if c > 0 {
					sm.max = r
				}
			}
			sm.nonNull++
		}
	}
	if sm.nonNull > 0 {
		// ANY: the value most likely TRUE; ALL: most likely FALSE.
		ext := sm.max
		if (e.op == ">" || e.op == ">=") != e.all {
			ext = sm.min
		}
		v, err := e.cmp.Eval(ctx, gsql.Row{left, ext})
		if err != nil {
			return nil, err
		}
		if v != nil {
			t, err := gsql.ConvertToBool(ctx, v)
			if err != nil {
				return nil, err
			}
			if t != e.all {
				return t, nil
			}
		} else {
			return nil, nil
		}
	}
	if sm.sawNull {
		return nil, nil
	}
	return e.all, nil
}
