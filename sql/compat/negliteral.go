package compat

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// The parser folds the sign of a negative integer literal into the
// literal, but reads -999.99 or -1.5e3 as the negation of a positive
// literal, which GMS plans as an expression: no rule that makes a
// comparison with a constant exact sees a constant there. A DECIMAL(6,0)
// column compared with -999.99 was compared in the column's type, the
// constant rounded to -1000, so d0 < -999.99 missed -1000; and an index
// range was not built on it. negativeLiterals folds the sign into such a
// literal where it is compared (a comparison's operand, a bound of
// BETWEEN, a value of an IN list), before decimalLiteralScales widens it
// and GMS's planner binds it. The select list is left as it is: a
// column's name is the expression's text.

// negativeLiterals folds the sign of a negated decimal or floating-point
// literal into the literal where it is an operand of a comparison.
func negativeLiterals(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.ComparisonExpr:
			n.Left, n.Right = foldedNegation(n.Left), foldedNegation(n.Right)
			if t, ok := n.Right.(ast.ValTuple); ok {
				for i, e := range t {
					t[i] = foldedNegation(e)
				}
			}
		case *ast.RangeCond:
			n.From, n.To = foldedNegation(n.From), foldedNegation(n.To)
		}
		return true, nil
	}, stmt)
	return stmt
}

// foldedNegation returns e as a negative literal when it is the
// negation of a decimal or floating-point literal, else e.
func foldedNegation(e ast.Expr) ast.Expr {
	u, ok := e.(*ast.UnaryExpr)
	if !ok || u.Operator != ast.UMinusStr {
		return e
	}
	v, ok := u.Expr.(*ast.SQLVal)
	if !ok || v.Type != ast.FloatVal || len(v.Val) == 0 {
		return e
	}
	if v.Val[0] == '-' {
		// - -1.5: the inner sign was folded already.
		return &ast.SQLVal{Type: ast.FloatVal, Val: append([]byte(nil), v.Val[1:]...)}
	}
	return &ast.SQLVal{Type: ast.FloatVal, Val: append([]byte("-"), v.Val...)}
}
