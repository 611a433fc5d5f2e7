package crash

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
)

// Outcome is what the client of a transaction learned about it.
type Outcome uint8

const (
	// Pending: the commit was sent and no answer came yet. A transaction
	// left pending when its client or server died is Unknown.
	Pending Outcome = iota
	// Committed: the commit was acknowledged (COMMIT, or the autocommit
	// statement, returned OK). All of the transaction must be visible.
	Committed
	// Failed: the server refused the transaction (an error from a
	// statement or from COMMIT), or the client never sent COMMIT. None of
	// it may be visible.
	Failed
	// Unknown: the connection died while the commit was in flight. All of
	// the transaction or none of it may be visible, never a part.
	Unknown
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case Pending:
		return "pending"
	case Committed:
		return "committed"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Kind is the kind of a workload transaction.
type Kind uint8

const (
	// Transfer moves Amount from account From to account To and records
	// the transfer in the ledger table, in one explicit transaction.
	Transfer Kind = iota + 1
	// Item inserts one row (with a unique secondary key) in autocommit.
	Item
	// Order inserts an order, its lines and bumps its worker's counters,
	// three tables in one explicit transaction.
	Order
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Transfer:
		return "transfer"
	case Item:
		return "item"
	case Order:
		return "order"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Line is one line of an order.
type Line struct {
	Qty int64 `json:"qty"`
	// Pad is the length of the line's filler text, whose content follows
	// from the order id and line number (see linePad).
	Pad int `json:"pad"`
}

// Txn is one transaction of the workload: what it wrote and how it ended.
// IDs are unique over all kinds and all clients of a run.
type Txn struct {
	Kind    Kind    `json:"kind"`
	ID      int64   `json:"id"`
	Worker  int     `json:"worker"`
	Outcome Outcome `json:"outcome"`
	// Transfer.
	From   int   `json:"from,omitempty"`
	To     int   `json:"to,omitempty"`
	Amount int64 `json:"amount,omitempty"`
	// Item: the row's sequence number within its worker.
	Seq int64 `json:"seq,omitempty"`
	// Order.
	Lines []Line `json:"lines,omitempty"`
}

// Total is the sum of the quantities of an order's lines.
func (t *Txn) Total() int64 {
	var s int64
	for _, l := range t.Lines {
		s += l.Qty
	}
	return s
}

// Recorder receives the transactions of a workload as they go: Pending
// just before the commit is sent, Done with the final outcome.
type Recorder interface {
	Pending(t Txn)
	Done(t Txn)
}

// History is a Recorder that keeps every transaction in memory. A
// transaction still pending when the history is read counts as Unknown
// (its client or server died with the commit in flight). Safe for
// concurrent use.
type History struct {
	mu   sync.Mutex
	txns map[int64]Txn
}

// NewHistory returns an empty history.
func NewHistory() *History { return &History{txns: make(map[int64]Txn)} }

// Pending implements Recorder.
func (h *History) Pending(t Txn) {
	t.Outcome = Pending
	h.put(t)
}

// Done implements Recorder.
func (h *History) Done(t Txn) { h.put(t) }

func (h *History) put(t Txn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.txns[t.ID] = t
}

// Txns returns the transactions by id, pending ones as Unknown.
func (h *History) Txns() map[int64]Txn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[int64]Txn, len(h.txns))
	for id, t := range h.txns {
		if t.Outcome == Pending {
			t.Outcome = Unknown
		}
		out[id] = t
	}
	return out
}

// Len returns the number of transactions recorded.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.txns)
}

// InFlight returns the number of transactions whose commit was sent and
// not yet answered.
func (h *History) InFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, t := range h.txns {
		if t.Outcome == Pending {
			n++
		}
	}
	return n
}

// Counts returns how many transactions ended each way.
func (h *History) Counts() map[Outcome]int {
	out := make(map[Outcome]int)
	for _, t := range h.Txns() {
		out[t.Outcome]++
	}
	return out
}

// Summary is a one-line account of the history.
func (h *History) Summary() string {
	c := h.Counts()
	return fmt.Sprintf("%d transactions: %d committed, %d failed, %d unknown", c[Committed]+c[Failed]+c[Unknown], c[Committed], c[Failed], c[Unknown])
}

// Merge adds the transactions of o (a later record of the same id wins).
func (h *History) Merge(o *History) {
	o.mu.Lock()
	txns := make([]Txn, 0, len(o.txns))
	for _, t := range o.txns {
		txns = append(txns, t)
	}
	o.mu.Unlock()
	for _, t := range txns {
		h.put(t)
	}
}

// LineRecorder writes every record as one JSON line, so that a process
// that can be killed at any moment (a client killed mid-commit) leaves its
// history behind on a pipe: one write per line, and a pipe write of less
// than PIPE_BUF bytes is atomic. Safe for concurrent use.
type LineRecorder struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLineRecorder returns a LineRecorder writing to w.
func NewLineRecorder(w io.Writer) *LineRecorder { return &LineRecorder{w: w} }

// Pending implements Recorder.
func (r *LineRecorder) Pending(t Txn) {
	t.Outcome = Pending
	r.write(t)
}

// Done implements Recorder.
func (r *LineRecorder) Done(t Txn) { r.write(t) }

func (r *LineRecorder) write(t Txn) {
	b, _ := json.Marshal(t) // a Txn has no field that fails to marshal
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.w.Write(append([]byte(recordPrefix), append(b, '\n')...))
}

// recordPrefix marks the lines of a LineRecorder among other output.
const recordPrefix = "crash-txn "

// ReadHistory reads the records a LineRecorder wrote, ignoring other
// lines and a last line cut short by the writer's death.
func ReadHistory(r io.Reader) (*History, error) {
	h := NewHistory()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var bad []string
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) < len(recordPrefix) || string(line[:len(recordPrefix)]) != recordPrefix {
			continue
		}
		var t Txn
		if err := json.Unmarshal(line[len(recordPrefix):], &t); err != nil {
			bad = append(bad, string(line))
			continue
		}
		h.put(t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	// Only the last line can be cut by a kill; one bad line in the
	// middle means the records were garbled.
	if len(bad) > 1 {
		return nil, fmt.Errorf("read history: %d unreadable records, first %q", len(bad), bad[0])
	}
	return h, nil
}

// sortedIDs returns the keys of m in order, so that reports are stable.
func sortedIDs[V any](m map[int64]V) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}
