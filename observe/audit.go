package observe

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// History is what the store holds of one row's notifications for one
// strong observer: the row's committed changes and the observer's
// committed runs of it, read back from their versions (History). It is
// the evidence of the guarantees doc.go gives, for tests and audits.
type History struct {
	// Changes are the commit_ts of the row's committed changes (puts
	// and deletes), oldest first.
	Changes []uint64
	// Runs are the start_ts of the observer's committed runs of the
	// row (its acknowledgement's versions), in the order they
	// committed.
	Runs []uint64
}

// ReadHistory reads rowKey's history for observer from the versions
// committed at or below ts (a timestamp of the oracle). It reads every
// version since the first, so it fails once GC has collected any (kv
// refuses a change scan from below the safe point): a tool for tests and
// for audits within the GC life time.
func ReadHistory(ctx context.Context, s *txn.Store, rowKey []byte, observer string, ts uint64) (History, error) {
	ackKey, err := tablecodec.AckKey(nil, rowKey, observer)
	if err != nil {
		return History{}, err
	}
	var h History
	changes, err := s.ScanChanges(ctx, rowKey, keyAfter(rowKey), 0, ts)
	if err != nil {
		return History{}, fmt.Errorf("history of %q: changes: %w", rowKey, err)
	}
	for _, c := range changes {
		h.Changes = append(h.Changes, c.CommitTS)
	}
	acks, err := s.ScanChanges(ctx, ackKey, keyAfter(ackKey), 0, ts)
	if err != nil {
		return History{}, fmt.Errorf("history of %q: acknowledgements: %w", rowKey, err)
	}
	for _, a := range acks {
		if a.Value == nil {
			continue // swept (SweepAcks): not a run
		}
		if len(a.Value) != 8 {
			return History{}, fmt.Errorf("history of %q: acknowledgement at %d of %d bytes", rowKey, a.CommitTS, len(a.Value))
		}
		h.Runs = append(h.Runs, binary.BigEndian.Uint64(a.Value))
	}
	return h, nil
}

// keyAfter returns the smallest key after k.
func keyAfter(k []byte) []byte { return append(append(make([]byte, 0, len(k)+1), k...), 0) }

// RunTwice returns each pair of consecutive committed runs with no change
// of the row between them: a change run twice, which strong
// notifications forbid. A run reads at its start_ts, so it sees every
// change committed at or before it (a one-phase commit's calculated
// commit_ts may equal another transaction's start_ts), and it stops
// without committing when the last committed run started at or after the
// change it was told of (txn.Txn.Acknowledge). So each committed run but
// the first needs a change the run before it did not see and it did:
// committed after the first started, at or before the second did.
func (h History) RunTwice() [][2]uint64 {
	var out [][2]uint64
	for i := 1; i < len(h.Runs); i++ {
		prev, cur := h.Runs[i-1], h.Runs[i]
		between := false
		for _, c := range h.Changes {
			if c > prev && c <= cur {
				between = true
				break
			}
		}
		if !between {
			out = append(out, [2]uint64{prev, cur})
		}
	}
	return out
}

// Unobserved reports whether the row's last change has no committed run
// that started after it. For a row whose changes all notified the
// observer (made after its watch), once its notifications are all run
// (Runner.Pending is 0), that is a change never observed.
func (h History) Unobserved() bool {
	if len(h.Changes) == 0 {
		return false
	}
	last := h.Changes[len(h.Changes)-1]
	return len(h.Runs) == 0 || h.Runs[len(h.Runs)-1] < last
}
