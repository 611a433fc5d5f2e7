package sql

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/netutil"

	"github.com/percdb/percdb/sql/wire"
)

// Every statement runs under a context that ends when the statement must
// stop, so that a long scan, lock wait or lock resolution stops with it:
//
//   - KILL QUERY and KILL CONNECTION: GMS's process list cancels the
//     context GMS gives the statements it runs, but the fast path's
//     statements (COMMIT and ROLLBACK among them) have none, and a COMMIT
//     waiting for another transaction's lock went on waiting. percdb
//     wraps the process list (killList) so that KILL also cancels the
//     context percdb gives the connection's statements.
//   - The client going away: GMS v0.20.0 notices it only while it streams
//     a result of many rows (it polls the socket there); a statement being
//     planned, one answered with one row (SELECT count(*)) or an OK packet
//     (UPDATE), one waiting for a lock, ran to its end for nobody. A
//     goroutine of the server's (stmtContexts.watch) peeks at the socket
//     of every statement running for longer than one tick and cancels
//     the connection's context when the client has closed it.
//   - max_execution_time: limitHandler adds the deadline to a SELECT.
//
// Statements are many and short, so a statement costs no allocation: the
// context is the connection's, made again only after it was cancelled,
// and a statement marks itself running by bumping a counter.

// watchTick is how often the watch looks at running statements; a
// statement is checked once it has run at least a tick, and a client
// gone is noticed within two.
const watchTick = 200 * time.Millisecond

// stmtContexts hands out the statement contexts of a server's connections
// and watches their clients. It is safe for concurrent use.
type stmtContexts struct {
	mu    sync.RWMutex
	conns map[uint32]*connContext

	stop chan struct{}
	done chan struct{}
}

// connContext is the statement context of one connection.
type connContext struct {
	// rc is the connection's socket (nil: not watched).
	rc syscall.RawConn

	// mu guards ctx and cancel, and orders the watch's peeks against the
	// ends of statements: no peek reads the socket once a statement has
	// ended (the connection's reader may then be blocked on it, holding
	// the descriptor's read lock).
	mu     sync.Mutex
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
	// seq counts statement starts and ends: odd while one runs.
	seq atomic.Uint64
	// seen is the seq the watch saw at its last tick (watch goroutine
	// only).
	seen uint64
}

func newStmtContexts() *stmtContexts {
	s := &stmtContexts{conns: make(map[uint32]*connContext), stop: make(chan struct{}), done: make(chan struct{})}
	go s.watch()
	return s
}

// close stops the watch.
func (s *stmtContexts) close() {
	close(s.stop)
	<-s.done
}

// begin returns the context of a statement of connection id, whose
// command came with ctx over conn; the caller calls end with the same
// connContext when the statement is over.
func (s *stmtContexts) begin(ctx context.Context, id uint32, conn net.Conn) (context.Context, *connContext) {
	s.mu.RLock()
	cc := s.conns[id]
	s.mu.RUnlock()
	if cc == nil {
		cc = &connContext{rc: rawConn(conn)}
		s.mu.Lock()
		if old := s.conns[id]; old != nil {
			cc = old
		} else {
			s.conns[id] = cc
		}
		s.mu.Unlock()
	}
	cc.mu.Lock()
	if cc.ctx == nil || cc.parent != ctx || cc.ctx.Err() != nil {
		cc.parent = ctx
		cc.ctx, cc.cancel = context.WithCancel(ctx)
	}
	sctx := cc.ctx
	cc.seq.Add(1)
	cc.mu.Unlock()
	return sctx, cc
}

// end marks the statement begin started over.
func (cc *connContext) end() {
	cc.mu.Lock()
	cc.seq.Add(1)
	cc.mu.Unlock()
}

// kill cancels the running statement of connection id, if any (and the
// context of its next one is made anew).
func (s *stmtContexts) kill(id uint32) {
	s.mu.RLock()
	cc := s.conns[id]
	s.mu.RUnlock()
	if cc == nil {
		return
	}
	cc.mu.Lock()
	if cc.cancel != nil {
		cc.cancel()
	}
	cc.mu.Unlock()
}

// forget drops connection id when it closes.
func (s *stmtContexts) forget(id uint32) {
	s.mu.Lock()
	cc := s.conns[id]
	delete(s.conns, id)
	s.mu.Unlock()
	if cc != nil {
		cc.mu.Lock()
		if cc.cancel != nil {
			cc.cancel()
		}
		cc.mu.Unlock()
	}
}

// watch checks, every tick, the client of each statement that was
// already running at the tick before, until close.
func (s *stmtContexts) watch() {
	defer close(s.done)
	t := time.NewTicker(watchTick)
	defer t.Stop()
	var long []*connContext
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		long = long[:0]
		s.mu.RLock()
		for _, cc := range s.conns {
			seq := cc.seq.Load()
			if seq%2 == 1 && seq == cc.seen && cc.rc != nil {
				long = append(long, cc)
			}
			cc.seen = seq
		}
		s.mu.RUnlock()
		for _, cc := range long {
			cc.mu.Lock()
			if cc.seq.Load() == cc.seen && clientGone(cc.rc) {
				cc.cancel()
			}
			cc.mu.Unlock()
		}
	}
}

// rawConn returns the socket under conn, through the wrappers percdb,
// vitess and TLS put around it, or nil when there is none.
func rawConn(conn net.Conn) syscall.RawConn {
	for conn != nil {
		switch c := conn.(type) {
		case *countedConn:
			conn = c.Conn
		case netutil.ConnWithTimeouts:
			conn = c.Conn
		case *netutil.ConnWithTimeouts:
			conn = c.Conn
		case *tls.Conn:
			conn = c.NetConn()
		case *wire.Conn:
			conn = c.NetConn()
		case syscall.Conn:
			rc, err := c.SyscallConn()
			if err != nil {
				return nil
			}
			return rc
		default:
			return nil
		}
	}
	return nil
}

// killList is GMS's process list, with Kill (what KILL QUERY and KILL
// CONNECTION call) also cancelling the statement percdb runs for the
// connection.
type killList struct {
	gsql.ProcessList
	stmts *stmtContexts
}

// Kill implements sql.ProcessList.
func (l *killList) Kill(connID uint32) {
	l.ProcessList.Kill(connID)
	l.stmts.kill(connID)
}
