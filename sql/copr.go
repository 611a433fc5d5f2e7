package sql

import (
	"fmt"
	"io"
	"math/big"
	"runtime"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/explain"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// Pushdown to the coprocessor (package executor/copr). coprPushdown, an
// analyzer rule that runs once the plan is final (after GMS assigns its
// execution indexes), replaces the operators over a full scan of a
// percdb table, or over a static lookup of primary-key ranges read in key
// order, that the coprocessor can evaluate with a coprScan, a leaf that
// runs them next to the data, range by range, and yields what they would
// have:
//
//   - GroupBy [over Filter] over the scan: partial aggregates per region,
//     merged here (COUNT, COUNT(*), MIN, MAX, SUM of integers,
//     COUNT(DISTINCT) of one
//     integer column, grouped by integer columns or an integer column MOD
//     a constant); one that reads no column (COUNT(*) of a whole table)
//     counts the entries of the narrowest index (narrowestIndex);
//   - Filter over the scan: the rows that pass (the conjuncts the
//     coprocessor cannot evaluate stay in a Filter above);
//   - TopN or Limit over a [wholly pushed] Filter over the scan: at most
//     the limit's rows per region, GMS's TopN or Limit above keeping its
//     own.
//
// Every expression must be in the coprocessor's set (integer columns and
// constants, comparisons, AND, OR, NOT, IS NULL, see executor/copr) and
// mean there what it means to GMS, or the plan is left as it was. The
// session variable @percdb_coprocessor = 0 turns the rule off (the
// differential test compares both). A statement that locks what it reads
// (SELECT ... FOR UPDATE in a transaction, a foreign key's check) runs
// the plan it replaced.
//
// A coprScan reports the column ids of the rows it yields (its
// ProjectedExprs), those of the node it replaced, because GMS may assign
// execution indexes again over a plan that holds one: each side of a
// UNION, INTERSECT or EXCEPT is analyzed on its own, to the end (GMS's
// finalizeUnions: assignExecIndexes, then this rule, push the side's
// scans), and the statement's own analysis then assigns the indexes of
// the whole plan, sides included. That pass finds a column by its id in
// a list of the ids of every column in scope (fix_exec_indexes.go,
// columnIdsForNode), beside a list of their names: a node that is not a
// sql.Projector gives the ids of its children, and a leaf without them
// gave none, so every id after its columns sat at a place too early, and
// a column found by id read the wrong one. A join's inner column read
// the pushed scan's (tests/difftest seed 5: a joined row whose c0 and c2
// differ; rows of zeros), a subquery's own column read the outer row's
// (seed 2001: (SELECT MIN(sq.c2) FROM t0 sq) gave t1's a; seed 2000: a
// correlated one read NULL; seed 18: a WHERE's subquery let every row
// through). Until then such joins and subqueries were kept from the
// coprocessor in a UNION side (8851d00); they are pushed again, the
// differential test compares them (TestCoprDifferential, its scoped
// shapes).

// coprUserVar is the user variable that turns pushdown off for a session
// when set to 0 or OFF.
const coprUserVar = "percdb_coprocessor"

// coprPushdownRule returns the analyzer rule; see the comment at the top
// of the file. indexes is the id of GMS's rule assignExecIndexes, which
// runs just before it: the rule reads the execution indexes it assigns
// (coprCompiler.field), so it leaves alone an analysis whose rule
// selector leaves that rule out (GMS's analysis of a derived table on
// its own, finalizeSubqueries; the statement's analysis pushes it down).
func coprPushdownRule(indexes analyzer.RuleId) analyzer.RuleFunc {
	return func(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		if !scope.IsEmpty() || !coprEnabled(ctx) || planTemplate(ctx) || (sel != nil && !sel(indexes)) {
			// (The plan cache pushes down each execution's own plan,
			// plancache.go.)
			// Inside a subquery, execution indexes are offset by the
			// outer scope's row.
			return n, transform.SameTree, nil
		}
		out, pushed, err := pushDown(ctx, n, pushAt{})
		return out, transform.TreeIdentity(!pushed), err
	}
}

// pushDown replaces the highest operators over a scan that can be pushed,
// top down, so that a GroupBy over a Filter goes down whole. at says
// what is above n.
func pushDown(ctx *gsql.Context, n gsql.Node, at pushAt) (gsql.Node, bool, error) {
	var s gsql.Node
	switch n := n.(type) {
	case *plan.GroupBy:
		s = pushGroupBy(ctx, n)
	case *plan.TopN:
		s = pushTopN(ctx, n)
	case *plan.Limit:
		s = pushLimit(ctx, n)
	case *plan.Filter:
		s = pushFilter(ctx, n)
	}
	if s != nil {
		if at.limited {
			markEarly(s)
		}
		return s, true, nil
	}
	switch n := n.(type) {
	case *plan.JoinNode:
		// A join's right side is built under each row of its left, which
		// offsets its execution indexes, and is read again for each: it
		// is not pushed. Its left side is built under the join's own
		// parent row, as every GMS join iterator and percdb's batched
		// lookup join build it, and that row is empty here: pushDown
		// never enters a right side or a subquery. So the outer side's
		// filter, the a.q = 7 of ... FROM t a WHERE a.q = 7 AND EXISTS
		// (SELECT ... b.id = a.k), runs next to the data. Under a LIMIT
		// the join may want few of its outer rows: the scan reads small
		// pages first (copr.RunPaged), where whole pages read in
		// parallel read the whole outer side ahead (a self-join ...
		// LIMIT 20 went from 15 to 738 ms so, and was reverted: 3b62934).
		// The derived tables of its right side are pushed on their own
		// (pushDerived).
		l, left, err := pushDown(ctx, n.Left(), at)
		if err != nil {
			return n, false, err
		}
		r, right, err := pushDerived(ctx, n.Right())
		if err != nil || !left && !right {
			return n, false, err
		}
		out, err := n.WithChildren(l, r)
		return out, err == nil, err
	case *plan.Update, *plan.DeleteFrom:
		// Writes read their rows through the table's own iterators.
		return n, false, nil
	case *plan.SubqueryAlias:
		if n.OuterScopeVisibility || !n.Correlated.Empty() {
			return n, false, nil
		}
	}
	switch n.(type) {
	case *plan.Limit:
		at.limited = true
	case *plan.Sort, *plan.TopN, *plan.GroupBy, *plan.Window:
		// They read every row of their input before their first.
		at.limited = false
	}
	return eachChild(n, func(c gsql.Node) (gsql.Node, bool, error) { return pushDown(ctx, c, at) })
}

// pushDerived pushes down the plans of the derived tables in n, a join's
// right side, which pushDown does not otherwise enter. A derived table
// that sees no outer row (neither LATERAL nor correlated) is built
// without the row it is read under (GMS's buildSubqueryAlias drops it),
// and GMS assigns its execution indexes afresh: its plan is pushed as a
// statement's. Nothing else of a right side is.
func pushDerived(ctx *gsql.Context, n gsql.Node) (gsql.Node, bool, error) {
	if sqa, ok := n.(*plan.SubqueryAlias); ok {
		if sqa.OuterScopeVisibility || sqa.IsLateral || !sqa.Correlated.Empty() {
			return n, false, nil
		}
		return pushDown(ctx, sqa, pushAt{})
	}
	return eachChild(n, func(c gsql.Node) (gsql.Node, bool, error) { return pushDerived(ctx, c) })
}

// eachChild applies push to each child of n and returns n with the
// children it changed, and whether it changed one.
func eachChild(n gsql.Node, push func(gsql.Node) (gsql.Node, bool, error)) (gsql.Node, bool, error) {
	children := n.Children()
	var changed []gsql.Node
	for i, c := range children {
		nc, pushed, err := push(c)
		if err != nil {
			return nil, false, err
		}
		if pushed {
			if changed == nil {
				changed = append([]gsql.Node(nil), children...)
			}
			changed[i] = nc
		}
	}
	if changed == nil {
		return n, false, nil
	}
	out, err := n.WithChildren(changed...)
	return out, err == nil, err
}

// pushAt is what is above a node pushDown visits.
type pushAt struct {
	// limited: an operator above may stop reading the node's rows
	// before the last (a LIMIT not over a sort or grouping, which read
	// every row first); the scans pushed there read in small pages
	// first (coprScan.early).
	limited bool
}

// markEarly marks the coprocessor scan of n, a pushed operator, as read
// by a reader that may stop early.
func markEarly(n gsql.Node) {
	switch n := n.(type) {
	case *coprScan:
		n.early = true
	case *plan.Filter:
		markEarly(n.Child)
	case *plan.TopN:
		markEarly(n.Child)
	case *plan.Limit:
		markEarly(n.Child)
	}
}

// firstEarlyPage is the first page of rows of a scan read by a reader
// that may stop early (copr.RunPaged): about what a batched lookup
// join's first batch takes (minLookupBatch).
const firstEarlyPage = minLookupBatch

// coprEnabled reports whether the session allows pushdown.
func coprEnabled(ctx *gsql.Context) bool {
	if ctx == nil || ctx.Session == nil {
		return true
	}
	return userVarOn(ctx, coprUserVar)
}

// userVarOn reports whether the session's user variable name, a switch of
// percdb's, is on: unset, or set to anything but 0 or OFF.
func userVarOn(ctx *gsql.Context, name string) bool {
	_, v, err := ctx.GetUserVariable(ctx, name)
	if err != nil || v == nil {
		return true
	}
	switch v := v.(type) {
	case string:
		return !strings.EqualFold(v, "off") && v != "0"
	case bool:
		return v
	}
	return fmt.Sprint(v) != "0"
}

// scanned returns the percdb table a read reads, nil when n is not one
// the coprocessor can evaluate over: a full scan, or a static lookup of
// ranges of the primary key (access, which names them), of a table that
// is not temporary and has no virtual columns (GMS computes them).
func scanned(ctx *gsql.Context, n gsql.Node) (t *Table, access *plan.IndexedTableAccess) {
	if ta, ok := n.(*plan.TableAlias); ok {
		n = ta.Child // the same rows under another name
	}
	switch n := n.(type) {
	case *plan.ResolvedTable:
		t, _ = n.Table.(*Table)
	case *plan.IndexedTableAccess:
		x, ok := n.Index().(*Index)
		it, ok2 := n.Table.(*IndexedTable)
		if !ok || !ok2 || !x.im.IsPrimary || !n.IsStatic() {
			return nil, nil
		}
		t, access = it.Table, n
		if len(t.Schema()) != len(n.Schema()) {
			return nil, nil
		}
		// A reverse lookup yields rows in descending key order, which GMS
		// may rely on (it drops an ORDER BY); the coprocessor reads
		// ascending.
		if l, err := n.GetLookup(ctx, nil); err != nil || l.IsReverse {
			return nil, nil
		}
	}
	if t == nil || t.meta.Def.Temporary || t.meta.Schema.Schema.HasVirtualColumns() {
		return nil, nil
	}
	if t.meta.Exec.HandleKind == executor.HandleRowID && t.projection == nil {
		// Whole rows of a table without a primary key may be read for an
		// UPDATE or DELETE, which finds them by where they were read
		// (keylessTracker).
		return nil, nil
	}
	return t, access
}

// coprCompiler turns GMS expressions over a scanned table's rows into
// coprocessor expressions over the program's columns.
type coprCompiler struct {
	t      *Table
	access *plan.IndexedTableAccess // the primary-key lookup read, nil for a scan
	schema gsql.Schema              // the scan's rows
	// offsets are the table offsets of the scan's row positions.
	offsets []int
	prog    *copr.Program
	// cols maps a row position to its program column.
	cols map[int]int
}

func newCoprCompiler(t *Table) *coprCompiler {
	c := &coprCompiler{t: t, schema: t.Schema(), prog: &copr.Program{}, cols: map[int]int{}}
	c.offsets = t.projection
	if c.offsets == nil {
		c.offsets = make([]int, len(c.schema))
		for i := range c.offsets {
			c.offsets[i] = i
		}
	}
	return c
}

// column returns the program column of row position i, adding it.
func (c *coprCompiler) column(i int) int {
	if p, ok := c.cols[i]; ok {
		return p
	}
	col := c.t.meta.Exec.Columns[c.offsets[i]]
	p := len(c.prog.Columns)
	c.prog.Columns = append(c.prog.Columns, col.ID)
	if col.TrimTrailingSpaces {
		c.prog.Trim = append(c.prog.Trim, p)
	}
	c.cols[i] = p
	return p
}

// finish encodes the columns' origin defaults into the program.
func (c *coprCompiler) finish() (*copr.Program, bool) {
	defaults := make([]any, len(c.prog.Columns))
	any := false
	for i, p := range c.cols {
		defaults[p] = c.t.meta.Exec.Columns[c.offsets[i]].OriginDefault
		any = any || defaults[p] != nil
	}
	if any {
		b, err := tablecodec.EncodeRow(c.prog.Columns, defaults)
		if err != nil {
			return nil, false
		}
		c.prog.Defaults = b
	}
	if c.prog.Validate() != nil {
		return nil, false
	}
	return c.prog, true
}

// field returns the row position a GetField reads, checking that it is
// the scan's column.
func (c *coprCompiler) field(e gsql.Expression) (int, bool) {
	gf, ok := e.(*expression.GetField)
	if !ok {
		return 0, false
	}
	i := gf.Index()
	if i < 0 || i >= len(c.schema) || !strings.EqualFold(c.schema[i].Name, gf.Name()) {
		return 0, false
	}
	return i, true
}

// intKindOf classifies an integer type.
func intKindOf(t gsql.Type) (compat.IntKind, bool) {
	switch {
	case !types.IsInteger(t):
		return compat.NotInt, false
	case types.IsUnsigned(t):
		return compat.UnsignedInt, true
	}
	return compat.SignedInt, true
}

// value compiles an integer-valued expression: an integer column, an
// integer constant or NULL, an integer column MOD a positive constant.
func (c *coprCompiler) value(e gsql.Expression) (copr.Expr, compat.IntKind, bool) {
	switch e := e.(type) {
	case *expression.GetField:
		i, ok := c.field(e)
		if !ok {
			return copr.Expr{}, compat.NotInt, false
		}
		k, ok := intKindOf(c.schema[i].Type)
		if !ok {
			return copr.Expr{}, compat.NotInt, false
		}
		return copr.Expr{Op: copr.OpColumn, Col: c.column(i)}, k, true
	case *expression.Literal:
		v := e.Value()
		if v == nil {
			return copr.Expr{Op: copr.OpConst, Const: &copr.Datum{Null: true}}, compat.SignedInt, true
		}
		k, ok := intKindOf(e.Type())
		if !ok {
			return copr.Expr{}, compat.NotInt, false
		}
		d, ok := coprDatum(v)
		if !ok || d.Unsigned != (k == compat.UnsignedInt) {
			return copr.Expr{}, compat.NotInt, false
		}
		return copr.Expr{Op: copr.OpConst, Const: d}, k, true
	case *compat.IntMod:
		if e.LeftKind() == compat.NotInt {
			return copr.Expr{}, compat.NotInt, false
		}
		arg, k, ok := c.value(e.LeftChild)
		if !ok || arg.Op != copr.OpColumn || !exactInDouble(e.LeftChild) {
			return copr.Expr{}, compat.NotInt, false
		}
		lit, ok := e.RightChild.(*expression.Literal)
		if !ok {
			return copr.Expr{}, compat.NotInt, false
		}
		d, ok := coprDatum(lit.Value())
		if !ok || d.Null || (!d.Unsigned && d.Int <= 0) || (d.Unsigned && (d.Uint == 0 || d.Uint > 1<<62)) {
			return copr.Expr{}, compat.NotInt, false
		}
		// The divisor takes the operand's signedness (MySQL: an
		// unsigned operand makes the result unsigned).
		if k == compat.UnsignedInt && !d.Unsigned {
			d = &copr.Datum{Unsigned: true, Uint: uint64(d.Int)}
		} else if k == compat.SignedInt && d.Unsigned {
			d = &copr.Datum{Int: int64(d.Uint)}
		}
		return copr.Expr{Op: copr.OpMod, Const: d, Args: []copr.Expr{arg}}, k, true
	}
	return copr.Expr{}, compat.NotInt, false
}

// exactInDouble reports whether an integer column's values are all exact
// as doubles (at most 32 bits): then whatever GMS computes a MOD of it in
// groups exactly as the integer MOD does.
func exactInDouble(e gsql.Expression) bool {
	t := e.Type()
	if !types.IsInteger(t) {
		return false
	}
	switch t.Type() {
	case sqltypes.Int64, sqltypes.Uint64:
		return false
	}
	return true
}

// coprDatum converts a Go integer to a constant.
func coprDatum(v any) (*copr.Datum, bool) {
	switch v := v.(type) {
	case int8:
		return &copr.Datum{Int: int64(v)}, true
	case int16:
		return &copr.Datum{Int: int64(v)}, true
	case int32:
		return &copr.Datum{Int: int64(v)}, true
	case int64:
		return &copr.Datum{Int: v}, true
	case int:
		return &copr.Datum{Int: int64(v)}, true
	case uint8:
		return &copr.Datum{Unsigned: true, Uint: uint64(v)}, true
	case uint16:
		return &copr.Datum{Unsigned: true, Uint: uint64(v)}, true
	case uint32:
		return &copr.Datum{Unsigned: true, Uint: uint64(v)}, true
	case uint64:
		return &copr.Datum{Unsigned: true, Uint: v}, true
	case uint:
		return &copr.Datum{Unsigned: true, Uint: uint64(v)}, true
	}
	return nil, false
}

// truth compiles a boolean expression.
func (c *coprCompiler) truth(e gsql.Expression) (copr.Expr, bool) {
	var op copr.Op
	switch e := e.(type) {
	case *expression.And:
		return c.logic(copr.OpAnd, e.LeftChild, e.RightChild)
	case *expression.Or:
		return c.logic(copr.OpOr, e.LeftChild, e.RightChild)
	case *expression.Not:
		a, ok := c.truth(e.Child)
		return copr.Expr{Op: copr.OpNot, Args: []copr.Expr{a}}, ok
	case *expression.IsNull:
		// Of an integer value, or of a column of any type: the
		// coprocessor tells NULL from the encoded value's tag.
		a, _, ok := c.value(e.Child)
		if !ok {
			var i int
			if i, ok = c.field(e.Child); ok {
				a = copr.Expr{Op: copr.OpColumn, Col: c.column(i)}
			}
		}
		return copr.Expr{Op: copr.OpIsNull, Args: []copr.Expr{a}}, ok
	case *expression.InTuple:
		return c.in(e.Left(), e.Right())
	case *expression.HashInTuple:
		// GMS's IN of a list of constants, hashed: the same answer.
		return c.in(e.Left(), e.Right())
	case *expression.Equals:
		op = copr.OpEQ
	case *expression.NullSafeEquals:
		op = copr.OpNullSafe
	case *expression.LessThan:
		op = copr.OpLT
	case *expression.LessThanOrEqual:
		op = copr.OpLE
	case *expression.GreaterThan:
		op = copr.OpGT
	case *expression.GreaterThanOrEqual:
		op = copr.OpGE
	default:
		return copr.Expr{}, false
	}
	cmp := e.(expression.Comparer)
	l, lk, ok1 := c.value(cmp.Left())
	r, rk, ok2 := c.value(cmp.Right())
	if !ok1 || !ok2 {
		return copr.Expr{}, false
	}
	kind := copr.CmpDouble
	switch {
	case lk == compat.SignedInt && rk == compat.SignedInt:
		kind = copr.CmpSigned
	case lk == compat.UnsignedInt && rk == compat.UnsignedInt:
		kind = copr.CmpUnsigned
	}
	return copr.Expr{Op: op, Cmp: kind, Args: []copr.Expr{l, r}}, true
}

// maxPushedIn bounds the list of an IN the program evaluates, which it
// walks item by item.
const maxPushedIn = 1024

// in compiles `col IN (list)` of an integer column and a list of integer
// constants and NULLs, each a value of the column's type. GMS converts
// each item to the column's type (promoted) and compares there (InTuple,
// and HashInTuple's hashes): for a value the type holds that is the
// integer comparison; for one it does not, GMS clips or truncates it
// (percdb's rules for an IN over other types, compat/outofrange.go, see
// to those), so such a list is left to GMS. Each constant takes the
// column's signedness, and the comparison is of integers of one kind.
func (c *coprCompiler) in(left, right gsql.Expression) (copr.Expr, bool) {
	list, ok := right.(expression.Tuple)
	if !ok || len(list) == 0 || len(list) > maxPushedIn {
		return copr.Expr{}, false
	}
	if _, ok := left.(*expression.GetField); !ok {
		return copr.Expr{}, false
	}
	col, k, ok := c.value(left)
	if !ok || col.Op != copr.OpColumn {
		return copr.Expr{}, false
	}
	lo, hi, ok := compat.IntegerBounds(left.Type())
	if !ok {
		return copr.Expr{}, false
	}
	args := make([]copr.Expr, 1, len(list)+1)
	args[0] = col
	for _, item := range list {
		lit, ok := item.(*expression.Literal)
		if !ok {
			return copr.Expr{}, false
		}
		if lit.Value() == nil {
			args = append(args, copr.Expr{Op: copr.OpConst, Const: &copr.Datum{Null: true}})
			continue
		}
		if _, ok := intKindOf(lit.Type()); !ok {
			return copr.Expr{}, false
		}
		d, ok := coprDatum(lit.Value())
		if !ok {
			return copr.Expr{}, false
		}
		v := decimal.NewFromInt(d.Int)
		if d.Unsigned {
			v = decimal.NewFromBigInt(new(big.Int).SetUint64(d.Uint), 0)
		}
		if v.LessThan(lo) || v.GreaterThan(hi) {
			return copr.Expr{}, false
		}
		if k == compat.UnsignedInt {
			d = &copr.Datum{Unsigned: true, Uint: v.BigInt().Uint64()}
		} else {
			d = &copr.Datum{Int: v.IntPart()}
		}
		args = append(args, copr.Expr{Op: copr.OpConst, Const: d})
	}
	kind := copr.CmpSigned
	if k == compat.UnsignedInt {
		kind = copr.CmpUnsigned
	}
	return copr.Expr{Op: copr.OpIn, Cmp: kind, Args: args}, true
}

func (c *coprCompiler) logic(op copr.Op, l, r gsql.Expression) (copr.Expr, bool) {
	a, ok1 := c.truth(l)
	b, ok2 := c.truth(r)
	return copr.Expr{Op: op, Args: []copr.Expr{a, b}}, ok1 && ok2
}

// filter compiles the conjuncts of cond that it can into the program's
// filter and returns the others.
func (c *coprCompiler) filter(cond gsql.Expression) (rest []gsql.Expression) {
	for _, e := range expression.SplitConjunction(cond) {
		before := len(c.prog.Columns)
		x, ok := c.truth(e)
		if !ok {
			c.forget(before)
			rest = append(rest, e)
			continue
		}
		c.prog.Filter = append(c.prog.Filter, x)
	}
	return rest
}

// forget drops the columns added since the program had n (a conjunct
// that did not compile).
func (c *coprCompiler) forget(n int) {
	for i, p := range c.cols {
		if p >= n {
			delete(c.cols, i)
		}
	}
	c.prog.Columns = c.prog.Columns[:n]
	trim := c.prog.Trim[:0]
	for _, p := range c.prog.Trim {
		if p < n {
			trim = append(trim, p)
		}
	}
	c.prog.Trim = trim
}

// outputAll makes the program output the scan's whole rows.
func (c *coprCompiler) outputAll() {
	c.prog.Output = make([]int, len(c.schema))
	for i := range c.schema {
		c.prog.Output[i] = c.column(i)
	}
}

// pushFilter pushes a Filter over a scan.
func pushFilter(ctx *gsql.Context, f *plan.Filter) gsql.Node {
	t, access := scanned(ctx, f.Child)
	if t == nil {
		return nil
	}
	c := newCoprCompiler(t)
	c.access = access
	rest := c.filter(f.Expression)
	if len(c.prog.Filter) == 0 {
		return nil
	}
	c.outputAll()
	p, ok := c.finish()
	if !ok {
		return nil
	}
	s := &coprScan{orig: f, t: t, access: access, prog: p, schema: f.Schema(), ids: scanColumnIDs(f.Child), pushed: "where"}
	if len(rest) == 0 {
		return s
	}
	return plan.NewFilter(expression.JoinAnd(rest...), s)
}

// limitOf returns a Limit's or TopN's row count when it is a constant.
func limitOf(e gsql.Expression) (int64, bool) {
	lit, ok := e.(*expression.Literal)
	if !ok {
		return 0, false
	}
	d, ok := coprDatum(lit.Value())
	switch {
	case !ok || d.Null:
		return 0, false
	case d.Unsigned:
		return int64(min(d.Uint, 1<<40)), d.Uint > 0
	}
	return d.Int, d.Int > 0
}

// rowsUnder compiles what is under a TopN or Limit: a scan, or a Filter
// over one that compiles whole.
func rowsUnder(ctx *gsql.Context, n gsql.Node) (*coprCompiler, bool) {
	if t, access := scanned(ctx, n); t != nil {
		c := newCoprCompiler(t)
		c.access = access
		return c, true
	}
	f, ok := n.(*plan.Filter)
	if !ok {
		return nil, false
	}
	t, access := scanned(ctx, f.Child)
	if t == nil {
		return nil, false
	}
	c := newCoprCompiler(t)
	c.access = access
	return c, len(c.filter(f.Expression)) == 0
}

// maxPushedTopN bounds the rows a region keeps for a top-N (twice as
// many at most): a larger one is GMS's, whose buffer the query's memory
// bound counts.
const maxPushedTopN = copr.DefaultPageRows

// pushTopN pushes a TopN over a [Filter over a] scan: each region keeps
// its first rows by the TopN's integer keys; the TopN stays above.
func pushTopN(ctx *gsql.Context, n *plan.TopN) gsql.Node {
	limit, ok := limitOf(n.Limit)
	if !ok || n.CalcFoundRows || limit > maxPushedTopN {
		return nil
	}
	c, ok := rowsUnder(ctx, n.Child)
	if !ok {
		return nil
	}
	for _, f := range n.Fields {
		x, _, ok := c.value(f.Column)
		if !ok || x.Op != copr.OpColumn {
			return nil
		}
		// NULL is the smallest value, as in MySQL (and as GMS sorts
		// with NullsFirst, in either direction).
		desc := f.Order == gsql.Descending
		if f.NullOrdering != gsql.NullsFirst {
			return nil
		}
		c.prog.OrderBy = append(c.prog.OrderBy, copr.Order{Col: x.Col, Desc: desc})
	}
	s := pushRows(c, n.Child, limit, "top-N")
	if s == nil {
		return nil
	}
	out := *n
	out.UnaryNode = plan.UnaryNode{Child: s}
	return &out
}

// pushLimit pushes a Limit over a wholly pushed Filter over a scan: each
// region stops at the limit; the Limit stays above.
func pushLimit(ctx *gsql.Context, n *plan.Limit) gsql.Node {
	limit, ok := limitOf(n.Limit)
	if !ok || n.CalcFoundRows {
		return nil
	}
	if _, ok := n.Child.(*plan.Filter); !ok {
		return nil
	}
	c, ok := rowsUnder(ctx, n.Child)
	if !ok {
		return nil
	}
	s := pushRows(c, n.Child, limit, "limit")
	if s == nil {
		return nil
	}
	out := *n
	out.UnaryNode = plan.UnaryNode{Child: s}
	return &out
}

// pushRows finishes the program of a TopN or Limit over child, which the
// scan replaces.
func pushRows(c *coprCompiler, child gsql.Node, limit int64, what string) *coprScan {
	c.prog.Limit = limit
	c.outputAll()
	p, ok := c.finish()
	if !ok {
		return nil
	}
	pushed := what
	if len(p.Filter) > 0 {
		pushed = "where, " + what
	}
	scan := child
	if f, ok := child.(*plan.Filter); ok {
		scan = f.Child
	}
	return &coprScan{orig: child, t: c.t, access: c.access, prog: p, schema: child.Schema(), ids: scanColumnIDs(scan), pushed: pushed}
}

// pushGroupBy pushes a GroupBy [over a Filter] over a scan.
func pushGroupBy(ctx *gsql.Context, g *plan.GroupBy) gsql.Node {
	child := g.Child
	var cond gsql.Expression
	if f, ok := child.(*plan.Filter); ok {
		child, cond = f.Child, f.Expression
	}
	t, access := scanned(ctx, child)
	if t == nil {
		return nil
	}
	c := newCoprCompiler(t)
	c.access = access
	if cond != nil && len(c.filter(cond)) > 0 {
		return nil
	}
	c.prog.Aggregate = true
	for _, e := range g.GroupByExprs {
		x, _, ok := c.value(e)
		if !ok || x.Op == copr.OpConst {
			return nil
		}
		c.prog.GroupBy = append(c.prog.GroupBy, x)
	}
	s := &coprScan{orig: g, t: t, access: access, schema: g.Schema(), ids: projectedIDs(g.SelectedExprs), width: len(c.schema)}
	keep := map[int]int{} // row position -> Keep index
	keepCol := func(i int) {
		if _, ok := keep[i]; !ok {
			keep[i] = len(c.prog.Keep)
			c.prog.Keep = append(c.prog.Keep, c.column(i))
			s.keepPos = append(s.keepPos, i)
		}
	}
	s.selected = make([]gsql.Expression, len(g.SelectedExprs))
	for i, e := range g.SelectedExprs {
		if cd, ok := e.(*aggregation.CountDistinct); ok {
			// COUNT(DISTINCT col), alone: the distinct values are the
			// groups, counted here.
			if len(g.SelectedExprs) != 1 || len(g.GroupByExprs) != 0 || len(cd.Children()) != 1 {
				return nil
			}
			x, _, ok := c.value(cd.Children()[0])
			if !ok || x.Op != copr.OpColumn {
				return nil
			}
			c.prog.GroupBy = append(c.prog.GroupBy, x)
			c.prog.DistinctInts = true // the coprocessor reads integer columns only
			s.countDistinct = true
			continue
		}
		if agg, ok := e.(gsql.Aggregation); ok {
			s.selected[i] = expression.NewGetField(s.width+len(c.prog.Aggs), agg.Type(), agg.String(), true)
			if avg, ok := c.average(agg); ok {
				// The sum and the count of the values; the final row
				// holds their quotient at the sum's place (aggregate).
				s.avgs = append(s.avgs, coprAvg{at: len(c.prog.Aggs), scale: avg.scale})
				c.prog.Aggs = append(c.prog.Aggs, avg.sum, avg.count)
				continue
			}
			a, ok := c.aggregate(agg)
			if !ok {
				return nil
			}
			c.prog.Aggs = append(c.prog.Aggs, a)
			continue
		}
		// Any other expression is GMS's, evaluated over the group's
		// first row: it may read columns only.
		ok := true
		transform.InspectExpr(e, func(x gsql.Expression) bool {
			switch x := x.(type) {
			case gsql.Aggregation, *plan.Subquery, gsql.NonDeterministicExpression:
				ok = false
			case *expression.GetField:
				if pos, found := c.field(x); found {
					keepCol(pos)
				} else {
					ok = false
				}
			}
			return !ok
		})
		if !ok {
			return nil
		}
		s.selected[i] = e
	}
	p, ok := c.finish()
	if !ok {
		return nil
	}
	s.prog = p
	s.pushed = "aggregation"
	if len(p.Filter) > 0 {
		s.pushed = "where, aggregation"
	}
	if access == nil && len(p.Columns) == 0 {
		// Reading no column (COUNT(*) of the whole table), the program
		// counts keys: every row has one entry in each index, so the
		// narrowest index's entries count as well as the rows, with less
		// to read (InnoDB counts its smallest index).
		s.index = narrowestIndex(t.meta)
	}
	return s
}

// narrowestIndex returns the public secondary index of t whose entries
// are estimated clearly narrower than its rows (by a quarter at least),
// the narrowest of them; nil when none is. Every row has exactly one
// entry in each public index (NULLs included), so a count of its entries
// is a count of the rows.
func narrowestIndex(t *tablemeta.Table) *executor.Index {
	schema := t.Schema.Schema
	handle := 9 // an integer handle or hidden row ID
	if t.Primary != nil && len(t.Primary.Ords) > 0 {
		handle = 0
		for _, o := range t.Primary.Ords {
			handle += columnWidth(schema[o].Type, true)
		}
	}
	row := handle // the row's key, then every column's value
	for _, c := range schema {
		row += columnWidth(c.Type, false)
	}
	var out *executor.Index
	best := row * 3 / 4
	for _, ix := range t.Indexes {
		if ix.Exec == nil || ix.Exec.State != executor.IndexPublic {
			continue
		}
		w := handle // the entry's key: the columns, then the handle
		for _, typ := range ix.Types {
			w += columnWidth(typ, true)
		}
		if w < best {
			best, out = w, ix.Exec
		}
	}
	return out
}

// columnWidth estimates the bytes a value of typ takes in a key (inKey:
// fixed-width numbers, strings grown by the memcomparable encoding's
// marker byte every 8) or in a row value (a varint, a length and the
// bytes), strings at their declared length up to 256 bytes. It ranks
// indexes against rows; it measures nothing.
func columnWidth(typ gsql.Type, inKey bool) int {
	switch {
	case types.IsInteger(typ), types.IsTime(typ), types.IsYear(typ):
		if inKey {
			return 9
		}
		return 5
	case types.IsFloat(typ):
		return 9
	case types.IsDecimal(typ):
		return 12
	}
	n := 256
	if st, ok := typ.(gsql.StringType); ok {
		n = int(min(st.MaxByteLength(), 256))
	}
	if inKey {
		return n + n/8 + 1
	}
	return n + 2
}

// aggregate compiles one aggregate.
func (c *coprCompiler) aggregate(a gsql.Aggregation) (copr.Agg, bool) {
	switch a := a.(type) {
	case *aggregation.Count:
		if a.Window() != nil {
			return copr.Agg{}, false
		}
		switch x := a.Child.(type) {
		case *expression.Star:
			return copr.Agg{Func: copr.AggCountStar}, true
		case *expression.Literal:
			if x.Value() != nil {
				return copr.Agg{Func: copr.AggCountStar}, true
			}
			return copr.Agg{}, false
		}
		// COUNT(col) counts non-NULL values of a column of any type.
		i, ok := c.field(a.Child)
		if !ok {
			return copr.Agg{}, false
		}
		arg := copr.Expr{Op: copr.OpColumn, Col: c.column(i)}
		return copr.Agg{Func: copr.AggCount, Arg: &arg}, true
	case *aggregation.Min, *aggregation.Max:
		var child gsql.Expression
		f := copr.AggMin
		if m, ok := a.(*aggregation.Min); ok {
			child = m.Child
			if m.Window() != nil {
				return copr.Agg{}, false
			}
		} else {
			mx := a.(*aggregation.Max)
			child, f = mx.Child, copr.AggMax
			if mx.Window() != nil {
				return copr.Agg{}, false
			}
		}
		x, _, ok := c.value(child)
		if !ok || x.Op != copr.OpColumn {
			return copr.Agg{}, false
		}
		return copr.Agg{Func: f, Arg: &x}, true
	case *compat.DecimalAgg:
		// SUM of an integer expression: exact partial sums, made the
		// DECIMAL percdb's SUM returns once merged (aggregate). AVG is
		// a sum and a count (average).
		if a.Kind() != "SUM" {
			return copr.Agg{}, false
		}
		x, ok := c.sumArg(a.Child())
		if !ok {
			return copr.Agg{}, false
		}
		return copr.Agg{Func: copr.AggSum, Arg: &x}, true
	}
	return copr.Agg{}, false
}

// sumArg compiles the argument of an exact SUM or AVG: an integer
// expression, or a DECIMAL column, whose values the coprocessor adds as
// exactly as percdb's SUM does (decimals, copr.AggSum).
func (c *coprCompiler) sumArg(e gsql.Expression) (copr.Expr, bool) {
	if x, _, ok := c.value(e); ok {
		return x, true
	}
	i, ok := c.field(e)
	if !ok || !types.IsDecimal(c.schema[i].Type) {
		return copr.Expr{}, false
	}
	return copr.Expr{Op: copr.OpColumn, Col: c.column(i)}, true
}

// pushedAvg is an AVG compiled for the coprocessor: the exact sum and
// the count of its argument's non-NULL values, divided once merged.
type pushedAvg struct {
	sum, count copr.Agg
	scale      int32
}

// average compiles an AVG of an integer expression (percdb's exact
// DecimalAgg, typed DECIMAL as MySQL types it) into partial aggregates
// the coprocessor computes as it does SUM and COUNT: regions are merged by
// adding both, where averages could not be.
func (c *coprCompiler) average(a gsql.Aggregation) (pushedAvg, bool) {
	d, ok := a.(*compat.DecimalAgg)
	if !ok || d.Kind() != "AVG" {
		return pushedAvg{}, false
	}
	typ, ok := d.Type().(gsql.DecimalType)
	if !ok {
		return pushedAvg{}, false
	}
	x, ok := c.sumArg(d.Child())
	if !ok {
		return pushedAvg{}, false
	}
	return pushedAvg{
		sum:   copr.Agg{Func: copr.AggSum, Arg: &x},
		count: copr.Agg{Func: copr.AggCount, Arg: &x},
		scale: int32(typ.Scale()),
	}, true
}

// coprAvg is where a pushed AVG's partials are among a program's
// aggregates: the sum at at, the count after it; scale is the DECIMAL
// scale of the average.
type coprAvg struct {
	at    int
	scale int32
}

// finalAggregates turns merged partials into the aggregates' values, in
// place: a SUM is a DECIMAL, an AVG (a sum and a count among avgs) the
// quotient at the sum's place, NULL over no values, rounded half away
// from zero to its scale as percdb's AVG is (compat.DecimalAgg).
func finalAggregates(p *copr.Program, avgs []coprAvg, aggs []any) []any {
	for i, a := range p.Aggs {
		if n, ok := aggs[i].(int64); ok && a.Func == copr.AggSum {
			aggs[i] = decimal.NewFromInt(n)
		}
	}
	for _, avg := range avgs {
		sum, n := aggs[avg.at], aggs[avg.at+1].(int64)
		if n == 0 || sum == nil {
			aggs[avg.at] = nil
			continue
		}
		aggs[avg.at] = sum.(decimal.Decimal).DivRound(decimal.NewFromInt(n), avg.scale)
	}
	return aggs
}

// coprScan is a leaf that runs operators over a full scan of t in the
// coprocessor; see the comment at the top of the file.
type coprScan struct {
	// orig is the plan it replaced, run instead when the read must lock.
	orig gsql.Node
	t    *Table
	// access is the static primary-key lookup whose ranges are read; nil
	// for a full scan.
	access *plan.IndexedTableAccess
	// index, set for a full scan by a program that reads no column, is
	// the secondary index whose entries are read instead of the rows
	// (narrowestIndex).
	index  *executor.Index
	prog   *copr.Program
	schema gsql.Schema
	// ids are the column ids of schema's columns, those GMS gave the
	// rows of the node replaced (ProjectedExprs), 0 where unknown.
	ids []gsql.ColumnId
	// pushed names what runs in the coprocessor, for EXPLAIN.
	pushed string
	// early: what reads the scan's rows may stop before the last (a
	// LIMIT is above): it is read in small pages first, in one walk
	// rather than in parallel parts read ahead.
	early bool

	// An aggregation's rows: selected are the GroupBy's expressions over
	// a row of width table columns (the kept ones at keepPos) followed
	// by the final aggregates. countDistinct: the program's groups are
	// the distinct values of one column, counted. avgs are the pushed
	// AVGs, each a sum and a count among the aggregates.
	selected      []gsql.Expression
	keepPos       []int
	width         int
	countDistinct bool
	avgs          []coprAvg
}

var (
	_ explain.Pushed = (*coprScan)(nil)
	_ gsql.Projector = (*coprScan)(nil)
)

// ProjectedExprs implements sql.Projector: a column of each of the scan's
// rows, with the id GMS gave it, by which GMS's assignment of execution
// indexes finds it (see the comment at the top of the file). A column of
// id 0 is found by its name.
func (s *coprScan) ProjectedExprs() []gsql.Expression {
	out := make([]gsql.Expression, len(s.schema))
	for i, c := range s.schema {
		gf := expression.NewGetFieldWithTable(i, 0, c.Type, c.DatabaseSource, c.Source, c.Name, c.Nullable)
		if i < len(s.ids) {
			gf = gf.WithId(s.ids[i]).(*expression.GetField)
		}
		out[i] = gf
	}
	return out
}

// scanColumnIDs returns the column ids of the rows of n, a read that
// scanned accepts, as GMS numbers them when it assigns execution
// indexes: a table alias's are its table's; a table's are its set of
// column ids, one per column of its schema, except that a table read
// with a projection (fewer columns than the whole table's) numbers each
// column by its place in the whole table from the set's first id. 0
// where they cannot be told (the column is then found by its name).
func scanColumnIDs(n gsql.Node) []gsql.ColumnId {
	if ta, ok := n.(*plan.TableAlias); ok {
		n = ta.Child
	}
	sch := n.Schema()
	ids := make([]gsql.ColumnId, len(sch))
	tn, ok := n.(plan.TableIdNode)
	if !ok {
		return ids
	}
	cols := tn.Columns()
	first, ok := cols.Next(1)
	if !ok {
		return ids
	}
	if t, ok := n.(gsql.TableNode); ok {
		if pk, ok := t.UnderlyingTable().(gsql.PrimaryKeyTable); ok && len(pk.PrimaryKeySchema().Schema) != len(sch) {
			whole := pk.PrimaryKeySchema().Schema
			for i, c := range sch {
				if ord := whole.IndexOfColName(c.Name); ord >= 0 {
					ids[i] = first + gsql.ColumnId(ord)
				}
			}
			return ids
		}
	}
	if cols.Len() != len(sch) {
		return ids
	}
	i := 0
	cols.ForEach(func(id gsql.ColumnId) {
		ids[i] = id
		i++
	})
	return ids
}

// projectedIDs returns the ids of a projection's expressions (a
// GroupBy's), 0 for one without.
func projectedIDs(exprs []gsql.Expression) []gsql.ColumnId {
	ids := make([]gsql.ColumnId, len(exprs))
	for i, e := range exprs {
		if x, ok := e.(gsql.IdExpression); ok {
			ids[i] = x.Id()
		}
	}
	return ids
}

// Resolved implements sql.Node.
func (s *coprScan) Resolved() bool { return true }

// Schema implements sql.Node.
func (s *coprScan) Schema() gsql.Schema { return s.schema }

// Children implements sql.Node: a leaf, so that no later rule rewrites
// what it replaced.
func (s *coprScan) Children() []gsql.Node { return nil }

// WithChildren implements sql.Node.
func (s *coprScan) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), 0)
	}
	return s, nil
}

// IsReadOnly implements sql.Node.
func (s *coprScan) IsReadOnly() bool { return true }

// String implements sql.Node: the plan it replaced, and what the
// coprocessor evaluates.
func (s *coprScan) String() string {
	p := gsql.NewTreePrinter()
	_ = p.WriteNode("Coprocessor(%s)", s.pushed)
	_ = p.WriteChildren(s.orig.String())
	return p.String()
}

// Replaced returns the plan the scan replaced (explain.Pushed).
func (s *coprScan) Replaced() gsql.Node { return s.orig }

// PushedDown names what runs in the coprocessor (explain.Pushed).
func (s *coprScan) PushedDown() string { return s.pushed }

// EntriesOf names the index whose entries are read instead of the rows,
// "" for none (explain.IndexPushed).
func (s *coprScan) EntriesOf() string {
	if s.index == nil {
		return ""
	}
	return s.index.Name
}

// mustLock reports whether the statement locks what it reads, which the
// coprocessor does not.
func (s *coprScan) mustLock(ctx *gsql.Context, tx *Transaction) bool {
	sess, _ := sessionOf(ctx)
	return (s.t.lockReads && tx.stmtOpen) || (sess != nil && sess.forUpdate && sess.inExplicitTransaction())
}

// coprRowIter yields the rows of a coprScan.
type coprRowIter struct {
	s      *coprScan
	k      *txn.Txn
	ranges []keyRange // the ranges not yet read
	// pointBatch is the most primary-key points the next batched point
	// read takes (nextPoints).
	pointBatch int
	// out walks the outputs of the range being read.
	out  copr.Outputs
	sess *Session
	rows []gsql.Row
	pos  int
	done bool
}

// buildCopr returns the row iterator of s, or of the plan it replaced
// when the read must lock.
func (b *compatBuilder) buildCopr(ctx *gsql.Context, s *coprScan, row gsql.Row) (gsql.RowIter, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	if s.mustLock(ctx, tx) {
		return b.gms.Build(ctx, s.orig, row)
	}
	k, err := tx.txn(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	ranges, err := s.ranges(ctx)
	if err != nil {
		return nil, err
	}
	sess, _ := sessionOf(ctx)
	it := &coprRowIter{s: s, k: k, ranges: ranges, sess: sess, pointBatch: maxLookupBatch}
	if s.early {
		it.pointBatch = firstEarlyPage
	}
	if s.prog.Aggregate {
		err := it.aggregate(ctx)
		it.close()
		if err != nil {
			return nil, err
		}
		it.done = true
	}
	return it, nil
}

// ranges returns the key ranges s reads, in key order.
func (s *coprScan) ranges(ctx *gsql.Context) ([]keyRange, error) {
	if s.access == nil {
		markFullScan(ctx)
		if s.index != nil {
			r, err := s.t.meta.Exec.IndexRange(s.index, executor.Bound{}, executor.Bound{})
			if err != nil {
				return nil, err
			}
			return []keyRange{{KeyRange: r}}, nil
		}
		return []keyRange{{KeyRange: s.t.meta.Exec.RowRange()}}, nil
	}
	lookup, err := s.access.GetLookup(ctx, nil)
	if err != nil {
		return nil, err
	}
	mr, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("table %s: unsupported ranges %T", s.t.Name(), lookup.Ranges)
	}
	if lookup.IsEmptyRange {
		return nil, nil
	}
	if wholeIndex(mr) {
		markFullScan(ctx)
	}
	return keyRanges(ctx, s.t.meta, s.t.meta.Primary, mr)
}

// next returns the next output of the program over the ranges, or
// io.EOF after the last.
func (it *coprRowIter) next(ctx *gsql.Context) ([]byte, error) {
	for {
		if it.out == nil {
			if len(it.ranges) == 0 {
				return nil, io.EOF
			}
			var out copr.Outputs
			var err error
			if keys := it.nextPoints(); keys != nil {
				out, err = copr.RunPoints(ctx, it.k, it.s.t.meta.Exec, keys, it.s.prog)
			} else if rs := it.nextRanges(); len(rs) > 1 {
				out, err = copr.RunRanges(ctx, it.k, it.s.t.meta.Exec, rs, it.s.prog)
			} else {
				out, err = it.start(ctx, rs[0])
			}
			if err != nil {
				return nil, toSQLError(err)
			}
			it.out = out
		}
		data, err := it.out.Next(ctx)
		if err == io.EOF {
			it.close()
			continue
		}
		if err != nil {
			return nil, toSQLError(err)
		}
		return data, nil
	}
}

// nextPoints takes the primary-key points at the head of the ranges (an
// IN list or row IN over the whole key), at most pointBatch of them, and
// returns their row keys, or nil when the next range is not such a
// point. They are read with one batched point read and one evaluation
// (copr.RunPoints), not a coprocessor request, and a compilation of the
// program, each. A reader that may stop early (s.early) takes a first
// batch of firstEarlyPage points, each next one twice as many.
func (it *coprRowIter) nextPoints() [][]byte {
	var keys [][]byte
	for len(it.ranges) > 0 && len(keys) < it.pointBatch && it.s.index == nil && it.ranges[0].point {
		keys = append(keys, it.ranges[0].Start)
		it.ranges = it.ranges[1:]
	}
	if keys != nil {
		it.pointBatch = min(2*it.pointBatch, maxLookupBatch)
	}
	return keys
}

// nextRanges takes the ranges at the head of the ranges that are not
// primary-key points (nextPoints takes those), at most maxLookupBatch
// of them: an IN list or an OR of ranges on an index or a key prefix.
// More than one are evaluated as one program in one coprocessor request
// per region (copr.RunRanges), not a request, and a compilation of the
// program, each. A reader that may stop early (s.early) takes one range,
// read in growing pages.
func (it *coprRowIter) nextRanges() []executor.KeyRange {
	rs := []executor.KeyRange{it.ranges[0].KeyRange}
	it.ranges = it.ranges[1:]
	for len(it.ranges) > 0 && len(rs) < maxLookupBatch && !it.s.early && !(it.s.index == nil && it.ranges[0].point) {
		// keyRanges makes them sorted and disjoint; a list that were not
		// is read range by range.
		next := append(rs, it.ranges[0].KeyRange)
		if !copr.Disjoint(next[len(next)-2:]) {
			break
		}
		rs = next
		it.ranges = it.ranges[1:]
	}
	return rs
}

// start begins the walk of r: cut into as many sub-ranges as there are
// cores, evaluated in parallel (copr.RunParallel), for a full scan of a
// table of at least rowCountCap rows (by the planner's row count) whose
// program reads its range to the end; in one walk otherwise, in growing
// pages when the reader may stop early.
func (it *coprRowIter) start(ctx *gsql.Context, r executor.KeyRange) (copr.Outputs, error) {
	s, n := it.s, runtime.GOMAXPROCS(0)
	if s.early {
		return copr.RunPaged(ctx, it.k, s.t.meta.Exec, r, s.prog, firstEarlyPage)
	}
	if n > 1 && s.access == nil && (s.prog.Limit == 0 || len(s.prog.OrderBy) > 0) &&
		s.t.db != nil && s.t.db.provider.rowCounts.get(ctx, s.t) >= rowCountCap {
		parts, err := copr.Split(ctx, it.k, r, n)
		if err != nil {
			return nil, err
		}
		if len(parts) > 1 {
			return copr.RunParallel(ctx, it.k, s.t.meta.Exec, parts, s.prog)
		}
	}
	out, _, err := copr.Run(ctx, it.k, s.t.meta.Exec, r, s.prog)
	return out, err
}

// mergeOutputs merges the outputs of an aggregating program p, which
// next gives until io.EOF, into its groups: each group is a buffered row,
// within the query's memory bound (1038).
func mergeOutputs(ctx *gsql.Context, p *copr.Program, next func() ([]byte, error)) (*copr.Merger, error) {
	m := copr.NewMerger(p, func() error {
		if !ctx.Memory.HasAvailable() {
			return gsql.ErrNoMemoryAvailable.New()
		}
		return nil
	})
	for {
		data, err := next()
		if err == io.EOF {
			break
		}
		if err == nil {
			err = m.Add(data)
		}
		if err != nil {
			return nil, toSQLError(err)
		}
	}
	if err := m.Flush(); err != nil {
		return nil, toSQLError(err)
	}
	return m, nil
}

// keptRow returns a row of n columns holding the columns a program kept
// (vals) at their row positions (pos), NULL elsewhere.
func keptRow(n int, pos []int, vals []any) gsql.Row {
	row := make(gsql.Row, n)
	for i, p := range pos {
		row[p] = vals[i]
	}
	return row
}

// aggregate reads every output and computes the rows of the groups.
func (it *coprRowIter) aggregate(ctx *gsql.Context) error {
	s := it.s
	m, err := mergeOutputs(ctx, s.prog, func() ([]byte, error) { return it.next(ctx) })
	if err != nil {
		return err
	}
	if s.countDistinct {
		it.rows = []gsql.Row{{int64(m.Len())}}
		return nil
	}
	return m.Each(func(keep, aggs []any) error {
		full := keptRow(s.width+len(aggs), s.keepPos, keep)
		copy(full[s.width:], finalAggregates(s.prog, s.avgs, aggs))
		out := make(gsql.Row, len(s.selected))
		for i, e := range s.selected {
			v, err := e.Eval(ctx, full)
			if err != nil {
				return err
			}
			out[i] = v
		}
		it.rows = append(it.rows, out)
		return nil
	})
}

// Next implements sql.RowIter.
func (it *coprRowIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	for it.pos >= len(it.rows) {
		if it.done {
			return nil, io.EOF
		}
		data, err := it.next(ctx)
		if err == io.EOF {
			it.done = true
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		it.rows, it.pos = it.rows[:0], 0
		err = copr.DecodeRows(data, len(it.s.prog.Output), func(r []any) error {
			it.rows = append(it.rows, gsql.Row(r))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	it.pos++
	return it.rows[it.pos-1], nil
}

// boundNextPage tells a scan read in growing pages (copr.RunPaged) that
// its reader wants at most n more rows (a batched lookup join's next
// batch under a LIMIT): the next page asks for no more than those of
// them not already in hand.
func (it *coprRowIter) boundNextPage(n int) error {
	pb, ok := it.out.(copr.PageBound)
	if !ok {
		return nil
	}
	if left := n - (len(it.rows) - it.pos); left > 0 {
		return pb.BoundNextPage(left)
	}
	return nil
}

// Close implements sql.RowIter.
func (it *coprRowIter) Close(*gsql.Context) error {
	it.close()
	return nil
}

// close releases the walk and counts the rows it read in the session's
// Rows_examined (once).
func (it *coprRowIter) close() {
	if it.out == nil {
		return
	}
	if it.sess != nil {
		it.sess.rowsExamined.Add(uint64(it.out.Examined()))
	}
	it.out.Close()
	it.out = nil
}
