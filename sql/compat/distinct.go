package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// SELECT DISTINCT LENGTH(s) FROM t ORDER BY 1 (or ORDER BY the
// expression; or a function of a joined table's column that GMS leaves
// unaliased, as percdb's TRUNCATE) failed with "unable to sort: unable to find field with
// index 3 in row of 1 columns": GMS sorts the DISTINCT rows by the select
// expression itself, evaluated again over rows that no longer have the
// columns it reads, instead of by the column the expression became.
//
// SortDistinctByColumn, run first, sorts before the DISTINCT instead:
// Sort(Distinct(Project(x))) becomes Distinct(Project(Sort(x))), the
// sort by the select expressions themselves (a DISTINCT query may only
// be ordered by those), evaluated over the rows they are made of. GMS's
// DISTINCT (and percdb's, collation.go) returns the first row of
// each set of duplicates in the order it meets them, so the result is in
// the order asked for.

// SortDistinctByColumn is the analyzer rule; see the comment above.
func SortDistinctByColumn(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.Sort)
		if !ok {
			return n, transform.SameTree, nil
		}
		d, ok := s.Child.(*plan.Distinct)
		if !ok {
			return n, transform.SameTree, nil
		}
		p, ok := d.Child.(*plan.Project)
		if !ok {
			return n, transform.SameTree, nil
		}
		fields := append(gsql.SortFields(nil), s.SortFields...)
		moved := false
		for i, f := range fields {
			switch c := f.Column.(type) {
			case *expression.Alias:
				if !projects(p, c) {
					return n, transform.SameTree, nil
				}
				fields[i].Column = c.Child
				fields[i].Column2, _ = c.Child.(gsql.Expression2)
				moved = true
			case *expression.GetField:
				if c.Table() == "" {
					return n, transform.SameTree, nil
				}
			default:
				// An expression GMS did not alias (its text is the
				// select item's: percdb's TRUNCATE) is projected as it
				// is.
				if !projectsExpr(p, c) {
					return n, transform.SameTree, nil
				}
				moved = true
			}
		}
		if !moved {
			return n, transform.SameTree, nil
		}
		proj, err := p.WithChildren(plan.NewSort(fields, p.Child))
		if err != nil {
			return n, transform.SameTree, err
		}
		ret, err := d.WithChildren(proj)
		return ret, transform.NewTree, err
	})
}

// projectsExpr reports whether p projects e itself, unaliased.
func projectsExpr(p *plan.Project, e gsql.Expression) bool {
	for _, pe := range p.Projections {
		if _, ok := pe.(*expression.Alias); !ok && pe.String() == e.String() {
			return true
		}
	}
	return false
}

// projects reports whether p has a projection a, by name and expression.
func projects(p *plan.Project, a *expression.Alias) bool {
	for _, pe := range p.Projections {
		if pa, ok := pe.(*expression.Alias); ok && pa.Name() == a.Name() && pa.Child.String() == a.Child.String() {
			return true
		}
	}
	return false
}
