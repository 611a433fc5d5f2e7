package txn

import (
	"context"
	"errors"
	"fmt"

	"github.com/percdb/percdb/kv"
)

// Reads of the latest state without a timestamp (BeginLatest). An
// autocommit point read takes no start_ts (PointGet, BatchPointGet): one
// request to one region, served from one consistent view of its store,
// at kv.MaxTS, is a snapshot of the latest committed state at the
// instant it is served. It sees every commit acknowledged before it
// began (a commit is acknowledged after its primary's write record is
// applied, and any secondary still locked blocks the read), and it is
// one state: a store applies a commit's records in one batch per region,
// and a lock met means a commit is under way, so the read goes to a
// timestamp instead. What makes this a snapshot is that it is one
// request: two requests at kv.MaxTS are two instants, between which a
// transaction may commit in the keys of one and not yet in those read
// by the other (TiDB's point get without a timestamp is only for one
// key for that reason).
//
// A latest transaction extends that to one statement's read of any
// kind: its first read request goes at kv.MaxTS. A range read that the
// request completes (the region holds the whole range, or the program's
// limit is reached in it) and that meets no lock and no stale route is
// that snapshot. Otherwise the iterator drops what the request returned,
// before anything of it is handed out, takes a start_ts from the oracle
// and reads at it, and the transaction is an ordinary one from then on.
// An iterator given a first-page size (IterOptions.FirstPage) hands out
// its first page at kv.MaxTS when it is full, since the caller may need
// no more; asking it for more then fails with ErrLatestSpent, as does
// any second read of the transaction: its reads are not one state. The
// caller runs the statement again in an ordinary transaction.
//
// A read at kv.MaxTS does not raise a region's max_read_ts (kv doc.go),
// so one-phase commits are calculated as for a point read. A latest
// transaction writes nothing.

// ErrLatestSpent is returned by a read of a latest transaction
// (BeginLatest) that would need a second request at the latest state:
// the statement must be run again in an ordinary transaction.
var ErrLatestSpent = errors.New("txn: the read needs more than the one request a read at the latest state may make")

// ErrLatestWrite is returned by a write in a latest transaction.
var ErrLatestWrite = errors.New("txn: a transaction reading the latest state writes nothing")

// latestState is where a latest transaction is.
type latestState uint8

const (
	latestOff   latestState = iota // an ordinary transaction
	latestFresh                    // a latest one that has read nothing
	latestSpent                    // it made its one request at kv.MaxTS
)

// BeginLatest begins a read-only transaction for one autocommit
// statement, whose read goes at the latest committed state without a
// timestamp when one request serves it (see above). Writes fail with
// ErrLatestWrite; a second read, or more of an iterator that handed out
// a page at the latest state, fails with ErrLatestSpent.
func (s *Store) BeginLatest(ctx context.Context) (*Txn, error) {
	t, err := s.Begin(ctx)
	if err != nil {
		return nil, err
	}
	t.latest = latestFresh
	return t, nil
}

// ReadLatest reports whether the transaction read at the latest state
// (a latest transaction that made its read without a timestamp).
func (t *Txn) ReadLatest() bool { return t.latest == latestSpent }

// latestTS is snapshotTS for a latest transaction: kv.MaxTS for the
// first read, ErrLatestSpent after it.
func (t *Txn) latestTS() (uint64, error) {
	if t.latest == latestSpent {
		return 0, ErrLatestSpent
	}
	t.latest = latestSpent
	return kv.MaxTS, nil
}

// leaveLatest makes t an ordinary transaction with a start_ts from the
// oracle, returned: its one read at kv.MaxTS was dropped unused.
func (t *Txn) leaveLatest(ctx context.Context) (uint64, error) {
	t.latest = latestOff
	t.s.stats.noteLatestFallback()
	ts, err := t.StartTS(ctx)
	if err != nil {
		return 0, fmt.Errorf("read at a timestamp: %w", err)
	}
	return ts, nil
}
