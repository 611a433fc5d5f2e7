package planrules

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS's index coster, without histograms (percdb has none yet), estimates
// every index read as equally selective and breaks the tie by hand rules,
// the first of which prefers a unique index whether or not the WHERE
// clause pins it: WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? on a
// table with the primary key (c_w_id, c_d_id, c_id) and an index (c_w_id,
// c_d_id, c_last, c_first) read the whole district through the primary
// key, 3,000 rows where the index held about 3 (TPC-C's customer by last
// name; likewise the latest order of a customer through (o_w_id, o_d_id,
// o_c_id, o_id)). MySQL's optimizer without statistics prefers the index
// whose leading columns the equalities pin the most of ("ref" on more key
// parts), a unique index pinned whole first of all.
//
// PreferPinnedIndex applies that rule to a static index read under a
// Filter: when another index of the table has more leading columns
// pinned by the filter's equalities with values (col = literal) than the
// read's ranges pin of its own index, the read becomes one of that index,
// with those equalities and the filter's bounds on the next column. The
// filter stays above and decides, as for every percdb read (lookups are
// not precise), so the answer cannot change; only fewer rows are read.
// A read that feeds a merge join is left alone: the merge join compares
// its rows in the order of the index GMS chose (the join key's), and the
// read of another index returns them in another order, which made the
// join drop matches (a.x = b.id merged over a's rows in primary-key
// order: TestPinnedIndexKeepsMergeOrder).

// PreferPinnedIndexRule is PreferPinnedIndex as an analyzer rule; it must
// run after GMS chooses access paths (its rule optimizeJoins).
func PreferPinnedIndexRule(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return PreferPinnedIndex(ctx, n, a.Catalog.StatsProvider)
}

// PreferPinnedIndex replaces each static index read under a Filter of n
// by a read of the index the filter pins the most leading columns of,
// when that is more than the read pins (see above); with statistics (sp
// has them for every index concerned), by the read of the index whose
// pinned columns are estimated to match the fewest rows.
func PreferPinnedIndex(ctx *gsql.Context, n gsql.Node, sp gsql.StatsProvider) (gsql.Node, transform.TreeIdentity, error) {
	merged := mergeInputs(n)
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		ita, ok := f.Child.(*plan.IndexedTableAccess)
		if !ok || !ita.IsStatic() || merged[ita] {
			return n, transform.SameTree, nil
		}
		lookup, err := ita.GetLookup(ctx, nil)
		if err != nil || lookup.Index == nil || lookup.IsSpatialLookup {
			return n, transform.SameTree, nil
		}
		ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
		if !ok {
			return n, transform.SameTree, nil
		}
		if len(ranges) == 0 {
			return n, transform.SameTree, nil // reads nothing
		}
		cur := leadingPoints(ctx, ranges, len(lookup.Index.Expressions()))
		if lookup.Index.IsUnique() && cur == len(lookup.Index.Expressions()) {
			return n, transform.SameTree, nil // at most one row per range
		}
		conds := columnConditions(f.Expression, strings.ToLower(ita.Name()))
		if len(conds.eq) == 0 {
			return n, transform.SameTree, nil
		}
		ia, ok := ita.TableNode.UnderlyingTable().(gsql.IndexAddressable)
		if !ok {
			return n, transform.SameTree, nil
		}
		idxs, err := ia.GetIndexes(ctx)
		if err != nil {
			return n, transform.SameTree, nil
		}
		// An index scores two for each leading column pinned, one more
		// when the next is bounded; a unique index pinned whole beats all.
		var best gsql.Index
		bestPinned, bestWhole := 0, false
		bestScore := readScore(ctx, ranges, len(lookup.Index.Expressions()))
		var candidates []gsql.Index
		for _, idx := range idxs {
			if !idx.IsSpatial() && !idx.IsFullText() && !idx.IsVector() && !strings.EqualFold(idx.ID(), lookup.Index.ID()) {
				candidates = append(candidates, idx)
			}
		}
		est := newPinnedEstimator(ctx, sp, ita)
		byStats := false
		if idx, k, ok := fewestRows(est, conds, lookup.Index, cur, len(ranges),
			cur < len(lookup.Index.Expressions()) && boundedColumn(ranges, cur), candidates); ok {
			// With statistics: the index of fewest rows estimated.
			best, bestPinned = idx, k
			candidates = nil
			byStats = true
		}
		for _, idx := range candidates {
			k, score := conds.pinScore(idx)
			whole := idx.IsUnique() && k == len(idx.Expressions())
			if !bestWhole && (whole || score > bestScore) {
				best, bestPinned, bestWhole, bestScore = idx, k, whole, score
			}
		}
		if best == nil {
			return n, transform.SameTree, nil
		}
		nl, ok := conds.lookup(ctx, best, bestPinned)
		if !ok || !betterRead(ctx, est, byStats, lookup.Index, ranges, best, nl) {
			return n, transform.SameTree, nil
		}
		nita, err := plan.NewStaticIndexedAccessForTableNode(ctx, ita.TableNode, nl)
		if err != nil {
			return n, transform.SameTree, nil
		}
		ret, err := f.WithChildren(nita)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	})
}

// fewestRows returns the candidate index whose pinned columns (by the
// equalities of conds) are estimated to match fewer rows than the read of
// cur, pinned by curPinned columns over n ranges (the next column bounded
// when curBounded), or nil when none does; a bound on the column after
// the pinned ones counts as boundSelectivity of their rows (MySQL's and
// GMS's guess for a range without a histogram of it);
// ok is false when some index has no statistics, and then the rule's
// scores decide.
func fewestRows(est pinnedEstimator, conds colConds, cur gsql.Index, curPinned, n int, curBounded bool, candidates []gsql.Index) (best gsql.Index, pinned int, ok bool) {
	least, ok := est.rows(cur, curPinned)
	if !ok {
		return nil, 0, false
	}
	least *= float64(max(n, 1))
	if curBounded {
		least *= boundSelectivity
	}
	for _, idx := range candidates {
		k, score := conds.pinScore(idx)
		rows, ok := est.rows(idx, k)
		if !ok {
			return nil, 0, false
		}
		if score%2 == 1 { // the column after the pinned ones is bounded
			rows *= boundSelectivity
		}
		if k > 0 && rows < least {
			best, pinned, least = idx, k, rows
		}
	}
	return best, pinned, true
}

// betterRead reports whether nl, the read of idx built from the filter,
// is better than the current read of cur by ranges, judged as the
// current read is judged: its estimated rows (byStats) or its score, of
// its ranges as built. The filter promised them, but a value the index
// cannot hold exactly (an INT column = 1.5, a DECIMAL literal of more
// digits than the column's) builds no point, or no range at all, and
// the statement's plan is rebuilt until no rule changes it
// (compat_exec.go): two reads each judged worse than the other's promise
// switched back and forth until the stack overflowed (the difftest
// application run, seed 12100-12199). With every switch strictly better
// by one measure of the read itself, the rebuilding ends.
func betterRead(ctx *gsql.Context, est pinnedEstimator, byStats bool, cur gsql.Index, ranges gsql.MySQLRangeCollection, idx gsql.Index, nl gsql.IndexLookup) bool {
	nr, ok := nl.Ranges.(gsql.MySQLRangeCollection)
	if !ok {
		return false
	}
	if len(nr) == 0 {
		return true // reads nothing
	}
	if byStats {
		now, ok1 := readRows(ctx, est, cur, ranges)
		then, ok2 := readRows(ctx, est, idx, nr)
		return ok1 && ok2 && then < now
	}
	n := len(idx.Expressions())
	if idx.IsUnique() && leadingPoints(ctx, nr, n) == n {
		return true // pinned whole: beats every read
	}
	return readScore(ctx, nr, n) > readScore(ctx, ranges, len(cur.Expressions()))
}

// readRows estimates the rows of a read of idx by ranges, as fewestRows
// estimates the current read's.
func readRows(ctx *gsql.Context, est pinnedEstimator, idx gsql.Index, ranges gsql.MySQLRangeCollection) (float64, bool) {
	n := len(idx.Expressions())
	k := leadingPoints(ctx, ranges, n)
	rows, ok := est.rows(idx, k)
	if !ok {
		return 0, false
	}
	rows *= float64(max(len(ranges), 1))
	if k < n && boundedColumn(ranges, k) {
		rows *= boundSelectivity
	}
	return rows, true
}

// boundSelectivity is the share of rows a bound (col > v) is estimated to
// keep.
const boundSelectivity = 1.0 / 3

// pinnedEstimator estimates the rows of an index read whose leading
// columns are pinned by equalities, from the statistics of a table (GMS's
// sql.StatsProvider, whose distinct counts of index prefixes percdb's
// ANALYZE TABLE provides): rows / distinct values of the prefix.
type pinnedEstimator struct {
	ctx  *gsql.Context
	sp   gsql.StatsProvider
	db   string
	name string
}

func newPinnedEstimator(ctx *gsql.Context, sp gsql.StatsProvider, ita *plan.IndexedTableAccess) pinnedEstimator {
	e := pinnedEstimator{ctx: ctx, sp: sp, name: ita.TableNode.UnderlyingTable().Name()}
	if db := ita.TableNode.Database(); db != nil {
		e.db = db.Name()
	}
	return e
}

// rows returns the estimated rows of idx with its first k columns
// pinned, and false without statistics.
func (e pinnedEstimator) rows(idx gsql.Index, k int) (float64, bool) {
	if e.sp == nil || e.db == "" {
		return 0, false
	}
	cols := indexColumns(idx)
	st, ok := e.sp.GetStats(e.ctx, gsql.NewStatQualifier(e.db, "", e.name, idx.ID()), cols[:max(k, 1)])
	if !ok || st == nil || st.DistinctCount() == 0 {
		return 0, false
	}
	if k == 0 { // nothing pinned: every row
		return float64(st.RowCount()), true
	}
	return float64(st.RowCount()) / float64(st.DistinctCount()), true
}

// readScore scores a read of an index of n columns by ranges as
// pinScore scores an index by a filter.
func readScore(ctx *gsql.Context, ranges gsql.MySQLRangeCollection, n int) int {
	cur := leadingPoints(ctx, ranges, n)
	score := 2 * cur
	if cur < n && boundedColumn(ranges, cur) {
		score++
	}
	return score
}

// pinScore returns how many leading columns of idx the equalities pin,
// and its score: two for each, one more when the next is bounded.
func (c colConds) pinScore(idx gsql.Index) (pinned, score int) {
	cols := indexColumns(idx)
	k := 0
	for k < len(cols) && c.eq[cols[k]] != nil {
		k++
	}
	score = 2 * k
	if k < len(cols) && len(c.bounds[cols[k]]) > 0 {
		score++
	}
	return k, score
}

// leadingPoints is the fewest leading columns of n that any range pins to
// one value.
func leadingPoints(ctx *gsql.Context, ranges gsql.MySQLRangeCollection, n int) int {
	least := n
	for _, r := range ranges {
		k := 0
		for k < len(r) && k < n {
			if _, ok := PointValue(ctx, r[k]); !ok {
				break
			}
			k++
		}
		least = min(least, k)
	}
	if len(ranges) == 0 {
		return 0
	}
	return least
}

// boundedColumn reports whether every range bounds column i.
func boundedColumn(ranges gsql.MySQLRangeCollection, i int) bool {
	for _, r := range ranges {
		if i >= len(r) {
			return false
		}
		_, lo := r[i].LowerBound.(gsql.BelowNull)
		_, hi := r[i].UpperBound.(gsql.AboveAll)
		if lo && hi {
			return false
		}
	}
	return len(ranges) > 0
}

// indexColumns returns the lower-case column names of idx, in order.
func indexColumns(idx gsql.Index) []string {
	exprs := idx.Expressions()
	out := make([]string, len(exprs))
	for i, e := range exprs {
		out[i] = strings.ToLower(e[strings.LastIndexByte(e, '.')+1:])
	}
	return out
}

// bound is one comparison of a column with a value.
type bound struct {
	op  string // ">", ">=", "<", "<="
	val any
}

// colConds are the conjuncts of a filter that compare a column of one
// table with a non-NULL literal: equalities and bounds, by column name.
type colConds struct {
	eq     map[string]any
	bounds map[string][]bound
}

// columnConditions collects the conjuncts of e that compare a column of
// table with a non-NULL literal.
func columnConditions(e gsql.Expression, table string) colConds {
	c := colConds{eq: map[string]any{}, bounds: map[string][]bound{}}
	for _, conj := range expression.SplitConjunction(e) {
		cmp, ok := conj.(expression.Comparer)
		if !ok {
			continue
		}
		var op string
		switch conj.(type) {
		case *expression.Equals:
			op = "="
		case *expression.GreaterThan:
			op = ">"
		case *expression.GreaterThanOrEqual:
			op = ">="
		case *expression.LessThan:
			op = "<"
		case *expression.LessThanOrEqual:
			op = "<="
		default:
			continue
		}
		gf, lit := columnAndLiteral(cmp.Left(), cmp.Right(), table)
		if gf == nil {
			gf, lit = columnAndLiteral(cmp.Right(), cmp.Left(), table)
			op = flipped[op]
		}
		if gf == nil {
			continue
		}
		name := strings.ToLower(gf.Name())
		if op == "=" {
			if _, dup := c.eq[name]; !dup {
				c.eq[name] = lit.Value()
			}
			continue
		}
		c.bounds[name] = append(c.bounds[name], bound{op: op, val: lit.Value()})
	}
	return c
}

// flipped is the comparison with its sides swapped.
var flipped = map[string]string{"=": "=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}

// columnAndLiteral returns col and val when col is a column of table and
// val a non-NULL literal.
func columnAndLiteral(col, val gsql.Expression, table string) (*expression.GetField, *expression.Literal) {
	gf, ok := col.(*expression.GetField)
	if !ok || !strings.EqualFold(gf.Table(), table) {
		return nil, nil
	}
	lit, ok := val.(*expression.Literal)
	if !ok || lit.Value() == nil {
		return nil, nil
	}
	return gf, lit
}

// lookup builds the read of idx by the equalities on its first pinned
// columns and the bounds on the next; ok is false when GMS's range
// builder cannot (a value it cannot convert to the column's type).
func (c colConds) lookup(ctx *gsql.Context, idx gsql.Index, pinned int) (gsql.IndexLookup, bool) {
	b := gsql.NewMySQLIndexBuilder(idx)
	exprs := idx.Expressions()
	cols := indexColumns(idx)
	for i := 0; i < pinned; i++ {
		b = b.Equals(ctx, strings.ToLower(exprs[i]), c.eq[cols[i]])
	}
	if pinned < len(cols) {
		e := strings.ToLower(exprs[pinned])
		for _, bd := range c.bounds[cols[pinned]] {
			switch bd.op {
			case ">":
				b = b.GreaterThan(ctx, e, bd.val)
			case ">=":
				b = b.GreaterOrEqual(ctx, e, bd.val)
			case "<":
				b = b.LessThan(ctx, e, bd.val)
			case "<=":
				b = b.LessOrEqual(ctx, e, bd.val)
			}
		}
	}
	l, err := b.Build(ctx)
	if err != nil || l.Index == nil {
		return gsql.IndexLookup{}, false
	}
	return l, true
}

// mergeInputs returns the index reads of n whose order a merge join
// relies on: the reads its inputs are made of, through the nodes that
// keep their child's order.
func mergeInputs(n gsql.Node) map[*plan.IndexedTableAccess]bool {
	out := map[*plan.IndexedTableAccess]bool{}
	var mark func(gsql.Node)
	mark = func(n gsql.Node) {
		switch n := n.(type) {
		case *plan.IndexedTableAccess:
			out[n] = true
		case *plan.Filter, *plan.TableAlias, *plan.Project, *plan.Limit, *plan.Distinct:
			for _, c := range n.Children() {
				mark(c)
			}
		}
	}
	transform.Inspect(n, func(n gsql.Node) bool {
		if j, ok := n.(*plan.JoinNode); ok && j.Op.IsMerge() {
			mark(j.Left())
			mark(j.Right())
		}
		return true
	})
	return out
}
