package stmtsummary

import (
	"math"
	"math/bits"
	"sort"
	"sync"
	"time"
)

// DefaultSize is the default bound on the digests a Summary holds: MySQL's
// default performance_schema_digests_size.
const DefaultSize = 10000

// Key identifies a row: the statement's default database and its digest.
type Key struct {
	Schema string
	Digest string
}

// Observation is what one statement did.
type Observation struct {
	// DigestText is the normalized statement, literals replaced by "?".
	DigestText string
	// Query is the statement as the client sent it; the slowest one of a
	// digest is kept as its sample.
	Query    string
	Latency  time.Duration
	RowsSent uint64
	// RowsExamined counts the rows read from tables.
	RowsExamined uint64
	RowsAffected uint64
	// Error is set when the statement ended with an error.
	Error bool
	// End is when the statement ended.
	End time.Time
}

// numBuckets is the number of latency buckets: four to a doubling from
// 1 µs, the last one open (everything above 2^(numBuckets/4-1) µs).
const numBuckets = 4 * 32

// bucketOf returns the latency bucket of d: the first bucket whose bound
// (bucketBound) is d or above. It is worked out for every statement, so
// from the bit length of d and the table of bounds rather than a
// logarithm: a bucket is a quarter of a doubling, so the bit length
// places d within five buckets of its own.
func bucketOf(d time.Duration) int {
	if d <= time.Microsecond {
		return 0
	}
	// d >= 2^(e-1) ns, so log2(d in µs) >= e-1-log2(1000) > e-1-10:
	// bucket 4*(e-11) is never above d's.
	i := 4 * (bits.Len64(uint64(d)) - 11)
	switch {
	case i < 0:
		i = 0
	case i >= numBuckets:
		return numBuckets - 1
	}
	for i < numBuckets-1 && bucketBounds[i] < d {
		i++
	}
	return i
}

// bucketBound returns the upper bound of bucket i.
func bucketBound(i int) time.Duration {
	return time.Duration(math.Exp2(float64(i)/4) * float64(time.Microsecond))
}

// bucketBounds are bucketBound's values, for bucketOf. Never written
// after it is made.
var bucketBounds = func() (b [numBuckets]time.Duration) {
	for i := range b {
		b[i] = bucketBound(i)
	}
	return b
}()

// Row is one row of the summary, a copy its reader owns.
type Row struct {
	// Key is the zero Key in the overflow row (Overflow set).
	Key
	Overflow     bool
	DigestText   string
	Count        uint64
	SumLatency   time.Duration
	MinLatency   time.Duration
	MaxLatency   time.Duration
	RowsSent     uint64
	RowsExamined uint64
	RowsAffected uint64
	Errors       uint64
	FirstSeen    time.Time
	LastSeen     time.Time
	// Sample is the text of the digest's slowest statement, SampleSeen
	// when it ended and SampleLatency how long it took.
	Sample        string
	SampleSeen    time.Time
	SampleLatency time.Duration
	// P95, P99 and P999 are latency percentiles: the upper bound of the
	// histogram bucket the percentile falls in.
	P95, P99, P999 time.Duration
}

// AvgLatency returns the mean latency.
func (r *Row) AvgLatency() time.Duration {
	if r.Count == 0 {
		return 0
	}
	return r.SumLatency / time.Duration(r.Count)
}

// entry is what the summary keeps of one row.
type entry struct {
	row     Row
	buckets [numBuckets]uint32
}

// add counts o in e.
func (e *entry) add(o *Observation) {
	r := &e.row
	if r.Count == 0 || o.Latency < r.MinLatency {
		r.MinLatency = o.Latency
	}
	if r.Count == 0 {
		r.FirstSeen = o.End
	}
	if o.Latency >= r.MaxLatency {
		r.MaxLatency = o.Latency
		if !r.Overflow {
			r.Sample, r.SampleSeen, r.SampleLatency = o.Query, o.End, o.Latency
		}
	}
	r.Count++
	r.SumLatency += o.Latency
	r.RowsSent += o.RowsSent
	r.RowsExamined += o.RowsExamined
	r.RowsAffected += o.RowsAffected
	if o.Error {
		r.Errors++
	}
	if o.End.After(r.LastSeen) {
		r.LastSeen = o.End
	}
	b := &e.buckets[bucketOf(o.Latency)]
	if *b < math.MaxUint32 {
		*b++
	}
}

// snapshot returns a copy of e's row with its percentiles.
func (e *entry) snapshot() Row {
	r := e.row
	var total uint64
	for _, n := range e.buckets {
		total += uint64(n)
	}
	r.P95, r.P99, r.P999 = e.quantile(total, 0.95), e.quantile(total, 0.99), e.quantile(total, 0.999)
	return r
}

// quantile returns the upper bound of the bucket that holds quantile q of
// total observations, capped by the maximum seen (the last bucket is
// open).
func (e *entry) quantile(total uint64, q float64) time.Duration {
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, n := range e.buckets {
		seen += uint64(n)
		if seen >= rank {
			if b := bucketBound(i); b < e.row.MaxLatency {
				return b
			}
			return e.row.MaxLatency
		}
	}
	return e.row.MaxLatency
}

// Summary is a bounded table of statement statistics by digest. It is
// safe for concurrent use.
type Summary struct {
	mu       sync.Mutex
	size     int
	entries  map[Key]*entry
	overflow *entry
	// gen counts the resets, so that a Slot knows its row is gone.
	gen uint64
}

// New returns a summary of at most size digests (size <= 0: DefaultSize).
func New(size int) *Summary {
	if size <= 0 {
		size = DefaultSize
	}
	return &Summary{size: size, entries: make(map[Key]*entry)}
}

// Size returns the bound on the digests s holds.
func (s *Summary) Size() int { return s.size }

// Record counts statement o under k.
func (s *Summary) Record(k Key, o *Observation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entryOf(k, o).add(o)
}

// A Slot remembers the row of the key last recorded through it, so that
// a statement run again and again (a prepared statement's executions)
// is counted without its key being hashed and looked up each time. The
// zero Slot is ready for use; a Slot is not safe for concurrent use.
type Slot struct {
	key Key
	// e is the row of key while gen is the summary's count of resets;
	// nil when key's statements go to the overflow row.
	e   *entry
	gen uint64
}

// RecordSlot counts statement o under k, as Record does, through slot,
// which must be used with s only.
func (s *Summary) RecordSlot(slot *Slot, k Key, o *Observation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slot.e == nil || slot.gen != s.gen || slot.key != k {
		e := s.entryOf(k, o)
		e.add(o)
		slot.key, slot.gen, slot.e = k, s.gen, nil
		if e != s.overflow {
			slot.e = e
		}
		return
	}
	slot.e.add(o)
}

// entryOf returns the row of k, made for o if k has none, or the
// overflow row when the summary is full.
func (s *Summary) entryOf(k Key, o *Observation) *entry {
	e := s.entries[k]
	if e == nil {
		if len(s.entries) >= s.size {
			if s.overflow == nil {
				s.overflow = &entry{row: Row{Overflow: true}}
			}
			return s.overflow
		}
		e = &entry{row: Row{Key: k, DigestText: o.DigestText}}
		s.entries[k] = e
	}
	return e
}

// Rows returns a copy of every row, the overflow row (if any) last, the
// others by schema and digest.
func (s *Summary) Rows() []Row {
	s.mu.Lock()
	out := make([]Row, 0, len(s.entries)+1)
	for _, e := range s.entries {
		out = append(out, e.snapshot())
	}
	var of *Row
	if s.overflow != nil {
		r := s.overflow.snapshot()
		of = &r
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Schema != out[j].Schema {
			return out[i].Schema < out[j].Schema
		}
		return out[i].Digest < out[j].Digest
	})
	if of != nil {
		out = append(out, *of)
	}
	return out
}

// Reset forgets every row.
func (s *Summary) Reset() {
	s.mu.Lock()
	s.entries = make(map[Key]*entry)
	s.overflow = nil
	s.gen++
	s.mu.Unlock()
}
