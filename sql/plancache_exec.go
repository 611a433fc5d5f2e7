package sql

import (
	"context"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/plancache"
	"github.com/percdb/percdb/sql/planrules"
)

// The plan cache of prepared statements (package plancache, whose doc
// says which plans it keeps and how an execution's values are put into
// them) as the handler uses it: a session's cache and the node's
// counters, the analysis of a statement's first execution, and the
// execution of a plan through GMS's handler.

// planCacheStats are the node's plan cache counters (counters.go).
type planCacheStats struct {
	// hits are executions that ran a cached plan; misses those that
	// analysed the statement and cached the plan; uncacheable those
	// analysed whose plan could not be cached; rechecks those whose new
	// values changed the shape of a cached plan's ranges.
	hits, misses, uncacheable, rechecks atomic.Uint64
}

// planCacheUserVar is the user variable that turns the plan cache off for
// a session when set to 0 or OFF (the differential tests and benchmarks
// compare both).
const planCacheUserVar = "percdb_plan_cache"

// planTemplateKey marks the context of an analysis whose plan is to be a
// plan cache template: coprPushdownRule and trackProcess leave it alone, the
// one because runBound pushes each execution's plan down (its programs
// hold the values), the other because its callbacks would report to the
// process of the analysis.
type planTemplateKey struct{}

// planTemplate reports whether ctx analyses a plan cache template.
func planTemplate(ctx *gsql.Context) bool {
	v, _ := ctx.Value(planTemplateKey{}).(bool)
	return v
}

// skipInPlanTemplate wraps an analyzer rule that a plan cache template
// leaves out.
func skipInPlanTemplate(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		if planTemplate(ctx) {
			return n, transform.SameTree, nil
		}
		return apply(ctx, a, n, scope, sel, qFlags)
	}
}

// boundExecutor is GMS's handler's entry for running an analysed plan.
type boundExecutor interface {
	ComExecuteBound(ctx context.Context, conn *mysql.Conn, query string, bound mysql.BoundQuery, callback mysql.ResultSpoolFn) error
}

// cachedExecute runs a prepared statement's execution from the plan
// cache, analysing and caching its plan on a miss. It reports false when
// the execution is left to GMS's own path: the plan cannot be cached, the
// new values change its shape, or binding or analysis failed (GMS then
// reports the error).
func (h *handler) cachedExecute(ctx context.Context, c *mysql.Conn, s *Session, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) (bool, error) {
	bx, ok := h.Handler.(boundExecutor)
	if !ok || h.engine == nil {
		return false, nil
	}
	stats := &s.provider.plans
	query := gsql.RemoveSpaceAndDelimiter(prepare.PrepareStmt, ';')
	st := s.plans.Get(query)
	if st.Never {
		return false, nil
	}
	e := h.engine
	parsed, ok := e.PreparedDataCache.GetCachedStmt(s.ID(), query)
	if !ok {
		return false, nil
	}
	kind, ok := cachedKind(parsed)
	if !ok {
		st.Never = true
		return false, nil
	}
	db := s.GetCurrentDatabase()
	epoch := s.fast.epoch.Load()
	statsGen := s.provider.stats.Generation()
	sctx, cat, ok := h.templateContext(ctx, s, query, storelessCatalog(s, st.Plans, db, epoch, statsGen))
	if !ok {
		return false, nil
	}
	binder := planbuilder.New(sctx, e.Analyzer.Catalog, e.EventScheduler, e.Parser)
	values, err := plancache.BindValues(binder, prepare)
	if err != nil {
		return false, nil
	}
	key := plancache.Key{Catalog: cat, Epoch: epoch}
	if st.GiveUp(key) {
		return false, nil
	}
	s.ClearWarnings()
	for i, p := range st.Plans {
		if p.Catalog != cat || p.DB != db || p.Epoch != epoch || !plancache.ParamTypesMatch(p.Types, values) {
			continue
		}
		if p.Stats != statsGen {
			// Analysed under other statistics (ANALYZE TABLE since):
			// analysed again, as textplancache.go does.
			stats.rechecks.Add(1)
			st.Plans = append(st.Plans[:i:i], st.Plans[i+1:]...)
			break
		}
		n, ok, err := p.Bind(sctx, values)
		if err == nil && ok && countsValid(n) {
			stats.hits.Add(1)
			return true, h.runBound(ctx, bx, c, s, sctx, query, kind, n, p, h.statusFilter(c, callback))
		}
		// The values change the plan's ranges: the statement is
		// analysed again and the new plan replaces this one.
		stats.rechecks.Add(1)
		st.Plans = append(st.Plans[:i:i], st.Plans[i+1:]...)
		break
	}
	// A miss: bind and analyse with literals the plan can be searched
	// for.
	binder.SetBindingsWithExpr(values)
	bound, qFlags, err := binder.BindOnly(parsed, query, nil)
	if err != nil {
		return false, nil
	}
	if unused := binder.BindCtx().UnusedBindings(); len(unused) > 0 {
		return false, nil
	}
	if volatileStatement(bound, qFlags) {
		// (Whatever its values: textplancache.go.)
		st.Never = true
		return false, nil
	}
	params := plancache.BoundParams(sctx, e, parsed, query, values, bound)
	analyzed, err := e.Analyzer.Analyze(sctx, bound, nil, qFlags)
	if err != nil {
		return false, nil
	}
	if !kindRepresents(kind, analyzed) || qFlags.IsSet(gsql.QFlagTrigger) {
		// (A WHERE clause GMS found false for these values has no
		// table left.)
		stats.uncacheable.Add(1)
		st.Uncacheable(key)
		return false, nil
	}
	p, ok := plancache.NewPlan(sctx, analyzed, values, params, notInTemplate(params))
	if !ok {
		stats.uncacheable.Add(1)
		st.Uncacheable(key)
		// Analysed already: run it once rather than analyse it again.
		return true, h.runBound(ctx, bx, c, s, sctx, query, kind, analyzed, nil, h.statusFilter(c, callback))
	}
	p.Catalog, p.DB, p.Epoch, p.Stats = cat, db, epoch, statsGen
	p.Storeless = readsNothing(bound) && readsNothing(analyzed)
	st.Put(p)
	stats.misses.Add(1)
	return true, h.runBound(ctx, bx, c, s, sctx, query, kind, analyzed, p, h.statusFilter(c, callback))
}

// templateContext returns the context a cached plan of query is analysed
// or run in (its transaction begun) and the catalog it is valid under,
// or false when the plan cache is off for the session
// (@percdb_plan_cache = 0) or the catalog cannot be read (GMS's own path
// then reports why). An autocommit statement's transaction, begun here,
// takes the catalog storeless gives when it gives one (storeless.go):
// the statement then fetches no timestamp unless it reads.
func (h *handler) templateContext(ctx context.Context, s *Session, query string, storeless func() (*catalog.Catalog, bool)) (*gsql.Context, *catalog.Catalog, bool) {
	sctx := gsql.NewContext(context.WithValue(ctx, planTemplateKey{}, true), gsql.WithSession(s), gsql.WithQuery(query), gsql.WithMemoryManager(h.memory))
	if !userVarOn(sctx, planCacheUserVar) {
		return nil, nil, false
	}
	begun := false
	if sctx.GetTransaction() == nil {
		tx, err := s.StartTransaction(sctx, gsql.ReadWrite)
		if err != nil {
			return nil, nil, false
		}
		sctx.SetTransaction(tx)
		begun = true
	}
	t, ok := sctx.GetTransaction().(*Transaction)
	if !ok {
		return nil, nil, false
	}
	fresh := begun && t.kv == nil && t.cat == nil
	if fresh && s.autocommit() && !s.GetIgnoreAutoCommit() {
		// (The transaction ends with the statement: no later statement
		// reads under this catalog.)
		if cat, ok := storeless(); ok {
			t.cat = cat
			return sctx, cat, true
		}
	}
	var ddls uint64
	guarded := false
	if fp := s.provider.fast; fresh && fp != nil {
		// Before the start timestamp the catalog's read takes.
		ddls, guarded = fp.schema.Begin()
		if cat, ok := guardedCatalog(sctx, s, t, ddls, guarded); ok {
			return sctx, cat, true
		}
	}
	cat, err := t.catalog(sctx)
	if err != nil {
		return nil, nil, false
	}
	if guarded && cat == s.provider.catalogs.Cached() {
		// A read of the version key at a timestamp taken now found the
		// cached catalog the latest: as the fast path's reads of it do,
		// it tells the SchemaGuard, which then vouches for the cache
		// (so that a client sending only SELECT 1 gets storeless's
		// catalog from its second statement).
		s.provider.fast.schema.Verify(ddls)
	}
	return sctx, cat, true
}

// cachedKind returns the type of a parsed statement whose plans may be
// cached (package lexical's kinds): a SELECT, or an UPDATE or DELETE of one
// table (a join's write plans are left to GMS).
func cachedKind(parsed sqlparser.Statement) (lexical.Kind, bool) {
	switch p := parsed.(type) {
	case *sqlparser.Select:
		return lexical.KindSelect, true
	case *sqlparser.Update:
		return lexical.KindUpdate, p.With == nil && singleTable(p.TableExprs)
	case *sqlparser.Delete:
		return lexical.KindDelete, p.With == nil && len(p.Targets) == 0 && singleTable(p.TableExprs)
	}
	return 0, false
}

// singleTable reports whether exprs name one table and nothing else.
func singleTable(exprs sqlparser.TableExprs) bool {
	if len(exprs) != 1 {
		return false
	}
	a, ok := exprs[0].(*sqlparser.AliasedTableExpr)
	if !ok {
		return false
	}
	_, ok = a.Expr.(sqlparser.TableName)
	return ok
}

// kindRepresents reports whether the analysed plan n is a plan of a
// statement of kind k: a SELECT's reads a table (one GMS found empty for these
// values reads none), a write's is the write.
func kindRepresents(k lexical.Kind, n gsql.Node) bool {
	switch k {
	case lexical.KindUpdate:
		u, ok := n.(*plan.Update)
		return ok && !u.IsJoin
	case lexical.KindDelete:
		d, ok := n.(*plan.DeleteFrom)
		return ok && !d.HasExplicitTargets()
	}
	return plan.NodeRepresentsSelect(n)
}

// kindStatusVariable is the Com_ counter of a statement of kind k.
func kindStatusVariable(k lexical.Kind) string {
	switch k {
	case lexical.KindUpdate:
		return "Com_update"
	case lexical.KindDelete:
		return "Com_delete"
	}
	return "Com_select"
}

// runBound runs the analysed plan n of p (nil: a plan not cached) of a
// statement of type k through GMS's handler, its results passed to
// callback (the protocol's filters of a prepared or a text statement), which spools its rows (or a
// write's OK packet) to the client as for any statement, the first time,
// and a SELECT's in the connection's goroutine once the result's column
// definitions are known (boundexec.go).
func (h *handler) runBound(ctx context.Context, bx boundExecutor, c *mysql.Conn, s *Session, sctx *gsql.Context, query string, k lexical.Kind, n gsql.Node, p *plancache.Plan, callback func(*sqltypes.Result) error) error {
	if k == lexical.KindSelect {
		// The template's index read, whose ranges are this execution's
		// values', is a scan of the table where they hold much of it
		// (analyzer.go's PreferTableScan, which the template, its values
		// not known, was analysed without deciding).
		scanned, _, err := planrules.PreferTableScan(sctx, n)
		if err != nil {
			return err
		}
		n = scanned
	}
	// The filters the template kept whole for its ranges to be derived
	// from (analyzer.go): what this execution's ranges enforce is not
	// evaluated again.
	n, _, err := planrules.DropEnforcedFilters(sctx, n)
	if err != nil {
		return err
	}
	// So is the bound of a locking read under a LIMIT (lockbound.go).
	if n, _, err = boundLockedReads(sctx, n); err != nil {
		return err
	}
	if coprEnabled(sctx) {
		// The pushdown the template was analysed without.
		pushed, _, err := pushDown(sctx, n, pushAt{})
		if err != nil {
			return err
		}
		n = pushed
	}
	gsql.IncrementStatusVariable(sctx, "Questions", 1)
	gsql.IncrementStatusVariable(sctx, kindStatusVariable(k), 1)
	cb := callback
	if p != nil && k == lexical.KindSelect {
		// A write's result is an OK packet, which GMS's handler sends.
		if p.Fields != nil {
			return h.execBound(ctx, s, query, n, p.Fields, cb)
		}
		cb = learnFields(&p.Fields, cb)
	}
	return bx.ComExecuteBound(ctx, c, query, n, func(res *sqltypes.Result, _ bool) error { return cb(res) })
}

// keepsRows reports whether e is an expression of this package's that
// keeps the rows of an execution.
func keepsRows(e gsql.Expression) bool {
	_, ok := e.(*groupedSubquery)
	return ok
}

// notInTemplate returns plancache.NewPlan's stateful for a plan whose
// parameters are the literals params: an expression of this package's
// that keeps an execution's rows, or that evaluates a parameter out of
// the substitution's reach. A scalarLookup's select item is not among
// its children (it is bound to the joined row), so a parameter in it
// would keep the first execution's value.
func notInTemplate(params map[*expression.Literal]plancache.ParamRef) func(gsql.Expression) bool {
	return func(e gsql.Expression) bool {
		if keepsRows(e) {
			return true
		}
		sl, ok := e.(*scalarLookup)
		if !ok {
			return false
		}
		hidden := false
		transform.InspectExpr(sl.item, func(e gsql.Expression) bool {
			if lit, isLit := e.(*expression.Literal); isLit {
				_, hidden = params[lit]
			}
			return hidden
		})
		return hidden
	}
}

// countsValid reports whether every LIMIT and OFFSET of n that is a
// literal is a non-negative integer. GMS's analyzer refuses others
// (validateOffsetAndLimit); a cached plan bound to such a value ran it:
// LIMIT 0, -1 returned no rows where a fresh analysis fails.
func countsValid(n gsql.Node) bool {
	ok := true
	transform.Inspect(n, func(n gsql.Node) bool {
		var e gsql.Expression
		switch n := n.(type) {
		case *plan.Limit:
			e = n.Limit
		case *plan.Offset:
			e = n.Offset
		case *plan.TopN:
			e = n.Limit
		}
		if lit, isLit := e.(*expression.Literal); isLit {
			d, isInt := coprDatum(lit.Value())
			ok = ok && isInt && (d.Unsigned || d.Int >= 0)
		}
		return ok
	})
	return ok
}
