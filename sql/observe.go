package sql

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/sql/console"
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
	metrics *nodeMetrics
	slow    *slowLog
	logger  *slog.Logger
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
	h.metrics.connections.Inc()
	h.metrics.accepted.Inc()
}

// ConnectionClosed implements mysql.Handler.
func (h *observedHandler) ConnectionClosed(c *mysql.Conn) {
	h.limitHandler.ConnectionClosed(c)
	h.openConns.Add(-1)
	h.metrics.connections.Dec()
}

// ComQuery implements mysql.Handler.
func (h *observedHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	st := h.begin(c, query, false)
	err := h.limitHandler.ComQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		st.count(res)
		return callback(res, more)
	})
	h.end(c, st, query, err)
	return err
}

// ComMultiQuery implements mysql.Handler. Each call runs the first
// statement of query and is one statement here.
func (h *observedHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	st := h.begin(c, query, false)
	rest, err := h.limitHandler.ComMultiQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		st.count(res)
		return callback(res, more)
	})
	first := query
	if rest != "" && len(rest) < len(query) {
		first = query[:len(query)-len(rest)]
	}
	h.end(c, st, first, err)
	return rest, err
}

// ComStmtExecute implements mysql.Handler.
func (h *observedHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	st := h.begin(c, prepare.PrepareStmt, true)
	err := h.limitHandler.ComStmtExecute(ctx, c, prepare, func(res *sqltypes.Result) error {
		st.count(res)
		return callback(res)
	})
	h.end(c, st, prepare.PrepareStmt, err)
	return err
}

// stmtObservation is what the handler notes of one statement while it
// runs.
type stmtObservation struct {
	start        time.Time
	rowsSent     uint64
	rowsAffected uint64
	// resultSet is set once the statement's result had columns.
	resultSet bool
	// before is the transaction the session had handed out when the
	// statement began, and whether it had finished then: a finished one
	// still there at the end is not the statement's.
	before         *Transaction
	beforeFinished bool
	// endedSeq is the session's count of ended transactions then.
	endedSeq uint64
	// prepared is set for the execution of a prepared statement.
	prepared bool
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

// begin starts observing statement query (a prepared statement's text
// when prepared) on connection c.
func (h *observedHandler) begin(c *mysql.Conn, query string, prepared bool) *stmtObservation {
	st := &stmtObservation{start: time.Now(), prepared: prepared}
	if s := h.sessions.get(c.ConnectionID); s != nil {
		s.beginStatement(query, prepared, st.start)
		s.rowsExamined.Store(0)
		st.endedSeq = s.endedSeq
		if s.started != nil {
			st.before, st.beforeFinished = s.started, s.started.finished
		}
	}
	return st
}

// end counts the statement query observed by st, which ended with err,
// and writes it to the slow log if it was slow.
func (h *observedHandler) end(c *mysql.Conn, st *stmtObservation, query string, err error) {
	d := time.Since(st.start)
	tp := classifyStmt(query)
	h.metrics.statement(tp, d, err != nil)
	s := h.sessions.get(c.ConnectionID)
	if s == nil {
		return
	}
	s.endStatement(st.start.Add(d))
	h.recordDigest(s, st, query, st.prepared, d, err != nil)
	vars := s.provider.fast.sessionVars(s)
	if !vars.slowOK || d < vars.longQuery {
		return
	}
	h.metrics.slow.Inc()
	host, ip := splitHostPort(c.RemoteAddr())
	e := &slowEntry{
		written: time.Now(), start: st.start, queryTime: d,
		user: c.User, host: host, ip: ip, connID: c.ConnectionID,
		rowsSent: st.rowsSent, rowsAffected: st.rowsAffected, rowsExamined: s.rowsExamined.Load(),
		db: s.GetCurrentDatabase(), query: query,
	}
	e.startTS, e.commitTS = st.timestamps(s)

	var se *mysql.SQLError
	if errors.As(err, &se) {
		e.errno = se.Num
	} else if err != nil {
		e.errno = mysql.ERUnknownError
	}
	h.recentSlow.Add(e.consoleEntry())
	if !slowLogEnabled() {
		return
	}
	if werr := h.slow.write(e); werr != nil {
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
