package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
)

// replacedChildren returns children with each child c at position i
// replaced by wrap(i, c) where that is not nil, in a copy made at the
// first replacement; nil when wrap replaced none, so that the caller
// keeps its expression as it is.
func replacedChildren(children []gsql.Expression, wrap func(i int, c gsql.Expression) gsql.Expression) []gsql.Expression {
	var out []gsql.Expression
	for i, c := range children {
		w := wrap(i, c)
		if w == nil {
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), children...)
		}
		out[i] = w
	}
	return out
}

// withReplacedChildren returns e with its children replaced as
// replacedChildren replaces them, and whether any was: e as it is when
// none was, or when e refuses the new children.
func withReplacedChildren(e gsql.Expression, wrap func(i int, c gsql.Expression) gsql.Expression) (gsql.Expression, bool) {
	out := replacedChildren(e.Children(), wrap)
	if out == nil {
		return e, false
	}
	ret, err := e.WithChildren(out...)
	if err != nil {
		return e, false
	}
	return ret, true
}
