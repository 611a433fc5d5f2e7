package compat

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL computes +, -, * and % of two integers in BIGINT, or in BIGINT
// UNSIGNED when an operand is unsigned (%: when the dividend is), and
// fails with error 1690 when the result of +, - or * does not fit, a
// negative unsigned result included. GMS computes +, - and * in int64
// (uint64 when both operands are unsigned) and lets them wrap around,
// types integer % integer DECIMAL, and reads a hexadecimal literal in
// arithmetic (0x10 + 0) as a string, so as a DOUBLE, where MySQL reads
// an unsigned integer.
//
// IntegerArithmetic replaces GMS's +, -, * and % with expressions of
// percdb's that compute integers as MySQL does and leave every other
// operand (DECIMAL, DOUBLE, strings, dates) to GMS. It runs before GMS's
// first rule, so that nothing is evaluated before, and it replaces the
// operators whatever their operands' types: a prepared statement's
// parameters get their types only when it runs, and the expressions
// decide again when GMS puts the values in. GMS does not run the
// analyzer's rules on a one-table UPDATE or DELETE; compatBuilder
// applies this one to those (sql/compat_exec.go).

// MySQL's errors of integer arithmetic.
const (
	codeDataOutOfRange  = 1690 // ER_DATA_OUT_OF_RANGE
	stateDataOutOfRange = "22003"
	codeDivisionByZero  = 1365 // ER_DIVISION_BY_ZERO
)

// IntegerArithmetic is the analyzer rule; see the comment at the top of
// the file.
func IntegerArithmetic(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Arithmetic:
			if isInterval(e.LeftChild) || isInterval(e.RightChild) {
				// Date arithmetic (d + INTERVAL 1 DAY), never an
				// integer's, stays GMS's: its validation accepts an
				// INTERVAL only under GMS's own + and -, and failed
				// every such query once it was percdb's.
				return e, transform.SameTree, nil
			}
			switch e.Op {
			case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr:
				return newIntArithmetic(e), transform.NewTree, nil
			}
		case *expression.Mod:
			return newIntMod(e), transform.NewTree, nil
		case *expression.UnaryMinus:
			return newIntNegation(e), transform.NewTree, nil // negate.go
		case *function.AbsVal:
			return newIntAbs(e), transform.NewTree, nil // negate.go
		case *expression.IntDiv:
			return newIntDivision(e), transform.NewTree, nil // intdiv.go
		}
		return e, transform.SameTree, nil
	})
}

// isInterval reports whether e is an INTERVAL operand.
func isInterval(e gsql.Expression) bool {
	_, ok := e.(*expression.Interval)
	return ok
}

// IntKind is how MySQL computes with an operand.
type IntKind uint8

const (
	NotInt      IntKind = iota // anything but an integer: GMS's business
	SignedInt                  // a signed integer
	UnsignedInt                // an unsigned integer, or a hexadecimal literal
)

// operandKind returns how e takes part in integer arithmetic.
func operandKind(e gsql.Expression) IntKind {
	if _, ok := hexLiteral(e); ok {
		return UnsignedInt
	}
	t := e.Type()
	switch {
	case types.IsUnsigned(t):
		// A prepared statement's parameter arrives as a literal of the
		// client's type, unsigned for a Go uint; MySQL 8 types a
		// parameter in arithmetic like the other operand. A literal
		// that fits BIGINT counts as signed: the unsigned operand, if
		// any, is the other one.
		if lit, ok := e.(*expression.Literal); ok {
			if v, _, err := types.Uint64.Convert(context.Background(), lit.Value()); err == nil && v.(uint64) <= math.MaxInt64 {
				return SignedInt
			}
		}
		return UnsignedInt
	case types.IsSigned(t):
		return SignedInt
	}
	return NotInt
}

// hexLiteral returns the value of e when it is a hexadecimal literal
// (0x10, X'10') of at most eight bytes, which GMS keeps as bytes.
func hexLiteral(e gsql.Expression) (uint64, bool) {
	lit, ok := e.(*expression.Literal)
	if !ok || !types.IsBinaryType(lit.Type()) {
		return 0, false
	}
	b, ok := lit.Value().([]byte)
	if !ok || len(b) > 8 {
		return 0, false
	}
	var buf [8]byte
	copy(buf[8-len(b):], b)
	return binary.BigEndian.Uint64(buf[:]), true
}

// intValue is an integer operand's value: v, or -v when neg.
type intValue struct {
	mag uint64
	neg bool
}

// evalInt evaluates e, an operand of kind k, as an integer. null reports
// NULL, and ok false a value that is not an integer (GMS then computes).
// Values, not pointers: this runs for every row an expression is
// evaluated on.
func evalInt(ctx *gsql.Context, e gsql.Expression, k IntKind, row gsql.Row) (v intValue, null, ok bool, err error) {
	if u, ok := hexLiteral(e); ok {
		return intValue{mag: u}, false, true, nil
	}
	x, err := e.Eval(ctx, row)
	if err != nil {
		return intValue{}, false, false, err
	}
	if x == nil {
		return intValue{}, true, true, nil
	}
	if k == UnsignedInt {
		c, inRange, err := types.Uint64.Convert(ctx, x)
		if err != nil || inRange != gsql.InRange {
			return intValue{}, false, false, nil
		}
		return intValue{mag: c.(uint64)}, false, true, nil
	}
	c, inRange, err := types.Int64.Convert(ctx, x)
	if err != nil || inRange != gsql.InRange {
		return intValue{}, false, false, nil
	}
	i := c.(int64)
	if i < 0 {
		return intValue{mag: uint64(-(i + 1)) + 1, neg: true}, false, true, nil
	}
	return intValue{mag: uint64(i)}, false, true, nil
}

// evalOperands evaluates the operands l and r, of kinds lk and rk, as
// integers. null reports that one is NULL, and ok false that one is not
// an integer (GMS then computes).
func evalOperands(ctx *gsql.Context, l, r gsql.Expression, lk, rk IntKind, row gsql.Row) (a, b intValue, null, ok bool, err error) {
	a, null, ok, err = evalInt(ctx, l, lk, row)
	if err != nil || !ok || null {
		return a, b, null, ok, err
	}
	b, null, ok, err = evalInt(ctx, r, rk, row)
	return a, b, null, ok, err
}

// big returns v as a big.Int.
func (v intValue) big() *big.Int {
	b := new(big.Int).SetUint64(v.mag)
	if v.neg {
		b.Neg(b)
	}
	return b
}

// intArithmetic is +, - or * (GMS's Arithmetic) computed as MySQL does
// when both operands are integers.
type intArithmetic struct {
	*expression.Arithmetic
	left, right IntKind
	// typ is the type of an operation not of two integers, computed once
	// when the node is made (nil while an operand is unresolved): each
	// computation asks both operands for their types, so computing it at
	// every Type call took time exponential in the depth of a chain of
	// operators (a constant expression of a dozen +, - and * with a
	// DECIMAL in it was analyzed for 1.5 s).
	typ gsql.Type
}

var _ gsql.Expression = (*intArithmetic)(nil)

func newIntArithmetic(a *expression.Arithmetic) *intArithmetic {
	e := &intArithmetic{Arithmetic: a}
	if l, r := operandKind(a.LeftChild), operandKind(a.RightChild); l != NotInt && r != NotInt {
		e.left, e.right = l, r
	}
	if !e.isInt() && a.LeftChild.Resolved() && a.RightChild.Resolved() {
		e.typ = exactArithmeticType(a) // sql/compat/arithtypes.go
	}
	return e
}

// isInt reports whether both operands are integers.
func (e *intArithmetic) isInt() bool { return e.left != NotInt }

// isUnsigned reports whether the result is BIGINT UNSIGNED.
func (e *intArithmetic) isUnsigned() bool { return e.left == UnsignedInt || e.right == UnsignedInt }

// Type implements sql.Expression.
func (e *intArithmetic) Type() gsql.Type {
	switch {
	case !e.isInt():
		if e.typ != nil {
			return e.typ
		}
		return exactArithmeticType(e.Arithmetic) // sql/compat/arithtypes.go
	case e.isUnsigned():
		return types.Uint64
	}
	return types.Int64
}

// WithChildren implements sql.Expression.
func (e *intArithmetic) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	a, err := e.Arithmetic.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return newIntArithmetic(a.(*expression.Arithmetic)), nil
}

// Eval implements sql.Expression.
func (e *intArithmetic) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if !e.isInt() {
		v, err := textAsDouble(e.Arithmetic).Eval(ctx, row)
		return finiteDouble(e, v, err)
	}
	l, r, null, ok, err := evalOperands(ctx, e.LeftChild, e.RightChild, e.left, e.right, row)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		v, err := e.Arithmetic.Eval(ctx, row)
		return finiteDouble(e, v, err)
	case null:
		return nil, nil
	}
	if e.isUnsigned() {
		if v, ok := e.unsignedOp(l, r); ok {
			return v, nil
		}
		return nil, outOfRange("BIGINT UNSIGNED", e)
	}
	if v, ok := e.signedOp(int64From(l), int64From(r)); ok {
		return v, nil
	}
	return nil, outOfRange("BIGINT", e)
}

func int64From(v intValue) int64 {
	if v.neg {
		return -int64(v.mag-1) - 1
	}
	return int64(v.mag)
}

// signedOp returns a op b, and false when it overflows BIGINT.
func (e *intArithmetic) signedOp(a, b int64) (int64, bool) {
	switch e.Op {
	case sqlparser.PlusStr:
		s := a + b
		return s, (s > a) == (b > 0)
	case sqlparser.MinusStr:
		s := a - b
		return s, (s < a) == (b > 0)
	default:
		if a == 0 || b == 0 {
			return 0, true
		}
		p := a * b
		if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) || p/b != a {
			return 0, false
		}
		return p, true
	}
}

// unsignedOp returns a op b, and false when it is not in BIGINT
// UNSIGNED's range.
func (e *intArithmetic) unsignedOp(a, b intValue) (uint64, bool) {
	if !a.neg && !b.neg {
		switch e.Op {
		case sqlparser.PlusStr:
			s, carry := bits.Add64(a.mag, b.mag, 0)
			return s, carry == 0
		case sqlparser.MinusStr:
			return a.mag - b.mag, a.mag >= b.mag
		default:
			hi, lo := bits.Mul64(a.mag, b.mag)
			return lo, hi == 0
		}
	}
	// A negative signed operand: rare enough to compute exactly.
	x, y := a.big(), b.big()
	switch e.Op {
	case sqlparser.PlusStr:
		x.Add(x, y)
	case sqlparser.MinusStr:
		x.Sub(x, y)
	default:
		x.Mul(x, y)
	}
	if x.Sign() < 0 || !x.IsUint64() {
		return 0, false
	}
	return x.Uint64(), true
}

// outOfRange is MySQL's error 1690 for the result of e.
func outOfRange(typ string, e gsql.Expression) error {
	return mysql.NewSQLError(codeDataOutOfRange, stateDataOutOfRange, "%s value is out of range in '%s'", typ, mysqlExpr(e))
}

// mysqlExpr writes e as MySQL writes an expression in its messages:
// columns qualified and quoted, each operation in parentheses.
func mysqlExpr(e gsql.Expression) string {
	switch e := e.(type) {
	case *intArithmetic:
		return fmt.Sprintf("(%s %s %s)", mysqlExpr(e.LeftChild), e.Op, mysqlExpr(e.RightChild))
	case *IntMod:
		return fmt.Sprintf("(%s %% %s)", mysqlExpr(e.LeftChild), mysqlExpr(e.RightChild))
	case *expression.Arithmetic:
		return fmt.Sprintf("(%s %s %s)", mysqlExpr(e.LeftChild), e.Op, mysqlExpr(e.RightChild))
	case *expression.GetField:
		var b strings.Builder
		for _, part := range []string{e.Database(), e.Table()} {
			if part != "" {
				b.WriteString("`" + part + "`.")
			}
		}
		b.WriteString("`" + e.Name() + "`")
		return b.String()
	case *expression.Literal:
		switch v := e.Value().(type) {
		case []byte:
			return "0x" + hex.EncodeToString(v)
		case string:
			return "'" + v + "'"
		case nil:
			return "NULL"
		}
		return fmt.Sprint(e.Value())
	case *intNegation:
		return "-(" + mysqlExpr(e.Child) + ")"
	case *intAbs:
		return "abs(" + mysqlExpr(e.Child) + ")"
	case *intDivision:
		return fmt.Sprintf("(%s DIV %s)", mysqlExpr(e.LeftChild), mysqlExpr(e.RightChild))
	case *expression.UnaryMinus:
		return "-(" + mysqlExpr(e.Child) + ")"
	}
	return e.String()
}

// IntMod is % (GMS's Mod) computed as MySQL does when both operands are
// integers: BIGINT, or BIGINT UNSIGNED when the dividend is unsigned,
// with the dividend's sign; NULL, with warning 1365, for a zero divisor.
type IntMod struct {
	*expression.Mod
	left, right IntKind
}

var _ gsql.Expression = (*IntMod)(nil)

func newIntMod(m *expression.Mod) *IntMod {
	e := &IntMod{Mod: m}
	if l, r := operandKind(m.LeftChild), operandKind(m.RightChild); l != NotInt && r != NotInt {
		e.left, e.right = l, r
	}
	return e
}

// LeftKind is how the dividend is typed: NotInt when % is GMS's (an
// operand is not an integer).
func (e *IntMod) LeftKind() IntKind { return e.left }

// Type implements sql.Expression.
func (e *IntMod) Type() gsql.Type {
	switch e.left {
	case NotInt:
		return e.Mod.Type()
	case UnsignedInt:
		return types.Uint64
	}
	return types.Int64
}

// WithChildren implements sql.Expression.
func (e *IntMod) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	m, err := e.Mod.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return newIntMod(m.(*expression.Mod)), nil
}

// Eval implements sql.Expression.
func (e *IntMod) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if e.left == NotInt {
		return e.Mod.Eval(ctx, row)
	}
	l, r, null, ok, err := evalOperands(ctx, e.LeftChild, e.RightChild, e.left, e.right, row)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return e.Mod.Eval(ctx, row)
	case null:
		return nil, nil
	}
	if r.mag == 0 {
		ctx.Warn(codeDivisionByZero, "Division by 0")
		return nil, nil
	}
	m := intValue{mag: l.mag % r.mag, neg: l.neg}
	if e.left == UnsignedInt {
		return m.mag, nil
	}
	return int64From(m), nil
}

// roundHalfEven is a floating-point value rounded to the nearest integer,
// half to even, as the C library's rint rounds it: what MySQL converts a
// DOUBLE to when it casts it to an integer (rows.go).
type roundHalfEven struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*roundHalfEven)(nil)

// Type implements sql.Expression.
func (r *roundHalfEven) Type() gsql.Type { return r.Child.Type() }

// String implements sql.Expression: the expression's own text, which
// names the CAST's column.
func (r *roundHalfEven) String() string { return r.Child.String() }

// Eval implements sql.Expression.
func (r *roundHalfEven) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := r.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	switch f := v.(type) {
	case float64:
		return math.RoundToEven(f), nil
	case float32:
		return float32(math.RoundToEven(float64(f))), nil
	}
	return v, nil
}

// WithChildren implements sql.Expression.
func (r *roundHalfEven) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(r, len(children), 1)
	}
	return &roundHalfEven{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}
