package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Functions that compare strings under their collation compare them
// with PAD SPACE as MySQL's comparisons do (padspace.go): STRCMP('a ',
// 'a') is 0, FIELD('b ', 'a', 'b') is 2 and NULLIF('a ', 'a') is NULL
// under utf8mb4_general_ci or utf8mb4_bin; GMS's compared them as NO
// PAD. padSpaceFunction is part of the PadSpaceComparisons rule's walk:
// STRCMP's and FIELD's operands are compared without trailing spaces
// (they answer a number, never the strings); NULLIF, which answers its
// first operand as it is, compares trimmed copies and returns the
// untrimmed one.
func padSpaceFunction(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	switch e := e.(type) {
	case *function.StrCmp, *field:
		return padSpaceOperands(ctx, e)
	case *function.NullIf:
		if !padSpaceCompared(ctx, e.LeftChild, e.RightChild) {
			break
		}
		return &padNullIf{NullIf: e}, transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// padNullIf is NULLIF(a, b) of strings compared under a PAD SPACE
// collation.
type padNullIf struct {
	*function.NullIf
}

var _ gsql.Expression = (*padNullIf)(nil)

// Eval implements sql.Expression.
func (f *padNullIf) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	eq, err := expression.NewEquals(trimmedSpaces(f.LeftChild), trimmedSpaces(f.RightChild)).Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if b, ok := eq.(bool); ok && b {
		return nil, nil
	}
	return f.LeftChild.Eval(ctx, row)
}

// WithChildren implements sql.Expression.
func (f *padNullIf) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	n, err := f.NullIf.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if ni, ok := n.(*function.NullIf); ok {
		return &padNullIf{NullIf: ni}, nil
	}
	return n, nil
}
