package txn

import (
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
type activeTxns struct {
	mu sync.Mutex
	// counts holds how many transactions are entered at each timestamp,
	// and since when (the first of them), for the oldest's age.
	counts map[uint64]activeEntry
}

// activeEntry is the transactions entered at one timestamp.
type activeEntry struct {
	n     int
	since time.Time
}

// enter records a transaction at ts.
func (a *activeTxns) enter(ts uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts == nil {
		a.counts = make(map[uint64]activeEntry)
	}
	e := a.counts[ts]
	if e.n == 0 {
		e.since = time.Now()
	}
	e.n++
	a.counts[ts] = e
}

// leave removes a transaction entered at ts.
func (a *activeTxns) leave(ts uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.counts[ts]
	if !ok {
		return
	}
	if e.n <= 1 {
		delete(a.counts, ts)
		return
	}
	e.n--
	a.counts[ts] = e
}

// ActiveTxn is one running transaction as the garbage collector sees it.
type ActiveTxn struct {
	StartTS uint64
	// Since is when it was entered, by the local clock.
	Since time.Time
}

// ActiveTxns returns the transactions of this Store that have a start_ts
// (or are fetching one: then a timestamp below it) and have not finished,
// oldest first is not promised. Transactions that were abandoned without
// Commit or Rollback stay until the Store closes; the garbage collector
// bounds how long it waits for any one (gcworker's MaxTxnWait).
func (s *Store) ActiveTxns() []ActiveTxn {
	s.active.mu.Lock()
	defer s.active.mu.Unlock()
	out := make([]ActiveTxn, 0, len(s.active.counts))
	for ts, e := range s.active.counts {
		out = append(out, ActiveTxn{StartTS: ts, Since: e.since})
	}
	return out
}
