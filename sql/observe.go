package sql

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/sql/console"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/nodemetrics"
	"github.com/percdb/percdb/sql/slowlog"
	"github.com/percdb/percdb/sql/stmtsummary"
)

// observedHandler is the outermost MySQL handler: it sees every
// statement whole, from arrival to its last packet, and counts it in the
// node's metrics and, when it was slow, writes it to the slow query log.
// What it measures includes every limit and retry the inner handlers
// apply.
type observedHandler struct {
	// *limitHandler, not mysql.Handler, for the reason limitHandler
	// embeds *handler: the replication methods stay visible to vitess.
	*limitHandler
	metrics *nodemetrics.Metrics
	slow    *slowlog.Log
	logger  *slog.Logger
	// statsOff is the node's percdb_statement_stats turned OFF
	// (stmtstats.go): statements are then not counted, only shown in
	// the process list.
	statsOff *atomic.Bool
	// openConns counts the open connections, for /status.
	openConns *atomic.Int64
	// recentSlow keeps the latest slow statements for the console,
	// whether or not the slow log is on.
	recentSlow *console.SlowRing
	// lastLogErr is when a slow log write error was last logged (Unix
	// nanoseconds), so that a failing disk logs once a minute, not once
	// a statement.
	lastLogErr atomic.Int64
}

// NewConnection implements mysql.Handler.
func (h *observedHandler) NewConnection(c *mysql.Conn) {
	h.limitHandler.NewConnection(c)
	h.openConns.Add(1)
	h.metrics.Connected()
}

// ConnectionClosed implements mysql.Handler.
func (h *observedHandler) ConnectionClosed(c *mysql.Conn) {
	h.limitHandler.ConnectionClosed(c)
	h.openConns.Add(-1)
	h.metrics.Disconnected()
}

// ComQuery implements mysql.Handler.
func (h *observedHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	st := h.begin(c, query, nil)
	err := h.limitHandler.ComQuery(ctx, c, query, st.textResults(callback))
	h.end(c, st, query, err)
	return err
}

// ComMultiQuery implements mysql.Handler. Each call runs the first
// statement of query and is one statement here.
func (h *observedHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	st := h.begin(c, query, nil)
	rest, err := h.limitHandler.ComMultiQuery(ctx, c, query, st.textResults(callback))
	first := query
	if rest != "" && len(rest) < len(query) {
		first = query[:len(query)-len(rest)]
	}
	h.end(c, st, first, err)
	return rest, err
}

// ComPrepare implements mysql.Handler. What observing the statement's
// executions needs of its text (its type, its digest) is worked out
// here, once.
func (h *observedHandler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	fields, err := h.limitHandler.ComPrepare(ctx, c, query, prepare)
	// Without statistics nothing is worked out: an execution after they
	// were turned on works it out then (preparedOf).
	if err == nil && !h.statsOff.Load() {
		if s := h.sessions.get(c.ConnectionID); s != nil {
			s.observed.prepare(c, s, prepare)
		}
	}
	return fields, err
}

// ComStmtExecute implements mysql.Handler.
func (h *observedHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	st := h.begin(c, prepare.PrepareStmt, prepare)
	err := h.limitHandler.ComStmtExecute(ctx, c, prepare, st.binaryResults(callback))
	h.end(c, st, prepare.PrepareStmt, err)
	return err
}

// observedSession is what observedHandler keeps in a session. Only the
// connection's goroutine uses it.
type observedSession struct {
	// st observes the running statement; the session's statements take
	// turns in it, so that observing one allocates nothing.
	st stmtObservation
	// prepared is what was worked out for each prepared statement, by
	// statement ID; last is the one executed last (most connections run
	// one statement again and again).
	prepared map[uint32]*preparedObservation
	last     *preparedObservation
}

// maxPreparedObservations bounds the prepared statements a session
// keeps observations of. vitess does not tell a handler of COM_STMT_CLOSE:
// past the bound, those of statements closed since are dropped.
const maxPreparedObservations = 1024

// preparedObservation is what observing a prepared statement's
// executions needs, worked out at COM_STMT_PREPARE.
type preparedObservation struct {
	// prepare is the statement it is of (a statement ID is never
	// reused on a connection, but vitess keeps a failed prepare's).
	prepare *mysql.PrepareData
	tp      lexical.Kind
	digest  stmtDigest
	// slot remembers the statement's row in the statement summary.
	slot stmtsummary.Slot
}

// prepare works out the observation of prepare, a statement of session
// s that connection c has just prepared.
func (os *observedSession) prepare(c *mysql.Conn, s *Session, prepare *mysql.PrepareData) *preparedObservation {
	if os.prepared == nil {
		os.prepared = make(map[uint32]*preparedObservation)
	}
	if len(os.prepared) >= maxPreparedObservations {
		for id := range os.prepared {
			if _, open := c.PrepareData[id]; !open {
				delete(os.prepared, id)
			}
		}
		if len(os.prepared) >= maxPreparedObservations {
			clear(os.prepared)
		}
		os.last = nil
	}
	po := &preparedObservation{prepare: prepare, tp: lexical.Classify(prepare.PrepareStmt)}
	if s.provider.digests != nil {
		po.digest = s.digests.ofPrepared(prepare.PrepareStmt)
	}
	os.prepared[prepare.StatementID] = po
	return po
}

// preparedOf returns the observation of prepare, working it out if the
// session has none (one dropped past the bound).
func (os *observedSession) preparedOf(c *mysql.Conn, s *Session, prepare *mysql.PrepareData) *preparedObservation {
	if po := os.last; po != nil && po.prepare == prepare {
		return po
	}
	po := os.prepared[prepare.StatementID]
	if po == nil || po.prepare != prepare {
		po = os.prepare(c, s, prepare)
	}
	os.last = po
	return po
}

// stmtObservation is what the handler notes of one statement while it
// runs.
type stmtObservation struct {
	start time.Time
	// latency and ended are set as the statement ends: how long it took
	// and when it ended.
	latency      time.Duration
	ended        time.Time
	rowsSent     uint64
	rowsAffected uint64
	// resultSet is set once the statement's result had columns.
	resultSet bool
	// stats is set when the statement is counted in the statistics
	// (percdb_statement_stats was ON as it began).
	stats bool
	// before is the transaction the session had handed out when the
	// statement began, and whether it had finished then: a finished one
	// still there at the end is not the statement's.
	before         *Transaction
	beforeFinished bool
	// endedSeq is the session's count of ended transactions then.
	endedSeq uint64
	// s is the statement's session, nil when it had none yet (the
	// connection's first command makes it).
	s *Session
	// prepared is the prepared statement executed, nil for a query.
	prepared *preparedObservation
	// text and binary are where the statement's results go once
	// counted; countText and countBinary, st's methods bound once, are
	// what the inner handler sends them to.
	text        mysql.ResultSpoolFn
	binary      func(*sqltypes.Result) error
	countText   mysql.ResultSpoolFn
	countBinary func(*sqltypes.Result) error
}

// textResults returns the callback that counts a query's results and
// passes them on to callback.
func (st *stmtObservation) textResults(callback mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	if !st.stats {
		return callback
	}
	st.text = callback
	if st.countText == nil {
		st.countText = st.textResult
	}
	return st.countText
}

// binaryResults returns the callback that counts a prepared statement's
// results and passes them on to callback.
func (st *stmtObservation) binaryResults(callback func(*sqltypes.Result) error) func(*sqltypes.Result) error {
	if !st.stats {
		return callback
	}
	st.binary = callback
	if st.countBinary == nil {
		st.countBinary = st.binaryResult
	}
	return st.countBinary
}

func (st *stmtObservation) textResult(res *sqltypes.Result, more bool) error {
	st.count(res)
	return st.text(res, more)
}

func (st *stmtObservation) binaryResult(res *sqltypes.Result) error {
	st.count(res)
	return st.binary(res)
}

// count notes a result packet's rows: the rows of a result set, or the
// affected rows of an OK packet (one without columns; vitess fills
// RowsAffected of a result set with its row count, which MySQL's
// Rows_affected does not mean).
func (st *stmtObservation) count(res *sqltypes.Result) {
	if res == nil {
		return
	}
	// GMS sends a result set's columns with its first batch of rows only.
	st.resultSet = st.resultSet || len(res.Fields) > 0
	if st.resultSet {
		st.rowsSent += uint64(len(res.Rows))
	} else {
		st.rowsAffected += res.RowsAffected
	}
}

// begin starts observing statement query on connection c: prepare's
// execution, or a query when prepare is nil.
func (h *observedHandler) begin(c *mysql.Conn, query string, prepare *mysql.PrepareData) *stmtObservation {
	start := time.Now()
	stats := !h.statsOff.Load()
	s := h.sessions.get(c.ConnectionID)
	if s == nil {
		st := &stmtObservation{start: start, stats: stats}
		if prepare != nil && stats {
			st.prepared = &preparedObservation{prepare: prepare, tp: lexical.Classify(query)}
		}
		return st
	}
	st := &s.observed.st
	*st = stmtObservation{start: start, s: s, stats: stats, countText: st.countText, countBinary: st.countBinary}
	// The process list is not statistics: it shows the statement either
	// way (KILL and SHOW PROCESSLIST need it).
	s.beginStatement(query, prepare != nil, start)
	if !stats {
		return st
	}
	if prepare != nil {
		st.prepared = s.observed.preparedOf(c, s, prepare)
	}
	s.rowsExamined.Store(0)
	st.endedSeq = s.endedSeq
	if s.started != nil {
		st.before, st.beforeFinished = s.started, s.started.finished
	}
	return st
}

// end counts the statement query observed by st, which ended with err,
// and writes it to the slow log if it was slow.
func (h *observedHandler) end(c *mysql.Conn, st *stmtObservation, query string, err error) {
	// One clock read gives both the latency (by the monotonic clock) and
	// the end (by the wall clock): cheaper than Since and Add.
	ended := time.Now()
	d := ended.Sub(st.start)
	// The callbacks are the statement's: not kept past it.
	st.text, st.binary = nil, nil
	if !st.stats {
		s := st.s
		if s == nil {
			s = h.sessions.get(c.ConnectionID)
		}
		if s != nil {
			s.endStatement(ended, s.GetCurrentDatabase())
		}
		return
	}
	var tp lexical.Kind
	if st.prepared != nil {
		tp = st.prepared.tp
	} else {
		tp = lexical.Classify(query)
	}
	h.metrics.Statement(tp, d, err != nil)
	s := st.s
	if s == nil {
		if s = h.sessions.get(c.ConnectionID); s == nil {
			return
		}
	}
	st.latency, st.ended = d, ended
	db := s.GetCurrentDatabase()
	s.endStatement(st.ended, db)
	h.recordDigest(s, st, query, db, err != nil)
	vars := s.provider.fast.sessionVars(s)
	if !vars.slowOK || d < vars.longQuery {
		return
	}
	h.metrics.SlowQuery()
	host, ip := slowlog.SplitHostPort(c.RemoteAddr())
	e := &slowlog.Entry{
		Written: time.Now(), Start: st.start, QueryTime: d,
		User: c.User, Host: host, IP: ip, ConnID: c.ConnectionID,
		RowsSent: st.rowsSent, RowsAffected: st.rowsAffected, RowsExamined: s.rowsExamined.Load(),
		DB: db, Query: query,
	}
	e.StartTS, e.CommitTS = st.timestamps(s)

	var se *mysql.SQLError
	if errors.As(err, &se) {
		e.Errno = se.Num
	} else if err != nil {
		e.Errno = mysql.ERUnknownError
	}
	h.recentSlow.Add(consoleEntry(e))
	if !slowlog.Enabled() {
		return
	}
	if werr := h.slow.Write(e); werr != nil {
		now := time.Now().UnixNano()
		if last := h.lastLogErr.Load(); now-last >= int64(time.Minute) && h.lastLogErr.CompareAndSwap(last, now) {
			h.logger.Error("slow query log", "err", werr)
		}
	}
}

// timestamps returns the start_ts and commit_ts of the transaction the
// statement ran in, as far as the session knows them: the transaction it
// holds, unless that one had finished before the statement began, or
// else the one it let go of during the statement (an autocommit
// statement's). Zeros when the statement ran in none (a fast-path read at
// the newest version) or the timestamps were not taken yet.
func (st *stmtObservation) timestamps(s *Session) (startTS, commitTS uint64) {
	if t := s.started; t != nil && t.kv != nil && (t != st.before || !st.beforeFinished) {
		return t.kv.KnownStartTS(), t.kv.CommitTS()
	}
	if s.endedSeq != st.endedSeq {
		return s.ended.startTS, s.ended.commitTS
	}
	return 0, 0
}
