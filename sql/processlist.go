package sql

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/tso"
)

// The process list (SHOW [FULL] PROCESSLIST, information_schema.
// PROCESSLIST) and the running transactions (information_schema.
// TIDB_TRX, TiDB's table) show what each connection is doing. GMS's
// process list knows only the statements GMS runs: a statement the fast
// path served left its connection in Sleep, its Time counted from the
// connection's previous GMS statement, its Info empty rather than NULL,
// and its State "running" for everything. percdb keeps its own record of
// each session's activity instead (sessionActivity), which
// observedHandler, the outermost handler, updates as every statement
// begins and ends, and takes from GMS's list only who is connected
// (user, host, database).
//
// A connection's transaction is as the session knew it at the last
// statement boundary: an open explicit transaction (its start_ts, the
// keys it buffered), or none. A transaction that a running statement
// began shows once that statement has taken a pessimistic lock (the
// lock wait view knows it) or has ended.

// sessionActivity is what a session is doing, written by the
// connection's goroutine and read by any (under mu).
type sessionActivity struct {
	mu sync.Mutex
	// running is set while a statement runs; command is "Query" or
	// "Execute" (a prepared statement), query its text.
	running bool
	command string
	query   string
	// since is when the statement began, or when the session went idle.
	since time.Time
	// txn is the session's open transaction at the last boundary.
	txn txnActivity
	// user and db are the session's user and default database at the
	// last boundary (GMS's process list learns the database only from
	// its own statements).
	user, db string
	// progress, set by long work of the running statement (an index
	// backfill, LOAD DATA), says how far it got; the process list shows
	// it as the statement's State (reportProgress).
	progress func() string
}

// txnActivity is a session's open transaction.
type txnActivity struct {
	// startTS is 0 when the session had no open transaction with a
	// start timestamp.
	startTS     uint64
	keys        int
	bytes       int
	pessimistic bool
}

// openTxn returns the open transaction of s at a statement boundary.
// Only the connection's goroutine may call it.
func (s *Session) openTxn() txnActivity {
	t := s.started
	if t == nil || t.finished || t.kv == nil || t.kv.KnownStartTS() == 0 {
		return txnActivity{}
	}
	return txnActivity{startTS: t.kv.KnownStartTS(), keys: t.kv.Len(), bytes: t.kv.Size(), pessimistic: t.kv.IsPessimistic()}
}

// beginStatement notes that statement query (a prepared one when
// prepared) began at start. Only the connection's goroutine calls it.
func (s *Session) beginStatement(query string, prepared bool, start time.Time) {
	cmd := "Query"
	if prepared {
		cmd = "Execute"
	}
	txn, user, db := s.openTxn(), s.Client().User, s.GetCurrentDatabase()
	a := &s.activity
	a.mu.Lock()
	a.running, a.command, a.query, a.since, a.txn, a.user, a.db = true, cmd, query, start, txn, user, db
	a.mu.Unlock()
}

// endStatement notes that the running statement ended at now, leaving
// the session in default database db. Only the connection's goroutine
// calls it.
func (s *Session) endStatement(now time.Time, db string) {
	txn := s.openTxn()
	a := &s.activity
	a.mu.Lock()
	a.running, a.query, a.since, a.txn, a.db, a.progress = false, "", now, txn, db, nil
	a.mu.Unlock()
}

// reportProgress makes progress the State of the statement that ctx (a
// *gsql.Context of a percdb session) runs, until the returned stop is
// called or the statement ends. progress is called by readers of the
// process list, from any goroutine: it must be cheap and safe for
// concurrent use. Without a session it does nothing.
func reportProgress(ctx context.Context, progress func() string) (stop func()) {
	gc, ok := ctx.(*gsql.Context)
	if !ok || gc.Session == nil {
		return func() {}
	}
	s, ok := gc.Session.(*Session)
	if !ok {
		return func() {}
	}
	a := &s.activity
	a.mu.Lock()
	a.progress = progress
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		a.progress = nil
		a.mu.Unlock()
	}
}

// activityNow returns a copy of what s is doing.
func (s *Session) activityNow() sessionActivity {
	a := &s.activity
	a.mu.Lock()
	defer a.mu.Unlock()
	return sessionActivity{running: a.running, command: a.command, query: a.query, since: a.since, txn: a.txn, user: a.user, db: a.db, progress: a.progress}
}

// processInfo is one connection as the process list shows it.
type processInfo struct {
	ID      uint32
	User    string
	Host    string
	DB      string
	Command string
	// Time is the seconds in the current state: since the statement
	// began, or since the connection went idle.
	Time  int64
	State string
	// Info is the running statement, "" when none (NULL in SQL).
	Info string
	// Txn is the connection's open transaction (StartTS 0: none).
	Txn txnActivity
	// TxnStart is when that transaction took its start timestamp.
	TxnStart time.Time
	// Since is when the current state began.
	Since time.Time
	// Waiting is set while the statement waits for another
	// transaction's row lock.
	Waiting bool
}

// Process states (MySQL's words where it has them).
const (
	stateExecuting   = "executing"
	stateLockWait    = "waiting for row lock"
	stateConnecting  = "login"
	commandSleep     = "Sleep"
	commandConnect   = "Connect"
	maxShortInfoText = 100
)

// processes returns the server's connections, by ID: who they are from
// GMS's process list, what they do from their sessions.
func (p *DatabaseProvider) processes(ctx context.Context, procs []gsql.Process, sessions *sessionRegistry, now time.Time) []processInfo {
	// The pessimistic transactions' start_ts by connection, and the
	// connections waiting for a lock.
	locking := map[uint32]uint64{}
	p.lockWaits.conns.Range(func(ts, conn any) bool {
		locking[conn.(uint32)] = ts.(uint64)
		return true
	})
	waiting := map[uint32]bool{}
	if len(locking) > 0 {
		// Only a transaction that takes pessimistic locks waits; on a SQL
		// node of a cluster the waits are the KV nodes', asked over the
		// network, so not without one. A store that does not answer
		// leaves its waiters "executing".
		rows, err := p.lockWaits.rows(ctx)
		if err != nil {
			slog.Debug("process list: lock waits", "err", err)
		}
		for _, w := range rows {
			if w.txnConn != 0 {
				waiting[uint32(w.txnConn)] = true
			}
		}
	}
	out := make([]processInfo, 0, len(procs))
	for _, pr := range procs {
		pi := processInfo{ID: pr.Connection, User: pr.User, Host: pr.Host, DB: pr.Database,
			Command: string(pr.Command), Since: pr.StartedAt}
		if s := sessions.get(pr.Connection); s != nil && pr.Command != gsql.ProcessCommandConnect {
			a := s.activityNow()
			running := a.running
			pi.Since, pi.Txn = a.since, a.txn
			if a.since.IsZero() {
				// No statement yet.
				pi.Since = pr.StartedAt
			} else {
				pi.User, pi.DB = a.user, a.db
			}
			if running {
				pi.Command, pi.Info, pi.State = a.command, a.query, stateExecuting
				if a.progress != nil {
					// STATE is a VARCHAR(64), as MySQL's is.
					pi.State = truncateRunes(a.progress(), 64)
				}
				if waiting[pr.Connection] {
					pi.State, pi.Waiting = stateLockWait, true
				}
			} else {
				pi.Command, pi.Info, pi.State = commandSleep, "", ""
			}
			if ts := locking[pr.Connection]; pi.Txn.startTS == 0 && running && ts != 0 {
				// A pessimistic transaction the running statement began.
				pi.Txn = txnActivity{startTS: ts, pessimistic: true}
			}
		} else {
			pi.Command, pi.State = commandConnect, stateConnecting
		}
		if pi.Txn.startTS != 0 {
			pi.TxnStart = tso.Time(pi.Txn.startTS)
		}
		if d := now.Sub(pi.Since); d > 0 {
			pi.Time = int64(d / time.Second)
		}
		out = append(out, pi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// isShowProcessList recognises SHOW [FULL] PROCESSLIST, which the
// handler answers from processes (GMS's answer lacks the fast path's
// statements and the real state).
func isShowProcessList(query string) (full, ok bool) {
	if !lexical.LeadingWordIs(query, "show") {
		return false, false
	}
	f := strings.Fields(strings.ToLower(strings.TrimRight(strings.TrimSpace(query), "; \t\r\n")))
	switch {
	case len(f) == 2 && f[1] == "processlist":
		return false, true
	case len(f) == 3 && f[1] == "full" && f[2] == "processlist":
		return true, true
	}
	return false, false
}

// showProcessList is SHOW [FULL] PROCESSLIST's answer: MySQL's columns;
// without FULL, Info is cut to its first 100 characters, as in MySQL.
func showProcessList(ps []processInfo, full bool) *sqltypes.Result {
	res := &sqltypes.Result{}
	for _, c := range []struct {
		name string
		tp   querypb.Type
	}{{"Id", sqltypes.Uint64}, {"User", sqltypes.VarChar}, {"Host", sqltypes.VarChar}, {"db", sqltypes.VarChar},
		{"Command", sqltypes.VarChar}, {"Time", sqltypes.Int64}, {"State", sqltypes.VarChar}, {"Info", sqltypes.VarChar}} {
		f := &querypb.Field{Name: c.name, Type: c.tp, Charset: mysql.CharacterSetUtf8}
		if c.tp != sqltypes.VarChar {
			f.Charset = mysql.CharacterSetBinary
		}
		res.Fields = append(res.Fields, f)
	}
	nullable := func(s string) sqltypes.Value {
		if s == "" {
			return sqltypes.NULL
		}
		return sqltypes.NewVarChar(s)
	}
	for _, p := range ps {
		info := p.Info
		if !full {
			info = truncateRunes(info, maxShortInfoText)
		}
		res.Rows = append(res.Rows, []sqltypes.Value{
			sqltypes.NewUint64(uint64(p.ID)), sqltypes.NewVarChar(p.User), sqltypes.NewVarChar(p.Host),
			nullable(p.DB), sqltypes.NewVarChar(p.Command), sqltypes.NewInt64(p.Time),
			sqltypes.NewVarChar(p.State), nullable(info),
		})
	}
	return res
}

// truncateRunes cuts s to its first n characters.
func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
