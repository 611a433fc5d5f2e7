package compat

import (
	"math"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL compares a FLOAT or DOUBLE with a decimal literal (col1 > 684.1)
// as two doubles: when either operand of a comparison is floating point,
// both are. GMS compares them as DECIMALs instead, converting the
// column's value to an arbitrary-precision decimal for every row it
// filters (math/big: a fifth of the CPU of sqllogictest's 1,000-row
// index/ files). FloatLiteralComparisons rewrites such literals into
// DOUBLE literals before GMS plans the query, which gives MySQL's
// comparison and lets GMS compare two float64s; index ranges over the
// column are then built from the double too.

// FloatLiteralComparisons is the analyzer rule; see the comment at the top
// of the file.
func FloatLiteralComparisons(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.InTuple:
			if isIntegerColumn(e.Left()) {
				return fractionalStringItems(e)
			}
			if !isFloatColumn(e.Left()) {
				return e, transform.SameTree, nil
			}
			tuple, ok := e.Right().(expression.Tuple)
			if !ok {
				return e, transform.SameTree, nil
			}
			items := make([]gsql.Expression, len(tuple))
			changed := false
			for i, item := range tuple {
				items[i] = item
				if d, ok := asDouble(item); ok {
					items[i], changed = d, true
				}
			}
			if !changed {
				return e, transform.SameTree, nil
			}
			return expression.NewInTuple(e.Left(), expression.NewTuple(items...)), transform.NewTree, nil
		case *expression.Between:
			if !isFloatColumn(e.Val) {
				return e, transform.SameTree, nil
			}
			lo, okLo := asDouble(e.Lower)
			hi, okHi := asDouble(e.Upper)
			if !okLo && !okHi {
				return e, transform.SameTree, nil
			}
			if !okLo {
				lo = e.Lower
			}
			if !okHi {
				hi = e.Upper
			}
			return expression.NewBetween(e.Val, lo, hi), transform.NewTree, nil
		case expression.Comparer:
			l, r := e.Left(), e.Right()
			switch {
			case isFloatColumn(l):
				if d, ok := asDouble(r); ok {
					ret, err := e.WithChildren(l, d)
					return ret, transform.NewTree, err
				}
			case isFloatColumn(r):
				if d, ok := asDouble(l); ok {
					ret, err := e.WithChildren(d, r)
					return ret, transform.NewTree, err
				}
			}
		}
		return e, transform.SameTree, nil
	})
}

// isFloatColumn reports whether e is a FLOAT or DOUBLE column.
func isFloatColumn(e gsql.Expression) bool {
	gf, ok := e.(*expression.GetField)
	return ok && types.IsFloat(gf.Type())
}

// asDouble returns a decimal literal as a DOUBLE literal of the same
// text, as MySQL converts it for a floating-point comparison.
func asDouble(e gsql.Expression) (gsql.Expression, bool) {
	lit, ok := e.(*expression.Literal)
	if !ok || !types.IsDecimal(lit.Type()) || lit.Value() == nil {
		return nil, false
	}
	s, ok := decimalText(lit.Value())
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false
	}
	return expression.NewLiteral(f, types.Float64), true
}

// decimalText is the text of a DECIMAL literal's value.
func decimalText(v any) (string, bool) {
	if s, ok := v.(interface{ String() string }); ok {
		return s.String(), true
	}
	return "", false
}

// isIntegerColumn reports whether e is a column of an integer type.
func isIntegerColumn(e gsql.Expression) bool {
	gf, ok := e.(*expression.GetField)
	return ok && types.IsInteger(gf.Type())
}

// fractionalStringItems rewrites an IN list over an integer column whose
// items include a string that is a number with a fraction ('-1.25', as a
// prepared statement's string parameter is): MySQL compares an integer
// with a string as doubles, so -1 is not in ('-1.25'); GMS converted the
// item to the column's type, -1, and found the row (an = of the same
// operands was right). Such items become DOUBLE literals.
func fractionalStringItems(e *expression.InTuple) (gsql.Expression, transform.TreeIdentity, error) {
	tuple, ok := e.Right().(expression.Tuple)
	if !ok {
		return e, transform.SameTree, nil
	}
	var items []gsql.Expression
	for i, item := range tuple {
		lit, ok := item.(*expression.Literal)
		if !ok || !types.IsText(lit.Type()) {
			continue
		}
		str, ok := lit.Value().(string)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(str), 64)
		if err != nil || f == math.Trunc(f) {
			continue
		}
		if items == nil {
			items = append([]gsql.Expression(nil), tuple...)
		}
		items[i] = expression.NewLiteral(f, types.Float64)
	}
	if items == nil {
		return e, transform.SameTree, nil
	}
	return expression.NewInTuple(e.Left(), expression.NewTuple(items...)), transform.NewTree, nil
}
