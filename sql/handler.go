package sql

import (
	"context"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/foreignkey"
	"github.com/percdb/percdb/sql/internal/lexical"
)

// handler wraps GMS's MySQL protocol handler. It sits where a command
// enters and leaves the server, which is the only place that sees both the
// query text and the final outcome of a command, and does three things GMS
// does not:
//   - ends the statement's undo point: a failed statement's writes are
//     undone (GMS skips DiscardChanges for errors met while it reads an
//     OK-result iterator), and a failed autocommit statement abandons its
//     transaction instead of leaving it for the next statement;
//   - marks SELECT ... FOR UPDATE (GMS parses and ignores the clause) so
//     that the rows it reads get locked;
//   - rewrites GMS's duplicate-key message into MySQL's.
type handler struct {
	mysql.Handler
	sessions *sessionRegistry
	// accounts decides who may use the fast path (mayUseFastPath).
	accounts *mysql_db.MySQLDb
	// processes is GMS's process list, for SHOW PROCESSLIST
	// (processlist.go).
	processes gsql.ProcessList
	// engine is GMS's engine, whose binder and analyzer the plan cache of
	// prepared statements calls (plancache.go); memory is the memory
	// manager of the contexts it analyses in.
	engine *sqle.Engine
	memory *gsql.MemoryManager
}

// sessionRegistry maps connection IDs to percdb sessions, so that the
// handler can reach the session of a connection. Every command looks its
// session up, from every connection at once, and sessions change only when
// connections come and go: lookups share a read lock.
type sessionRegistry struct {
	mu sync.RWMutex
	m  map[uint32]*Session
}

func newSessionRegistry() *sessionRegistry {
	return &sessionRegistry{m: make(map[uint32]*Session)}
}

func (r *sessionRegistry) add(id uint32, s *Session) {
	r.mu.Lock()
	r.m[id] = s
	r.mu.Unlock()
	s.onEnd = func() { r.remove(id, s) }
}

func (r *sessionRegistry) remove(id uint32, s *Session) {
	r.mu.Lock()
	if r.m[id] == s {
		delete(r.m, id)
	}
	r.mu.Unlock()
}

func (r *sessionRegistry) get(id uint32) *Session {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[id]
}

// sessionFor returns the session of c, creating it on the connection's
// first command (GMS creates it when asked for the parser options).
func (h *handler) sessionFor(c *mysql.Conn) (*Session, error) {
	if s := h.sessions.get(c.ConnectionID); s != nil {
		return s, nil
	}
	if _, err := h.Handler.ParserOptionsForConnection(c); err != nil {
		return nil, err
	}
	if s := h.sessions.get(c.ConnectionID); s != nil {
		return s, nil
	}
	return nil, mysql.NewSQLError(mysql.ERUnknownError, stateGeneral, "no session for connection %d", c.ConnectionID)
}

// NewConnection implements mysql.Handler: the greeting vitess sends next
// carries the connection's status flags, SERVER_STATUS_AUTOCOMMIT among
// them when sessions start in autocommit mode (status.go).
func (h *handler) NewConnection(c *mysql.Conn) {
	h.Handler.NewConnection(c)
	attachWire(c)
	c.StatusFlags = withStatusFlags(c.StatusFlags, defaultAutocommit(), false, false)
}

// ComQuery implements mysql.Handler.
func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	return h.run(ctx, c, query, func() error {
		cb, end := h.callResults(c, query, false, h.resultFilter(c, callback))
		if cs, coll, ok := setNamesCollate(query); ok {
			return h.setNames(ctx, c, cs, coll, func() error { return h.Handler.ComQuery(ctx, c, query, h.temporalFieldFilter(c, cb)) })
		}
		if sel, ok := doAsSelect(query); ok {
			if err := h.doQuery(ctx, c, sel); err != nil {
				return err
			}
			return cb(&sqltypes.Result{}, false)
		}
		if ok, err := h.ownStatement(ctx, c, query, cb); ok {
			return err
		}
		if s := h.cacheSession(c); s != nil {
			ok, err, next := h.fastQuery(ctx, c, s, query, cb)
			if ok {
				return err
			}
			cb = next
			if ok, err := h.cachedQuery(ctx, c, s, templateFor(s, query), query, textCallback(h.temporalFieldFilter(c, cb))); ok {
				return end(err)
			}
		}
		h.planDatabaseForText(c, query)
		return end(h.Handler.ComQuery(ctx, c, query, h.temporalFieldFilter(c, cb)))
	})
}

// ddlAttempts bounds how often a DDL statement that lost a write conflict
// to another DDL is run again.
const ddlAttempts = 20

// run runs one statement with fn. Every DDL statement writes the schema
// version key, so two DDLs at once conflict even on unrelated tables; a
// DDL that was its transaction's only work is therefore run again when it
// loses (a write conflict, or a schema change it could not wait for), as MySQL, which serializes DDL, never fails one with 1213. (A DDL
// after other writes of an explicit transaction commits them too, and is
// not run again: they would be lost.)
//
// A statement of a pessimistic transaction that met a commit newer than
// its snapshot on a key it locks, being the transaction's first to read,
// runs again at a fresh snapshot (pessimistic.go), up to
// maxStatementRetries times, as long as nothing of it reached the client.
// So does an autocommit write of a session in pessimistic mode that lost
// a write conflict at its commit (autocommitRetries).
func (h *handler) run(ctx context.Context, c *mysql.Conn, query string, fn func() error) error {
	retries := 0
	var locking *Session // a session whose autocommit write runs again pessimistically
	defer func() {
		if locking != nil {
			locking.lockAutocommit = false
		}
	}()
	for attempt := 1; ; attempt++ {
		// A connection's first command creates its session: here, before
		// the statement, so that begin prepares it as any other (a BEGIN
		// PESSIMISTIC as the first command must start a pessimistic
		// transaction).
		// (When it cannot be made here, s stays nil and GMS reports why.)
		s, _ := h.sessionFor(c)
		retry := attempt < ddlAttempts && isDDL(query) && (s == nil || !s.hasWrites())
		auto := s != nil && s.autocommitRetries(query)
		if s != nil {
			s.stepsCommitted, s.insertRaced = false, false
			if attempt == 1 {
				s.beginDiagnostics(query) // compat_diagarea.go
			}
			s.beginDrop(ctx, query) // compat_dropnames.go
		}
		h.begin(s, query)
		err := h.end(ctx, c, s, query, recoverPanic(query, func() error {
			// LOCK TABLES held by this node's sessions (tablelocks.go).
			if s != nil {
				if err := s.admitStatement(ctx, query); err != nil {
					return err
				}
			}
			err := fn()
			if s != nil {
				// Grant tables the statement wrote in place are stored,
				// whether or not it failed part way (grantreload.go).
				if perr := s.persistGrantWrites(ctx, err != nil); perr != nil && err == nil {
					err = perr
				}
			}
			return err
		}))
		if s != nil && s.stepsCommitted {
			// Part of the statement is committed: running it again
			// would repeat that part (ADD INDEX twice).
			retry = false
		}
		if err != nil && s != nil {
			moved, refused := s.retryAfterConflict(ctx, s.sentRows)
			if moved || auto && !s.sentRows && (isConflict(err) || s.insertRaced) {
				if retries++; retries < maxStatementRetries {
					if auto {
						locking, s.lockAutocommit = s, true
					}
					continue
				}
				return conflictAfterRetries(err)
			}
			if refused != nil {
				err = withRefusal(err, refused)
			}
		}
		if se, ok := err.(*mysql.SQLError); !retry || !ok || (se.Num != codeDeadlock && se.Num != codeSchemaChanged) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		}
	}
}

// recoverPanic runs fn, the work of one statement, and turns a panic in
// it (a defect in GMS's parser, planner or executor, or in percdb's) into
// that statement's error, 1105 with the panic's message. vitess would
// otherwise recover it in the connection's goroutine and close the
// connection, so the client would lose its session for one bad
// statement. The stack is logged once, here.
func recoverPanic(query string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			logrus.WithField("query", query).Errorf("statement panicked: %v\n%s", r, debug.Stack())
			err = mysql.NewSQLError(codeUnknown, stateGeneral, "internal error: %v", r)
		}
	}()
	return fn()
}

// isDDL reports whether query changes the catalog: CREATE, DROP, ALTER or
// RENAME, after any leading comments.
func isDDL(query string) bool {
	return startsWithWord(query, "create", "drop", "alter", "rename")
}

// resultFilter wraps the callback of a text query, through which vitess
// writes an OK packet when the result has no columns, and fixes three
// things:
//   - the status flags, which GMS sets its own way just before (see
//     status.go);
//   - the fractional digits of DATETIME(n) and TIMESTAMP(n) values
//     (compat_temporal.go), and the text of DOUBLE and FLOAT values
//     (compat_doubles.go);
//   - the info text GMS puts in the OK packet of SQL-level PREPARE
//     ("Statement prepared"): vitess writes info as a one-byte marker
//     and the rest of the packet, which the mariadb client, expecting a
//     length-encoded string there, rejects as a malformed packet.
func (h *handler) resultFilter(c *mysql.Conn, callback mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	return func(res *sqltypes.Result, more bool) error {
		okWithoutRows(res) // compat_okrows.go
		h.noteRows(c, res)
		if res != nil && len(res.Rows) > 0 {
			padFractions(res)
			doubleTexts(res) // compat_doubles.go
		}
		if s := h.sessions.get(c.ConnectionID); s != nil {
			s.narrowResults(res)                      // charsetresults.go
			updateInfoWarnings(res, s.WarningCount()) // compat_diagarea.go
			if res != nil && len(res.Fields) == 0 {
				// Every statement's, in order: in a multi-statement
				// query each OK packet gets its own.
				answerOKInfo(c, res.Info, s.WarningCount()) // compat_diagarea.go
			}
		}
		if res != nil && len(res.Fields) == 0 {
			if res.Info == "Statement prepared" {
				res.Info = ""
			}
			h.setStatusFlags(c)
		}
		return callback(res, more)
	}
}

// statusFilter wraps the callback of a prepared statement's execution by
// GMS, so that an OK packet carries percdb's status flags (status.go) and
// column definitions MySQL's decimals (compat_fields.go).
func (h *handler) statusFilter(c *mysql.Conn, callback func(*sqltypes.Result) error) func(*sqltypes.Result) error {
	return func(res *sqltypes.Result) error {
		okWithoutRows(res) // compat_okrows.go
		h.noteRows(c, res)
		if res != nil && len(res.Fields) == 0 {
			h.setStatusFlags(c)
			if s := h.sessions.get(c.ConnectionID); s != nil {
				updateInfoWarnings(res, s.WarningCount()) // compat_diagarea.go
			}
		}
		if res != nil {
			fixFields(res.Fields)
			h.fixPrecisions(c, res.Fields)
			h.fixAliasSpellings(c, res.Fields)
		}
		return callback(res)
	}
}

// setStatusFlags sets the status flags of c from its session, if it has
// one yet.
func (h *handler) setStatusFlags(c *mysql.Conn) {
	if s := h.sessions.get(c.ConnectionID); s != nil {
		setStatusFlags(c, s, s.autocommit())
	}
}

// ComMultiQuery implements mysql.Handler. Each call runs one statement of
// the query and returns the rest, none after a statement that failed: as
// in MySQL, an error ends a multi-statement query. (vitess, having sent
// the error packet, would run the rest and send its results after the
// error, which the client takes for the answers to its next commands.)
func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	var rest string
	err := h.run(ctx, c, query, func() error {
		cb, end := h.callResults(c, query, false, h.resultFilter(c, callback))
		if cs, coll, ok := setNamesCollate(query); ok {
			return h.setNames(ctx, c, cs, coll, func() (err error) {
				rest, err = h.Handler.ComMultiQuery(ctx, c, query, h.temporalFieldFilter(c, cb))
				return err
			})
		}
		if sel, ok := doAsSelect(query); ok {
			var err error
			if oneStatement(query) {
				err = h.doQuery(ctx, c, sel)
			} else {
				rest, err = h.Handler.ComMultiQuery(ctx, c, sel, dropRows)
			}
			if err != nil {
				return err
			}
			return cb(&sqltypes.Result{}, rest != "")
		}
		// An ADMIN WATCH ... DO BEGIN ... END holds semicolons of its
		// own: it is one statement.
		if oneStatement(query) || isAdminVerb(query, "watch") {
			if ok, err := h.ownStatement(ctx, c, query, cb); ok {
				rest = ""
				return err
			}
		}
		if s := h.cacheSession(c); s != nil {
			// The fast path runs a query of one statement only (the
			// TiDB parser refuses more), which leaves no rest.
			ok, err, next := h.fastQuery(ctx, c, s, query, cb)
			if ok {
				rest = ""
				return err
			}
			cb = next
			if oneStatement(query) {
				if ok, err := h.cachedQuery(ctx, c, s, templateFor(s, query), query, textCallback(h.temporalFieldFilter(c, cb))); ok {
					rest = ""
					return end(err)
				}
			}
		}
		var err error
		rest, err = h.Handler.ComMultiQuery(ctx, c, query, h.temporalFieldFilter(c, cb))
		return end(err)
	})
	if err != nil {
		rest = ""
	}
	return rest, err
}

// ComStmtExecute implements mysql.Handler. The statements of the fast
// path (fastpath_handler.go) run there; the others from the session's
// plan cache (plancache.go) when their plans can be cached, through GMS
// otherwise.
func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	callback = h.narrowFilter(c, binaryFilter(h.preparedOKFilter(c, callback)))
	return h.run(ctx, c, prepare.PrepareStmt, func() error {
		if sel, ok := doPrepared(prepare); ok {
			return h.executeDo(ctx, c, sel, prepare, h.statusFilter(c, callback))
		}
		if ok, err := h.executeOwn(ctx, c, prepare.PrepareStmt, h.statusFilter(c, callback)); ok {
			return err
		}
		if isCall(prepare.PrepareStmt) {
			// Its result sets before its answer (procresults.go).
			cb, end := h.callResults(c, prepare.PrepareStmt, true, func(res *sqltypes.Result, _ bool) error { return callback(res) })
			h.planDatabaseForExecution(c, prepare.PrepareStmt)
			return end(h.Handler.ComStmtExecute(ctx, c, prepare, h.statusFilter(c, func(res *sqltypes.Result) error { return cb(res, false) })))
		}
		if s := h.cacheSession(c); s != nil {
			ok, err, next := h.fastExecute(ctx, c, s, prepare, callback)
			if ok {
				return err
			}
			callback = next
			if ok, err := h.cachedExecute(ctx, c, s, prepare, callback); ok {
				return err
			}
		}
		h.planDatabaseForExecution(c, prepare.PrepareStmt)
		return h.Handler.ComStmtExecute(ctx, c, prepare, h.statusFilter(c, callback))
	})
}

// ComPrepare implements mysql.Handler. A statement that fails to prepare
// is forgotten: vitess keeps its PrepareData (and statement ID) anyway.
func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	var fields []*querypb.Field
	query = clientPrepare(c, query, prepare)
	if fields, ok := h.prepareOwn(ctx, c, query); ok {
		return fields, nil
	}
	err := checkPlaceholders(query)
	if err == nil {
		setOpPlaceholders(query, prepare)
		err = recoverPanic(query, func() (err error) {
			fields, err = h.Handler.ComPrepare(ctx, c, query, prepare)
			return err
		})
	}
	if err != nil {
		delete(c.PrepareData, prepare.StatementID)
		return nil, finishSQLError(err)
	}
	if prepareDo(c, prepare) {
		return nil, nil
	}
	fixFields(fields)
	h.fixPrecisions(c, fields)
	h.fixAliasSpellings(c, fields)
	if s := h.sessions.get(c.ConnectionID); s != nil {
		h.fastPrepare(s, query, prepare)
		res := &sqltypes.Result{Fields: fields}
		s.narrowResults(res) // charsetresults.go
		fields = res.Fields
	}
	return fields, nil
}

// ComInitDB implements mysql.Handler.
func (h *handler) ComInitDB(c *mysql.Conn, schemaName string) error {
	return finishSQLError(h.Handler.ComInitDB(c, schemaName))
}

// ComResetConnection implements mysql.Handler. GMS's own dereferences the
// connection's session, which GMS creates only at the first query; a
// connection that has run nothing has nothing to reset.
func (h *handler) ComResetConnection(c *mysql.Conn) error {
	if h.sessions.get(c.ConnectionID) == nil {
		return nil
	}
	err := h.Handler.ComResetConnection(c)
	h.setStatusFlags(c)
	return finishSQLError(err)
}

// errNotReplicationSource answers the replication commands: percdb keeps no
// binary log, so it serves no replicas.
func errNotReplicationSource(cmd string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSUnknownSQLState, "%s: percdb is not a replication source (it keeps no binary log)", cmd)
}

// ComRegisterReplica implements mysql.BinlogReplicaHandler. Without it
// (the embedded mysql.Handler hides GMS's methods) vitess answers
// COM_REGISTER_REPLICA with nothing and then fails the connection's next
// command; with it, the client gets an error and the connection closes.
func (h *handler) ComRegisterReplica(c *mysql.Conn, host string, port uint16, user, password string) error {
	return errNotReplicationSource("COM_REGISTER_REPLICA")
}

// ComBinlogDumpGTID implements mysql.BinlogReplicaHandler; see
// ComRegisterReplica.
func (h *handler) ComBinlogDumpGTID(c *mysql.Conn, logFile string, logPos uint64, gtidSet mysql.GTIDSet) error {
	return errNotReplicationSource("COM_BINLOG_DUMP_GTID")
}

// begin prepares the session s (nil before a connection's first command)
// for one statement.
func (h *handler) begin(s *Session, query string) {
	if s != nil {
		s.fullScan.Store(false)
		s.forUpdate = isSelectForUpdate(query)
		s.lockWait = compat.LockWaitDefault
		if s.forUpdate {
			s.lockWait = compat.LockWaitOf(query)
		}
		s.beginning = isBegin(query)
		s.sentRows = false
		s.beginCharacteristics(query)
		if t, ok := s.GetTransaction().(*Transaction); ok {
			t.keptInStatement = false
			if t.kv != nil {
				t.kv.BeginStatement()
			}
		}
	}
}

// end ends the statement begin prepared, whose outcome is err, and
// returns the error for the client.
func (h *handler) end(ctx context.Context, c *mysql.Conn, s *Session, query string, err error) error {
	if s == nil {
		// GMS created the session during the connection's first
		// command; its transaction must be ended all the same.
		if s = h.sessions.get(c.ConnectionID); s == nil {
			return finishSQLError(err)
		}
	}
	s.forUpdate, s.beginning, s.beginMode = false, false, ""
	s.lockWait = compat.LockWaitDefault
	if err != nil {
		s.statementFailed(ctx)
	} else {
		s.statementSucceeded()
	}
	autocommit := s.autocommit()
	s.endCharacteristics(ctx, err, autocommit)
	// For the EOF packet vitess writes after a result set.
	setStatusFlags(c, s, autocommit)
	if err != nil {
		err = foreignkey.Error(s.provider.catalogs.Cached(), s.GetCurrentDatabase(), err)
		err = callArgumentsError(s.GetCurrentDatabase(), err) // procexec.go
		err = functionError(s.GetCurrentDatabase(), err)      // storedfunc.go
	}
	err = finishSQLError(err)
	err = s.endDrop(ctx, err)                 // compat_dropnames.go
	err = s.missingTableText(ctx, query, err) // compat_tabletext.go
	recordError(s, err)
	return err
}

// isSelectForUpdate reports whether query locks what it reads: whether it
// has the words FOR UPDATE. A false positive (the words inside a string
// literal) only takes needless locks.
func isSelectForUpdate(query string) bool {
	q := query
	for {
		i := indexFold(q, "update")
		if i < 0 {
			return false
		}
		end := i + len("update")
		before := strings.TrimRight(q[:i], " \t\r\n")
		spaced := len(before) < i
		if spaced && len(before) >= 3 && strings.EqualFold(before[len(before)-3:], "for") &&
			(len(before) == 3 || !lexical.IsWordByte(before[len(before)-4])) &&
			(end == len(q) || !lexical.IsWordByte(q[end])) {
			return true
		}
		q = q[end:]
	}
}

// indexFold is lexical.IndexFold: strings.Index, ASCII case-insensitive,
// for a sub that starts with a lower-case letter.
func indexFold(s, sub string) int { return lexical.IndexFold(s, sub) }

// admin runs CHECK TABLE and the ADMIN statements (checktable.go,
// package ddljob).
func (h *handler) admin(ctx context.Context, c *mysql.Conn, st adminStatement, callback mysql.ResultSpoolFn) error {
	s, err := h.sessionFor(c)
	if err != nil {
		return err
	}
	var res *sqltypes.Result
	switch {
	case st.lockWaits:
		var err error
		if res, err = s.provider.lockWaits.show(ctx); err != nil {
			return err
		}
	case st.observers:
		var err error
		if res, err = s.provider.showObservers(ctx); err != nil {
			return err
		}
	case st.tp == ast.AdminShowDDLJobs:
		res = s.provider.jobs.Show()
	case st.tp == ast.AdminCancelDDLJobs:
		res = s.provider.jobs.Cancel(st.jobIDs)
	default:
		var err error
		if res, err = s.provider.runCheckTable(ctx, s.GetCurrentDatabase(), st.tables, !st.mysqlStyle); err != nil {
			return err
		}
	}
	return callback(res, false)
}

// ownStatement runs the statements GMS does not parse, which percdb
// serves itself: CHECK TABLE and the ADMIN statements (checktable.go),
// SPLIT TABLE and SHOW TABLE ... REGIONS (split.go), SHOW CREATE USER
// (showcreateuser.go), ALTER USER ... ACCOUNT LOCK (accountlock.go),
// SET ROLE and GRANT/REVOKE ... CURRENT_USER() (roles.go), BEGIN PESSIMISTIC / BEGIN OPTIMISTIC (pessimistic.go), CHANGEFEED
// (changefeed.go) and ADMIN WATCH / UNWATCH (observers.go). It reports
// whether query was one of them.
func (h *handler) ownStatement(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (bool, error) {
	// A statement that is all one version comment, as dumps write
	// them (/*!80001 ALTER USER ... DEFAULT ROLE NONE */), is its body.
	query = versionCommentBody(query)
	if st, ok := parseAdmin(query); ok {
		return true, h.admin(ctx, c, st, cb)
	}
	if st, ok := parseDiagStatement(query); ok { // compat_diagarea.go
		if s, err := h.sessionFor(c); err == nil {
			return true, h.diagnosticsStatement(gsql.NewContext(ctx, gsql.WithSession(s)), s, st, cb)
		}
	}
	if st, ok := parseSplit(query); ok {
		return true, h.split(ctx, c, st, cb)
	}
	if account, ok := parseShowCreateUser(query); ok {
		return true, h.showCreateUser(ctx, c, account, cb)
	}
	if st, ok := parseAccountLock(query); ok {
		return true, h.alterUserLock(ctx, c, st, cb)
	}
	if st, ok := parseRoleStatement(query); ok {
		return true, h.roleStatement(ctx, c, st, cb)
	}
	if ok, err := h.mysqlTableDDL(ctx, c, query, cb); ok {
		return true, err
	}
	if ok, err := h.sqlPreparedOwn(ctx, c, query, cb); ok {
		return true, err
	}
	if full, ok := isShowProcessList(query); ok && h.processes != nil {
		if s := h.sessions.get(c.ConnectionID); s != nil {
			ps := s.provider.processes(ctx, h.processes.Processes(), h.sessions, time.Now())
			return true, cb(showProcessList(ps, full), false)
		}
	}
	if st, ok, err := parseWatch(query); ok {
		if err != nil {
			return true, err
		}
		return true, h.watch(ctx, c, st, cb)
	}
	if st, ok, err := parseChangefeed(query); ok {
		if err != nil {
			return true, err
		}
		return true, h.changefeed(ctx, c, st, cb)
	}
	if s := h.sessions.get(c.ConnectionID); s != nil && lexical.LeadingWordIs(query, "flush") {
		if ok, err := s.flushStatement(ctx, query); ok || err != nil {
			if err != nil {
				return true, err
			}
			return true, cb(&sqltypes.Result{}, false)
		}
	}
	if op, analyze, ok := parseMaintenance(query); ok {
		if s, err := h.sessionFor(c); err == nil {
			s.maintenanceOp = op
			defer func() { s.maintenanceOp = "" }()
			return true, h.Handler.ComQuery(ctx, c, analyze, h.temporalFieldFilter(c, cb))
		}
	}
	if mode, begin, ok := beginMode(query); ok {
		if s := h.sessions.get(c.ConnectionID); s != nil {
			s.beginMode = mode
		}
		return true, h.Handler.ComQuery(ctx, c, begin, h.temporalFieldFilter(c, cb))
	}
	return false, nil
}

// oneStatement reports whether query holds one statement: no semicolon
// before its end. (A semicolon inside a string literal makes it look like
// more; the statements ownStatement serves have none.) Clients that
// allow multi-statements (the mariadb client, mysqlcheck) send every
// query through ComMultiQuery.
func oneStatement(query string) bool {
	return !strings.Contains(strings.TrimRight(query, "; \t\r\n"), ";")
}

// cacheSession returns the session of c when its statement may run on the
// fast path or from a plan cache (the account may, no temporary table
// hides a table, and the statement opens no locking transaction), nil
// otherwise.
func (h *handler) cacheSession(c *mysql.Conn) *Session {
	if s := h.sessions.get(c.ConnectionID); s != nil && mayUseFastPath(h.accounts, s) && !s.selectLocks() {
		return s
	}
	return nil
}

// noteRows records that rows of the current statement are on their way
// to the client: it can no longer run again.
func (h *handler) noteRows(c *mysql.Conn, res *sqltypes.Result) {
	if res == nil || len(res.Rows) == 0 {
		return
	}
	if s := h.sessions.get(c.ConnectionID); s != nil {
		s.sentRows = true
	}
}
