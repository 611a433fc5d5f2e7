package copr

import (
	"fmt"

	"github.com/percdb/percdb/executor/tablecodec"
)

// Op is the operator of an expression node.
type Op string

// The operators. Comparisons and the logical operators yield a
// three-valued boolean (true, false, NULL); Column, Const and Mod yield
// integer values.
const (
	OpColumn    Op = "col"    // Program.Columns[Col]
	OpConst     Op = "const"  // Const
	OpEQ        Op = "="      // Args[0] = Args[1]
	OpNE        Op = "<>"     // Args[0] <> Args[1]
	OpLT        Op = "<"      // Args[0] < Args[1]
	OpLE        Op = "<="     // Args[0] <= Args[1]
	OpGT        Op = ">"      // Args[0] > Args[1]
	OpGE        Op = ">="     // Args[0] >= Args[1]
	OpNullSafe  Op = "<=>"    // Args[0] <=> Args[1]: NULL-safe equality, never NULL
	OpAnd       Op = "and"    // Args[0] AND Args[1]
	OpOr        Op = "or"     // Args[0] OR Args[1]
	OpNot       Op = "not"    // NOT Args[0]
	OpIsNull    Op = "isnull" // Args[0] IS NULL
	OpIsNotNull Op = "notnull"
	OpMod       Op = "mod" // Args[0] MOD Const (a non-zero integer)
	// OpIn is Args[0] IN (Args[1], ...): true when Args[0] equals one of
	// the others (compared as Cmp says), else NULL when Args[0] or one of
	// the others is NULL, else false: MySQL's IN over a list.
	OpIn Op = "in"
)

// CmpKind is how a comparison converts its operands (GMS's rule for two
// integers): both signed as BIGINT, both unsigned as BIGINT UNSIGNED,
// else as DOUBLE.
type CmpKind string

// The comparison kinds.
const (
	CmpSigned   CmpKind = "int"
	CmpUnsigned CmpKind = "uint"
	CmpDouble   CmpKind = "double"
)

// Expr is an expression node.
type Expr struct {
	Op  Op
	Col int
	Cmp CmpKind
	// Const is the constant of OpConst and the divisor of OpMod.
	Const *Datum
	Args  []Expr
}

// Datum is an integer constant or NULL.
type Datum struct {
	Null     bool
	Unsigned bool
	Int      int64
	Uint     uint64
}

// Value returns the datum as an evaluation value: nil, int64 or uint64.
func (d *Datum) Value() any {
	switch {
	case d.Null:
		return nil
	case d.Unsigned:
		return d.Uint
	}
	return d.Int
}

// num returns the datum as a num.
func (d *Datum) num() num {
	switch {
	case d.Null:
		return num{kind: tablecodec.SpanNull}
	case d.Unsigned:
		return num{kind: tablecodec.SpanUnsigned, u: d.Uint}
	}
	return num{kind: tablecodec.SpanSigned, i: d.Int}
}

// AggFunc is an aggregate function.
type AggFunc string

// The aggregate functions.
const (
	AggCountStar AggFunc = "count(*)"
	AggCount     AggFunc = "count" // rows where Arg is not NULL
	AggMin       AggFunc = "min"
	AggMax       AggFunc = "max"
	// AggSum is the exact sum of an integer or DECIMAL Arg's non-NULL
	// values: an int64 while integers fit one, a decimal.Decimal past
	// that or once a DECIMAL is added, NULL over none.
	AggSum AggFunc = "sum"
)

// Agg is one partial aggregate.
type Agg struct {
	Func AggFunc
	Arg  *Expr
}

// Order is one key of a top-N: a column, ascending (NULLs first) or
// descending (NULLs last), as MySQL orders.
type Order struct {
	Col  int
	Desc bool
}

// Program is what the coprocessor evaluates over a range of a table's
// rows (see the package comment).
type Program struct {
	// Columns are the IDs of the table columns the program reads; an
	// expression's OpColumn indexes this list.
	Columns []int64
	// Defaults is a tablecodec row value of the columns' origin
	// defaults, by column ID: the value of a column a row lacks.
	Defaults []byte
	// Trim lists the Columns positions whose trailing spaces are removed
	// on read (CHAR columns).
	Trim []int
	// Filter is a conjunction: a row passes when every expression is
	// true (not false, not NULL).
	Filter []Expr

	// Aggregate selects the groups output; else rows are output.
	Aggregate bool

	// Output lists the Columns positions of an output row.
	Output []int
	// Limit bounds the rows output (0: no bound): the first Limit in key
	// order, or the Limit first by OrderBy when it is set.
	Limit   int64
	OrderBy []Order

	// GroupBy are the grouping expressions (none: one group over all
	// rows). Keep lists the Columns positions kept from each group's
	// first row. Aggs are the partial aggregates of each group.
	GroupBy []Expr
	Keep    []int
	Aggs    []Agg
	// DistinctInts makes the groups of an aggregation the distinct
	// values of its one GroupBy expression, an integer, NULL left out,
	// output as a set of integers (AppendDistinctInts) rather than as
	// group rows, without Keep or Aggs: what COUNT(DISTINCT col) needs.
	DistinctInts bool

	// Sample makes the program a statistics collector (sample.go): it
	// reads every row that passes and outputs a Sample, without Output,
	// Limit or aggregation.
	Sample *SampleSpec

	// PageRows is how many rows (or groups) one response carries at
	// most; 0: DefaultPageRows (DefaultPageGroups for groups).
	PageRows int
}

// Program.PageRows when left zero: a response of rows is sent on while
// the SQL layer reads the ones before; groups are merged only at the end,
// and every page of a region repeats the groups of the pages before, so
// they come in larger pages (a group is a few dozen bytes).
const (
	DefaultPageRows   = 4096
	DefaultPageGroups = 1 << 16
)

// Validate checks that the program is well formed: column positions in
// range, operators with their operands, aggregates over expressions.
func (p *Program) Validate() error {
	col := func(i int) error {
		if i < 0 || i >= len(p.Columns) {
			return fmt.Errorf("program: column position %d of %d", i, len(p.Columns))
		}
		return nil
	}
	for _, i := range p.Trim {
		if err := col(i); err != nil {
			return err
		}
	}
	for i := range p.Filter {
		if err := p.checkExpr(&p.Filter[i], true); err != nil {
			return err
		}
	}
	if p.Limit < 0 || p.PageRows < 0 {
		return fmt.Errorf("program: negative limit %d or page size %d", p.Limit, p.PageRows)
	}
	if p.Sample != nil {
		if p.Aggregate || len(p.Output) > 0 || p.Limit > 0 || len(p.OrderBy) > 0 {
			return fmt.Errorf("program: a sample outputs a collection, not rows or groups")
		}
		return p.Sample.validate(len(p.Columns))
	}
	if p.Aggregate {
		if len(p.Output) > 0 || p.Limit > 0 || len(p.OrderBy) > 0 {
			return fmt.Errorf("program: an aggregation outputs groups, not rows")
		}
		for i := range p.GroupBy {
			if err := p.checkExpr(&p.GroupBy[i], false); err != nil {
				return err
			}
		}
		if p.DistinctInts && (len(p.GroupBy) != 1 || len(p.Keep) > 0 || len(p.Aggs) > 0) {
			return fmt.Errorf("program: a distinct set of one expression, without kept columns or aggregates")
		}
		for _, i := range p.Keep {
			if err := col(i); err != nil {
				return err
			}
		}
		for _, a := range p.Aggs {
			switch a.Func {
			case AggCountStar:
				if a.Arg != nil {
					return fmt.Errorf("program: COUNT(*) with an argument")
				}
			case AggCount, AggMin, AggMax, AggSum:
				if a.Arg == nil {
					return fmt.Errorf("program: %s without an argument", a.Func)
				}
				if err := p.checkExpr(a.Arg, false); err != nil {
					return err
				}
			default:
				return fmt.Errorf("program: unknown aggregate %q", a.Func)
			}
		}
		return nil
	}
	if len(p.GroupBy) > 0 || len(p.Keep) > 0 || len(p.Aggs) > 0 || p.DistinctInts {
		return fmt.Errorf("program: grouping without Aggregate")
	}
	for _, i := range p.Output {
		if err := col(i); err != nil {
			return err
		}
	}
	if len(p.OrderBy) > 0 && p.Limit == 0 {
		return fmt.Errorf("program: a top-N without a limit")
	}
	for _, o := range p.OrderBy {
		if err := col(o.Col); err != nil {
			return err
		}
	}
	return nil
}

// checkExpr checks one expression; boolean says a truth value is wanted.
func (p *Program) checkExpr(e *Expr, boolean bool) error {
	args := func(n int, boolArgs bool) error {
		if len(e.Args) != n {
			return fmt.Errorf("program: %s with %d operands, want %d", e.Op, len(e.Args), n)
		}
		for i := range e.Args {
			if err := p.checkExpr(&e.Args[i], boolArgs); err != nil {
				return err
			}
		}
		return nil
	}
	isBool := false
	var err error
	switch e.Op {
	case OpColumn:
		if e.Col < 0 || e.Col >= len(p.Columns) {
			err = fmt.Errorf("program: column position %d of %d", e.Col, len(p.Columns))
		}
	case OpConst:
		if e.Const == nil {
			err = fmt.Errorf("program: a constant without a value")
		}
	case OpEQ, OpNE, OpLT, OpLE, OpGT, OpGE, OpNullSafe:
		isBool = true
		switch e.Cmp {
		case CmpSigned, CmpUnsigned, CmpDouble:
			err = args(2, false)
		default:
			err = fmt.Errorf("program: comparison kind %q", e.Cmp)
		}
	case OpIn:
		isBool = true
		switch {
		case len(e.Args) < 2:
			err = fmt.Errorf("program: IN with %d operands, want 2 at least", len(e.Args))
		case e.Cmp != CmpSigned && e.Cmp != CmpUnsigned && e.Cmp != CmpDouble:
			err = fmt.Errorf("program: comparison kind %q", e.Cmp)
		default:
			err = args(len(e.Args), false)
		}
	case OpAnd, OpOr:
		isBool = true
		err = args(2, true)
	case OpNot:
		isBool = true
		err = args(1, true)
	case OpIsNull, OpIsNotNull:
		isBool = true
		err = args(1, false)
	case OpMod:
		if e.Const == nil || e.Const.Null || (e.Const.Int == 0 && e.Const.Uint == 0) {
			err = fmt.Errorf("program: MOD by a NULL or zero constant")
		} else {
			err = args(1, false)
		}
	default:
		err = fmt.Errorf("program: unknown operator %q", e.Op)
	}
	if err == nil && isBool != boolean {
		err = fmt.Errorf("program: %s where a %s is wanted", e.Op, map[bool]string{true: "truth value", false: "value"}[boolean])
	}
	return err
}
