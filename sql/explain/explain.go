package explain

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// RowCounter tells how many rows a table holds, as the planner's
// statistics provider does.
type RowCounter func(ctx *gsql.Context, db string, t gsql.Table) uint64

// KeyRows estimates the rows of t whose first pinned columns of idx
// equal given values, from the planner's statistics; false without them.
type KeyRows func(ctx *gsql.Context, db string, t gsql.Table, idx gsql.Index, pinned int) (uint64, bool)

// BatchedJoin reports whether a lookup join runs its lookups in batches
// of outer rows (MySQL's batched key access).
type BatchedJoin func(ctx *gsql.Context, j *plan.JoinNode) bool

// batchedKeyAccess is EXPLAIN's Extra of a lookup join run in batches.
const batchedKeyAccess = "Using join buffer (Batched Key Access)"

// AggregatedJoin reports whether a GroupBy over a lookup join aggregates
// the inner rows per join key in the coprocessor instead of joining them.
type AggregatedJoin func(ctx *gsql.Context, g *plan.GroupBy) bool

// Row is one line of EXPLAIN's answer; an empty string is NULL.
type Row struct {
	ID           int
	SelectType   string
	Table        string
	Type         string
	PossibleKeys string
	Key          string
	KeyLen       string
	Ref          string
	Rows         uint64
	// HasRows is false where rows is NULL (a block without tables).
	HasRows bool
	Extra   []string
	// tbl is the table read, for possible_keys and row counts.
	tbl gsql.Table
}

// SQLRow returns r as a row of plan.DescribeSchema.
func (r Row) SQLRow() gsql.Row {
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	var rows, filtered any
	if r.HasRows {
		rows, filtered = r.Rows, 100.0
	}
	return gsql.Row{uint64(r.ID), r.SelectType, null(r.Table), nil, null(r.Type), null(r.PossibleKeys),
		null(r.Key), null(r.KeyLen), null(r.Ref), rows, filtered, strings.Join(r.Extra, "; ")}
}

// Plan returns the EXPLAIN rows of the analyzed plan n. keyRows, when
// not nil, estimates the rows of a read of an index's pinned prefix (ref,
// and range over points), which are otherwise the table's row count;
// batched, when not nil, tells the lookup joins that run in batches;
// aggregated, when not nil, the aggregations over them that run per join
// key.
func Plan(ctx *gsql.Context, n gsql.Node, count RowCounter, keyRows KeyRows, batched BatchedJoin, aggregated AggregatedJoin) []Row {
	e := &explainer{ctx: ctx, count: count, keyRows: keyRows, batched: batched, aggregated: aggregated, next: 1}
	top := e.newBlock()
	switch n.(type) {
	case *plan.Update:
		top.selectType = "UPDATE"
	case *plan.DeleteFrom:
		top.selectType = "DELETE"
	case *plan.InsertInto:
		top.selectType = "INSERT"
	}
	e.walk(top, n)
	if top.selectType == "" {
		top.selectType = "SIMPLE"
		if len(e.blocks) > 1 {
			top.selectType = "PRIMARY"
		}
	}
	var out []Row
	for _, b := range e.blocks {
		if len(b.rows) == 0 {
			b.rows = append(b.rows, &Row{Extra: []string{"No tables used"}})
		}
		for _, r := range b.rows {
			r.ID, r.SelectType = b.id, b.selectType
			out = append(out, *r)
		}
	}
	return out
}

// Pushed is a plan node that runs the operators of the plan it replaced
// next to the data (package sql's coprocessor scan): it is explained as
// that plan, with what was pushed in Extra.
type Pushed interface {
	gsql.Node
	// Replaced returns the plan the node replaced.
	Replaced() gsql.Node
	// PushedDown names the operators pushed ("where, aggregation").
	PushedDown() string
}

// IndexPushed is a Pushed node that may read an index's entries instead
// of the rows of the plan it replaced (a count of them): it is explained
// as MySQL explains a full index scan (type index, Using index).
type IndexPushed interface {
	Pushed
	// EntriesOf names the index read; "" when the rows are read.
	EntriesOf() string
}

// CoveringTable is a table that can read the columns a statement needs
// from an index's entries alone, without its rows (MySQL's "Using
// index").
type CoveringTable interface {
	gsql.Table
	// CoveredBy reports whether a read through idx takes every column
	// from the index's entries.
	CoveredBy(idx gsql.Index) bool
}

// RangeEstimator is a table that estimates the rows a read of ranges of
// one of its indexes returns, from its statistics (MySQL's
// records_in_range); false without them.
type RangeEstimator interface {
	gsql.Table
	RangeRows(ctx *gsql.Context, idx gsql.Index, ranges gsql.MySQLRangeCollection) (uint64, bool)
}

// explainer collects the rows of each query block.
type explainer struct {
	ctx     *gsql.Context
	count   RowCounter
	keyRows KeyRows
	batched BatchedJoin
	// aggregated tells the GroupBys over lookup joins run per join key.
	aggregated AggregatedJoin
	next       int
	blocks     []*block
}

// block is a query block: the statement, a subquery or a derived table.
type block struct {
	id         int
	selectType string
	rows       []*Row
}

func (e *explainer) newBlock() *block {
	b := &block{id: e.next}
	e.next++
	e.blocks = append(e.blocks, b)
	return b
}

// walk adds the rows of the tables n reads to b, and the blocks of its
// subqueries.
func (e *explainer) walk(b *block, n gsql.Node) {
	e.subqueries(b, n)
	switch n := n.(type) {
	case *plan.ResolvedTable:
		if !plan.IsDualTable(n) {
			e.scan(b, n.Name(), n.UnderlyingTable())
		}
		return
	case *plan.InsertInto:
		// The table written is listed with no read of its own, then the
		// tables of INSERT ... SELECT.
		first := len(b.rows)
		e.walk(b, n.Destination)
		for _, r := range b.rows[first:] {
			r.HasRows, r.PossibleKeys, r.Extra = false, "", nil
		}
		e.walk(b, n.Source)
		return
	case *plan.EmptyTable:
		b.rows = append(b.rows, &Row{Extra: []string{"Impossible WHERE"}})
		return
	case *plan.TableAlias:
		// A table read under another name: the rows of its child,
		// named by the alias.
		first := len(b.rows)
		e.walk(b, n.Child)
		for _, r := range b.rows[first:] {
			if r.tbl != nil {
				r.Table = n.Name()
			}
		}
		return
	case *plan.IndexedTableAccess:
		e.indexed(b, n, false)
		return
	case *plan.SubqueryAlias:
		d := e.newBlock()
		d.selectType = "DERIVED"
		b.rows = append(b.rows, &Row{Table: fmt.Sprintf("<derived%d>", d.id), Type: "ALL", HasRows: true})
		e.walk(d, n.Child)
		return
	case *plan.SetOp:
		e.walk(b, n.Left())
		u := e.newBlock()
		u.selectType = "UNION"
		e.walk(u, n.Right())
		return
	case *plan.JoinNode:
		e.walk(b, n.Left())
		first := len(b.rows)
		e.walk(b, n.Right())
		if first < len(b.rows) {
			r := b.rows[first]
			switch {
			case n.Op.IsHash():
				r.Extra = append(r.Extra, "Using join buffer (hash join)")
			case n.Op.IsMerge():
				r.Extra = append(r.Extra, "Using merge join")
			case r.Type == "ALL":
				r.Extra = append(r.Extra, "Using join buffer (nested loop)")
			case e.batched != nil && e.batched(e.ctx, n):
				r.Extra = append(r.Extra, batchedKeyAccess)
			}
		}
		return
	case Pushed:
		// The rows of the plan it replaced, which say what is read.
		first := len(b.rows)
		e.walk(b, n.Replaced())
		if first < len(b.rows) {
			r := b.rows[first]
			if ip, ok := n.(IndexPushed); ok && ip.EntriesOf() != "" {
				r.Type, r.Key, r.KeyLen = "index", ip.EntriesOf(), ""
				r.Extra = append(r.Extra, "Using index")
			}
			r.Extra = append(r.Extra, "Using coprocessor ("+n.PushedDown()+")")
		}
		return
	case *plan.Filter:
		first := len(b.rows)
		e.walk(b, n.Child)
		if last := len(b.rows) - 1; last >= first {
			b.rows[last].Extra = append(b.rows[last].Extra, "Using where")
			e.possibleKeys(b.rows[first:], n.Expression)
		}
		return
	case *plan.Sort, *plan.TopN:
		first := len(b.rows)
		e.walk(b, n.Children()[0])
		if first < len(b.rows) {
			b.rows[first].Extra = append(b.rows[first].Extra, "Using filesort")
		}
		return
	case *plan.GroupBy:
		first := len(b.rows)
		e.walk(b, n.Child)
		if len(n.GroupByExprs) > 0 && first < len(b.rows) {
			b.rows[first].Extra = append(b.rows[first].Extra, "Using temporary")
		}
		if e.aggregated != nil && e.aggregated(e.ctx, n) {
			// Per join key, the inner table's rows are aggregated
			// where they are, in the batches the join would read.
			for _, r := range b.rows[first:] {
				for i, x := range r.Extra {
					if x == batchedKeyAccess {
						r.Extra[i] = "Using coprocessor (aggregation per join key)"
					}
				}
			}
		}
		return
	case *plan.Distinct:
		first := len(b.rows)
		e.walk(b, n.Child)
		if first < len(b.rows) {
			b.rows[first].Extra = append(b.rows[first].Extra, "Using temporary")
		}
		return
	}
	for _, c := range n.Children() {
		e.walk(b, c)
	}
}

// subqueries adds a block for each subquery among n's own expressions.
func (e *explainer) subqueries(b *block, n gsql.Node) {
	x, ok := n.(gsql.Expressioner)
	if !ok {
		return
	}
	for _, ex := range x.Expressions() {
		transform.InspectExpr(ex, func(ex gsql.Expression) bool {
			sq, ok := ex.(*plan.Subquery)
			if !ok {
				return false
			}
			s := e.newBlock()
			s.selectType = "SUBQUERY"
			if !sq.Correlated().Empty() {
				s.selectType = "DEPENDENT SUBQUERY"
			}
			e.walk(s, sq.Query)
			return false
		})
	}
}

// scan adds the row of a full scan of t.
func (e *explainer) scan(b *block, name string, t gsql.Table) {
	b.rows = append(b.rows, &Row{Table: name, Type: "ALL", Rows: e.rowCount(t), HasRows: true, tbl: t})
}

// indexed adds the row of a read of a table through an index.
func (e *explainer) indexed(b *block, n *plan.IndexedTableAccess, _ bool) {
	idx := n.Index()
	r := &Row{Table: n.Name(), Key: keyName(idx), HasRows: true, tbl: n.TableNode.UnderlyingTable()}
	r.PossibleKeys = r.Key
	cols := idx.ColumnExpressionTypes()
	nullable := columnNullability(n.TableNode.Schema(), cols)
	if !n.IsStatic() {
		keys := n.Expressions()
		refs := make([]string, len(keys))
		for i, k := range keys {
			refs[i] = refName(k)
		}
		r.Ref = strings.Join(refs, ",")
		r.KeyLen = keyLen(cols, nullable, len(keys))
		r.Type, r.Rows = "ref", e.pinnedRows(r.tbl, idx, len(keys), 1)
		if n.IsStrictLookup() {
			r.Type, r.Rows = "eq_ref", 1
		}
		b.rows = append(b.rows, r)
		return
	}
	lookup, err := n.GetLookup(e.ctx, nil)
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if err != nil || !ok {
		r.Type, r.Rows = "index", e.rowCount(r.tbl)
		b.rows = append(b.rows, r)
		return
	}
	if lookup.IsEmptyRange || len(ranges) == 0 {
		b.rows = append(b.rows, &Row{Extra: []string{"Impossible WHERE"}})
		return
	}
	if c, ok := r.tbl.(CoveringTable); ok && c.CoveredBy(idx) {
		r.Extra = append(r.Extra, "Using index")
	}
	a := analyzeRanges(e.ctx, ranges, len(cols))
	r.KeyLen = keyLen(cols, nullable, a.used)
	switch {
	case a.points == len(cols) && idx.IsUnique() && !a.null:
		r.Type, r.Rows = "range", uint64(len(ranges))
		if len(ranges) == 1 {
			r.Type, r.Ref = "const", constRefs(a.points)
		}
	case len(ranges) == 1 && a.points > 0 && a.used == a.points:
		r.Type, r.Ref, r.Rows = "ref", constRefs(a.points), e.pinnedRows(r.tbl, idx, a.points, 1)
	case a.used == 0:
		r.Type, r.Rows = "index", e.rowCount(r.tbl)
	case a.points > 0:
		r.Type, r.Rows = "range", e.pinnedRows(r.tbl, idx, a.points, len(ranges))
	default:
		r.Type, r.Rows = "range", e.rowCount(r.tbl)
	}
	if est, ok := r.tbl.(RangeEstimator); ok && (r.Type == "range" || r.Type == "ref") {
		if n, ok := est.RangeRows(e.ctx, idx, ranges); ok {
			r.Rows = n
		}
	}
	b.rows = append(b.rows, r)
}

// pinnedRows estimates the rows of n reads of idx, each pinning its first
// pinned columns: the statistics' estimate, or the table's row count.
func (e *explainer) pinnedRows(t gsql.Table, idx gsql.Index, pinned, n int) uint64 {
	all := e.rowCount(t)
	if e.keyRows == nil || t == nil {
		return all
	}
	db := ""
	if d, ok := t.(gsql.Databaseable); ok {
		db = d.Database()
	}
	rows, ok := e.keyRows(e.ctx, db, t, idx, pinned)
	if !ok {
		return all
	}
	return min(rows*uint64(n), max(all, rows))
}

func (e *explainer) rowCount(t gsql.Table) uint64 {
	if e.count == nil || t == nil {
		return 0
	}
	db := ""
	if d, ok := t.(gsql.Databaseable); ok {
		db = d.Database()
	}
	return e.count(e.ctx, db, t)
}

// possibleKeys sets the possible_keys of rows: the indexes of each row's
// table whose first column the filter cond names, and the key used.
func (e *explainer) possibleKeys(rows []*Row, cond gsql.Expression) {
	named := map[string]bool{}
	transform.InspectExpr(cond, func(ex gsql.Expression) bool {
		if gf, ok := ex.(*expression.GetField); ok {
			named[strings.ToLower(gf.Name())] = true
		}
		return false
	})
	for _, r := range rows {
		ia, ok := r.tbl.(gsql.IndexAddressable)
		if !ok {
			continue
		}
		idxs, err := ia.GetIndexes(e.ctx)
		if err != nil {
			continue
		}
		var keys []string
		for _, idx := range idxs {
			cols := idx.ColumnExpressionTypes()
			if len(cols) == 0 {
				continue
			}
			if name := keyName(idx); name == r.Key || named[columnName(cols[0].Expression)] {
				keys = append(keys, name)
			}
		}
		r.PossibleKeys = strings.Join(keys, ",")
	}
}
