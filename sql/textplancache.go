package sql

import (
	"context"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/plancache"
)

// The plan cache of text SELECTs that GMS runs. The fast path's cache of
// shapes (fastpath_literals.go) saves the parse of the statements it
// runs itself; every other text statement was parsed and analysed by
// GMS at each execution, which was about two fifths of the CPU of a
// short SELECT with a subquery (a scalar subquery read by the primary
// key: docs/benchmarks.md, subq5 and subq6). A text SELECT that comes
// again with the same text (a report's statement, a page's query, a
// statement a client library sends as text with its values written in)
// runs the plan analysed at its first execution, as a prepared
// statement's does (plancache_exec.go): the same plans qualify
// (plancache.NewPlan: no node or expression that keeps an execution's
// state), under the same conditions (the catalog, the current database
// and the session's epoch of variables as they were at the analysis),
// and the plan has no parameters, so each execution runs it as it is,
// its static index reads' ranges derived again from their filters.
//
// Plans are per session and by the statement's whole text (its literals
// included: MySQL's own query cache matched texts byte for byte); the
// cache is the prepared statements' bounded Cache, a second one.
// percdb_text_plan_cache = OFF or @percdb_plan_cache = 0 leaves every
// text statement to GMS. A template of the fast path (the text without
// its literals) whose statements gave plans that could not be cached
// maxUncacheable times in a row is not tried again (textTemplate's
// uncacheable), so that statements whose texts differ only in their
// literals do not each pay an analysis of their own first.

// cachedQuery runs a text statement of s from the session's cache of
// text plans, analysing and caching its plan on a miss. It reports
// false when the statement is left to GMS's own path: not a SELECT, a
// plan that cannot be cached (the plan analysed as a template leaves
// out the rules that keep state in the plan, decorrelate.go's grouped
// subqueries, so GMS analyses it again), or a parse or analysis that
// failed (GMS reports the error). t is the statement's template from
// the fast path (nil: none, and the statement is left to GMS).
func (h *handler) cachedQuery(ctx context.Context, c *mysql.Conn, s *Session, t *textTemplate, query string, callback func(*sqltypes.Result) error) (bool, error) {
	if t == nil || t.uncacheable.Load() >= maxUncacheableTemplate || !startsWithWord(query, "select") {
		return false, nil
	}
	bx, ok := h.Handler.(boundExecutor)
	if !ok || h.engine == nil {
		return false, nil
	}
	stats := &s.provider.textPlans
	query = gsql.RemoveSpaceAndDelimiter(query, ';')
	st := s.textPlans.Get(query)
	if st.Never {
		return false, nil
	}
	db := s.GetCurrentDatabase()
	epoch := s.fast.epoch.Load()
	statsGen := s.provider.stats.Generation()
	sctx, cat, ok := h.templateContext(ctx, s, query, storelessCatalog(s, st.Plans, db, epoch, statsGen))
	if !ok {
		return false, nil
	}
	key := plancache.Key{Catalog: cat, Epoch: epoch}
	if st.GiveUp(key) {
		return false, nil
	}
	s.ClearWarnings()
	for i, p := range st.Plans {
		if p.Catalog != cat || p.DB != db || p.Epoch != epoch {
			continue
		}
		if p.Stats != statsGen {
			// Analysed under other statistics: analysed again.
			stats.rechecks.Add(1)
			st.Plans = append(st.Plans[:i:i], st.Plans[i+1:]...)
			break
		}
		n, ok, err := p.Bind(sctx, nil)
		if err == nil && ok {
			stats.hits.Add(1)
			// The analysis's warnings (a literal converted for a
			// comparison), which GMS's analysis of the text would give.
			for i := len(p.Warnings) - 1; i >= 0; i-- {
				s.Warn(p.Warnings[i])
			}
			return true, h.runBound(ctx, bx, c, s, sctx, query, lexical.KindSelect, n, p, callback)
		}
		// (A plan without parameters derives the same ranges again.)
		stats.rechecks.Add(1)
		st.Plans = append(st.Plans[:i:i], st.Plans[i+1:]...)
		break
	}
	e := h.engine
	// As GMS parses a query of one statement (a second fails).
	parsed, _, _, err := e.Parser.ParseWithOptions(sctx, query, ';', false, gsql.LoadSqlMode(sctx).ParserOptions())
	if err != nil {
		return false, nil
	}
	if kind, ok := cachedKind(parsed); !ok || kind != lexical.KindSelect {
		st.Never = true
		return false, nil
	}
	binder := planbuilder.New(sctx, e.Analyzer.Catalog, e.EventScheduler, e.Parser)
	bound, qFlags, err := binder.BindOnly(parsed, query, nil)
	if err != nil {
		return false, nil
	}
	if volatileStatement(bound, qFlags) {
		st.Never = true
		return false, nil
	}
	analyzed, err := e.Analyzer.Analyze(sctx, bound, nil, qFlags)
	if err != nil {
		return false, nil
	}
	var p *plancache.Plan
	if kindRepresents(lexical.KindSelect, analyzed) && !qFlags.IsSet(gsql.QFlagTrigger) {
		p, ok = plancache.NewPlan(sctx, analyzed, nil, nil, notInTemplate(nil))
	}
	if p == nil || !ok {
		stats.uncacheable.Add(1)
		st.Uncacheable(key)
		t.uncacheable.Add(1)
		return false, nil
	}
	t.uncacheable.Store(0)
	p.Catalog, p.DB, p.Epoch, p.Stats = cat, db, epoch, statsGen
	p.Storeless = readsNothing(bound) && readsNothing(analyzed)
	if !s.keptDiag {
		// (While the previous statement's conditions are kept, for a
		// statement of no table, the analysis raised none of its own:
		// its first would have dropped them, compat_diagarea.go. Kept,
		// they would be given again by every execution of the plan.)
		p.Warnings = s.Warnings()
	}
	st.Put(p)
	stats.misses.Add(1)
	return true, h.runBound(ctx, bx, c, s, sctx, query, lexical.KindSelect, analyzed, p, callback)
}

// maxUncacheableTemplate is how many analyses in a row of a template's
// text statements may give plans that cannot be cached before the text
// plan cache stops trying its statements.
const maxUncacheableTemplate = 4

// volatileStatement reports whether the bound statement n reads
// something other than its tables, its literals and the session's
// variables at a time its cached plan would not read it again: a
// non-deterministic function (NOW(), RAND(), UUID(), FOUND_ROWS(), ...,
// which GMS's binder flags, and the clock functions it does not), or a
// system variable, whose global value another session may change. GMS's
// analysis evaluates an expression of no column once, at the analysis,
// into a literal (a filter's NOW() - INTERVAL 1 DAY, an index range's
// bound), so a plan of such a statement would answer with the first
// execution's values; it is analysed every time, as before.
func volatileStatement(n gsql.Node, qFlags *gsql.QueryFlags) bool {
	if qFlags != nil && qFlags.IsSet(gsql.QFlagUndeferrableExprs) {
		return true
	}
	volatile := false
	var inNode func(n gsql.Node)
	inExpr := func(e gsql.Expression) bool {
		switch e := e.(type) {
		case *plan.Subquery:
			// (Its IsNonDeterministic says whether its rows may be
			// kept, which a correlated subquery's may not.)
			volatile = e.Volatile()
			inNode(e.Query)
		case gsql.NonDeterministicExpression:
			volatile = volatile || e.IsNonDeterministic()
		case *expression.SystemVar:
			volatile = true
		case gsql.FunctionExpression:
			volatile = volatile || clockFunctions[strings.ToLower(e.FunctionName())]
		}
		return !volatile
	}
	inNode = func(n gsql.Node) {
		transform.Inspect(n, func(n gsql.Node) bool {
			if ex, ok := n.(gsql.Expressioner); ok {
				for _, e := range ex.Expressions() {
					gsql.Inspect(e, inExpr)
				}
			}
			return !volatile
		})
	}
	inNode(n)
	return volatile
}

// clockFunctions are the functions of the current time that GMS does not
// mark non-deterministic.
var clockFunctions = map[string]bool{
	"utc_timestamp": true, "utc_date": true, "utc_time": true, "unix_timestamp": true,
	"sysdate": true, "current_timestamp": true, "localtime": true, "localtimestamp": true,
	"now": true, "curdate": true, "current_date": true, "curtime": true, "current_time": true,
}

// textCallback adapts a COM_QUERY's callback to runBound's: a cached
// statement is the query's last (the text plan cache takes single
// statements only).
func textCallback(cb mysql.ResultSpoolFn) func(*sqltypes.Result) error {
	return func(res *sqltypes.Result) error { return cb(res, false) }
}

// templateFor returns the fast path's template of the text statement s
// runs (made here when fastQuery made none: a statement it does not
// take, as one with a subquery), nil when there is none or
// percdb_text_plan_cache is off.
func templateFor(s *Session, query string) *textTemplate {
	if t := s.fast.template; t != nil {
		return t
	}
	fp := s.provider.fast
	if fp == nil || !fp.enabled || !fp.sessionVars(s).textPlans {
		return nil
	}
	return fp.templateOf(s, query)
}
