package elle

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Kind is what a micro-operation does.
type Kind uint8

const (
	// Append adds Value to the end of Key's list.
	Append Kind = iota + 1
	// Read returns Key's whole list.
	Read
)

// String returns the name Elle uses for the kind.
func (k Kind) String() string {
	switch k {
	case Append:
		return "append"
	case Read:
		return "r"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MicroOp is one step of a transaction.
type MicroOp struct {
	Kind Kind
	Key  int
	// Value is the element an Append adds. Unused by a Read.
	Value int
	// List is what a Read returned, oldest element first. Nil means the read
	// was not executed (the transaction stopped before it); a read of a
	// missing row returns an empty, non-nil list.
	List []int
}

// AppendOp returns append(key, value).
func AppendOp(key, value int) MicroOp { return MicroOp{Kind: Append, Key: key, Value: value} }

// ReadOp returns read(key) that returned list; pass nil for a read whose
// result is unknown.
func ReadOp(key int, list []int) MicroOp { return MicroOp{Kind: Read, Key: key, List: list} }

// String formats the op the way Elle prints it: [append 1 2] or [r 1 [1 2]].
func (m MicroOp) String() string {
	if m.Kind == Append {
		return fmt.Sprintf("[append %d %d]", m.Key, m.Value)
	}
	if m.List == nil {
		return fmt.Sprintf("[r %d nil]", m.Key)
	}
	return fmt.Sprintf("[r %d %s]", m.Key, formatList(m.List))
}

func formatList(l []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range l {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(x))
	}
	b.WriteByte(']')
	return b.String()
}

// MarshalJSON encodes the op as a compact array: ["append",k,v] or
// ["r",k,[...]] (null for an unknown read).
func (m MicroOp) MarshalJSON() ([]byte, error) {
	switch m.Kind {
	case Append:
		return json.Marshal([]any{"append", m.Key, m.Value})
	case Read:
		return json.Marshal([]any{"r", m.Key, m.List})
	}
	return nil, fmt.Errorf("marshal micro-op: unknown kind %d", m.Kind)
}

// UnmarshalJSON decodes the form MarshalJSON writes.
func (m *MicroOp) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("micro-op %s: %w", b, err)
	}
	if len(raw) != 3 {
		return fmt.Errorf("micro-op %s: want 3 elements, got %d", b, len(raw))
	}
	var f string
	if err := json.Unmarshal(raw[0], &f); err != nil {
		return fmt.Errorf("micro-op %s: function: %w", b, err)
	}
	if err := json.Unmarshal(raw[1], &m.Key); err != nil {
		return fmt.Errorf("micro-op %s: key: %w", b, err)
	}
	switch f {
	case "append":
		m.Kind = Append
		if err := json.Unmarshal(raw[2], &m.Value); err != nil {
			return fmt.Errorf("micro-op %s: value: %w", b, err)
		}
	case "r":
		m.Kind = Read
		if err := json.Unmarshal(raw[2], &m.List); err != nil {
			return fmt.Errorf("micro-op %s: list: %w", b, err)
		}
	default:
		return fmt.Errorf("micro-op %s: unknown function %q", b, f)
	}
	return nil
}

// Status is a transaction's outcome as the client saw it.
type Status uint8

const (
	// OK means COMMIT succeeded: the transaction committed, and its reads
	// are what it saw.
	OK Status = iota + 1
	// Fail means the transaction certainly did not commit.
	Fail
	// Info means the outcome is unknown: the transaction may or may not have
	// committed (the checker decides from whether anyone saw its appends).
	Info
)

// String returns "ok", "fail" or "info".
func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Info:
		return "info"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText encodes the status by name.
func (s Status) MarshalText() ([]byte, error) {
	if s < OK || s > Info {
		return nil, fmt.Errorf("marshal status: unknown status %d", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText decodes a status name.
func (s *Status) UnmarshalText(b []byte) error {
	switch string(b) {
	case "ok":
		*s = OK
	case "fail":
		*s = Fail
	case "info":
		*s = Info
	default:
		return fmt.Errorf("unknown status %q", b)
	}
	return nil
}

// Txn is one transaction of a history: what a client asked for, when, and
// what came back.
type Txn struct {
	// Process is the client that ran the transaction.
	Process int `json:"process"`
	// Invoke and Complete are nanoseconds since the start of the run, on one
	// monotonic clock: Invoke before the transaction began, Complete after
	// its outcome was known. Complete is not used for an Info transaction,
	// which may take effect at any time after Invoke.
	Invoke   int64  `json:"invoke"`
	Complete int64  `json:"complete"`
	Status   Status `json:"status"`
	// Ops are the micro-operations, with the results of the reads that ran.
	Ops []MicroOp `json:"ops"`
	// Err is the error that ended a Fail or Info transaction.
	Err string `json:"error,omitempty"`
}

// String formats the transaction for reports.
func (t Txn) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s p%d [", t.Status, t.Process)
	for i, m := range t.Ops {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(m.String())
	}
	b.WriteByte(']')
	if t.Err != "" {
		fmt.Fprintf(&b, " (%s)", t.Err)
	}
	return b.String()
}

// WriteHistory writes h as JSON lines, one transaction per line.
func WriteHistory(w io.Writer, h []Txn) error {
	enc := json.NewEncoder(w)
	for i := range h {
		if err := enc.Encode(&h[i]); err != nil {
			return fmt.Errorf("write history: transaction %d: %w", i, err)
		}
	}
	return nil
}

// ReadHistory reads JSON lines written by WriteHistory.
func ReadHistory(r io.Reader) ([]Txn, error) {
	var h []Txn
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var t Txn
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("read history: line %d: %w", line, err)
		}
		h = append(h, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return h, nil
}
