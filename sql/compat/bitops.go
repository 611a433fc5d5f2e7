package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL's ~x is x's 64 bits inverted, an unsigned integer (~0 is
// 18446744073709551615). GMS's planner has no case for the operator and
// refused it (1235 "unsupported character set: ~"). bitNegations
// rewrites ~x as a call of bitNotName's function, which evaluates it as
// MySQL does; the select item's name stays as written. (GMS's own ^ with
// 18446744073709551615 computes in DOUBLE, so x ^ ~0 is no way round.)
func bitNegations(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		u, ok := node.(*ast.UnaryExpr)
		if !ok || u.Operator != ast.TildaStr {
			return true, nil
		}
		// The node stays, as a unary plus (which GMS reads as its
		// operand) of the call, so that its parent need not be found.
		u.Operator = ast.PlusStr
		u.Expr = &ast.FuncExpr{Name: ast.NewColIdent(bitNotName), Exprs: ast.SelectExprs{&ast.AliasedExpr{Expr: u.Expr}}}
		return true, nil
	}, stmt)
	return stmt
}

// bitNotName is the function bitNegations writes ~x as.
const bitNotName = "percdb_bitnot"

// bitNotFunctions holds bitNotName's function.
var bitNotFunctions = map[string]gsql.Function{
	bitNotName: gsql.Function1{Name: bitNotName, Fn: func(e gsql.Expression) gsql.Expression {
		return newTemporalFunc(bitNotName, bitNot, fixedType(types.Uint64), e)
	}},
}

// bitNot is ~x: x read as a 64-bit integer (a string by its leading
// digits, a fractional number rounded), its bits inverted.
func bitNot(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
	v := vals[0]
	if types.IsText(args[0].Type()) {
		s, err := types.ConvertToString(ctx, v, types.LongText, nil)
		if err != nil {
			return nil, err
		}
		n := parseLeadingInt(s)
		if n.truncated || n.overflow {
			warnOnce(ctx, codeTruncatedWrongValue, fmt.Sprintf("Truncated incorrect INTEGER value: '%s'", s), isConstant(args[0]))
		}
		return ^n.bits, nil
	}
	bits, ok := bitsOf(ctx, v)
	if !ok {
		return nil, nil
	}
	return ^bits, nil
}

// sqlTSIUnits are the ODBC names MySQL takes for the units of
// TIMESTAMPDIFF and TIMESTAMPADD (SQL_TSI_MONTH is MONTH), by upper-case
// name; the vitess grammar knows none of them (1064). rewriteSyntax
// (syntax.go) writes them as the units they name.
var sqlTSIUnits = map[string]string{
	"SQL_TSI_MICROSECOND": "MICROSECOND", "SQL_TSI_SECOND": "SECOND", "SQL_TSI_MINUTE": "MINUTE",
	"SQL_TSI_HOUR": "HOUR", "SQL_TSI_DAY": "DAY", "SQL_TSI_WEEK": "WEEK", "SQL_TSI_MONTH": "MONTH",
	"SQL_TSI_QUARTER": "QUARTER", "SQL_TSI_YEAR": "YEAR",
}

// MySQL's &, |, ^, << and >> compute on 64 bits, an unsigned integer
// (negative integers as their two's complement, fractional numbers
// rounded). GMS types the operation by its operands and, when a signed
// and an unsigned one meet (a BIGINT UNSIGNED column & 1, ~x & 15),
// computes in DOUBLE, which loses the low bits of a large number and
// turns one above BIGINT's largest into garbage: ~b & 15 was 0 and
// ~a & 1 = 0 true for every a. numericBitOp puts bitOp in the place of
// such an operation on two numbers (strings, binary strings and
// temporal values stay GMS's).

// bitOp is a bit operation of two numbers, computed as MySQL does.
type bitOp struct {
	*expression.BitOp
}

var _ gsql.Expression = (*bitOp)(nil)

// numericBitOp returns e as a bitOp when it is a bit operation of two
// numbers.
func numericBitOp(e gsql.Expression) (gsql.Expression, bool) {
	b, ok := e.(*expression.BitOp)
	if !ok || !types.IsNumber(b.LeftChild.Type()) || !types.IsNumber(b.RightChild.Type()) {
		return e, false
	}
	return &bitOp{BitOp: b}, true
}

// Type implements sql.Expression.
func (b *bitOp) Type() gsql.Type { return types.Uint64 }

// Eval implements sql.Expression.
func (b *bitOp) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	var ops [2]uint64
	for i, c := range []gsql.Expression{b.LeftChild, b.RightChild} {
		v, err := c.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		bits, ok := bitsOf(ctx, v)
		if !ok {
			return nil, nil
		}
		ops[i] = bits
	}
	l, r := ops[0], ops[1]
	switch b.Op {
	case ast.BitAndStr:
		return l & r, nil
	case ast.BitOrStr:
		return l | r, nil
	case ast.BitXorStr:
		return l ^ r, nil
	case ast.ShiftLeftStr:
		if r >= 64 {
			return uint64(0), nil
		}
		return l << r, nil
	case ast.ShiftRightStr:
		if r >= 64 {
			return uint64(0), nil
		}
		return l >> r, nil
	}
	return b.BitOp.Eval(ctx, row)
}

// WithChildren implements sql.Expression.
func (b *bitOp) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	n, err := b.BitOp.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if o, ok := numericBitOp(n); ok {
		return o, nil
	}
	return n, nil
}
