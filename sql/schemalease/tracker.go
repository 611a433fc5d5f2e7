package schemalease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrSchemaChanged is returned by Use.BeginCommit for a transaction that
// used a schema version a later schema change could not wait for: its
// writes may not fit the schema now in force, so it must not commit. The
// client should run the transaction again (TiDB's error 8028).
var ErrSchemaChanged = errors.New("schema changed during the transaction")

// Tracker records which schema versions this node's transactions use. The
// zero value is not usable; call New. It is safe for concurrent use.
type Tracker struct {
	mu sync.Mutex
	// latest is the newest schema version this node knows is committed.
	latest uint64
	uses   map[*Use]struct{}
	// changed is closed, and replaced, whenever a use ends, finishes a
	// commit or moves to a newer version: what WaitOlder waits on.
	changed chan struct{}
}

// New returns a Tracker that knows of no version above 0.
func New() *Tracker {
	return &Tracker{uses: make(map[*Use]struct{}), changed: make(chan struct{})}
}

// Use is one transaction's registration. Its methods must not be called
// concurrently with each other (a transaction belongs to one session), but
// may run concurrently with the Tracker's.
type Use struct {
	t       *Tracker
	version uint64
	// committing: BeginCommit succeeded; the use is not marked stale
	// until it ends, but waited out.
	committing bool
	ended      bool
	// stale: a change of every table stopped waiting for it.
	stale bool
	// exempt: the transaction changes the schema itself (see Exempt).
	exempt bool
	// wrote are the tables the transaction wrote; staleTables those a
	// change stopped waiting for (or never waited for, as it had not
	// written them yet). Writing one of the latter fails the commit.
	wrote, staleTables []int64
}

// Begin registers a transaction about to take its start timestamp. The
// version it will read is at least the newest this node has published,
// which is what it is held at until Observe says more.
func (t *Tracker) Begin() *Use {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := &Use{t: t, version: t.latest}
	t.uses[u] = struct{}{}
	return u
}

// Published records that version v is committed: transactions registered
// from now on will read v or newer.
func (t *Tracker) Published(v uint64) {
	t.mu.Lock()
	if v > t.latest {
		t.latest = v
	}
	t.mu.Unlock()
}

// Latest returns the newest version published on this node.
func (t *Tracker) Latest() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.latest
}

// notifyLocked wakes the waiters. t.mu must be held.
func (t *Tracker) notifyLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// Wrote records that the transaction writes table. A caller calls it
// once per table, before the first write (a transaction keeps its own
// list, so that the hot path of row writes costs no lock).
func (u *Use) Wrote(table int64) {
	u.t.mu.Lock()
	if !contains(u.wrote, table) {
		u.wrote = append(u.wrote, table)
	}
	u.t.mu.Unlock()
}

func contains(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Exempt takes the transaction out of every wait: it changes the schema
// itself, so it writes the schema version, and its commit fails with a
// write conflict if another change committed after its snapshot. Waiting
// for it would only hold up the other change.
func (u *Use) Exempt() {
	u.t.mu.Lock()
	u.exempt = true
	u.t.notifyLocked()
	u.t.mu.Unlock()
}

// Observe records that the transaction read schema version v. A version
// only moves up: a transaction never reads an older schema than it did.
func (u *Use) Observe(v uint64) {
	t := u.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if u.ended || v <= u.version {
		return
	}
	u.version = v
	if v > t.latest {
		t.latest = v
	}
	t.notifyLocked()
}

// BeginCommit is called before a transaction with writes commits. It
// fails with ErrSchemaChanged if a schema change marked the transaction
// stale; otherwise no schema change can mark it until End.
func (u *Use) BeginCommit() error {
	t := u.t
	t.mu.Lock()
	defer t.mu.Unlock()
	stale := u.stale
	for _, id := range u.wrote {
		stale = stale || contains(u.staleTables, id)
	}
	if stale {
		return fmt.Errorf("%w (the transaction read schema version %d; version %d is in force)", ErrSchemaChanged, u.version, t.latest)
	}
	u.committing = true
	return nil
}

// Stale reports whether a schema change marked the transaction stale.
func (u *Use) Stale() bool {
	u.t.mu.Lock()
	defer u.t.mu.Unlock()
	return u.stale
}

// End unregisters the transaction: it committed or rolled back. Calling it
// again does nothing.
func (u *Use) End() {
	t := u.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if u.ended {
		return
	}
	u.ended = true
	delete(t.uses, u)
	t.notifyLocked()
}

// WaitOlder waits until no registered transaction but those in except
// uses a schema version below v (writing one of tables, every table when
// tables is nil), marking stale those it stops waiting for: a stale
// transaction fails its commit if it wrote, or writes later, one of
// tables. It waits up to timeout for a transaction that has written one of
// tables, and up to grace (at most timeout) for one that has not written
// one yet (an autocommit statement about to write, usually; a long
// read-only transaction should not hold a schema change for long).
// Transactions already committing are not marked: those that wrote one of
// tables are waited out, the others' writes are fixed and touch none. It
// returns how many writers of tables it marked, or ctx's error.
func (t *Tracker) WaitOlder(ctx context.Context, v uint64, timeout, grace time.Duration, tables []int64, except ...*Use) (int, error) {
	grace = min(grace, timeout)
	start := time.Now()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	marked := 0
	for {
		elapsed := time.Since(start)
		t.mu.Lock()
		waiting := false
		for u := range t.uses {
			if u.version >= v || u.exempt || excepted(u, except) || u.staleFor(tables) {
				continue
			}
			wrote := tables == nil
			for _, id := range tables {
				wrote = wrote || contains(u.wrote, id)
			}
			switch {
			case u.committing && wrote:
				waiting = true // its commit is under way: wait it out
			case u.committing:
				// Its writes are fixed and touch none of tables.
			case wrote && elapsed >= timeout:
				marked++
				u.markStale(tables)
			case !wrote && elapsed >= grace:
				u.markStale(tables)
			default:
				waiting = true
			}
		}
		changed := t.changed
		t.mu.Unlock()
		if !waiting {
			return marked, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			// Past grace: look again, and wake at timeout next.
			timer.Reset(max(timeout-time.Since(start), time.Millisecond))
		case <-ctx.Done():
			return marked, ctx.Err()
		}
	}
}

// staleFor reports whether u is stale for every table of tables (nil:
// stale as a whole). t.mu must be held.
func (u *Use) staleFor(tables []int64) bool {
	if u.stale {
		return true
	}
	if tables == nil {
		return false
	}
	for _, id := range tables {
		if !contains(u.staleTables, id) {
			return false
		}
	}
	return true
}

// markStale marks u stale for tables (nil: as a whole). t.mu must be held.
func (u *Use) markStale(tables []int64) {
	if tables == nil {
		u.stale = true
		return
	}
	for _, id := range tables {
		if !contains(u.staleTables, id) {
			u.staleTables = append(u.staleTables, id)
		}
	}
}

func excepted(u *Use, except []*Use) bool {
	for _, e := range except {
		if e == u {
			return true
		}
	}
	return false
}

// InUse returns how many registered transactions use a version below v
// and are not stale, for tests and diagnostics.
func (t *Tracker) InUse(v uint64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for u := range t.uses {
		if u.version < v && !u.stale {
			n++
		}
	}
	return n
}
