package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// IF and CASE of a string and a number are typed as a string (as MySQL
// types them) but return the number's value as it is, a float64 or an
// integer under a string type; GMS's text protocol writes such a value
// into the row buffer it is copying it to, and it came out garbled:
// IF(c IS NULL, 'none', c) of a DOUBLE -0.5 was '0.-' or '0.2', of
// -12.25 '12.2-' (found by the widened difftest). numericBranchesAsText,
// an analyzer rule, gives every numeric value of such an IF or CASE as
// its text (CAST(x AS CHAR), as MySQL writes the number in the string
// result).

// NumericBranchesAsText is the analyzer rule; see the comment above.
func NumericBranchesAsText(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		if _, isIf := e.(*function.If); !isIf {
			if _, isCase := e.(*expression.Case); !isCase {
				return e, transform.SameTree, nil
			}
		}
		values, _ := choiceValues(e)
		children := e.Children()
		if !types.IsText(e.Type()) {
			return e, transform.SameTree, nil
		}
		var out []gsql.Expression
		for _, i := range values {
			if !types.IsNumber(children[i].Type()) {
				continue
			}
			if out == nil {
				out = append([]gsql.Expression(nil), children...)
			}
			out[i] = expression.NewConvert(children[i], expression.ConvertToChar)
		}
		if out == nil {
			return e, transform.SameTree, nil
		}
		ret, err := e.WithChildren(out...)
		if err != nil {
			return nil, transform.SameTree, fmt.Errorf("text of %s: %w", e, err)
		}
		return ret, transform.NewTree, nil
	})
}

// choiceValues returns the indexes of the children of e, an IF, CASE,
// COALESCE or IFNULL, that are its possible values; false for another
// expression.
func choiceValues(e gsql.Expression) ([]int, bool) {
	children := e.Children()
	var values []int
	switch c := e.(type) {
	case *function.If:
		values = []int{1, 2}
	case *function.Coalesce, *function.IfNull:
		for i := range children {
			values = append(values, i)
		}
	case *expression.Case:
		// Children: [expr], cond, value, cond, value, ..., [else].
		start := 0
		if c.Expr != nil {
			start = 1
		}
		for i := range c.Branches {
			values = append(values, start+2*i+1)
		}
		if c.Else != nil {
			values = append(values, len(children)-1)
		}
	default:
		return nil, false
	}
	return values, true
}
