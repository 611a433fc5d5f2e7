package console

import "sync"

// SlowRing keeps the latest slow statements in memory for the console,
// whether or not the slow query log is written to a file. It is safe for
// concurrent use.
type SlowRing struct {
	mu   sync.Mutex
	buf  []SlowQuery
	next int
	full bool
}

// DefaultSlowRingSize is how many slow statements a node keeps.
const DefaultSlowRingSize = 200

// NewSlowRing returns a ring of the last size slow statements.
func NewSlowRing(size int) *SlowRing { return &SlowRing{buf: make([]SlowQuery, size)} }

// Add keeps q, forgetting the oldest when full.
func (r *SlowRing) Add(q SlowQuery) {
	r.mu.Lock()
	r.buf[r.next] = q
	r.next++
	if r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
	r.mu.Unlock()
}

// List returns the statements kept, newest first.
func (r *SlowRing) List() []SlowQuery {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.buf)
	}
	out := make([]SlowQuery, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}
