package txn

import (
	"runtime"
	"sync"
	"time"
)

// activeTxns is the set of this Store's transactions that have a start_ts
// and have not finished, which the garbage collector's safe point must not
// pass (package gcworker): their reads need the versions at their
// start_ts. A transaction is entered before it asks the oracle for its
// start_ts, at a provisional timestamp below any the oracle will issue
// (the Store's largest timestamp received so far), so that a safe point
// computed while its request is on the way cannot pass it either.
//
// A transaction leaves at Rollback or when Commit returns, or, if its
// owner drops it without either, when Go's garbage collector reclaims it
// (a cleanup), so that an abandoned transaction does not hold the safe
// point back for long.
type activeTxns struct {
	mu     sync.Mutex
	nextID uint64
	byID   map[uint64]ActiveTxn
}

// enter records a transaction at ts and returns its handle.
func (a *activeTxns) enter(ts uint64) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byID == nil {
		a.byID = make(map[uint64]ActiveTxn)
	}
	a.nextID++
	a.byID[a.nextID] = ActiveTxn{StartTS: ts, Since: time.Now()}
	return a.nextID
}

// move sets the timestamp of the transaction id (its real start_ts).
func (a *activeTxns) move(id, ts uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.byID[id]; ok {
		e.StartTS = ts
		a.byID[id] = e
	}
}

// leave removes the transaction id; leaving twice is harmless.
func (a *activeTxns) leave(id uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.byID, id)
}

// ActiveTxn is one running transaction as the garbage collector sees it.
type ActiveTxn struct {
	StartTS uint64
	// Since is when it was entered, by the local clock.
	Since time.Time
}

// ActiveTxns returns the transactions of this Store that have a start_ts
// (or are fetching one: then a timestamp below it) and have not finished,
// in no particular order.
func (s *Store) ActiveTxns() []ActiveTxn {
	s.active.mu.Lock()
	defer s.active.mu.Unlock()
	out := make([]ActiveTxn, 0, len(s.active.byID))
	for _, e := range s.active.byID {
		out = append(out, e)
	}
	return out
}

// enterActive enters t, at a provisional timestamp, before it fetches its
// start_ts; the returned function moves it to the real one, or takes it
// out when the fetch failed.
func (t *Txn) enterActive() func(ts uint64, err error) {
	a := &t.s.active
	id := a.enter(t.s.maxTS.Load())
	return func(ts uint64, err error) {
		if err != nil {
			a.leave(id)
			return
		}
		a.move(id, ts)
		t.activeID = id
		// The cleanup must not refer to t, or t would never be reclaimed.
		t.activeCleanup = runtime.AddCleanup(t, a.leave, id)
	}
}

// leaveActive takes the finished transaction out of the Store's running
// transactions. The secondaries committed in the background after Commit
// returned need not stay: their locks are resolved (rolled forward) by
// the garbage collector before it collects.
func (t *Txn) leaveActive() {
	if t.activeID != 0 {
		t.s.active.leave(t.activeID)
		t.activeCleanup.Stop()
		t.activeID = 0
	}
}
