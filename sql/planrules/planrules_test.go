package planrules

import (
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

func col(name string, t gsql.Type) *expression.GetField {
	return expression.NewGetFieldWithTable(0, 1, t, "db", "t", name, true)
}

func lit(v any, t gsql.Type) *expression.Literal { return expression.NewLiteral(v, t) }

func TestRowExpansion(t *testing.T) {
	a, b := col("a", types.Int32), col("b", types.Int32)
	one, two, three := lit(int8(1), types.Int8), lit(int8(2), types.Int8), lit(int8(3), types.Int8)
	for _, c := range []struct {
		name string
		e    gsql.Expression
		want string // "" for no expansion
	}{
		{"row equals", expression.NewEquals(expression.NewTuple(a, b), expression.NewTuple(one, two)),
			"((t.a = 1) AND (t.b = 2))"},
		{"row IN", expression.NewInTuple(expression.NewTuple(a, b), expression.NewTuple(
			expression.NewTuple(one, two), expression.NewTuple(three, one))),
			"(((t.a = 1) AND (t.b = 2)) OR ((t.a = 3) AND (t.b = 1)))"},
		{"values only", expression.NewEquals(expression.NewTuple(one, two), expression.NewTuple(two, one)), ""},
		{"widths differ", expression.NewEquals(expression.NewTuple(a, b), expression.NewTuple(one, two, three)), ""},
		{"nested rows", expression.NewEquals(expression.NewTuple(a, expression.NewTuple(b, one)),
			expression.NewTuple(one, expression.NewTuple(two, three))), ""},
		{"not a row", expression.NewEquals(a, one), ""},
	} {
		got := RowExpansion(c.e)
		switch {
		case got == nil && c.want != "":
			t.Errorf("%s: no expansion, want %s", c.name, c.want)
		case got != nil && got.String() != c.want:
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	// A list longer than MaxRowExpansionTuples stays as it is.
	long := make(expression.Tuple, MaxRowExpansionTuples+1)
	for i := range long {
		long[i] = expression.NewTuple(one, two)
	}
	if x := RowExpansion(expression.NewInTuple(expression.NewTuple(a, b), long)); x != nil {
		t.Errorf("a list of %d rows was expanded", len(long))
	}
}

func TestDisjunctionRanges(t *testing.T) {
	k, q, n := col("k", types.Int32), col("q", types.Int32), col("n", types.Int32)
	one, two := lit(int8(1), types.Int8), lit(int8(2), types.Int8)
	or := expression.NewOr(
		expression.NewAnd(expression.NewEquals(k, one), expression.NewEquals(q, one)),
		expression.NewAnd(expression.NewEquals(k, two), expression.NewGreaterThan(q, n)))
	ranges := func(ti *tableIndexes) []string {
		var out []string
		for _, d := range disjunctionRanges(or, ti) {
			out = append(out, d.String())
		}
		return out
	}
	// Only k is compared with values in both alternatives (q > n is not
	// a range).
	if got, want := ranges(nil), []string{"((t.k = 1) OR (t.k = 2))"}; !equal(got, want) {
		t.Errorf("unknown indexes: got %v, want %v", got, want)
	}
	if got, want := ranges(&tableIndexes{name: "t", indexes: [][]string{{"t.k", "t.q"}}}), []string{"((t.k = 1) OR (t.k = 2))"}; !equal(got, want) {
		t.Errorf("index on (k, q): got %v, want %v", got, want)
	}
	if got := ranges(&tableIndexes{name: "t", indexes: [][]string{{"t.q", "t.k"}}}); got != nil {
		t.Errorf("no index starts with k: got %v", got)
	}
	// An OR an index serves as it is gets nothing.
	pure := expression.NewOr(expression.NewEquals(k, one), expression.NewEquals(k, two))
	if got := disjunctionRanges(pure, &tableIndexes{name: "t", indexes: [][]string{{"t.k"}}}); got != nil {
		t.Errorf("k = 1 OR k = 2: got %v", got)
	}
}

func TestUnsargableStrings(t *testing.T) {
	s, i := col("s", types.LongText), col("i", types.Int32)
	e, same, err := unsargableStrings(expression.NewAnd(
		expression.NewEquals(s, lit(int8(5), types.Int8)),
		expression.NewEquals(i, lit("5", types.LongText))))
	if err != nil || same {
		t.Fatalf("same %v, err %v", same, err)
	}
	and := e.(*expression.And)
	if _, ok := and.LeftChild.(*expression.Equals).Left().(*notSargable); !ok {
		t.Errorf("s = 5: the string column is still a range column: %#v", and.LeftChild)
	}
	if _, ok := and.RightChild.(*expression.Equals).Left().(*expression.GetField); !ok {
		t.Errorf("i = '5': the number column was hidden: %#v", and.RightChild)
	}
	if e.String() != "((t.s = 5) AND (t.i = '5'))" {
		t.Errorf("text changed: %s", e)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
