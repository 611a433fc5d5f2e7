package compat

import (
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// typeCounter is a DECIMAL(5,2) operand that counts the calls of its
// Type.
type typeCounter struct {
	*expression.Literal
	calls *int
}

func (c typeCounter) Type() gsql.Type {
	*c.calls++
	return types.MustCreateDecimalType(5, 2)
}

// TestArithmeticTypeLinear: the type of a chain of +, - and * over a
// DECIMAL asks each operand for its type a bounded number of times, not a
// number that doubles with every operator of the chain. Before
// intArithmetic kept its type, this chain of 16 asked its leaf 131,071
// times; slt_good_0.test's constant expressions of a dozen operators took
// over a second to analyze.
func TestArithmeticTypeLinear(t *testing.T) {
	calls := 0
	var e gsql.Expression = typeCounter{Literal: expression.NewLiteral(1.5, types.MustCreateDecimalType(5, 2)), calls: &calls}
	const depth = 16
	ops := []string{"+", "-", "*"}
	for i := 0; i < depth; i++ {
		e = newIntArithmetic(expression.NewArithmetic(e, expression.NewLiteral(int64(i+1), types.Int64), ops[i%len(ops)]))
	}
	typ := e.Type()
	if _, ok := typ.(gsql.DecimalType); !ok {
		t.Fatalf("type of the chain: %v, want a DECIMAL", typ)
	}
	if calls > 10 {
		t.Fatalf("the leaf's Type was called %d times for a chain of %d operators; want a few", calls, depth)
	}
	t.Logf("the leaf's Type was called %d times", calls)
}

// TestOperandDigitsOfLiterals: an integer literal counts its own digits,
// of any Go integer width, unsigned ones past int64 included.
func TestOperandDigitsOfLiterals(t *testing.T) {
	for _, c := range []struct {
		v      any
		typ    gsql.Type
		digits int
	}{
		{int8(-7), types.Int8, 1},
		{int64(12345), types.Int64, 5},
		{int64(-1000), types.Int64, 4},
		{uint64(18446744073709551615), types.Uint64, 20},
		{uint32(42), types.Uint32, 2},
	} {
		p, s, ok := operandDigits(expression.NewLiteral(c.v, c.typ))
		if !ok || p != c.digits || s != 0 {
			t.Errorf("operandDigits(%v) = %d, %d, %v; want %d, 0, true", c.v, p, s, ok, c.digits)
		}
	}
}
