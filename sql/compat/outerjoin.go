package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS's join planner loses conditions when it reorders an inner join
// over a LEFT JOIN: in
//
//	t1 x1 LEFT JOIN t1 x2 ON x1.dt = x2.dt JOIN t0 x3 ON x1.c = x3.c AND x2.dt = x3.dt
//
// it joined x3 to x1 first, then left-joined x2, and the condition
// x2.dt = x3.dt was gone: rows came back that the condition rejects.
//
// A condition like x2.dt = x3.dt is never true on a row that the LEFT
// JOIN extended with NULLs for x2, so above it the LEFT JOIN is an inner
// join, and MySQL's optimizer turns it into one (outer join
// simplification). SimplifyOuterJoins does the same before GMS plans the
// joins: a LEFT JOIN becomes an inner join when a condition of an inner
// join or a WHERE above it compares a column of its right side with =,
// <>, <, <=, >, >= or LIKE (each NULL when that column is). GMS then
// plans plain inner joins, whose reordering keeps every condition. A
// condition that does not reject NULLs (x2.dt <=> x3.dt, x2.dt IS NULL)
// keeps the LEFT JOIN as it is.

//
// The planner loses more than that: when it puts a LEFT JOIN (or another
// join that is not inner) at the top of a set of tables it reordered,
// the conditions of inner joins that apply at that same step are dropped
// (memo.joinOrderBuilder.addPlans hands them to addJoin as selection
// filters, which it ignores). Which conditions meet that depends on the
// plan it costs best: a condition of an inner join above a LEFT JOIN on
// one side's columns only (x1 LEFT JOIN x2 ON ... JOIN x3 ON x1.a = x3.a
// AND x3.c <=> 'ab' planned as (x1 JOIN x3) LEFT JOIN x2 lost the <=>),
// or on the LEFT JOIN's right side in a way that keeps its NULLs
// (x2.c <=> x3.c). keepInnerJoinConditions moves such conditions out of
// the join before GMS plans it: one side's conditions into a filter on
// that side, the others into a filter above the join, which the planner
// keeps (it reorders only the joins under a filter).

// SimplifyOuterJoins is the analyzer rule; see the comment above. A LEFT
// JOIN turned into an inner join can make another below it one too (its
// condition may reject the NULLs of that one's right side), so the rule
// runs until nothing changes.
func SimplifyOuterJoins(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	same := transform.SameTree
	for i := 0; i < 16; i++ {
		next, s, err := simplifyOuterJoinsOnce(n)
		if err != nil {
			return n, transform.SameTree, err
		}
		if s == transform.SameTree {
			break
		}
		n, same = next, transform.NewTree
	}
	n, s, err := keepInnerJoinConditions(n)
	if err != nil {
		return n, transform.SameTree, err
	}
	if s == transform.NewTree {
		same = transform.NewTree
	}
	return n, same, nil
}

// keepInnerJoinConditions moves the conditions of an inner join over a
// join that is not inner, which GMS's planner could drop, out of the
// join; see the comment above. A filter it puts above a join that is
// itself inside a larger join tree (the left side of a semi join, as
// WHERE EXISTS makes one) would be a filter inside the tree the planner
// reorders, and lost with the conditions in it (seed 5037): such a
// filter rises to the top of the tree, through the preserved side of
// each join above it, where a row of the join is a row of that side
// (the sides of inner joins, the left side of semi, anti and LEFT
// joins), so that filtering after the join is filtering before it.
func keepInnerJoinConditions(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	moved := map[*plan.Filter]bool{}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok {
			return n, transform.SameTree, nil
		}
		j, cond := liftMovedFilter(j, moved)
		ret, same, err := innerJoinConditionsOut(j, moved)
		if err != nil || cond == nil {
			return ret, same, err
		}
		f := plan.NewFilter(cond, ret)
		moved[f] = true
		return f, transform.NewTree, nil
	})
}

// innerJoinConditionsOut moves the conditions of j, when it is an inner
// join over a join that is not inner, out of it; moved collects the
// filters it puts above j.
func innerJoinConditionsOut(j *plan.JoinNode, moved map[*plan.Filter]bool) (gsql.Node, transform.TreeIdentity, error) {
	n := gsql.Node(j)
	if j.Op != plan.JoinTypeInner || j.Filter == nil {
		return n, transform.SameTree, nil
	}
	nullableL, nullableR := nullExtendedColumns(j.Left()), nullExtendedColumns(j.Right())
	if nullableL.Empty() && nullableR.Empty() && !hasNonInnerJoin(j.Left()) && !hasNonInnerJoin(j.Right()) {
		return n, transform.SameTree, nil
	}
	colsL, colsR := outputColumns(j.Left()), outputColumns(j.Right())
	nullable := nullableL.Union(nullableR)
	var keep, onLeft, onRight, above []gsql.Expression
	for _, c := range expression.SplitConjunction(j.Filter) {
		cols, ok := conditionColumns(c)
		switch {
		case !ok || cols.Empty():
			keep = append(keep, c)
		case cols.SubsetOf(colsL):
			onLeft = append(onLeft, c)
		case cols.SubsetOf(colsR):
			onRight = append(onRight, c)
		case cols.Intersects(nullable) && cols.SubsetOf(colsL.Union(colsR)):
			above = append(above, c)
		default:
			keep = append(keep, c)
		}
	}
	if len(onLeft)+len(onRight)+len(above) == 0 {
		return n, transform.SameTree, nil
	}
	left, right := j.Left(), j.Right()
	if len(onLeft) > 0 {
		left = plan.NewFilter(expression.JoinAnd(onLeft...), left)
	}
	if len(onRight) > 0 {
		right = plan.NewFilter(expression.JoinAnd(onRight...), right)
	}
	c, err := j.WithChildren(left, right)
	if err != nil {
		return n, transform.SameTree, err
	}
	nj := c.(*plan.JoinNode)
	if len(keep) > 0 {
		nj.Filter = expression.JoinAnd(keep...)
	} else {
		nj.Filter = expression.NewLiteral(true, types.Boolean)
	}
	if len(above) > 0 {
		f := plan.NewFilter(expression.JoinAnd(above...), nj)
		moved[f] = true
		return f, transform.NewTree, nil
	}
	return nj, transform.NewTree, nil
}

// liftMovedFilter returns j without the filter keepInnerJoinConditions
// moved above one of its children, and that filter's condition, when
// that child is a side j preserves (see keepInnerJoinConditions); else
// j and nil.
func liftMovedFilter(j *plan.JoinNode, moved map[*plan.Filter]bool) (*plan.JoinNode, gsql.Expression) {
	children := []gsql.Node{j.Left(), j.Right()}
	for i, c := range children {
		f, ok := c.(*plan.Filter)
		if !ok || !moved[f] {
			continue
		}
		preserved := j.Op == plan.JoinTypeInner || j.Op == plan.JoinTypeCross ||
			i == 0 && (j.Op.IsSemi() || j.Op.IsAnti() || j.Op.IsLeftOuter())
		if !preserved {
			continue
		}
		children[i] = f.Child
		nj, err := j.WithChildren(children...)
		if err != nil {
			return j, nil
		}
		return nj.(*plan.JoinNode), f.Expression
	}
	return j, nil
}

// conditionColumns returns the columns a condition reads, and false when
// it has a subquery or a column without an ID (it is then left where it
// is).
func conditionColumns(c gsql.Expression) (gsql.ColSet, bool) {
	var cols gsql.ColSet
	ok := true
	transform.InspectExpr(c, func(e gsql.Expression) bool {
		switch e := e.(type) {
		case *plan.Subquery:
			ok = false
		case *expression.GetField:
			if e.Id() == 0 {
				ok = false
			}
			cols.Add(e.Id())
		}
		return !ok
	})
	return cols, ok
}

// nullExtendedColumns returns the columns of n, a join tree, that a LEFT
// JOIN in it may make NULL: those of its right sides.
func nullExtendedColumns(n gsql.Node) gsql.ColSet {
	var cols gsql.ColSet
	transform.Inspect(n, func(n gsql.Node) bool {
		switch n := n.(type) {
		case *plan.JoinNode:
			if n.Op.IsLeftOuter() {
				cols = cols.Union(outputColumns(n.Right()))
			}
			return true
		case plan.TableIdNode:
			return false
		}
		return true
	})
	return cols
}

// hasNonInnerJoin reports whether n, a join tree, has a join that is not
// an inner or cross join.
func hasNonInnerJoin(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		switch n := n.(type) {
		case *plan.JoinNode:
			if n.Op != plan.JoinTypeInner && n.Op != plan.JoinTypeCross {
				found = true
			}
		case plan.TableIdNode:
			return false
		}
		return !found
	})
	return found
}

func simplifyOuterJoinsOnce(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.Filter:
			rejected := nullRejectedColumns(n.Expression)
			if rejected.Empty() {
				break
			}
			child, same := innerJoinsRejecting(n.Child, rejected)
			if same {
				break
			}
			return plan.NewFilter(n.Expression, child), transform.NewTree, nil
		case *plan.JoinNode:
			if n.Op != plan.JoinTypeInner || n.Filter == nil {
				break
			}
			rejected := nullRejectedColumns(n.Filter)
			if rejected.Empty() {
				break
			}
			left, sameL := innerJoinsRejecting(n.Left(), rejected)
			right, sameR := innerJoinsRejecting(n.Right(), rejected)
			if sameL && sameR {
				break
			}
			j, err := n.WithChildren(left, right)
			return j, transform.NewTree, err
		}
		return n, transform.SameTree, nil
	})
}

// innerJoinsRejecting turns into inner joins the LEFT JOINs of n whose
// right side has a column in rejected, looking through inner joins and
// the left (preserved) side of LEFT JOINs, where a row of n is a row of
// the LEFT JOIN.
func innerJoinsRejecting(n gsql.Node, rejected gsql.ColSet) (gsql.Node, bool) {
	j, ok := n.(*plan.JoinNode)
	if !ok {
		return n, true
	}
	switch {
	case j.Op == plan.JoinTypeInner || j.Op == plan.JoinTypeCross:
		left, sameL := innerJoinsRejecting(j.Left(), rejected)
		right, sameR := innerJoinsRejecting(j.Right(), rejected)
		if sameL && sameR {
			return n, true
		}
		ret, _ := j.WithChildren(left, right) // two children: no error
		return ret, false
	case j.Op == plan.JoinTypeLeftOuter:
		left, sameL := innerJoinsRejecting(j.Left(), rejected)
		c, _ := j.WithChildren(left, j.Right()) // two children: no error
		ret := c.(*plan.JoinNode)
		if rejected.Intersects(outputColumns(j.Right())) {
			ret.Op = plan.JoinTypeInner
			if ret.Filter == nil {
				ret.Filter = expression.NewLiteral(true, types.Boolean)
			}
		} else if sameL {
			return n, true
		}
		return ret, false
	}
	return n, true
}

// nullRejectedColumns returns the columns that, when NULL, make a
// conjunct of cond NULL: those compared directly by a conjunct.
func nullRejectedColumns(cond gsql.Expression) gsql.ColSet {
	var cols gsql.ColSet
	add := func(e gsql.Expression) {
		// A column under the collation a comparison of mixed
		// collations takes (coercion.go) is NULL when the
		// column is.
		for {
			d, ok := e.(*derivedCollation)
			if !ok {
				break
			}
			e = d.Expression
		}
		if gf, ok := e.(*expression.GetField); ok && gf.Id() != 0 {
			cols.Add(gf.Id())
		}
	}
	for _, c := range expression.SplitConjunction(cond) {
		if not, ok := c.(*expression.Not); ok {
			if eq, ok := not.Child.(*expression.Equals); ok {
				c = eq
			}
		}
		switch c := c.(type) {
		case *expression.Equals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.Like:
			b := c.(expression.BinaryExpression)
			add(b.Left())
			add(b.Right())
		}
	}
	return cols
}

// outputColumns returns the columns of the tables of n, a join tree.
func outputColumns(n gsql.Node) gsql.ColSet {
	var cols gsql.ColSet
	transform.Inspect(n, func(n gsql.Node) bool {
		if t, ok := n.(plan.TableIdNode); ok {
			cols = cols.Union(t.Columns())
			return false
		}
		return true
	})
	return cols
}
