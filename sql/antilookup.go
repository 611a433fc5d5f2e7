package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/compat"
)

// Anti lookup joins for NOT EXISTS. GMS turns WHERE NOT EXISTS (SELECT
// ... FROM s WHERE s.k = outer.c ...) into an anti join, and percdb
// makes the correlated conditions that may be NULL never NULL
// (compat.NotExistsNullAsFalse: c becomes c AND (c IS TRUE)), since
// GMS's anti joins drop an outer row for a NULL condition as NOT IN
// must. With that wrapper GMS plans the anti join only as a nested loop
// that reads the whole inner table for every outer row: a NOT EXISTS
// correlated on a nullable column of a 100,000-row table took minutes
// (MariaDB: milliseconds). GMS v0.20.0 plans no anti lookup join itself.
//
// antiLookupJoins, run right after GMS's join planner, makes such a
// nested-loop anti join an anti lookup join (plan.JoinTypeAntiLookup)
// when its condition has equalities inner.col = outer.col on the leading
// columns of an index of the inner percdb table: each outer row reads
// the inner rows of its key only (in batches, lookupjoin.go). The answer
// is the same: an inner row outside the key's range makes one of those
// equalities FALSE, or NULL, and a NULL one is ANDed with its own
// wrapper, which is then FALSE (an equality the rule left unwrapped is
// one of two NOT NULL columns, never NULL); so the join's condition is
// FALSE for every row the lookup skips, and the anti join's decision
// reads only the rows the lookup reads. An outer row whose key is NULL
// reads no row and stays, as NOT EXISTS wants. Only anti joins with a
// wrapper are made lookups: NOT IN's (GMS's unnesting of x NOT IN
// (SELECT ...)) must see every inner row, NULLs included.
//
// The equalities must compare columns of one type (integers of any
// width, or the same type and collation), so that the lookup's key is
// the value the condition compares. The session variable
// @percdb_anti_lookup = 0 turns the rule off (the differential test
// compares both).
const antiLookupUserVar = "percdb_anti_lookup"

// antiLookupJoins is the analyzer rule; see the comment above.
func antiLookupJoins(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if !userVarOn(ctx, antiLookupUserVar) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || j.Op != plan.JoinTypeAnti || j.Filter == nil {
			return n, transform.SameTree, nil
		}
		out, ok := antiLookup(ctx, j)
		if !ok {
			return n, transform.SameTree, nil
		}
		return out, transform.NewTree, nil
	})
}

// antiLookup returns j as an anti lookup join, ok false when it cannot
// be one (see the comment at the top of the file).
func antiLookup(ctx *gsql.Context, j *plan.JoinNode) (gsql.Node, bool) {
	conds := expression.SplitConjunction(j.Filter)
	wrapped := map[string]bool{}
	for _, c := range conds {
		if inner, ok := compat.NullAsFalseCond(c); ok {
			wrapped[inner.String()] = true
		}
	}
	if len(wrapped) == 0 {
		return nil, false
	}
	// The inner side: filters over a [n aliased] percdb table, read
	// whole or by static ranges.
	var chain []gsql.Node
	right := j.Right()
	var rt *plan.ResolvedTable
	for rt == nil {
		switch n := right.(type) {
		case *plan.Filter:
			chain, right = append(chain, n), n.Child
		case *plan.TableAlias:
			chain, right = append(chain, n), n.Child
		case *plan.ResolvedTable:
			rt = n
		case *plan.IndexedTableAccess:
			// A static read of ranges the filters above it decide
			// (GMS keeps them): the lookup replaces it.
			r, ok := n.TableNode.(*plan.ResolvedTable)
			it, ok2 := n.Table.(*IndexedTable)
			if !ok || !ok2 || !n.IsStatic() {
				return nil, false
			}
			whole, err := r.WithTable(it.Table)
			if err != nil {
				return nil, false
			}
			if rt, ok = whole.(*plan.ResolvedTable); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	t, ok := rt.Table.(*Table)
	if !ok || t.meta.Def.Temporary || t.meta.Schema.Schema.HasVirtualColumns() {
		return nil, false
	}
	innerName := strings.ToLower(rt.Name())
	if len(chain) > 0 {
		if ta, ok := chain[len(chain)-1].(*plan.TableAlias); ok {
			innerName = strings.ToLower(ta.Name())
		}
	}
	outer := map[string]bool{}
	for _, c := range j.Left().Schema() {
		outer[strings.ToLower(c.Source)] = true
	}
	// The outer column each inner column is equal to.
	keys := map[string]gsql.Expression{}
	for _, c := range conds {
		eq, ok := c.(*expression.Equals)
		if !ok {
			continue
		}
		l, ok1 := eq.Left().(*expression.GetField)
		r, ok2 := eq.Right().(*expression.GetField)
		if !ok1 || !ok2 {
			continue
		}
		if strings.ToLower(r.Table()) == innerName {
			l, r = r, l
		}
		if strings.ToLower(l.Table()) != innerName || !outer[strings.ToLower(r.Table())] {
			continue
		}
		if !wrapped[c.String()] && (l.IsNullable() || r.IsNullable()) {
			continue
		}
		if !sameKeyType(l.Type(), r.Type()) {
			continue
		}
		keys[strings.ToLower(l.Name())] = r
	}
	if len(keys) == 0 {
		return nil, false
	}
	// The index whose leading columns the equalities pin the most of, a
	// unique one first on a tie.
	indexes, err := t.GetIndexes(ctx)
	if err != nil {
		return nil, false
	}
	var best gsql.Index
	var bestKeys []gsql.Expression
	for _, idx := range indexes {
		var k []gsql.Expression
		for _, e := range idx.Expressions() {
			col := strings.ToLower(e[strings.LastIndex(e, ".")+1:])
			r, ok := keys[col]
			if !ok {
				break
			}
			k = append(k, r)
		}
		if x, ok := idx.(*Index); !ok || x.im.Prefixed {
			continue
		}
		if len(k) > len(bestKeys) || (len(k) == len(bestKeys) && len(k) > 0 && idx.IsUnique() && !best.IsUnique()) {
			best, bestKeys = idx, k
		}
	}
	if best == nil {
		return nil, false
	}
	ita, err := plan.NewIndexedAccessForTableNode(ctx, rt, plan.NewLookupBuilder(best, bestKeys, make([]bool, len(bestKeys))))
	if err != nil {
		return nil, false
	}
	var side gsql.Node = ita
	for i := len(chain) - 1; i >= 0; i-- {
		if side, err = chain[i].WithChildren(side); err != nil {
			return nil, false
		}
	}
	out, err := j.WithChildren(j.Left(), side)
	if err != nil {
		return nil, false
	}
	out.(*plan.JoinNode).Op = plan.JoinTypeAntiLookup
	return out, true
}

// sameKeyType reports whether a lookup on a column of type inner keyed
// by a value of type outer reads exactly the rows the equality of the
// two matches: integers of any width and signedness (the key converts
// exactly, or reads a wider range the condition then decides), or one
// type, collation and all.
func sameKeyType(inner, outer gsql.Type) bool {
	if types.IsInteger(inner) && types.IsInteger(outer) {
		return true
	}
	return inner.Equals(outer)
}
