package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// In a MySQL string literal, \% and \_ keep their backslash: '\_' is the
// two characters \ and _, so that LIKE 'a\_b' matches the underscore only
// (LIKE's own escape). The vitess lexer GMS parses with drops the
// backslash, as it does for an unknown escape, so LIKE 'a\_b' matched
// 'axb' too and 'a\_b' = 'a_b' was true.
//
// GMS's LIKE without an ESCAPE clause has no escape character at all
// (its matcher gets escape 0), where MySQL's default is the backslash:
// likeBackslashEscape gives such a LIKE ESCAPE '\\' (called from the
// RowComparisons rule, which walks every expression anyway).

// RewriteParsed applies percdb's rewrites of the parsed statement, before
// GMS's planner sees it.
func RewriteParsed(stmt ast.Statement) ast.Statement {
	stmt = subqueryInsertedValues(selectedColumnRefs(updateJoinWhere(wholeTableDeletes(schemaAsDatabase(tableStatus(flushNoOps(stmt))))))) // odkuvalues.go, odku.go, updatejoin.go, deleteall.go, flush.go, tablestatus.go
	return bitNegations(groupConcatCalls(windowFunctionNames(extremumParameters(namedWindowOrders(decimalLiteralScales(negativeLiterals(distinctAggregateItems(stmt))))))))
}

// GMS's planner turns the literal of a comparison with a column into a
// literal of the column's type when the column's type prints at least as
// wide (planbuilder's typeExpandComparisonLiteral; a CAST of the literal
// is folded first, so it does not help): a DECIMAL(6,2) column compared
// with 2.503 was compared with 2.50, so d < 2.503 missed 2.50 and
// d > 2.506 missed 2.51. decimalLiteralScales writes such a literal (a
// number with a decimal point and no exponent, beside a column, or a
// bound of BETWEEN on one) with
// trailing zeros up to scale 30, MySQL's largest: the same value, in a
// type wider than the column's, which the planner leaves alone. The
// decimalComparison rule (decimal.go) then puts the literal in the
// column's type where that is exact, as the planner would have (index
// ranges need it), and otherwise compares both sides in a DECIMAL wide
// enough for each.
func decimalLiteralScales(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if r, ok := node.(*ast.RangeCond); ok {
			if _, col := r.Left.(*ast.ColName); col {
				widenDecimalLiteral(r.From)
				widenDecimalLiteral(r.To)
			}
			return true, nil
		}
		c, ok := node.(*ast.ComparisonExpr)
		if !ok {
			return true, nil
		}
		switch c.Operator {
		case ast.EqualStr, ast.LessThanStr, ast.GreaterThanStr, ast.LessEqualStr, ast.GreaterEqualStr, ast.NotEqualStr, ast.NullSafeEqualStr:
		default:
			return true, nil
		}
		if _, col := c.Left.(*ast.ColName); col {
			widenDecimalLiteral(c.Right)
		} else if _, col := c.Right.(*ast.ColName); col {
			widenDecimalLiteral(c.Left)
		}
		return true, nil
	}, stmt)
	return stmt
}

// maxDecimalScale and maxDecimalPrecision are MySQL's DECIMAL limits.
const (
	maxDecimalScale     = 30
	maxDecimalPrecision = 65
)

// widenDecimalLiteral pads e with trailing zeros up to scale 30 (fewer
// when its integer digits leave less room in 65) when it is a decimal
// literal with a fraction.
func widenDecimalLiteral(e ast.Expr) {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.FloatVal {
		return
	}
	text := string(v.Val)
	dot := strings.IndexByte(text, '.')
	if dot < 0 || strings.ContainsAny(text, "eE") {
		return
	}
	intDigits := len(strings.TrimLeft(strings.TrimLeft(text[:dot], "+-"), "0"))
	scale := len(text) - dot - 1
	want := min(maxDecimalScale, maxDecimalPrecision-intDigits)
	if scale >= want {
		return
	}
	v.Val = []byte(text + strings.Repeat("0", want-scale))
}

// GMS's planner refuses a select list with the same aggregate twice when
// it names a column with its table (SELECT MAX(x.c), MAX(x.c) FROM t x):
// "column "MAX(x.c)" does not exist in scope, but there is an alias
// defined in this projection with that name". It takes the second for a
// reference to the first's name. distinctAggregateItems rewrites each
// occurrence of such a repeated item e as COALESCE(e, NULL) AS `e`, the
// same value and type under the same column name, which the planner takes
// for an expression of its own (it folds a COALESCE of one argument).
func distinctAggregateItems(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if sel, ok := node.(*ast.Select); ok {
			repeatedAggregates(sel.SelectExprs)
		}
		return true, nil
	}, stmt)
	return stmt
}

// repeatedAggregates rewrites the repeated unaliased aggregate items of
// one select list.
func repeatedAggregates(items ast.SelectExprs) {
	if len(items) < 2 {
		return
	}
	seen := map[string]int{}
	for _, it := range items {
		if a, ok := it.(*ast.AliasedExpr); ok && a.As.IsEmpty() && hasAggregate(a.Expr) {
			seen[strings.ToLower(ast.String(a.Expr))]++
		}
	}
	for _, it := range items {
		a, ok := it.(*ast.AliasedExpr)
		if !ok || !a.As.IsEmpty() || seen[strings.ToLower(ast.String(a.Expr))] < 2 {
			continue
		}
		name := a.InputExpression
		if name == "" {
			name = ast.String(a.Expr)
		}
		a.Expr = &ast.FuncExpr{Name: ast.NewColIdent("coalesce"), Exprs: ast.SelectExprs{&ast.AliasedExpr{Expr: a.Expr}, &ast.AliasedExpr{Expr: &ast.NullVal{}}}}
		a.As = ast.NewColIdent(name)
	}
}

// hasAggregate reports whether e calls an aggregate function.
func hasAggregate(e ast.Expr) bool {
	found := false
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.FuncExpr:
			found = found || n.IsAggregate()
		case *ast.GroupConcatExpr:
			found = true
		case *ast.Subquery:
			return false, nil
		}
		return !found, nil
	}, e)
	return found
}

// likeBackslashEscape returns like, which has no ESCAPE clause, with
// ESCAPE '\\'.
func likeBackslashEscape(like *expression.Like) gsql.Expression {
	return expression.NewLike(like.Left(), like.Right(), expression.NewLiteral(`\`, types.LongText))
}

// KeepLikeEscapes returns query with the backslash of every \% and \_
// inside a '...' or "..." string doubled. Backquoted names and comments
// are copied as they are.
func KeepLikeEscapes(query string) string {
	if strings.IndexByte(query, '\\') < 0 {
		return query
	}
	var b strings.Builder
	var quote byte // the quote of the string being read, 0 outside one
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote == 0:
			switch {
			case c == '\'' || c == '"' || c == '`':
				quote = c
			case c == '#' || c == '-' && strings.HasPrefix(query[i:], "-- "):
				end := strings.IndexByte(query[i:], '\n')
				if end < 0 {
					end = len(query) - i
				}
				b.WriteString(query[i : i+end])
				i += end - 1
				continue
			case c == '/' && strings.HasPrefix(query[i:], "/*") && !strings.HasPrefix(query[i:], "/*!"):
				end := strings.Index(query[i+2:], "*/")
				if end < 0 {
					end = len(query) - i - 2
				} else {
					end += 2
				}
				b.WriteString(query[i : i+2+end])
				i += 2 + end - 1
				continue
			}
		case c == quote:
			quote = 0
		case c == '\\' && quote != '`' && i+1 < len(query):
			next := query[i+1]
			if next == '%' || next == '_' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
			b.WriteByte(next)
			i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
