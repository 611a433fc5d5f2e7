package plancache

import (
	"fmt"
	"reflect"
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/planrules"
)

// The plan cache of prepared statements. GMS v0.20.0 keeps a prepared
// statement's syntax tree only (Engine.PreparedDataCache): every
// COM_STMT_EXECUTE binds it again and runs the whole analyzer, about half
// of the CPU a 100-row range query costs on the GMS path. MySQL and TiDB
// analyse a prepared statement once and execute the plan with each
// execution's parameter values; so does percdb, for the plans where that
// gives the answer a fresh analysis would.
//
// A statement's first execution (per parameter types) is bound and
// analysed by package sql rather than by GMS, with the parameters bound to literals
// of percdb's making, so that the analysed plan can be searched for them
// by identity (and for the literals GMS's binder converts them to,
// BoundParams). The analysis leaves out the coprocessor pushdown, which
// package sql's runBound applies to each execution's plan (its programs hold values).
// The plan is kept (Plan) when it is a template that new values can
// be put into without changing what it means:
//
//   - it is made of nodes whose execution state lives in their iterators,
//     not in the nodes (cacheableNode: projections, filters, table and
//     index reads, sorts, limits, grouping, distinct, non-hash joins, and
//     the Update, UpdateSource and DeleteFrom of a one-table write, whose
//     table editor rowexec makes at each execution); a subquery, a hash
//     lookup or a cached join input keeps rows in the node, and GMS hangs
//     triggers and foreign keys off a write plan (TriggerExecutor,
//     ForeignKeyHandler); such plans are analysed every time, as before;
//   - every parameter is still in the plan as the literal it was bound
//     to (or the binder's conversion of it): a rule that folded one, took
//     its value (ORDER BY ?'s position) or converted it leaves a plan
//     that depends on the value, which is not cached;
//   - every static index read sits right under the Filter (or a
//     TableAlias under it) that holds the whole WHERE clause (percdb's lookups are not precise, so GMS keeps
//     it), and its ranges can be derived from that filter again by
//     RebuildLookup, which must give exactly GMS's ranges for the first
//     execution's values; or it reads the whole index (wholeIndex), as
//     for an ORDER BY by the index's columns.
//
// An execution with new values substitutes them for the literals
// (expressions are rebuilt through WithChildren, and a HashInTuple, whose
// WithChildren keeps the old set, with NewHashInTuple) and derives each static index read's ranges from its
// filter again. Should the new ranges differ in shape from the cached ones
// (another number of ranges, a column no longer pinned to one value, an
// empty range), the plan's choices (the index, a sort left out because the
// index gives the order, MIN from one row) may rest on the old shape, and
// the statement is analysed afresh instead (a recheck), as TiDB does for a
// plan that depends on its parameters.
//
// A plan is used only with the catalog it was analysed against (the
// transaction's catalog.Catalog, which a schema change replaces, its own DDL
// included), the current database it was analysed in, and the session
// variables and user variables as they were (any SET starts a new epoch,
// sql_mode and collations included); sessions with temporary tables, or
// whose user lacks the global privileges that let the fast path skip
// GMS's checks, do not use it (package sql's mayUseFastPath). Plans are per session and
// a session runs one statement at a time, so no plan is shared between
// two executions at once; the cached plan itself is never changed, each
// execution builds its own copy of the parts that hold values.

// maxCachedStatements bounds a session's plan cache; maxPlansPerStatement
// the plans kept for one statement, one per parameter types (GMS types an
// integer parameter by its magnitude: int8, int16, ...).
const (
	maxCachedStatements  = 256
	maxPlansPerStatement = 8
)

// Cache is a session's cache of analysed prepared statements, by
// statement text.
type Cache struct {
	stmts map[string]*Stmt
}

// Stmt holds the plans of one prepared statement.
type Stmt struct {
	// Plans are the statement's plans, the oldest first.
	Plans []*Plan
	// Never is set for a statement whose plans are not cached (not a
	// SELECT or a one-table UPDATE or DELETE, package sql's cachedKind):
	// the cache leaves it to GMS without a look.
	Never bool
	// failed counts the analyses in a row whose plans could not be
	// cached, under the catalog and epoch failedUnder: after
	// maxUncacheable the statement goes to GMS without one until either
	// changes (a plan's shape may depend on the values, so one failure
	// does not condemn it).
	failed      int
	failedUnder Key
}

// Key is what a statement's plans were found uncacheable under: the
// catalog and the session's epoch of variables.
type Key struct {
	Catalog *catalog.Catalog
	Epoch   uint64
}

// maxUncacheable is how many analyses in a row may give a statement
// plans that cannot be cached before the cache stops trying.
const maxUncacheable = 4

// GiveUp reports whether the statement is known not to give cacheable
// plans under key.
func (st *Stmt) GiveUp(key Key) bool {
	return st.failed >= maxUncacheable && st.failedUnder == key
}

// Uncacheable records an analysis under key whose plan was not cached.
func (st *Stmt) Uncacheable(key Key) {
	if st.failedUnder != key {
		st.failed, st.failedUnder = 0, key
	}
	st.failed++
}

// Plan is one analysed plan and what it was analysed under: the
// catalog, the current database and the session's epoch of variables
// (package sql sets them).
type Plan struct {
	Catalog *catalog.Catalog
	DB      string
	Epoch   uint64
	// Stats is the node's generation of table statistics the plan was
	// analysed under (statistics.Cache.Generation): ANALYZE TABLE, or
	// statistics another node stored, change the plan GMS would choose.
	Stats uint64
	// Types are the parameters' types, by name (v1, v2, ...); params the
	// literals of the plan that hold their values.
	Types  map[string]gsql.Type
	params map[*expression.Literal]ParamRef
	plan   gsql.Node
	// shapes are the shapes of the static index reads' ranges, by the
	// read's position in a walk of the plan.
	shapes []string
	// Fields are the result's column definitions, learnt from the first
	// execution (GMS's); nil until then (package sql's boundexec.go).
	Fields *ResultFields
	// Storeless says the plan reads nothing from the store (no table, no
	// subquery: SELECT 1, DO 1, SELECT DATABASE()), so that an autocommit
	// execution needs no snapshot: package sql then takes the catalog the
	// plan was cached under from the node's cache, without a timestamp and
	// a read of the schema version.
	Storeless bool
	// Warnings are the warnings the analysis of a plan without
	// parameters gave (a text statement's: package sql's
	// textplancache.go), the most recent first, which each execution
	// gives again.
	Warnings []*gsql.Warning
}

// ResultFields are the column definitions of a cached plan's result, as
// GMS's handler sent them for its first execution.
type ResultFields struct {
	Fields []*querypb.Field
}

// ParamRef is a literal of a cached plan that holds a parameter's value:
// the literal the parameter was bound to, or (converted) the one GMS's
// binder made of it, converted to the type of the column it is compared
// with.
type ParamRef struct {
	name      string
	converted bool
}

// Get returns the plans of query.
func (pc *Cache) Get(query string) *Stmt {
	if pc.stmts == nil {
		pc.stmts = make(map[string]*Stmt)
	}
	st := pc.stmts[query]
	if st == nil {
		if len(pc.stmts) >= maxCachedStatements {
			for k := range pc.stmts {
				delete(pc.stmts, k)
				break
			}
		}
		st = &Stmt{}
		pc.stmts[query] = st
	}
	return st
}

// Put adds p, dropping the oldest plan when the statement has too many,
// and forgets the analyses that failed before it.
func (st *Stmt) Put(p *Plan) {
	if len(st.Plans) >= maxPlansPerStatement {
		st.Plans = st.Plans[1:]
	}
	st.Plans = append(st.Plans, p)
	st.failed = 0
}

// BindValues returns the expressions GMS binds the parameters of prepare
// to, as its handler makes them (querypb value, then its SQL literal,
// then the binder's expression for it), each a literal of its own.
func BindValues(binder *planbuilder.Builder, prepare *mysql.PrepareData) (map[string]gsql.Expression, error) {
	exprs := make(map[string]sqlparser.Expr, len(prepare.BindVars))
	for name, bv := range prepare.BindVars {
		v, err := sqltypes.BindVariableToValue(bv)
		if err != nil {
			return nil, err
		}
		x, err := sqlparser.ExprFromValue(v)
		if err != nil {
			return nil, err
		}
		exprs[name] = x
	}
	binder.SetBindings(exprs)
	out := binder.BindCtx().Bindings
	for name, x := range out {
		lit, ok := x.(*expression.Literal)
		if !ok {
			return nil, errNotLiteral
		}
		// A literal of its own, so that two parameters never share one.
		out[name] = expression.NewLiteral(lit.Value(), lit.Type())
	}
	return out, nil
}

// errNotLiteral is BindValues's error for a parameter GMS's binder did
// not make a literal of.
var errNotLiteral = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "parameter is not a literal")

// ParamTypesMatch reports whether values have the types of a plan's
// parameters.
func ParamTypesMatch(types map[string]gsql.Type, values map[string]gsql.Expression) bool {
	if len(types) != len(values) {
		return false
	}
	for name, v := range values {
		t, ok := types[name]
		if !ok || !t.Equals(v.Type()) {
			return false
		}
	}
	return true
}

// NewPlan returns n as a cached plan whose parameters are the
// literals of values, or false when n cannot be one (see above).
// stateful tells the expressions of package sql's own making that keep
// rows of an execution in the expression, as GMS's subqueries do.
func NewPlan(ctx *gsql.Context, n gsql.Node, values map[string]gsql.Expression, params map[*expression.Literal]ParamRef, stateful func(gsql.Expression) bool) (*Plan, bool) {
	p := &Plan{
		Types:  make(map[string]gsql.Type, len(values)),
		params: params,
		plan:   n,
	}
	for name, v := range values {
		p.Types[name] = v.Type()
	}
	found := make(map[string]bool, len(values))
	ok := true
	transform.Inspect(n, func(n gsql.Node) bool {
		if n == nil || !ok {
			return ok
		}
		if !cacheableNode(n) {
			ok = false
			return false
		}
		if ita, isITA := n.(*plan.IndexedTableAccess); isITA && ita.IsStatic() {
			// Reached other than as a filter's child (below): only a
			// read of the whole index (an ORDER BY read in the index's
			// order) holds no value of the statement's.
			ok = wholeIndex(ctx, ita)
			return false
		}
		if ex, isEx := n.(gsql.Expressioner); isEx {
			for _, e := range ex.Expressions() {
				if !p.scanExpr(e, found, stateful) {
					ok = false
					return false
				}
			}
		}
		if f, isFilter := n.(*plan.Filter); isFilter {
			if ita, table, _, isRead := FilteredRead(f); isRead {
				shape, same := checkRebuild(ctx, f.Expression, ita, table)
				if !same {
					ok = false
					return false
				}
				p.shapes = append(p.shapes, shape)
				if ex, isEx := gsql.Node(ita).(gsql.Expressioner); isEx && len(ex.Expressions()) > 0 {
					ok = false
				}
				return false // the read has no children to inspect
			}
		}
		return true
	})
	if !ok || len(found) != len(values) {
		return nil, false
	}
	return p, true
}

// scanExpr records the parameters e holds and reports whether e may be
// part of a cached plan: no subquery (which caches its rows in the
// expression), nor an expression stateful tells.
func (p *Plan) scanExpr(e gsql.Expression, found map[string]bool, stateful func(gsql.Expression) bool) bool {
	ok := true
	gsql.Inspect(e, func(e gsql.Expression) bool {
		if stateful(e) {
			ok = false
			return ok
		}
		switch e := e.(type) {
		case *plan.Subquery, *plan.ExistsSubquery, *plan.InSubquery, *expression.BindVar, *expression.ProcedureParam:
			ok = false
		case *expression.Literal:
			if ref, isParam := p.params[e]; isParam {
				found[ref.name] = true
			}
		}
		return ok
	})
	return ok
}

// cacheableNode reports whether n keeps no state of an execution in the
// node itself, so that one plan may run again and again.
func cacheableNode(n gsql.Node) bool {
	switch n := n.(type) {
	case *plan.Project, *plan.Filter, *plan.IndexedTableAccess, *plan.ResolvedTable, *plan.TableAlias,
		*plan.Sort, *plan.TopN, *plan.Limit, *plan.Offset, *plan.GroupBy, *plan.Distinct, *plan.OrderedDistinct,
		*plan.Having, *compat.CollatedDistinct:
		return true
	case *plan.JoinNode:
		return !n.Op.IsHash() && !n.Op.IsRange()
	case *plan.Update:
		// Its editor is made at each execution (rowexec's buildUpdate);
		// a join's update is not cached.
		return !n.IsJoin
	case *plan.UpdateSource:
		return true
	case *plan.DeleteFrom:
		return !n.HasExplicitTargets()
	}
	return false
}

// Bind returns the cached plan with values in place of its parameters,
// or false when they change the shape of an index read's ranges or the
// binder's conversion refuses a value (GMS reports it). The caller checks
// what else a fresh analysis would refuse (package sql's countsValid).
func (p *Plan) Bind(ctx *gsql.Context, values map[string]gsql.Expression) (gsql.Node, bool, error) {
	subst := func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		return transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			x, isLit := e.(*expression.Literal)
			if !isLit {
				return e, transform.SameTree, nil
			}
			ref, ok := p.params[x]
			if !ok {
				return e, transform.SameTree, nil
			}
			v := values[ref.name]
			if !ref.converted {
				return v, transform.NewTree, nil
			}
			cv, err := convertParam(ctx, v.(*expression.Literal).Value(), x.Type())
			if err != nil {
				return nil, transform.SameTree, err
			}
			return expression.NewLiteral(cv, x.Type()), transform.NewTree, nil
		})
	}
	shape := 0
	ok := true
	n, _, err := transform.Node(p.plan, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		same := transform.SameTree
		if ex, isEx := n.(gsql.Expressioner); isEx {
			exprs := ex.Expressions()
			var changed []gsql.Expression
			for i, e := range exprs {
				ne, same, err := subst(e)
				if err != nil {
					return nil, transform.SameTree, err
				}
				if same == transform.NewTree {
					if changed == nil {
						changed = append([]gsql.Expression(nil), exprs...)
					}
					changed[i] = ne
				}
			}
			if changed != nil {
				changed, err := rebuildHashIns(ctx, changed)
				if err != nil {
					return nil, transform.SameTree, err
				}
				nn, err := ex.WithExpressions(changed...)
				if err != nil {
					return nil, transform.SameTree, err
				}
				n, same = nn, transform.NewTree
			}
		}
		f, isFilter := n.(*plan.Filter)
		if !isFilter {
			return n, same, nil
		}
		ita, table, replace, isRead := FilteredRead(f)
		if !isRead {
			return n, same, nil
		}
		cur, err := ita.GetLookup(ctx, nil)
		if err != nil {
			return nil, transform.SameTree, err
		}
		lookup, built := RebuildLookup(ctx, f.Expression, table, cur)
		if !built || shape >= len(p.shapes) || rangesShape(ctx, lookup) != p.shapes[shape] {
			ok = false
			return n, same, nil
		}
		shape++
		nita, err := plan.NewStaticIndexedAccessForTableNode(ctx, ita.TableNode, lookup)
		if err != nil {
			return nil, transform.SameTree, err
		}
		nn, err := replace(nita)
		return nn, transform.NewTree, err
	})
	if err != nil || !ok {
		// A value the binder's conversion refuses: GMS reports it.
		return nil, false, nil
	}
	return n, true, nil
}

// rebuildHashIns builds every HashInTuple in exprs anew from its
// children: its set of values is made when it is constructed, and
// WithChildren copies it.
func rebuildHashIns(ctx *gsql.Context, exprs []gsql.Expression) ([]gsql.Expression, error) {
	for i, e := range exprs {
		ne, _, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			hit, ok := e.(*expression.HashInTuple)
			if !ok {
				return e, transform.SameTree, nil
			}
			ch := hit.Children()
			nh, err := expression.NewHashInTuple(ctx, ch[0], ch[1])
			if err != nil {
				return nil, transform.SameTree, err
			}
			return nh, transform.NewTree, nil
		})
		if err != nil {
			return nil, err
		}
		exprs[i] = ne
	}
	return exprs, nil
}

// wholeIndex reports whether ita reads its whole index: one range,
// every column of it unbounded (GMS's read of a table in an index's
// order for an ORDER BY or a join's sorted side, none of whose bounds
// came from a value of the statement).
func wholeIndex(ctx *gsql.Context, ita *plan.IndexedTableAccess) bool {
	l, err := ita.GetLookup(ctx, nil)
	if err != nil || l.Index == nil || l.IsSpatialLookup || l.IsEmptyRange {
		return false
	}
	ranges, ok := l.Ranges.(gsql.MySQLRangeCollection)
	if !ok || len(ranges) != 1 {
		return false
	}
	for _, ce := range ranges[0] {
		if ce.Type() != gsql.RangeType_All {
			return false
		}
	}
	return len(ranges[0]) > 0
}

// FilteredRead returns the static index read right under f (or under a
// TableAlias under f), the name its columns go by in f, and a function
// that returns f with another read in its place.
func FilteredRead(f *plan.Filter) (*plan.IndexedTableAccess, string, func(gsql.Node) (gsql.Node, error), bool) {
	switch c := f.Child.(type) {
	case *plan.IndexedTableAccess:
		if c.IsStatic() {
			return c, c.Name(), func(n gsql.Node) (gsql.Node, error) { return f.WithChildren(n) }, true
		}
	case *plan.TableAlias:
		if ita, ok := c.Child.(*plan.IndexedTableAccess); ok && ita.IsStatic() {
			return ita, c.Name(), func(n gsql.Node) (gsql.Node, error) {
				a, err := c.WithChildren(n)
				if err != nil {
					return nil, err
				}
				return f.WithChildren(a)
			}, true
		}
	}
	return nil, "", nil, false
}

// checkRebuild derives ita's ranges from its filter again and reports
// their shape and whether they are exactly GMS's.
func checkRebuild(ctx *gsql.Context, filter gsql.Expression, ita *plan.IndexedTableAccess, table string) (string, bool) {
	cur, err := ita.GetLookup(ctx, nil)
	if err != nil || cur.Index == nil || cur.IsSpatialLookup {
		return "", false
	}
	lookup, ok := RebuildLookup(ctx, filter, table, cur)
	if !ok {
		return "", false
	}
	a, ok1 := lookup.Ranges.(gsql.MySQLRangeCollection)
	b, ok2 := cur.Ranges.(gsql.MySQLRangeCollection)
	if !ok1 || !ok2 || lookup.IsEmptyRange != cur.IsEmptyRange || lookup.IsPointLookup != cur.IsPointLookup {
		return "", false
	}
	if same, err := a.Equals(b); err != nil || !same {
		return "", false
	}
	return rangesShape(ctx, lookup), true
}

// rangesShape describes what the plan's choices may rest on in a
// lookup's ranges: how many there are and, column by column, the kind of
// each range and whether it pins the column to one value.
func rangesShape(ctx *gsql.Context, l gsql.IndexLookup) string {
	ranges, ok := l.Ranges.(gsql.MySQLRangeCollection)
	if !ok {
		return "?"
	}
	var b strings.Builder
	for _, r := range ranges {
		for _, ce := range r {
			b.WriteByte(byte('a' + ce.Type()))
			if _, point := planrules.PointValue(ctx, ce); point {
				b.WriteByte('=')
			}
		}
		b.WriteByte(';')
	}
	if l.IsEmptyRange {
		b.WriteByte('0')
	}
	return b.String()
}

// RebuildLookup derives the ranges of cur's index from filter's
// conjuncts on the columns of table (the read's name or alias) as GMS's
// range builder does: equalities, IN lists, comparisons, BETWEEN and IS
// NULL with values that do not depend on a row.
func RebuildLookup(ctx *gsql.Context, filter gsql.Expression, table string, cur gsql.IndexLookup) (gsql.IndexLookup, bool) {
	idx := cur.Index
	exprs := idx.Expressions()
	b := gsql.NewMySQLIndexBuilder(idx)
	for _, c := range expression.SplitConjunction(filter) {
		if !applyConjunct(ctx, b, c, table, exprs) {
			return gsql.IndexLookup{}, false
		}
	}
	l, err := b.Build(ctx)
	if err != nil || l.Index == nil {
		return gsql.IndexLookup{}, false
	}
	// GMS's builder merges the ranges of an IN list into sorted,
	// disjoint ones; the index builder leaves them in list order.
	if rs, ok := l.Ranges.(gsql.MySQLRangeCollection); ok && len(rs) > 1 {
		merged, err := gsql.RemoveOverlappingRanges(rs...)
		if err != nil {
			return gsql.IndexLookup{}, false
		}
		l.Ranges = merged
	}
	l.IsEmptyRange = allEmpty(l.Ranges)
	l.IsReverse = cur.IsReverse
	return l, true
}

// allEmpty reports whether every range of rs is empty, as GMS's
// IndexLookup.IsEmptyRange says.
func allEmpty(rs gsql.RangeCollection) bool {
	ranges, ok := rs.(gsql.MySQLRangeCollection)
	if !ok {
		return false
	}
	for _, r := range ranges {
		if empty, err := r.IsEmpty(); err != nil || !empty {
			return false
		}
	}
	return true
}

// applyConjunct narrows b by c when c bounds one of the index's columns
// (exprs) by values; it reports false when c's values cannot be read.
func applyConjunct(ctx *gsql.Context, b *gsql.MySQLIndexBuilder, c gsql.Expression, table string, exprs []string) bool {
	column := func(e gsql.Expression) string {
		gf, ok := e.(*expression.GetField)
		if !ok || !strings.EqualFold(gf.Table(), table) {
			return ""
		}
		for _, x := range exprs {
			name := x
			if i := strings.LastIndexByte(x, '.'); i >= 0 {
				name = x[i+1:]
			}
			if strings.EqualFold(name, gf.Name()) {
				return x
			}
		}
		return ""
	}
	value := func(e gsql.Expression) (any, bool) {
		if !constantExpr(e) {
			return nil, false
		}
		v, err := e.Eval(ctx, nil)
		return v, err == nil
	}
	type cmp struct {
		op          string
		left, right gsql.Expression
	}
	var cm cmp
	switch x := c.(type) {
	case *expression.Equals:
		cm = cmp{"=", x.Left(), x.Right()}
	case *expression.GreaterThan:
		cm = cmp{">", x.Left(), x.Right()}
	case *expression.GreaterThanOrEqual:
		cm = cmp{">=", x.Left(), x.Right()}
	case *expression.LessThan:
		cm = cmp{"<", x.Left(), x.Right()}
	case *expression.LessThanOrEqual:
		cm = cmp{"<=", x.Left(), x.Right()}
	case *expression.Between:
		col := column(x.Val)
		if col == "" {
			return true
		}
		lo, ok1 := value(x.Lower)
		hi, ok2 := value(x.Upper)
		if !ok1 || !ok2 {
			return true
		}
		b.GreaterOrEqual(ctx, col, lo)
		b.LessOrEqual(ctx, col, hi)
		return true
	case *expression.IsNull:
		if col := column(x.Child); col != "" {
			b.IsNull(ctx, col)
		}
		return true
	case *expression.InTuple, *expression.HashInTuple:
		ch := x.Children()
		col := column(ch[0])
		tup, ok := ch[1].(expression.Tuple)
		if col == "" || !ok {
			return true
		}
		vals := make([]any, 0, len(tup))
		for _, e := range tup {
			v, ok := value(e)
			if !ok {
				return true
			}
			vals = append(vals, v)
		}
		b.Equals(ctx, col, vals...)
		return true
	default:
		return true
	}
	col := column(cm.left)
	val := cm.right
	op := cm.op
	if col == "" {
		if col = column(cm.right); col == "" {
			return true
		}
		val = cm.left
		op = map[string]string{"=": "=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}[op]
	}
	v, ok := value(val)
	if !ok {
		return true
	}
	switch op {
	case "=":
		b.Equals(ctx, col, v)
	case ">":
		b.GreaterThan(ctx, col, v)
	case ">=":
		b.GreaterOrEqual(ctx, col, v)
	case "<":
		b.LessThan(ctx, col, v)
	case "<=":
		b.LessOrEqual(ctx, col, v)
	}
	return true
}

// constantExpr reports whether e's value depends on no row: no column,
// subquery or unbound parameter.
func constantExpr(e gsql.Expression) bool {
	ok := true
	gsql.Inspect(e, func(e gsql.Expression) bool {
		switch e.(type) {
		case *expression.GetField, *expression.BindVar, *expression.ProcedureParam, *plan.Subquery:
			ok = false
		}
		return ok
	})
	return ok
}

// BoundParams finds the literals of bound, the statement bound to values,
// that hold parameters: the literals of values themselves, and those GMS's
// binder made of them by converting one to the type of the column it is
// compared with (planbuilder's buildComparison: col = ? with a parameter
// narrower than the column). To tell such a literal from a constant of
// the statement, the statement is bound a second time with other values
// of the same types (probes): a literal whose value differs between the
// two bindings came from the parameter whose two values convert to its
// two values. Parameters of types without probes (NULL, DECIMAL,
// temporal) are found by identity only.
func BoundParams(ctx *gsql.Context, e *sqle.Engine, parsed sqlparser.Statement, query string, values map[string]gsql.Expression, bound gsql.Node) map[*expression.Literal]ParamRef {
	refs := make(map[*expression.Literal]ParamRef, len(values))
	for name, v := range values {
		refs[v.(*expression.Literal)] = ParamRef{name: name}
	}
	probes, ok := probeValues(ctx, values)
	if !ok {
		return refs
	}
	binder := planbuilder.New(ctx, e.Analyzer.Catalog, e.EventScheduler, e.Parser)
	binder.SetBindingsWithExpr(probes)
	other, _, err := binder.BindOnly(parsed, query, nil)
	if err != nil {
		return refs
	}
	a, b := literalsOf(bound), literalsOf(other)
	if len(a) != len(b) {
		return refs
	}
	for i, la := range a {
		lb := b[i]
		if _, ok := refs[la]; ok || !la.Type().Equals(lb.Type()) || reflect.DeepEqual(la.Value(), lb.Value()) {
			continue
		}
		from := ""
		for name, v := range values {
			va, err1 := convertParam(ctx, v.(*expression.Literal).Value(), la.Type())
			vb, err2 := convertParam(ctx, probes[name].(*expression.Literal).Value(), lb.Type())
			if err1 == nil && err2 == nil && reflect.DeepEqual(va, la.Value()) && reflect.DeepEqual(vb, lb.Value()) {
				if from != "" {
					from = "" // two parameters could have made it: leave it
					break
				}
				from = name
			}
		}
		if from != "" {
			refs[la] = ParamRef{name: from, converted: true}
		}
	}
	return refs
}

// convertParam converts a parameter's value to the type of a column, as
// GMS's binder does for a comparison.
func convertParam(ctx *gsql.Context, v any, t gsql.Type) (any, error) {
	cv, _, err := t.Convert(ctx, v)
	if err != nil && !expression.ErrNilOperand.Is(err) {
		return nil, err
	}
	return cv, nil
}

// probeValues returns for each parameter another literal of its type, the
// probes of BoundParams: distinct from each other and from the values.
func probeValues(ctx *gsql.Context, values map[string]gsql.Expression) (map[string]gsql.Expression, bool) {
	out := make(map[string]gsql.Expression, len(values))
	i := 0
	for name, v := range values {
		i++
		t := v.Type()
		var probe any
		switch {
		case types.IsSigned(t):
			probe = int64(-i)
		case types.IsUnsigned(t):
			probe = uint64(i)
		case types.IsFloat(t):
			probe = float64(i) + 0.25
		case types.IsText(t):
			probe = fmt.Sprintf("\x01probe%d", i)
		default:
			return nil, false
		}
		pv, _, err := t.Convert(ctx, probe)
		if err != nil {
			return nil, false
		}
		if reflect.DeepEqual(pv, v.(*expression.Literal).Value()) {
			// The value is the probe: take another one.
			if pv, _, err = t.Convert(ctx, probe2(probe)); err != nil {
				return nil, false
			}
		}
		out[name] = expression.NewLiteral(pv, t)
	}
	return out, true
}

// probe2 is a second probe, for a value equal to the first.
func probe2(p any) any {
	switch p := p.(type) {
	case int64:
		return p - 50
	case uint64:
		return p + 50
	case float64:
		return p + 50
	case string:
		return p + "'"
	}
	return p
}

// literalsOf returns the literals of n's expressions in a fixed order.
func literalsOf(n gsql.Node) []*expression.Literal {
	return appendLiterals(nil, n)
}

// appendLiterals appends the literals of n to out, those of its
// subqueries' plans included (a subquery's plan is not among its
// expression's children, and the binder converts a parameter compared
// with a column inside it as anywhere else).
func appendLiterals(out []*expression.Literal, n gsql.Node) []*expression.Literal {
	transform.Inspect(n, func(n gsql.Node) bool {
		if ex, ok := n.(gsql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				gsql.Inspect(e, func(e gsql.Expression) bool {
					switch e := e.(type) {
					case *expression.Literal:
						out = append(out, e)
					case *plan.Subquery:
						out = appendLiterals(out, e.Query)
					}
					return true
				})
			}
		}
		return true
	})
	return out
}
