package sql

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/percdb/percdb/sql/fastpath"
	"github.com/percdb/percdb/sql/slowlog"
)

// The fast path itself (its statement shapes, which statements it runs,
// its oracle calls, how its answers stay GMS's) is described in package
// fastpath's doc.go; this file connects it to the protocol handler and
// the session.

// Defaults of the fast path's bounds.
const (
	// defaultFastPlans bounds the digests whose decision is cached.
	defaultFastPlans = 4096
	// maxFastStatements bounds the prepared statements a session keeps a
	// decision for (clients do not say when they close one).
	maxFastStatements = 1024
)

// fastUserVar is the user variable that turns the fast path off for a
// session when set to 0 or OFF.
const fastUserVar = "percdb_fastpath"

// fastPath is one server's fast path: its plan cache, parsers and
// counters. Sessions reach it through their DatabaseProvider.
type fastPath struct {
	enabled bool
	plans   *fastPlanCache
	// templates is the text protocol's cache of shapes
	// (fastpath_literals.go).
	templates *textTemplates
	parsers   sync.Pool // *parser.Parser, which is not safe for concurrent use
	memory    *gsql.MemoryManager
	// sqlMode is the sql_mode the fast path runs under, the server's
	// default: the TiDB parser parses under it, and GMS's conversions
	// behave as under it.
	sqlMode any

	// schema tells the fast path's reads whether a DDL committed while
	// they ran.
	schema fastpath.SchemaGuard

	hits atomic.Uint64
	// textHits counts the text statements run with a template's shape
	// (fastpath_literals.go), not parsed.
	textHits     atomic.Uint64
	fallthroughs [fastpath.NumReasons]atomic.Uint64
	// avoided counts the timestamps GMS's path would have fetched and the
	// fast path did not (the start_ts of autocommit reads).
	avoided atomic.Uint64
}

func newFastPath(enabled bool) *fastPath {
	fp := &fastPath{
		enabled:   enabled,
		plans:     fastpath.NewCache[fastPlan](defaultFastPlans),
		templates: newTextTemplates(defaultTextTemplates),
		memory:    gsql.NewMemoryManager(nil),
	}
	if _, v, ok := gsql.SystemVariables.GetGlobal("sql_mode"); ok {
		fp.sqlMode = v
	}
	fp.parsers.New = func() any { return parser.New() }
	return fp
}

// usable reports whether the server runs the fast path, counting the
// statements it does not run for that reason.
func (fp *fastPath) usable() bool {
	if fp == nil {
		return false
	}
	if !fp.enabled {
		fp.fallthroughs[fastpath.ReasonDisabled].Add(1)
	}
	return fp.enabled
}

// parse parses one statement with a pooled TiDB parser.
func (fp *fastPath) parse(query string) (ast.StmtNode, error) {
	p := fp.parsers.Get().(*parser.Parser)
	defer fp.parsers.Put(p)
	return p.ParseOneStmt(query, "", "")
}

// fastSession is a session's fast path state: its prepared statements'
// decisions, and the session variables the fast path depends on, cached
// until a variable changes.
type fastSession struct {
	mu    sync.Mutex
	stmts map[uint32]*fastStmt
	// epoch counts changes of the session's variables; vars is valid
	// while its epoch is the current one.
	epoch atomic.Uint64
	vars  fastVars
	// ctx is the GMS context of the session's fast statements, made
	// again when the connection's context changes; args holds a
	// prepared statement's parameter values. Both are reused from one
	// statement to the next, which the session runs one at a time.
	ctx  *gsql.Context
	args []any
	// literals is the buffer of the text protocol's templates
	// (fastpath_literals.go); template is the template of the text
	// statement fastQuery last saw, nil when it made none (the text
	// plan cache's, textplancache.go).
	literals fastpath.Literals
	template *textTemplate
}

// context returns a GMS context for a fast statement of s under ctx. GMS
// makes one per statement; the fast path uses it for conversions, the
// session and its status counters only, none of which depends on the
// statement, so the session keeps one.
func (fp *fastPath) context(ctx context.Context, s *Session) *gsql.Context {
	fs := &s.fast
	if fs.ctx == nil || fs.ctx.Context != ctx {
		fs.ctx = gsql.NewContext(ctx, gsql.WithSession(s), gsql.WithMemoryManager(fp.memory))
	}
	return fs.ctx
}

// fastStmt is the decision for one prepared statement.
type fastStmt struct {
	query string
	entry *fastEntry
	shape *fastpath.Shape
}

// fastVars are the session variables the fast path depends on.
type fastVars struct {
	epoch      uint64
	valid      bool
	autocommit bool
	// txReadOnly is transaction_read_only (txnchars.go).
	txReadOnly bool
	// sqlModeOK: sql_mode is the server default the fast path runs under.
	sqlModeOK bool
	// charsetResults is character_set_results, which decides the
	// character set GMS reports in column definitions.
	charsetResults any
	// off: @percdb_fastpath turned the fast path off.
	off bool
	// textPlans: percdb_text_plan_cache is on (fastpath_literals.go).
	textPlans bool
	// longQuery is long_query_time, the slow query log's threshold
	// (package slowlog); slowOK is false when it could not be read.
	longQuery time.Duration
	slowOK    bool
	// pessimistic: percdb_txn_mode is pessimistic (pessimistic.go).
	pessimistic bool
	// readCommitted: transaction_isolation is one percdb runs as READ
	// COMMITTED (readcommitted.go).
	readCommitted bool
}

// varsChanged invalidates the cached variables of the session.
func (fs *fastSession) varsChanged() { fs.epoch.Add(1) }

// sessionVars returns the variables of s, reading them again if one
// changed since they were cached.
func (fp *fastPath) sessionVars(s *Session) *fastVars {
	fs := &s.fast
	epoch := fs.epoch.Load()
	if fs.vars.valid && fs.vars.epoch == epoch {
		return &fs.vars
	}
	ctx := gsql.NewContext(context.Background(), gsql.WithSession(s), gsql.WithMemoryManager(fp.memory))
	v := fastVars{epoch: epoch, valid: true, autocommit: true}
	if ac, err := s.GetSessionVariable(ctx, gsql.AutoCommitSessionVar); err == nil {
		on, err := gsql.ConvertToBool(ctx, ac)
		v.autocommit = err == nil && on
	}
	if ro, err := s.GetSessionVariable(ctx, varTxReadOnly); err == nil {
		on, err := gsql.ConvertToBool(ctx, ro)
		v.txReadOnly = err == nil && on
	}
	if mode, err := s.GetSessionVariable(ctx, "sql_mode"); err == nil {
		v.sqlModeOK = mode == fp.sqlMode
	}
	v.charsetResults, _ = s.GetSessionVariable(ctx, "character_set_results")
	if lq, err := s.GetSessionVariable(ctx, slowlog.VarLongQueryTime); err == nil {
		v.longQuery, v.slowOK = slowlog.LongQueryTime(lq)
	}
	v.pessimistic = defaultTxnMode == modePessimistic
	if m, err := s.GetSessionVariable(ctx, varTxnMode); err == nil {
		name, _ := m.(string)
		v.pessimistic = strings.EqualFold(name, modePessimistic)
	}
	if iso, err := s.GetSessionVariable(ctx, varTxIsolation); err == nil {
		v.readCommitted = isReadCommitted(iso)
	}
	v.textPlans = true
	if tp, err := s.GetSessionVariable(ctx, varTextPlanCache); err == nil {
		on, err := gsql.ConvertToBool(ctx, tp)
		v.textPlans = err == nil && on
	}
	if _, val, err := s.GetUserVariable(ctx, fastUserVar); err == nil && val != nil {
		on, err := gsql.ConvertToBool(ctx, val)
		v.off = err != nil || !on
	}
	fs.vars = v
	return &fs.vars
}

// sessionOn returns the variables of s and whether the fast path is on
// for it, counting the statements it does not run for that reason.
func (fp *fastPath) sessionOn(s *Session) (*fastVars, bool) {
	vars := fp.sessionVars(s)
	if vars.off {
		fp.fallthroughs[fastpath.ReasonDisabled].Add(1)
	}
	return vars, !vars.off
}

// SetSessionVariable implements sql.Session; the fast path notes the
// change. transaction_isolation and tx_isolation are one variable
// (readcommitted.go).
func (s *Session) SetSessionVariable(ctx *gsql.Context, name string, value any) error {
	defer s.fast.varsChanged()
	if err := s.BaseSession.SetSessionVariable(ctx, name, value); err != nil {
		return err
	}
	return s.setIsolationAlias(ctx, name)
}

// InitSessionVariable implements sql.Session; the fast path notes the
// change.
func (s *Session) InitSessionVariable(ctx *gsql.Context, name string, value any) error {
	defer s.fast.varsChanged()
	return s.BaseSession.InitSessionVariable(ctx, name, value)
}

// SetUserVariable implements sql.Session; the fast path notes the change
// (of @percdb_fastpath).
func (s *Session) SetUserVariable(ctx *gsql.Context, name string, value any, typ gsql.Type) error {
	defer s.fast.varsChanged()
	return s.BaseSession.SetUserVariable(ctx, name, value, typ)
}

// fastQuery runs a COM_QUERY on the fast path. When it does not (handled
// false), GMS must run it, answering through the returned callback, which
// teaches the fast path the result's column definitions when it wants
// them.
func (h *handler) fastQuery(ctx context.Context, c *mysql.Conn, s *Session, query string, callback mysql.ResultSpoolFn) (bool, error, mysql.ResultSpoolFn) {
	fp := s.provider.fast
	s.fast.template = nil
	if !fp.usable() {
		return false, nil, callback
	}
	if !fastpath.Candidate(query) {
		fp.fallthroughs[fastpath.ReasonShape].Add(1)
		return false, nil, callback
	}
	vars, on := fp.sessionOn(s)
	if !on {
		return false, nil, callback
	}
	var t *textTemplate
	if vars.textPlans {
		t = fp.templateOf(s, query)
		s.fast.template = t
	}
	if t != nil && t.shape != nil {
		s.digests.remember(query, t.normalized, t.digest)
		e, args := fp.bindTemplate(s, t)
		if e.Shape == nil {
			fp.fallthroughs[e.Reason].Add(1)
			return false, nil, callback
		}
		return h.fastRunQuery(ctx, c, s, vars, e, t.shape, args, callback)
	}
	// A template without a shape has the statement's digest already:
	// the digest of a statement is its template's (TestTemplateDigest).
	var normalized string
	var digest *parser.Digest
	if t != nil {
		normalized, digest = t.normalized, t.digest
	} else {
		normalized, digest = parser.NormalizeDigest(query)
	}
	s.digests.remember(query, normalized, digest)
	key := fastpath.Key{Digest: string(digest.Bytes()), DB: s.GetCurrentDatabase()}
	e := fp.plans.Get(key)
	if e != nil && e.Shape == nil {
		fp.fallthroughs[e.Reason].Add(1)
		return false, nil, callback
	}
	stmt, err := fp.parse(query)
	if err != nil {
		if e == nil {
			fp.plans.Put(&fastEntry{Key: key, Reason: fastpath.ReasonParse})
		}
		fp.fallthroughs[fastpath.ReasonParse].Add(1)
		return false, nil, callback
	}
	shape := fastpath.ShapeOf(stmt, normalized)
	if e == nil || e.WantsAlt() {
		// The entry's first shape resolves its plan; later ones need
		// their range SELECT only when that is what the plan is.
		fastpath.AddAlt(shape, stmt)
	}
	if e == nil {
		e = fp.plans.Put(&fastEntry{Key: key, Shape: shape, Reason: fastpath.ReasonShape})
	}
	return h.fastRunQuery(ctx, c, s, vars, e, shape, nil, callback)
}

// fastRunQuery runs a COM_QUERY of shape (with the literals args its
// parameters stand for, if any) and entry e on the fast path; see
// fastQuery.
func (h *handler) fastRunQuery(ctx context.Context, c *mysql.Conn, s *Session, vars *fastVars, e *fastEntry, shape *fastpath.Shape, args []any, callback mysql.ResultSpoolFn) (bool, error, mysql.ResultSpoolFn) {
	fp := s.provider.fast
	if shape == nil || e.Shape == nil || shape.Kind != e.Shape.Kind {
		fp.fallthroughs[fastpath.ReasonShape].Add(1)
		return false, nil, callback
	}
	r := &fastRun{
		fp: fp, s: s, c: c, vars: vars, entry: e, shape: shape, args: args,
		ctx:  fp.context(ctx, s),
		send: func(res *sqltypes.Result) error { return callback(res, false) },
	}
	ok, err, learn := fp.outcome(r.run(), false, shape, vars.charsetResults)
	if learn == nil {
		return ok, err, callback
	}
	return false, nil, func(res *sqltypes.Result, more bool) error {
		learn(res)
		return callback(res, more)
	}
}

// fastPrepare notes the decision for a statement GMS has just prepared.
func (h *handler) fastPrepare(s *Session, query string, prepare *mysql.PrepareData) {
	fp := s.provider.fast
	if fp == nil || !fp.enabled || !fastpath.Candidate(query) {
		return
	}
	normalized, digest := parser.NormalizeDigest(query)
	key := fastpath.Key{Digest: string(digest.Bytes()), DB: s.GetCurrentDatabase()}
	e := fp.plans.Get(key)
	var shape *fastpath.Shape
	if stmt, err := fp.parse(query); err == nil {
		shape = fastpath.ShapeOf(stmt, normalized)
		fastpath.AddAlt(shape, stmt)
	}
	if e == nil {
		reason := fastpath.ReasonShape
		if shape == nil {
			// Parse failures are not told apart for prepared
			// statements: both go to GMS for good.
			reason = fastpath.ReasonShape
		}
		e = fp.plans.Put(&fastEntry{Key: key, Shape: shape, Reason: reason})
	}
	if shape != nil && shape.Params != int(prepare.ParamsCount) {
		// The TiDB parser and vitess disagree on the parameters.
		shape = nil
	}
	fs := &s.fast
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.stmts == nil {
		fs.stmts = make(map[uint32]*fastStmt)
	}
	if len(fs.stmts) >= maxFastStatements {
		for id := range fs.stmts {
			delete(fs.stmts, id)
			break
		}
	}
	fs.stmts[prepare.StatementID] = &fastStmt{query: query, entry: e, shape: shape}
}

// fastExecute runs a COM_STMT_EXECUTE on the fast path; see fastQuery.
func (h *handler) fastExecute(ctx context.Context, c *mysql.Conn, s *Session, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) (bool, error, func(*sqltypes.Result) error) {
	fp := s.provider.fast
	if !fp.usable() {
		return false, nil, callback
	}
	fs := &s.fast
	fs.mu.Lock()
	st := fs.stmts[prepare.StatementID]
	fs.mu.Unlock()
	if st == nil || st.query != prepare.PrepareStmt || st.shape == nil || st.entry.Shape == nil ||
		st.entry.Shape.Kind != st.shape.Kind {
		fp.fallthroughs[fastpath.ReasonShape].Add(1)
		return false, nil, callback
	}
	vars, on := fp.sessionOn(s)
	if !on {
		return false, nil, callback
	}
	r := &fastRun{
		fp: fp, s: s, c: c, vars: vars, entry: st.entry, shape: st.shape, binary: true,
		ctx:  fp.context(ctx, s),
		args: bindArgs(fs.args, prepare.BindVars, st.shape.Params),
		send: callback,
	}
	fs.args = r.args
	ok, err, learn := fp.outcome(r.run(), true, st.shape, vars.charsetResults)
	if learn == nil {
		return ok, err, callback
	}
	return false, nil, func(res *sqltypes.Result) error {
		learn(res)
		return callback(res)
	}
}

// outcome reports what a fast run did: handled, with the statement's
// error; or not, counted under its reason, with the function that learns
// the result's column definitions from GMS's answer when the plan wants
// them (nil otherwise).
func (fp *fastPath) outcome(out fastOutcome, binary bool, shape *fastpath.Shape, charset any) (bool, error, func(*sqltypes.Result)) {
	if out.handled {
		return true, out.err, nil
	}
	fp.fallthroughs[out.reason].Add(1)
	if out.learn == nil {
		return false, nil, nil
	}
	return false, nil, fp.learner(out.learn, binary, shape, charset)
}

// bindArgs converts a prepared statement's bind variables to the values
// GMS binds them as (vitess's sqlparser.ExprFromValue, then GMS's
// literals): integers to int64 or uint64, quoted values (strings, binary
// strings, dates sent as text) to strings, NULL to nil. Floats and
// decimals become errValue, which sends the statement to GMS.
func bindArgs(args []any, bvs map[string]*querypb.BindVariable, n int) []any {
	args = append(args[:0], make([]any, n)...)
	for i := range args {
		args[i] = errValue
		bv := bvs[fastpath.ParamName(i)]
		if bv == nil {
			continue
		}
		typ := bv.Type
		switch {
		case typ == sqltypes.Null:
			args[i] = nil
		case sqltypes.IsSigned(typ):
			if v, err := strconv.ParseInt(string(bv.Value), 10, 64); err == nil {
				args[i] = v
			}
		case sqltypes.IsUnsigned(typ):
			if v, err := strconv.ParseUint(string(bv.Value), 10, 64); err == nil {
				args[i] = v
			}
		case sqltypes.IsQuoted(typ):
			args[i] = string(bv.Value)
		}
	}
	return args
}

// learner returns a function that records the column definitions of
// GMS's answer to a statement of plan pl, for the fast path to send for
// later executions.
func (fp *fastPath) learner(pl *fastPlan, binary bool, shape *fastpath.Shape, charset any) func(*sqltypes.Result) {
	done := false
	return func(res *sqltypes.Result) {
		if done || res == nil || len(res.Fields) != len(pl.Schema) {
			return
		}
		done = true
		ff := &fastpath.Fields{Fields: res.Fields, Charset: charset, Names: fastpath.ShapeNames(shape)}
		if binary {
			pl.FieldsBinary.Store(ff)
		} else {
			pl.FieldsText.Store(ff)
		}
	}
}

// schemaChanging marks a DDL commit in progress; the returned function,
// called once the committed catalog is cached (or the commit failed),
// ends it. fp may be nil.
func (fp *fastPath) schemaChanging() func() {
	if fp == nil {
		return func() {}
	}
	return fp.schema.Changing()
}
