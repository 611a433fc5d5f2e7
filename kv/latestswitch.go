package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// Copies only where they pay. A copy in the latest space costs every
// commit of its key (about twice the write volume, docs/benchmarks.md
// #16) and pays only where forward walks cross the key while it has
// versions younger than the GC safe point. So the store keeps the space
// only while its walks say so, and a store that only takes writes keeps
// none:
//
//   - The copies are derived when a batch is applied (the applier, on
//     every replica: ApplyReplicated goes through it too), from the
//     batch's own write records, not built into the leader's batch. The
//     replicated batch carries nothing new, and whether a store keeps
//     copies is its own state, which needs no consensus: each replica's
//     copies follow its own write space.
//   - The state is off, building or on. Off: no copies, walks read the
//     versions. Switching on (latestSpace.enable) first makes every apply
//     derive copies, then backfills the space from the write space in
//     batches, each under the exclusive hold of mu, which every apply
//     read-holds while it derives and commits, so no commit falls between
//     a backfill batch's read of a key and its copy. Walks read the space
//     only once the backfill has finished and the marker is written (on).
//     Switching off turns walks away first, then clears the space.
//   - Open starts on when the marker is there; without it, it clears
//     whatever a build cut short left and starts off (or builds, when the
//     store is told to keep the space always). A raft snapshot carries no
//     copies: the receiver derives them from the snapshot's write records
//     when it keeps the space, as for any batch.
//   - In the automatic mode, the switch weighs what the copies would save
//     against what they cost, range by range (latestranges.go): a range's
//     copies go on when, over a window of latestWindowKeys keys visited by
//     forward walks of the range, the walks stepped over more hidden
//     points (beyond one a key) than latestCopySteps times the write
//     records the range's applies wrote meanwhile (a copy costs its
//     writer about as much as that many steps cost a walk), and at least
//     latestOnHidden a key; off when, over a window of copies derived
//     for the range scaled to its size (latestOffPerKey copies a key its
//     backfill visited, within latestWindowKeys and latestOffCopies),
//     walks read fewer than 1/latestOffShare as many of its keys through
//     the space. The store-wide state above is then off unless
//     EnableLatestSpace turned it on (it goes off over latestOffCopies
//     copies, store-wide).

// LatestMode says when a store keeps the latest space (latestswitch.go).
type LatestMode uint8

const (
	// LatestAuto (the zero value) keeps the copies of each range while
	// its forward walks pay for them (latestranges.go).
	LatestAuto LatestMode = iota
	// LatestOff never keeps it.
	LatestOff
	// LatestAlways keeps it from Open on, whatever the walks do.
	LatestAlways
)

// The states of the space, the low two bits of latestSpace.word.
const (
	latestStateOff uint64 = iota
	latestStateBuilding
	latestStateOn
)

const (
	// latestWindowKeys is the keys forward walks of the write space visit
	// before the automatic mode decides whether to switch the space on.
	latestWindowKeys = 50_000
	// latestOnHidden: the space goes on only when those walks stepped
	// over at least this many hidden points a key (versions younger than
	// the safe point, tombstones): a fresh, compacted table steps over
	// none, a churned one about 0.7-0.9 (TestScanUnderChurn).
	latestOnHidden = 0.25
	// latestCopySteps is what writing one copy costs, in hidden points a
	// walk steps over: the space goes on only when the walks stepped over
	// more than this many for each write record meanwhile. By callgrind
	// (docs/benchmarks.md, latest2 and latest4): a copy adds about 10,900
	// instructions to Prewrite+Commit (493 M -> 819 M for 30,010 keys,
	// its memtable insert, WAL bytes and its share of the flushes and
	// compactions), a hidden version costs a forward walk about 1,300-
	// 1,550 (2,198 -> 3,594 instructions a row with 90% of the rows
	// rewritten). Weighed one for one, TPC-C's Delivery (a walk over the
	// new orders its predecessors deleted) switched the space on under a
	// write-heavy mix, whose server CPU a transaction then rose by a
	// quarter (branch tpccprof). The backfill of the whole store a switch
	// costs is on top, and left out.
	latestCopySteps = 8
	// latestOffCopies is the copies derived before the automatic mode
	// decides whether the space still pays.
	latestOffCopies = 1_000_000
	// latestOffPerKey scales a range's off window to its size: a range
	// whose backfill visited k keys is weighed every latestOffPerKey*k
	// copies (at least latestWindowKeys, at most latestOffCopies). The
	// switch on costs one walk of the range and a copy a key, so a range
	// nobody walks any more pays at most latestOffPerKey such backfills
	// in copies before it goes off; the store-wide window kept a
	// 10,000-row table's copies on for 1,000,000 writes, about 12
	// minutes of sysbench oltp_update_index after oltp_read_write's
	// scans had stopped, at 10-16% of its throughput (branch gc7).
	latestOffPerKey = 4
	// latestOffShare: the space goes off when, over latestOffCopies
	// copies, walks read fewer than latestOffCopies/latestOffShare keys
	// through it (a store that mostly takes writes).
	latestOffShare = 10
)

// latestSpace is a store's switch of the latest space. Its owner is the
// Store; the applier and the readers hold a pointer to it.
type latestSpace struct {
	mode LatestMode
	// windowKeys and offCopies are latestWindowKeys and latestOffCopies
	// (tests shrink them before the store is used).
	windowKeys, offCopies uint64
	// word is the state in its low two bits and, above them, a count of
	// the switches: a reader that saw the same word before and after it
	// opened its view saw no switch in between.
	word atomic.Uint64
	// mu is read-held by every apply while it derives its batch's copies
	// and commits it, write-held by a switch and by each backfill batch.
	mu sync.RWMutex
	// busy: a switch is running (one at a time).
	busy atomic.Bool
	// copies derived and keys walks read through the space while the
	// whole space is on in the automatic mode (EnableLatestSpace): the
	// window of its switch off.
	copies, reads atomic.Uint64
	// ranges is the automatic mode's space by range (latestranges.go).
	ranges latestRanges
	// switchedOn and switchedOff count the switches (stats).
	switchedOn, switchedOff atomic.Uint64
	// switchTo, set by the store, runs a switch of the whole space the
	// automatic mode asks for in the background (nil: none is run).
	switchTo func(on bool)
	// churn is the bytes of copies derived since the space was last
	// handed to the compactor (latestcompact.go); size estimates the
	// space's bytes in table files and compact hands it over (both set
	// by the store; compact nil: never).
	churn   atomic.Uint64
	size    func() uint64
	compact func()
}

// latestOnIn reports whether the word w says the space is on.
func latestOnIn(w uint64) bool { return w&3 == latestStateOn }

// load returns the switch's word.
func (l *latestSpace) load() uint64 { return l.word.Load() }

// set moves to state; called with mu write-held.
func (l *latestSpace) set(state uint64) {
	l.word.Store((l.word.Load()>>2+1)<<2 | state)
}

// deriving reports whether applies derive copies (building or on);
// called with mu held.
func (l *latestSpace) deriving() bool { return l.word.Load()&3 != latestStateOff }

// derived counts n copies an apply derived, and asks for the switch off
// when the automatic mode's window says so.
func (l *latestSpace) derived(n int) {
	if n == 0 || l.mode != LatestAuto {
		return
	}
	if l.copies.Add(uint64(n)) < l.offCopies {
		return
	}
	copies, reads := l.copies.Swap(0), l.reads.Swap(0)
	if reads*latestOffShare < copies && l.switchTo != nil {
		l.switchTo(false)
	}
}

// walked counts a read's walks for the automatic mode: keys read through
// the space while the whole space is on (EnableLatestSpace), else the
// walks of one range (latestranges.go).
func (l *latestSpace) walked(c *walkCost) {
	if l.mode != LatestAuto {
		return
	}
	switch l.load() & 3 {
	case latestStateOn:
		l.reads.Add(c.latestKeys)
	case latestStateOff:
		if c.rangeState == walkRangeOne {
			l.walkedRange(c.rng, c)
		}
	}
}

// LatestSpaceStats are a store's latest-space switch figures.
type LatestSpaceStats struct {
	// On: walks read the space now.
	On bool
	// SwitchedOn and SwitchedOff count the switches since Open, of the
	// whole space and of ranges (latestranges.go).
	SwitchedOn, SwitchedOff uint64
	// RangesOn counts the ranges whose copies walks read now.
	RangesOn int
	// Compactions counts the compactions of the space its copies'
	// churn asked for (latestcompact.go).
	Compactions uint64
}

// LatestSpaceStats returns the store's latest-space figures.
func (s *Store) LatestSpaceStats() LatestSpaceStats {
	rangesOn := 0
	for _, on := range s.latest.ranges.set.Load().rangesOrNil() {
		if on {
			rangesOn++
		}
	}
	return LatestSpaceStats{On: latestOnIn(s.latest.load()),
		SwitchedOn:  s.latest.switchedOn.Load() + s.latest.ranges.switchedOn.Load(),
		SwitchedOff: s.latest.switchedOff.Load() + s.latest.ranges.switchedOff.Load(),
		RangesOn:    rangesOn, Compactions: s.compactor.latestCompactions.Load()}
}

// deriveLatest appends to wb what its write records do to the latest
// space of db: for each user key, a copy of its newest Put or Delete
// record in the batch (a command's batch holds at most one record a key;
// a snapshot's holds a key's versions, newest first); and, for a record
// the batch deletes (GC collecting a key's newest record, a Delete at or
// below the safe point), the deletion of the key's copy if it is that
// record's. Only the keys of the ranges in set are copied (nil: every
// key). It returns the copies written.
func (wb *writeBatch) deriveLatest(db pebble.Reader, set *latestRangeSet) (n int, err error) {
	ops := len(wb.ops)
	var seen map[string]int // latest key -> index in wb.ops of its copy
	for i := range ops {
		op := &wb.ops[i]
		if len(op.key) == 0 || op.key[0] != keyspace.Write || op.rangeEnd != nil {
			continue
		}
		if set != nil {
			if r, ok := latestRangeOfStoreKey(op.key); !ok || !set.deriving(r) {
				continue
			}
		}
		if op.delete {
			if err := wb.dropCopyOf(db, op.key); err != nil {
				return n, err
			}
			continue
		}
		typ, err := txntypes.PeekWriteType(op.value)
		if err != nil || (typ != txntypes.WritePut && typ != txntypes.WriteDelete) {
			continue
		}
		lk, commitTS, ok := keyspace.LatestKeyOfWrite(op.key)
		if !ok {
			continue
		}
		if n > 0 {
			if seen == nil {
				seen = make(map[string]int, 4)
				prev := &wb.ops[len(wb.ops)-1]
				seen[string(prev.key)] = len(wb.ops) - 1
			}
			if j, dup := seen[string(lk)]; dup {
				if old := binary.BigEndian.Uint64(wb.ops[j].value); old < commitTS {
					wb.ops[j].value = append(binary.BigEndian.AppendUint64(nil, commitTS), op.value...)
				}
				continue
			}
			seen[string(lk)] = len(wb.ops)
		}
		wb.ops = append(wb.ops, batchOp{key: lk, value: append(binary.BigEndian.AppendUint64(nil, commitTS), op.value...)})
		n++
	}
	return n, nil
}

// dropCopyOf deletes the copy of the write record at raw key wk, which
// the batch deletes, if the key's copy in db is that record's: nothing
// decides the key's value any more. Applies of one key are ordered (its
// latch on the leader, the log's order on a replica), and a backfill
// batch does not run during an apply (latestSpace.mu), so the copy read
// is the one the batch would replace.
func (wb *writeBatch) dropCopyOf(db pebble.Reader, wk []byte) error {
	lk, commitTS, ok := keyspace.LatestKeyOfWrite(wk)
	if !ok {
		return nil
	}
	v, closer, err := db.Get(lk)
	if err == pebble.ErrNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the copy of %x: %w", wk, err)
	}
	mine := len(v) >= 8 && binary.BigEndian.Uint64(v) == commitTS
	if err := closer.Close(); err != nil {
		return err
	}
	if mine {
		wb.del(lk)
	}
	return nil
}

// openLatest sets the switch's state at Open: on when the marker says the
// space is complete (and the mode allows it), else off with the space
// cleared of what a build cut short left, or built when the mode is
// LatestAlways. Nothing else writes while it runs.
func openLatest(ctx context.Context, db *pebble.DB, mode LatestMode) (*latestSpace, error) {
	l := &latestSpace{mode: mode, windowKeys: latestWindowKeys, offCopies: latestOffCopies}
	built, err := latestBuilt(db)
	if err != nil {
		return nil, err
	}
	switch {
	case built && mode != LatestOff:
		l.set(latestStateOn)
		return l, nil
	case mode == LatestAlways:
		if err := buildLatest(ctx, db); err != nil {
			return nil, err
		}
		l.set(latestStateOn)
		return l, nil
	}
	if err := clearLatest(db); err != nil {
		return nil, err
	}
	return l, nil
}

// clearLatest deletes the marker, then the space.
func clearLatest(db *pebble.DB) error {
	if err := db.Delete(keyspace.LatestBuiltKey(), pebble.Sync); err != nil {
		return fmt.Errorf("clear the latest space's marker: %w", err)
	}
	if err := db.DeleteRange(keyspace.SpaceStart(keyspace.Latest), keyspace.SpaceEnd(keyspace.Latest), pebble.NoSync); err != nil {
		return fmt.Errorf("clear the latest space: %w", err)
	}
	return nil
}

// EnableLatestSpace switches the store's latest space on: applies derive
// copies from now on, the space is backfilled from the write space, and
// walks read it once that is done. It returns once walks read it, or
// with the error that stopped the build (the space is off then). A
// store already on, or switching, returns at once.
func (s *Store) EnableLatestSpace(ctx context.Context) error {
	if err := s.enter(); err != nil {
		return fmt.Errorf("enable the latest space: %w", err)
	}
	defer s.exit()
	if !s.latest.busy.CompareAndSwap(false, true) {
		return nil
	}
	defer s.latest.busy.Store(false)
	return s.enableLatest(ctx)
}

// enableLatest is EnableLatestSpace once the caller holds the switch
// (busy) and the store (enter).
func (s *Store) enableLatest(ctx context.Context) error {
	if latestOnIn(s.latest.load()) {
		return nil
	}
	if err := s.backfillLatest(ctx); err != nil {
		s.latest.mu.Lock()
		s.latest.set(latestStateOff)
		cerr := clearLatest(s.db)
		s.latest.mu.Unlock()
		if cerr != nil {
			s.logger.Warn("clearing the latest space after its build failed", "dir", s.dir, "err", cerr)
		}
		return fmt.Errorf("enable the latest space: %w", err)
	}
	return nil
}

// backfillLatest is EnableLatestSpace's build: the space cleared and
// deriving on in one step, then batches of latestBuildBatch keys, each
// read from the store and written under mu's exclusive hold, then the
// marker and the state on.
func (s *Store) backfillLatest(ctx context.Context) error {
	s.latest.mu.Lock()
	err := s.db.DeleteRange(keyspace.SpaceStart(keyspace.Latest), keyspace.SpaceEnd(keyspace.Latest), pebble.NoSync)
	if err == nil {
		s.latest.set(latestStateBuilding)
		// The ranges' copies were cleared with the rest: their walks
		// turn away (a new set), and the build copies every key.
		s.latest.ranges.set.Store(nil)
	}
	s.latest.mu.Unlock()
	if err != nil {
		return fmt.Errorf("clear the latest space: %w", err)
	}
	from := keyspace.SpaceStart(keyspace.Write)
	for from != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.isClosing.Load() {
			return ErrClosed
		}
		s.latest.mu.Lock()
		from, _, err = backfillBatch(s.db, from, keyspace.SpaceEnd(keyspace.Write), s.gcSafePoint.Load())
		s.latest.mu.Unlock()
		if err != nil {
			return err
		}
	}
	s.latest.mu.Lock()
	defer s.latest.mu.Unlock()
	if err := s.db.Set(keyspace.LatestBuiltKey(), nil, pebble.Sync); err != nil {
		return fmt.Errorf("write the latest space's marker: %w", err)
	}
	s.latest.set(latestStateOn)
	s.latest.switchedOn.Add(1)
	s.logger.Info("the latest space is on", "dir", s.dir)
	return nil
}

// backfillBatch writes the copies of up to latestBuildBatch keys of db's
// write space from the raw key from on, up to the raw key end, and
// returns where the next batch starts (nil: the end) and how many keys
// it visited (the keys with a copy and those without). Called with mu write-held (or at Open): no apply
// runs. A key whose newest record is a Delete at or below the GC safe
// point sp gets no copy: no read at or above the safe point sees the key,
// and GC, which raised the safe point before it decided what to delete,
// may have decided without the copy.
func backfillBatch(db *pebble.DB, from, end []byte, sp uint64) (next []byte, keys int, err error) {
	iter, err := db.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: end})
	if err != nil {
		return nil, 0, fmt.Errorf("build the latest space: %w", err)
	}
	defer iter.Close()
	b := db.NewBatch()
	defer b.Close()
	var cur []byte
	done, n := false, 0
	for ok := iter.First(); ok; ok = iter.Next() {
		lk, commitTS, ok := keyspace.LatestKeyOfWrite(iter.Key())
		if !ok {
			return nil, 0, fmt.Errorf("build the latest space: record %x: %w", iter.Key(), keyspace.ErrBadKey)
		}
		if cur == nil || string(lk) != string(cur) {
			if n == latestBuildBatch {
				return append([]byte(nil), iter.Key()...), n, commitLatestBatch(b)
			}
			cur, done = lk, false
			n++
		}
		if done {
			continue
		}
		typ, err := txntypes.PeekWriteType(iter.Value())
		if err != nil {
			return nil, 0, fmt.Errorf("build the latest space: record %x: %w", iter.Key(), err)
		}
		if typ != txntypes.WritePut && typ != txntypes.WriteDelete {
			continue
		}
		done = true
		if typ == txntypes.WriteDelete && commitTS <= sp {
			continue
		}
		if err := b.Set(lk, append(binary.BigEndian.AppendUint64(nil, commitTS), iter.Value()...), nil); err != nil {
			return nil, 0, err
		}
	}
	if err := iter.Error(); err != nil {
		return nil, 0, fmt.Errorf("build the latest space: %w", err)
	}
	return nil, n, commitLatestBatch(b)
}

// commitLatestBatch commits a backfill batch without a sync: the marker,
// written after the last one with a sync, makes them all durable.
func commitLatestBatch(b *pebble.Batch) error {
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("build the latest space: %w", err)
	}
	return nil
}

// DisableLatestSpace switches the store's latest space off: walks read
// the versions from now on, applies derive no copies, and the space is
// cleared.
func (s *Store) DisableLatestSpace(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("disable the latest space: %w", err)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("disable the latest space: %w", err)
	}
	defer s.exit()
	if !s.latest.busy.CompareAndSwap(false, true) {
		return nil
	}
	defer s.latest.busy.Store(false)
	return s.disableLatest()
}

// disableLatest is DisableLatestSpace once the caller holds the switch
// (busy) and the store (enter).
func (s *Store) disableLatest() error {
	s.latest.mu.Lock()
	defer s.latest.mu.Unlock()
	if s.latest.load()&3 == latestStateOff {
		return nil
	}
	s.latest.set(latestStateOff)
	s.latest.switchedOff.Add(1)
	s.logger.Info("the latest space is off", "dir", s.dir)
	if err := clearLatest(s.db); err != nil {
		return fmt.Errorf("disable the latest space: %w", err)
	}
	return nil
}

// switchLatest runs a switch the automatic mode asked for, in the
// background: the asking read or apply does not wait for a backfill. It
// stops when the store closes (a build checks between batches). It takes
// the switch (busy) before it starts the goroutine: the walks of one
// scan may each ask for the same switch, and a second goroutine started
// while the first had not yet taken the switch would take it later, with
// nothing left to do, and hold it while a request for the other switch
// came in (which is then dropped, its window lost).
func (s *Store) switchLatest(on bool) {
	s.inBackground(func() error {
		if on {
			return s.enableLatest(context.Background())
		}
		return s.disableLatest()
	}, "switching the latest space", "on", on)
}

// inBackground runs a switch of the latest space (of the whole space, or
// of a range) in a goroutine, holding the switch (busy, taken before the
// goroutine starts: see switchLatest) and the store, and logs its error
// with args; nothing is run when the store closes or another switch runs.
func (s *Store) inBackground(run func() error, what string, args ...any) {
	if s.isClosing.Load() || !s.latest.busy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.latest.busy.Store(false)
		if err := s.enter(); err != nil {
			return // closed
		}
		defer s.exit()
		if err := run(); err != nil && !errors.Is(err, ErrClosed) {
			s.logger.Warn(what, append(args, "dir", s.dir, "err", err)...)
		}
	}()
}
