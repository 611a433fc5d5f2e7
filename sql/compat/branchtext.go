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

// NumericBranchesAsText is the analyzer rule; see the comment above. It
// also types the values of IF, CASE, COALESCE and IFNULL when one is a
// TIME, DATE or DATETIME by MySQL's aggregate (mergedtypes.go).
func NumericBranchesAsText(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		return nodeExprsOnce(n, branchValues)
	})
}

// TemporalBranches is NumericBranchesAsText's typing of temporal values
// alone (mergedtypes.go), run before the rules that read a TIME in
// arithmetic as its number (TimeValues): IF(c, t, 1) + 0 of a TIME t is
// the string's number, as the IF is a string.
func TemporalBranches(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		return nodeExprsOnce(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if values, ok := choiceValues(e); ok && mergeTemporal(childTypes(e, values)).kind != mergeNone {
				return branchValues(e)
			}
			return e, transform.SameTree, nil
		})
	})
}

// childTypes returns the types of e's children at indexes.
func childTypes(e gsql.Expression, indexes []int) []gsql.Type {
	children := e.Children()
	ts := make([]gsql.Type, len(indexes))
	for i, v := range indexes {
		ts[i] = children[v].Type()
	}
	return ts
}

// branchValues rewrites e, when it is an IF, CASE, COALESCE or IFNULL,
// so that its values are of MySQL's type.
func branchValues(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	values, ok := choiceValues(e)
	if !ok {
		return e, transform.SameTree, nil
	}
	if w, wrapped := textResults(e); wrapped {
		// A string function GMS types as its DATE argument is a string
		// among the values (textresults.go).
		ret, _, err := branchValues(w)
		return ret, transform.NewTree, err
	}
	m := mergeTemporal(childTypes(e, values))
	switch m.kind {
	case mergeText:
		// Every value in its own text (a number's included).
		return branchesAs(e, values, func(c gsql.Expression) gsql.Expression {
			if types.IsText(c.Type()) || c.Type() == types.Null {
				return nil
			}
			return ownText(c)
		})
	case mergeDate, mergeTime, mergeDatetime:
		// Each value converted to the aggregate (GMS's functions
		// convert them to their own type, or not at all), and the
		// result typed as it.
		t := m.typ()
		ret, same, err := branchesAs(e, values, func(c gsql.Expression) gsql.Expression {
			// A NULL too: GMS's COALESCE of a NULL literal and a TIME
			// is typed LONGTEXT, and converting the TIME to it failed
			// (COALESCE(NULL, t): "incompatible conversion to SQL
			// type: '10:00:00'->longtext").
			if types.TypesEqual(c.Type(), t) {
				return nil
			}
			return &mergedResult{UnaryExpression: expression.UnaryExpression{Child: c}, typ: t}
		})
		if err != nil || types.TypesEqual(ret.Type(), t) {
			return ret, same, err
		}
		return &mergedResult{UnaryExpression: expression.UnaryExpression{Child: ret}, typ: t}, transform.NewTree, nil
	}
	if _, isCoalesce := e.(*function.Coalesce); isCoalesce || !types.IsText(e.Type()) {
		return e, transform.SameTree, nil
	}
	if _, isIfNull := e.(*function.IfNull); isIfNull {
		return e, transform.SameTree, nil
	}
	return branchesAs(e, values, func(c gsql.Expression) gsql.Expression {
		if !types.IsNumber(c.Type()) {
			return nil
		}
		return expression.NewConvert(c, expression.ConvertToChar)
	})
}

// branchesAs returns e with each of its values (the indexes of its
// children) that wrap does not return nil for replaced by what it
// returns.
func branchesAs(e gsql.Expression, values []int, wrap func(gsql.Expression) gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	children := e.Children()
	var out []gsql.Expression
	for _, i := range values {
		w := wrap(children[i])
		if w == nil {
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), children...)
		}
		out[i] = w
	}
	if out == nil {
		return e, transform.SameTree, nil
	}
	ret, err := e.WithChildren(out...)
	if err != nil {
		return nil, transform.SameTree, fmt.Errorf("text of %s: %w", e, err)
	}
	return ret, transform.NewTree, nil
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
