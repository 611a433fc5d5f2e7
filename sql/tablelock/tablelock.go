package tablelock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// Error codes of table locks.
const (
	codeTableNotLockedForWrite = 1099 // ER_TABLE_NOT_LOCKED_FOR_WRITE
	codeTableNotLocked         = 1100 // ER_TABLE_NOT_LOCKED
	codeCantUpdateWithReadLock = 1223 // ER_CANT_UPDATE_WITH_READLOCK
	codeLockOrActiveTxn        = 1192 // ER_LOCK_OR_ACTIVE_TRANSACTION
	stateGeneral               = "HY000"
)

// Manager is the table locks held on one SQL node, by session (by its
// connection id). Its zero value holds none.
type Manager struct {
	mu sync.Mutex
	// held are the locks of each session that holds any.
	held map[uint32]*heldLocks
	// released is closed, and replaced, whenever a lock is released:
	// waiters look again.
	released chan struct{}
	// holders is len(held), read without mu by every statement.
	holders atomic.Int32
}

// heldLocks are one session's locks.
type heldLocks struct {
	// tables are its LOCK TABLES locks.
	tables []Use
	// global is whether it holds the global read lock (FLUSH TABLES
	// WITH READ LOCK).
	global bool
}

// Use is a table a statement reads or writes, or a table lock: the
// database, table and the name the statement uses for it (its alias, or
// its name), all lower-cased, and whether it writes the table (or locks
// it WRITE).
type Use struct {
	DB, Name, Alias string
	Write           bool
}

// Active reports whether any session of the node holds a table lock.
func (m *Manager) Active() bool { return m.holders.Load() > 0 }

// setLocked records h as the locks of session id (none when h is empty),
// releasing what it held before. Called with mu held.
func (m *Manager) setLocked(id uint32, h *heldLocks) {
	if _, had := m.held[id]; had {
		delete(m.held, id)
		m.wake()
	}
	if h != nil && (h.global || len(h.tables) > 0) {
		if m.held == nil {
			m.held = make(map[uint32]*heldLocks)
		}
		m.held[id] = h
	}
	m.holders.Store(int32(len(m.held)))
}

// wake tells the waiters that a lock went. Called with mu held.
func (m *Manager) wake() {
	if m.released != nil {
		close(m.released)
	}
	m.released = make(chan struct{})
}

// Release drops every lock of session id: UNLOCK TABLES, or its end.
func (m *Manager) Release(id uint32) {
	if !m.Active() {
		return
	}
	m.mu.Lock()
	m.setLocked(id, nil)
	m.mu.Unlock()
}

// blocked reports whether a use of a table by session self conflicts with
// a lock of another session (write says whether the statement writes at
// all, for the global read lock). Called with mu held.
func (m *Manager) blocked(self uint32, uses []Use, write bool) bool {
	for id, h := range m.held {
		if id == self {
			continue
		}
		if h.global && write {
			return true
		}
		for _, l := range h.tables {
			for _, u := range uses {
				if l.DB == u.DB && l.Name == u.Name && (l.Write || u.Write) {
					return true
				}
			}
		}
	}
	return false
}

// await waits until try, called with mu held, reports done or fails, up
// to timeout.
func (m *Manager) await(ctx context.Context, timeout time.Duration, try func() (bool, error)) error {
	var expired <-chan time.Time
	for {
		m.mu.Lock()
		done, err := try()
		if m.released == nil {
			m.released = make(chan struct{})
		}
		released := m.released
		m.mu.Unlock()
		if done || err != nil {
			return err
		}
		if expired == nil {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-released:
		case <-expired:
			return mysql.NewSQLError(mysql.ERLockWaitTimeout, stateGeneral, "Lock wait timeout exceeded; try restarting transaction")
		case <-ctx.Done():
			// KILL QUERY, KILL CONNECTION or the client gone (package
			// sql's stmtctx.go).
			return mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted")
		}
	}
}

// Lock takes the LOCK TABLES locks of session id, waiting for
// conflicting locks of other sessions up to timeout, and releasing its
// own before; it keeps the global read lock if it holds it (then a WRITE
// lock is 1223).
func (m *Manager) Lock(ctx context.Context, id uint32, locks []Use, timeout time.Duration) error {
	m.mu.Lock()
	global := false
	if h, ok := m.held[id]; ok {
		global = h.global
	}
	m.setLocked(id, &heldLocks{global: global})
	m.mu.Unlock()
	if global {
		for _, l := range locks {
			if l.Write {
				return errCantUpdateWithReadLock()
			}
		}
	}
	return m.await(ctx, timeout, func() (bool, error) {
		if m.blocked(id, locks, false) {
			return false, nil
		}
		m.setLocked(id, &heldLocks{tables: locks, global: global})
		return true, nil
	})
}

// LockGlobal takes the global read lock (FLUSH TABLES WITH READ LOCK)
// for session id once no other session holds a WRITE table lock, waiting
// up to timeout.
func (m *Manager) LockGlobal(ctx context.Context, id uint32, timeout time.Duration) error {
	m.mu.Lock()
	h := m.held[id]
	m.mu.Unlock()
	if h != nil && len(h.tables) > 0 {
		return mysql.NewSQLError(codeLockOrActiveTxn, stateGeneral,
			"Can't execute the given command because you have active locked tables or an active transaction")
	}
	return m.await(ctx, timeout, func() (bool, error) {
		for other, h := range m.held {
			if other == id {
				continue
			}
			for _, l := range h.tables {
				if l.Write {
					return false, nil
				}
			}
		}
		m.setLocked(id, &heldLocks{global: true})
		return true, nil
	})
}

// Admit decides whether session id may run a statement that uses uses
// (write: it writes at all): the holder of locks gets 1100, 1099 or 1223
// at once, another session waits while a lock conflicts, up to timeout.
func (m *Manager) Admit(ctx context.Context, id uint32, uses []Use, write bool, timeout time.Duration) error {
	m.mu.Lock()
	h := m.held[id]
	m.mu.Unlock()
	if h != nil {
		return h.check(uses, write)
	}
	return m.await(ctx, timeout, func() (bool, error) { return !m.blocked(id, uses, write), nil })
}

// check returns the error of a statement of the session holding h that
// uses uses, or nil.
func (h *heldLocks) check(uses []Use, write bool) error {
	if h.global && write {
		return errCantUpdateWithReadLock()
	}
	if len(h.tables) == 0 {
		return nil
	}
	for _, u := range uses {
		var l *Use
		for i := range h.tables {
			if t := &h.tables[i]; t.DB == u.DB && t.Name == u.Name && t.Alias == u.Alias {
				l = t
				break
			}
		}
		switch {
		case l == nil:
			return mysql.NewSQLError(codeTableNotLocked, stateGeneral, "Table '%s' was not locked with LOCK TABLES", u.Alias)
		case u.Write && !l.Write:
			return mysql.NewSQLError(codeTableNotLockedForWrite, stateGeneral, "Table '%s' was locked with a READ lock and can't be updated", u.Alias)
		}
	}
	return nil
}

// errCantUpdateWithReadLock is 1223, for a write of the holder of the
// global read lock.
func errCantUpdateWithReadLock() error {
	return mysql.NewSQLError(codeCantUpdateWithReadLock, stateGeneral, "Can't execute the query because you have a conflicting read lock")
}
