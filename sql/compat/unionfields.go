package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// A union reads its sides' columns by position, but the projection
// that converts a side's columns to the union's types (GMS's
// mergeSetOpSchemas, or RetypeUnions') reads column i of the side as a
// field, and GMS's assignExecIndexes finds a field by its column id,
// else by its name. The ids are lost on the way (GMS's Alias.WithChildren
// makes an Alias of id 0, so any rule that rewrites a select item, the
// binding of a prepared statement's parameters included, drops its id),
// and by name two select items of the same name are one column, the last:
// SELECT a + 7 AS x, a + 8 AS x FROM t UNION ALL SELECT a, a FROM t gave
// a + 8 twice, and so did the prepared SELECT a + ?, a + ? FROM t UNION
// ..., whose items are both named "a + ?" whatever their parameters.
//
// UnionSideFields, run once GMS has assigned the fields' indexes, finds
// the fields of such a projection that name-lookup sent to one column
// (several fields, one index, the columns of the same name) and points
// each at its own column again, the same distance from the last of them
// as its position from the last's (the distance is the outer scope's
// columns a subquery's rows begin with). Fields that ids found, which
// differ, are left as they are.

// UnionSideFields is the analyzer rule; see the comment above. It fixes
// the set operations n holds without entering their sides or
// subqueries: the caller applies it in every scope.
func UnionSideFields(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.SetOp)
		if !ok {
			return n, transform.SameTree, nil
		}
		l, lchanged := positionalSideFields(s.Left())
		r, rchanged := positionalSideFields(s.Right())
		if !lchanged && !rchanged {
			return n, transform.SameTree, nil
		}
		ret, err := s.WithChildren(l, r)
		if err != nil {
			return n, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	})
}

// positionalSideFields returns side with its union conversion's fields
// pointed at their own columns (see the comment above), and whether it
// changed.
func positionalSideFields(side gsql.Node) (gsql.Node, bool) {
	p, ok := side.(*plan.Project)
	if !ok || !isUnionConversion(p) {
		return side, false
	}
	sch := p.Child.Schema()
	fields := make([]*expression.GetField, len(p.Projections))
	byIndex := map[int][]int{}
	for i, e := range p.Projections {
		gf, ok := conversionSource(unalias(e)).(*expression.GetField)
		if !ok {
			return side, false
		}
		fields[i] = gf
		byIndex[gf.Index()] = append(byIndex[gf.Index()], i)
	}
	want := map[int]int{}
	for idx, cols := range byIndex {
		if len(cols) < 2 {
			continue
		}
		last := cols[len(cols)-1]
		offset := idx - last
		if offset < 0 {
			continue
		}
		same := true
		for _, c := range cols {
			same = same && strings.EqualFold(sch[c].Name, sch[last].Name)
		}
		if !same {
			continue
		}
		for _, c := range cols {
			want[c] = offset + c
		}
	}
	if len(want) == 0 {
		return side, false
	}
	projs := make([]gsql.Expression, len(p.Projections))
	copy(projs, p.Projections)
	for i, idx := range want {
		gf := fields[i]
		projs[i], _, _ = transform.Expr(projs[i], func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if e == gsql.Expression(gf) {
				return gf.WithIndex(idx), transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		})
	}
	return plan.NewProject(projs, p.Child), true
}
