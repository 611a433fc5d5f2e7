package sql

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// MySQL errors of the limits below.
const (
	codeConCount      = 1040 // ER_CON_COUNT_ERROR
	stateConCount     = "08004"
	codeOutOfSortMem  = 1038 // ER_OUT_OF_SORTMEMORY
	stateOutOfSortMem = "HY001"
	codeQueryTimeout  = 3024 // ER_QUERY_TIMEOUT
	stateQueryTimeout = "HY000"
	msgTooManyConns   = "Too many connections"
	msgQueryTimeout   = "Query execution was interrupted, maximum statement execution time exceeded"
	// KILL QUERY and KILL CONNECTION (errors.go).
	codeQueryInterrupted  = 1317 // ER_QUERY_INTERRUPTED
	stateQueryInterrupted = "70100"
	msgQueryInterrupted   = "Query execution was interrupted"
	refusalWriteWindow    = time.Second
)

// DefaultMaxQueryBufferedRows is Config.MaxQueryBufferedRows's default.
// At a few hundred bytes per row in memory it bounds a query's buffers to
// the order of a gigabyte.
const DefaultMaxQueryBufferedRows = 4 << 20

// connLimitListener refuses connections beyond max open ones the way
// MySQL does: the extra client gets error 1040 "Too many connections" in
// place of the server's greeting, and is closed. (The vitess listener's own
// limit makes extra clients wait instead, silently.)
type connLimitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

// Accept implements net.Listener. It returns only connections within the
// limit; the refused ones are answered and closed here.
func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &countedConn{Conn: c, release: func() { l.open.Add(-1) }}, nil
		}
		l.open.Add(-1)
		refuse(c, codeConCount, stateConCount, msgTooManyConns)
	}
}

// refuse writes a MySQL error packet as the first packet of connection c
// and closes it. The write has a deadline, so a client that never reads
// cannot stall the accept loop; the packet is small enough for the
// socket's buffer anyway.
func refuse(c net.Conn, code uint16, state, msg string) {
	payload := make([]byte, 0, 9+len(msg))
	payload = append(payload, 0xff, byte(code), byte(code>>8), '#')
	payload = append(payload, state...)
	payload = append(payload, msg...)
	n := len(payload)
	packet := append([]byte{byte(n), byte(n >> 8), byte(n >> 16), 0}, payload...)
	_ = c.SetWriteDeadline(time.Now().Add(refusalWriteWindow))
	_, _ = c.Write(packet)
	_ = c.Close()
}

// countedConn gives its connection slot back once, at the first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close implements net.Conn.
func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// rowBudget is the memory reporter of one query's GMS memory manager.
// GMS asks its reporter before every row (or group, or distinct key) it
// adds to an in-memory buffer (sort, GROUP BY, DISTINCT, set operations,
// subquery and UPDATE caches), and fails the query with
// ErrNoMemoryAvailable when the reporter says the memory is used up. The
// budget counts those requests: the query may buffer max rows in all.
type rowBudget struct {
	max  uint64
	used atomic.Uint64
}

// MaxMemory implements gsql.Reporter: in rows, not bytes.
func (b *rowBudget) MaxMemory() uint64 { return b.max }

// UsedMemory implements gsql.Reporter. Each call is a row about to be
// buffered, so each call takes one from the budget.
func (b *rowBudget) UsedMemory() uint64 { return b.used.Add(1) - 1 }

// queryContextFactory returns GMS's context factory: every query context
// gets a memory manager of its own, with a budget of maxRows buffered rows
// (none when maxRows < 0).
func queryContextFactory(maxRows int64) gsql.ContextFactory {
	if maxRows < 0 {
		return gsql.NewContext
	}
	return func(ctx context.Context, opts ...gsql.ContextOption) *gsql.Context {
		mm := gsql.NewMemoryManager(&rowBudget{max: uint64(maxRows)})
		// The last option wins: it replaces the engine's shared manager.
		all := make([]gsql.ContextOption, 0, len(opts)+1)
		all = append(all, opts...)
		all = append(all, gsql.WithMemoryManager(mm))
		return gsql.NewContext(ctx, all...)
	}
}

// limitHandler is the outermost MySQL handler: it gives every SELECT the
// session's max_execution_time as a deadline and turns the errors of the
// limits into MySQL's.
type limitHandler struct {
	// *handler, not mysql.Handler: the methods percdb's handler adds beyond
	// mysql.Handler (mysql.BinlogReplicaHandler's) must stay visible to
	// vitess through this outer wrapper.
	*handler
	// maxRows is the buffered-row budget of a query, for the message.
	maxRows int64
	// stmts gives statements their contexts (stmtctx.go).
	stmts *stmtContexts
}

// ComQuery implements mysql.Handler.
func (h *limitHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	sctx, cancel := h.statementContext(ctx, c, query)
	defer cancel()
	return h.statementError(ctx, sctx, h.handler.ComQuery(sctx, c, query, callback))
}

// ComMultiQuery implements mysql.Handler. Each call runs the first
// statement of query, which decides whether the time limit applies.
func (h *limitHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	sctx, cancel := h.statementContext(ctx, c, query)
	defer cancel()
	rest, err := h.handler.ComMultiQuery(sctx, c, query, callback)
	return rest, h.statementError(ctx, sctx, err)
}

// ComStmtExecute implements mysql.Handler.
func (h *limitHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	sctx, cancel := h.statementContext(ctx, c, prepare.PrepareStmt)
	defer cancel()
	return h.statementError(ctx, sctx, h.handler.ComStmtExecute(sctx, c, prepare, callback))
}

// ComPrepare implements mysql.Handler. GMS checks privileges when it
// plans the statement, which is at prepare time.
func (h *limitHandler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	fields, err := h.handler.ComPrepare(ctx, c, query, prepare)
	return fields, accountError(err)
}

// statementContext returns the context of one statement: cancelled by
// KILL or when the client goes away while the statement runs
// (stmtctx.go), and with a deadline of max_execution_time milliseconds
// when the statement is a SELECT and the variable is positive, as in
// MySQL, which applies it to read-only SELECTs only. The caller calls the
// returned function when the statement is over.
func (h *limitHandler) statementContext(ctx context.Context, c *mysql.Conn, query string) (context.Context, func()) {
	sctx, cc := h.stmts.begin(ctx, c.ConnectionID, c.Conn)
	if ms := h.maxExecutionTime(c, query); ms > 0 {
		dctx, cancel := context.WithTimeout(sctx, time.Duration(ms)*time.Millisecond)
		return dctx, func() {
			cancel()
			cc.end()
		}
	}
	return sctx, cc.end
}

// ConnectionClosed implements mysql.Handler.
func (h *limitHandler) ConnectionClosed(c *mysql.Conn) {
	h.stmts.forget(c.ConnectionID)
	h.handler.ConnectionClosed(c)
}

// maxExecutionTime returns the session's max_execution_time when query
// is a SELECT, 0 otherwise.
func (h *limitHandler) maxExecutionTime(c *mysql.Conn, query string) int64 {
	s := h.sessions.get(c.ConnectionID)
	if s == nil || !isSelect(query) {
		return 0
	}
	v, err := s.GetSessionVariable(nil, "max_execution_time")
	if err != nil {
		return 0
	}
	ms, _ := v.(int64)
	return ms
}

// statementError turns the error of a statement that ran under sctx (a
// child of the connection's ctx) into MySQL's error for the limit it hit.
func (h *limitHandler) statementError(ctx, sctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	err = accountError(err)
	if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return mysql.NewSQLError(codeQueryTimeout, stateQueryTimeout, "%s", msgQueryTimeout)
	}
	if isNoMemory(err) {
		return mysql.NewSQLError(codeOutOfSortMem, stateOutOfSortMem,
			"Out of sort memory: the query buffered more than %d rows (percdb's max-query-buffered-rows)", h.maxRows)
	}
	return err
}

// isNoMemory reports whether err is GMS's ErrNoMemoryAvailable, which
// reaches the handler as a 1105 SQLError with the kind's message.
func isNoMemory(err error) bool {
	if gsql.ErrNoMemoryAvailable.Is(err) {
		return true
	}
	var se *mysql.SQLError
	return errors.As(err, &se) && se.Num == mysql.ERUnknownError &&
		strings.Contains(se.Message, gsql.ErrNoMemoryAvailable.New().Error())
}

// isSelect reports whether query is a SELECT (or a parenthesized one, or
// a WITH ... SELECT), after any leading comments.
func isSelect(query string) bool {
	return startsWithWord(query, "select", "with")
}

// startsWithWord reports whether the first word of query, after blanks,
// opening parentheses and comments, is one of words (ASCII
// case-insensitive).
func startsWithWord(query string, words ...string) bool {
	q := lexical.TrimLeading(query, " \t\r\n(")
	for _, w := range words {
		if len(q) > len(w) && strings.EqualFold(q[:len(w)], w) && !lexical.IsWordByte(q[len(w)]) {
			return true
		}
	}
	return false
}
