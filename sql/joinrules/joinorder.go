package joinrules

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// A query joining many tables (FROM t1, t2, ... t40 WHERE a1=b7 AND ...)
// defeats GMS's join planner. Above 15 tables it does not cost join
// orders at all: it tries to chain lookups along a single path and, when
// the join graph branches, keeps the order of the FROM clause, cross
// joining every table that shares no predicate with the tables before
// it. A 44-table join of ten-row tables became a nested loop over 10^10
// rows (sqllogictest select5: minutes per query, where MySQL takes
// milliseconds). Up to 15 tables it costs orders, but when the FROM order
// leaves a cross join it first tries the same single-path chain and
// keeps what that left behind: a 15-table join ran a cross product of
// six ten-row tables for 31 s.
//
// GreedyJoinOrder runs just before GMS's join planner and hands it a
// better order, the way MySQL's greedy search does: start from the most
// selective table, then add, one at a time, a table joined to the tables
// already placed by a predicate, preferring a table reached through an
// equality on its primary key or a unique index (one row per outer row),
// then through an equality on an indexed column, then through any
// predicate. A table reachable through no predicate comes last, as a
// cross join. Up to 15 tables GMS then costs orders from there; above, it
// turns each equality on an indexed column into a lookup join, as it does
// for the order of the FROM clause.

// greedyJoinMinTables is the smallest join the rule reorders: two tables
// have no order to choose.
const greedyJoinMinTables = 3

// GreedyJoinOrder is the analyzer rule; see the comment at the top of the
// file.
func GreedyJoinOrder(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	switch n.(type) {
	case *plan.Update, *plan.DeleteFrom:
		// GMS's join planner wraps the joins of UPDATE and DELETE in
		// a projection that restores the column order; SELECTs refer to
		// columns by id and do not care. Leave writes to GMS.
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || !isReorderableJoin(j) {
			return n, transform.SameTree, nil
		}
		var c joinCluster
		c.collect(j)
		if len(c.leaves) < greedyJoinMinTables {
			return n, transform.SameTree, nil
		}
		reordered, ok := c.greedy(ctx)
		if !ok {
			return n, transform.SameTree, nil
		}
		return reordered, transform.NewTree, nil
	})
}

// isReorderableJoin reports whether j is an inner or cross join without
// a join hint: the joins whose operands may be put in any order.
func isReorderableJoin(j *plan.JoinNode) bool {
	return (j.Op == plan.JoinTypeInner || j.Op == plan.JoinTypeCross) && j.CommentStr == ""
}

// joinCluster is a tree of inner and cross joins flattened into its
// operands (leaves) and the conjuncts of its join conditions.
type joinCluster struct {
	leaves []gsql.Node
	conds  []gsql.Expression
}

func (c *joinCluster) collect(n gsql.Node) {
	if j, ok := n.(*plan.JoinNode); ok && isReorderableJoin(j) {
		c.collect(j.Left())
		c.collect(j.Right())
		if j.Filter != nil {
			c.conds = append(c.conds, expression.SplitConjunction(j.Filter)...)
		}
		return
	}
	c.leaves = append(c.leaves, n)
}

// leafSet is a set of leaf positions; a cluster has fewer than 64 leaves
// or is left alone.
type leafSet uint64

func (s leafSet) has(i int) bool { return s&(1<<uint(i)) != 0 }

// joinCond is one conjunct with the leaves it refers to.
type joinCond struct {
	expr   gsql.Expression
	leaves leafSet
}

// greedy returns the cluster rebuilt as a left-deep join tree in greedy
// order, or false when the cluster has something the rule does not
// reason about (a subquery in a condition, more than 63 leaves).
func (c *joinCluster) greedy(ctx *gsql.Context) (gsql.Node, bool) {
	if len(c.leaves) > 63 {
		return nil, false
	}
	// Which leaf each table id belongs to.
	leafOf := make(map[gsql.TableId]int)
	for i, l := range c.leaves {
		for _, id := range tableIDsOf(l) {
			leafOf[id] = i
		}
	}
	conds := make([]joinCond, 0, len(c.conds))
	for _, e := range c.conds {
		var set leafSet
		subquery := false
		transform.InspectExpr(e, func(e gsql.Expression) bool {
			switch e := e.(type) {
			case *plan.Subquery:
				subquery = true
			case *expression.GetField:
				if i, ok := leafOf[e.TableId()]; ok {
					set |= 1 << uint(i)
				}
			}
			return false
		})
		if subquery {
			return nil, false
		}
		conds = append(conds, joinCond{expr: e, leaves: set})
	}

	infos := make([]leafInfo, len(c.leaves))
	for i, l := range c.leaves {
		infos[i] = describeLeaf(ctx, l)
	}

	// The first table: the most selective by its own filters.
	first := 0
	for i := range infos {
		if infos[i].selectivity > infos[first].selectivity {
			first = i
		}
	}
	order := []int{first}
	placed := leafSet(1) << uint(first)
	for len(order) < len(c.leaves) {
		best, bestScore := -1, -1
		for i := range c.leaves {
			if placed.has(i) {
				continue
			}
			score := 0
			for _, jc := range conds {
				if !jc.leaves.has(i) || jc.leaves&^(placed|1<<uint(i)) != 0 || jc.leaves == 1<<uint(i) {
					continue
				}
				if s := infos[i].reachScore(jc.expr); s > score {
					score = s
				}
			}
			// Among equals, the more selective table, then the order of
			// the query.
			score = score*4 + infos[i].selectivity
			if score > bestScore {
				best, bestScore = i, score
			}
		}
		order = append(order, best)
		placed |= 1 << uint(best)
	}

	// Rebuild: each condition goes to the lowest join that has all of
	// its tables.
	used := make([]bool, len(conds))
	var tree gsql.Node = c.leaves[order[0]]
	placed = 1 << uint(order[0])
	for k, i := range order[1:] {
		placed |= 1 << uint(i)
		var on []gsql.Expression
		for ci, jc := range conds {
			if used[ci] || jc.leaves&^placed != 0 {
				continue
			}
			// Conditions on no table of the cluster (constants, outer
			// references) go to the first join.
			if jc.leaves == 0 && k > 0 {
				continue
			}
			used[ci] = true
			on = append(on, jc.expr)
		}
		if len(on) == 0 {
			tree = plan.NewCrossJoin(tree, c.leaves[i])
		} else {
			tree = plan.NewInnerJoin(tree, c.leaves[i], expression.JoinAnd(on...))
		}
	}
	return tree, true
}

// tableIDsOf returns the ids of the tables a join operand reads, not
// looking into the tables themselves (a subquery alias is one table).
func tableIDsOf(n gsql.Node) []gsql.TableId {
	var ids []gsql.TableId
	transform.Inspect(n, func(n gsql.Node) bool {
		if t, ok := n.(plan.TableIdNode); ok {
			ids = append(ids, t.Id())
			return false
		}
		return true
	})
	return ids
}

// leafInfo is what the greedy order knows of one join operand.
type leafInfo struct {
	// selectivity ranks the operand's own filters: 0 none, 1 some
	// filter, 2 an equality with a constant on an indexed column, 3 on
	// the first column of a unique index (at most one row).
	selectivity int
	// indexed and unique hold the lower-cased names of the columns that
	// lead an index, and a unique index of one column.
	indexed map[string]bool
	unique  map[string]bool
	// id is the operand's table id when it is a table.
	id    gsql.TableId
	table bool
}

// describeLeaf looks through a Filter (GMS's pushed-down predicates) and
// a table alias to the table and its indexes.
func describeLeaf(ctx *gsql.Context, n gsql.Node) leafInfo {
	var info leafInfo
	var filters []gsql.Expression
	for {
		f, ok := n.(*plan.Filter)
		if !ok {
			break
		}
		filters = append(filters, expression.SplitConjunction(f.Expression)...)
		n = f.Child
	}
	if t, ok := n.(plan.TableIdNode); ok {
		info.id, info.table = t.Id(), true
	}
	if tn, ok := n.(*plan.TableAlias); ok {
		n = tn.Child
	}
	if rt, ok := n.(*plan.ResolvedTable); ok {
		if it, ok := rt.UnderlyingTable().(gsql.IndexAddressable); ok {
			if idxs, err := it.GetIndexes(ctx); err == nil {
				info.indexed = make(map[string]bool)
				info.unique = make(map[string]bool)
				for _, idx := range idxs {
					exprs := idx.Expressions()
					if len(exprs) == 0 {
						continue
					}
					col := columnOfIndexExpr(exprs[0])
					info.indexed[col] = true
					if idx.IsUnique() && len(exprs) == 1 {
						info.unique[col] = true
					}
				}
			}
		}
	}
	if len(filters) > 0 {
		info.selectivity = 1
	}
	for _, f := range filters {
		col, ok := equalityWithConstant(f)
		if !ok {
			continue
		}
		switch {
		case info.unique[col]:
			info.selectivity = 3
		case info.indexed[col] && info.selectivity < 2:
			info.selectivity = 2
		}
	}
	return info
}

// columnOfIndexExpr turns "t1.a1" (an index's expression) into "a1".
func columnOfIndexExpr(e string) string {
	if i := strings.LastIndexByte(e, '.'); i >= 0 {
		e = e[i+1:]
	}
	return strings.ToLower(strings.Trim(e, "`"))
}

// equalityWithConstant returns the column of a "column = constant"
// predicate (either side).
func equalityWithConstant(e gsql.Expression) (string, bool) {
	eq, ok := e.(*expression.Equals)
	if !ok {
		return "", false
	}
	l, r := eq.Left(), eq.Right()
	if gf, ok := l.(*expression.GetField); ok {
		if _, ok := r.(*expression.Literal); ok {
			return strings.ToLower(gf.Name()), true
		}
	}
	if gf, ok := r.(*expression.GetField); ok {
		if _, ok := l.(*expression.Literal); ok {
			return strings.ToLower(gf.Name()), true
		}
	}
	return "", false
}

// reachScore ranks cond as the way into this operand from the tables
// already placed: 3 an equality on a column with a unique index of its
// own (a lookup of at most one row), 2 an equality on a column leading
// an index (a lookup), 1 any other predicate.
func (info leafInfo) reachScore(cond gsql.Expression) int {
	eq, ok := cond.(*expression.Equals)
	if !ok || !info.table {
		return 1
	}
	best := 1
	for _, side := range []gsql.Expression{eq.Left(), eq.Right()} {
		gf, ok := side.(*expression.GetField)
		if !ok || gf.TableId() != info.id {
			continue
		}
		col := strings.ToLower(gf.Name())
		switch {
		case info.unique[col]:
			best = 3
		case info.indexed[col] && best < 2:
			best = 2
		}
	}
	return best
}
