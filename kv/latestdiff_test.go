package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// TestLatestSpaceExact is the differential test of the two forward read
// paths: at any timestamp above the GC safe point, over any range, a walk
// of the latest space (visitLatest) returns exactly what the walk of the
// write space's records returns, and what the reverse walk returns. The
// history is random: Puts, Deletes, Lock records, long values, one-phase
// commits, rollbacks, locks left pending and resolved later (committed or
// rolled back, a primary's commit before its secondaries'), commit
// records over another transaction's Rollback record, GC passes, flushes
// and compactions, region splits, destroyed ranges (DROP), a follower fed
// every batch through a replicator and range snapshots to it, crashes
// (the unsynced tail of the WAL lost) and clean restarts, and restarts
// with the latest space lost (rebuilt at Open). Besides the walks it
// checks the space's invariant (latest.go): a copy for exactly the keys
// whose newest Put or Delete record is still there, that record's. The
// follower, the same batches applied, reads what the leader reads.
//
// PERCDB_LATEST_SEEDS=N runs N seeds (default 4), PERCDB_LATEST_SEED=S
// one seed, to reproduce a failure.
func TestLatestSpaceExact(t *testing.T) {
	seeds := []int64{1, 2, 3, 4}
	if v := os.Getenv("PERCDB_LATEST_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		seeds = seeds[:0]
		for i := range n {
			seeds = append(seeds, int64(i+1))
		}
	}
	if v := os.Getenv("PERCDB_LATEST_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []int64{n}
	}
	rounds := 1000
	if testing.Short() || raceEnabled {
		rounds = 200
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			h := newLatestHarness(t, seed)
			defer h.close()
			h.run(rounds)
		})
	}
}

// latestHarness drives one random history (TestLatestSpaceExact).
type latestHarness struct {
	t   *testing.T
	ctx context.Context
	rnd *rand.Rand
	// fs holds the leader's files: a crash drops what was not synced.
	fs       *vfs.MemFS
	sync     SyncMode
	mode     LatestMode
	leader   *Store
	follower *Store
	rep      *recordingReplicator
	keys     [][]byte
	// ts is the last timestamp handed out; safePoint the highest GC
	// safe point collected at.
	ts, safePoint uint64
	// pending are the transactions with locks left behind: start_ts ->
	// keys.
	pending map[uint64][][]byte
	// aborted are start timestamps rolled back on some key, for commit
	// records over a Rollback record.
	aborted []uint64
	// synced: the follower has applied every batch the leader did (no
	// crash of the leader since its last full snapshot).
	synced bool
	trace  []string
}

func newLatestHarness(t *testing.T, seed int64) *latestHarness {
	h := &latestHarness{
		t:       t,
		ctx:     context.Background(),
		rnd:     rand.New(rand.NewSource(seed)),
		fs:      vfs.NewStrictMem(),
		sync:    []SyncMode{SyncAlways, SyncNone}[seed%2],
		mode:    []LatestMode{LatestAlways, LatestAuto}[(seed/2)%2],
		ts:      100,
		pending: map[uint64][][]byte{},
		synced:  true,
	}
	h.keys = make([][]byte, 48)
	for i := range h.keys {
		h.keys[i] = []byte(fmt.Sprintf("k%03d", i))
	}
	h.leader = h.open()
	f, err := Open("", Options{InMemory: true, SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	h.follower = f
	if err := f.EnableLatestSpace(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.rep = &recordingReplicator{stores: []*Store{h.leader, h.follower}}
	return h
}

// open opens the leader's store on h.fs.
func (h *latestHarness) open() *Store {
	h.t.Helper()
	s, err := Open("", Options{InMemory: true, SyncWrites: h.sync, Latest: h.mode, testingFS: &testingFS{wrap: func(vfs.FS) vfs.FS { return h.fs }}})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *latestHarness) close() {
	_ = h.leader.Close()
	_ = h.follower.Close()
}

// fatalf fails the test with the history's last steps.
func (h *latestHarness) fatalf(format string, args ...any) {
	h.t.Helper()
	from := max(0, len(h.trace)-30)
	h.t.Fatalf("%s\nlast steps:\n%s", fmt.Sprintf(format, args...), joinLines(h.trace[from:]))
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for _, l := range s {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

func (h *latestHarness) step(format string, args ...any) {
	h.trace = append(h.trace, fmt.Sprintf(format, args...))
}

// repCtx is the context commands run in: every batch goes to both
// stores through the replicator, as a raft group applies it.
func (h *latestHarness) repCtx() context.Context { return WithReplicator(h.ctx, h.rep) }

// next hands out a timestamp above every one before.
func (h *latestHarness) next() uint64 {
	h.ts += uint64(1 + h.rnd.Intn(6))
	return h.ts
}

// byRegion splits keys by the leader's region holding each.
func (h *latestHarness) byRegion(keys [][]byte) map[uint64][][]byte {
	out := map[uint64][][]byte{}
	for _, k := range keys {
		ri, err := h.leader.LocateKey(k)
		if err != nil {
			h.fatalf("locate %q: %v", k, err)
		}
		out[ri.ID] = append(out[ri.ID], k)
	}
	return out
}

// regionCtx returns the context of the leader's region holding key.
func (h *latestHarness) regionCtx(key []byte) RegionCtx {
	ri, err := h.leader.LocateKey(key)
	if err != nil {
		h.fatalf("locate %q: %v", key, err)
	}
	return ri.Ctx()
}

// txn prewrites a random transaction and commits it, rolls it back or
// leaves its locks.
func (h *latestHarness) txn() {
	n := 1 + h.rnd.Intn(5)
	var muts []Mutation
	for _, i := range h.rnd.Perm(len(h.keys))[:n] {
		k := h.keys[i]
		m := Mutation{Op: OpPut, Key: k, Value: []byte(fmt.Sprintf("v%d-%d", h.ts, i))}
		switch h.rnd.Intn(8) {
		case 0, 1:
			m = Mutation{Op: OpDelete, Key: k}
		case 2:
			m = Mutation{Op: OpLock, Key: k}
		case 3:
			m.Value = bytes.Repeat(m.Value, 40) // past the short-value limit
		}
		muts = append(muts, m)
	}
	startTS := h.next()
	primary := muts[0].Key
	onePC := h.rnd.Intn(6) == 0 && len(h.byRegion([][]byte{primary})) == 1
	var keys [][]byte
	for _, m := range muts {
		keys = append(keys, m.Key)
	}
	groups := h.byRegion(keys)
	if onePC && len(groups) != 1 {
		onePC = false
	}
	for _, ks := range groups {
		var part []Mutation
		for _, m := range muts {
			if slices.ContainsFunc(ks, func(k []byte) bool { return bytes.Equal(k, m.Key) }) {
				part = append(part, m)
			}
		}
		req := &PrewriteRequest{Region: h.regionCtx(ks[0]), Mutations: part, Primary: primary, StartTS: startTS, LockTTL: 1 << 40, TryOnePC: onePC}
		if onePC {
			req.MaxCommitTS = startTS + 1000
		}
		resp, err := h.leader.Prewrite(h.repCtx(), req)
		if err != nil {
			h.fatalf("prewrite at %d: %v", startTS, err)
		}
		if len(resp.Errors) > 0 {
			// A conflict with a pending lock or a newer record: give up
			// what was locked.
			h.step("prewrite %d of %q: %v (rolled back)", startTS, ks, resp.Errors[0])
			h.rollback(startTS, keys)
			return
		}
		if onePC && resp.OnePCCommitTS != 0 {
			h.ts = max(h.ts, resp.OnePCCommitTS)
			h.step("1pc %d at %d: %v", startTS, resp.OnePCCommitTS, describe(muts))
			return
		}
	}
	switch x := h.rnd.Intn(10); {
	case x < 6:
		h.commit(startTS, keys, h.next(), describe(muts))
	case x < 8:
		h.step("rollback %d: %v", startTS, describe(muts))
		h.rollback(startTS, keys)
	default:
		h.step("pending %d: %v", startTS, describe(muts))
		h.pending[startTS] = keys
		if x == 9 {
			// The primary commits; the secondaries stay locked until a
			// resolve rolls them forward.
			commitTS := h.next()
			h.commitKeys(startTS, [][]byte{primary}, commitTS)
			h.step("primary of %d committed at %d", startTS, commitTS)
			h.pending[startTS] = append([][]byte{encodeTS(commitTS)}, keys[1:]...)
		}
	}
}

// encodeTS marks a pending transaction's first entry as its commit
// timestamp (the primary committed): see resolve.
func encodeTS(ts uint64) []byte { return []byte(fmt.Sprintf("@%d", ts)) }

func describe(muts []Mutation) string {
	var b bytes.Buffer
	for _, m := range muts {
		fmt.Fprintf(&b, "%v %s ", m.Op, m.Key)
	}
	return b.String()
}

func (h *latestHarness) commit(startTS uint64, keys [][]byte, commitTS uint64, what string) {
	h.commitKeys(startTS, keys, commitTS)
	h.step("commit %d at %d: %s", startTS, commitTS, what)
}

func (h *latestHarness) commitKeys(startTS uint64, keys [][]byte, commitTS uint64) {
	for _, ks := range h.byRegion(keys) {
		if err := h.leader.Commit(h.repCtx(), &CommitRequest{Region: h.regionCtx(ks[0]), Keys: ks, StartTS: startTS, CommitTS: commitTS}); err != nil {
			h.fatalf("commit %d at %d: %v", startTS, commitTS, err)
		}
	}
}

func (h *latestHarness) rollback(startTS uint64, keys [][]byte) {
	for _, ks := range h.byRegion(keys) {
		if err := h.leader.BatchRollback(h.repCtx(), h.regionCtx(ks[0]), ks, startTS); err != nil {
			h.fatalf("rollback %d: %v", startTS, err)
		}
	}
	h.aborted = append(h.aborted, startTS)
}

// resolve settles a pending transaction: rolls it forward when its
// primary committed, else commits or rolls it back.
func (h *latestHarness) resolve() {
	if len(h.pending) == 0 {
		return
	}
	var startTS uint64
	for ts := range h.pending {
		if startTS == 0 || ts < startTS {
			startTS = ts
		}
	}
	keys := h.pending[startTS]
	delete(h.pending, startTS)
	var commitTS uint64
	if len(keys) > 0 && keys[0][0] == '@' {
		commitTS, _ = strconv.ParseUint(string(keys[0][1:]), 10, 64)
		keys = keys[1:]
	} else if h.rnd.Intn(2) == 0 {
		commitTS = h.next()
		// Sometimes at another transaction's start_ts, rolled back on
		// one of these keys: the commit record takes over its Rollback
		// record (putCommitRecord, OverlappedRollback).
		if len(keys) > 0 && h.rnd.Intn(2) == 0 {
			at := startTS + 1
			if err := h.leader.BatchRollback(h.repCtx(), h.regionCtx(keys[0]), keys[:1], at); err == nil {
				commitTS = at
				h.step("rollback %d on %q before a commit at it", at, keys[0])
			}
		}
	}
	for _, ks := range h.byRegion(keys) {
		rc := h.regionCtx(ks[0])
		err := h.leader.ResolveLock(h.repCtx(), &ResolveLockRequest{Region: rc, StartTS: startTS, CommitTS: commitTS, Keys: ks})
		if err != nil {
			h.fatalf("resolve %d (commit %d): %v", startTS, commitTS, err)
		}
	}
	h.step("resolve %d: commit at %d of %q", startTS, commitTS, keys)
}

// gc collects at a safe point below every pending lock.
func (h *latestHarness) gc() {
	sp := h.ts - uint64(h.rnd.Intn(60))
	for ts := range h.pending {
		sp = min(sp, ts-1)
	}
	if sp <= h.safePoint {
		return
	}
	h.safePoint = sp
	for _, ri := range h.leader.Regions() {
		req := &GCRequest{Region: ri.Ctx(), SafePoint: sp}
		for {
			resp, err := h.leader.GC(h.repCtx(), req)
			if err != nil {
				h.fatalf("gc at %d: %v", sp, err)
			}
			if resp.Next == nil {
				break
			}
			req.Start = resp.Next
		}
	}
	h.step("gc at %d", sp)
}

// snapshot copies a range of the leader to the follower, as a raft
// snapshot does; all of it after a crash of the leader.
func (h *latestHarness) snapshot(all bool) {
	start, end := h.randRange()
	if all {
		start, end = []byte{}, nil
	}
	var chunks [][]byte
	if err := h.leader.ExportRange(h.ctx, start, end, 64+h.rnd.Intn(512), func(c []byte) error {
		chunks = append(chunks, append([]byte(nil), c...))
		return nil
	}); err != nil {
		h.fatalf("export [%q, %q): %v", start, end, err)
	}
	if err := h.follower.ImportRange(h.ctx, start, end, chunks); err != nil {
		h.fatalf("import [%q, %q): %v", start, end, err)
	}
	h.step("snapshot [%q, %q)", start, end)
	if all {
		h.synced = true
	}
}

// crash loses the leader's unsynced writes: the files go back to their
// last synced state, and the store reopens on them.
func (h *latestHarness) crash() {
	h.fs.SetIgnoreSyncs(true)
	_ = h.leader.Close()
	h.fs.ResetToSyncedState()
	h.fs.SetIgnoreSyncs(false)
	h.leader = h.open()
	h.rep.stores[0] = h.leader
	h.synced = false
	h.step("crash")
	// The pending transactions may have lost locks or their primary's
	// commit with the tail: each is rolled back where a lock is left.
	for startTS, keys := range h.pending {
		if len(keys) > 0 && keys[0][0] == '@' {
			keys = keys[1:]
		}
		for _, ks := range h.byRegion(keys) {
			err := h.leader.ResolveLock(h.repCtx(), &ResolveLockRequest{Region: h.regionCtx(ks[0]), StartTS: startTS, Keys: ks})
			h.step("after the crash, roll back %d on %q: %v", startTS, ks, err)
		}
		delete(h.pending, startTS)
	}
}

// restart closes the leader and opens it again, sometimes with its
// latest space lost (a store written before the space existed).
func (h *latestHarness) restart() {
	lose := h.rnd.Intn(2) == 0
	if lose {
		if err := h.leader.db.DeleteRange(keyspace.SpaceStart(keyspace.Latest), keyspace.SpaceEnd(keyspace.Latest), pebble.Sync); err != nil {
			h.fatalf("clear the latest space: %v", err)
		}
		if err := h.leader.db.Delete(keyspace.LatestBuiltKey(), pebble.Sync); err != nil {
			h.fatalf("clear the marker: %v", err)
		}
	}
	if err := h.leader.Close(); err != nil {
		h.fatalf("close: %v", err)
	}
	h.leader = h.open()
	h.rep.stores[0] = h.leader
	h.step("restart (latest space lost: %v)", lose)
}

// toggle switches the latest space of one of the stores: each keeps it
// or not on its own, the replicated batches the same.
func (h *latestHarness) toggle() {
	s, name := h.leader, "leader"
	if h.rnd.Intn(2) == 0 {
		s, name = h.follower, "follower"
	}
	on := !latestOnIn(s.latest.load())
	var err error
	if on {
		err = s.EnableLatestSpace(h.ctx)
	} else {
		err = s.DisableLatestSpace(h.ctx)
	}
	if err != nil {
		h.fatalf("switch the %s's latest space on=%v: %v", name, on, err)
	}
	if got := latestOnIn(s.latest.load()); got != on {
		h.fatalf("the %s's latest space is on=%v after the switch to %v", name, got, on)
	}
	h.step("switch the %s's latest space on=%v", name, on)
}

// destroy drops a range's data, as DROP TABLE's deletion after the safe
// point does, on both stores.
func (h *latestHarness) destroy() {
	start, end := h.randRange()
	if end == nil {
		end = []byte("l")
	}
	for ks := range h.pending {
		for _, k := range h.pending[ks] {
			if bytes.Compare(k, start) >= 0 && bytes.Compare(k, end) < 0 {
				return // a pending transaction's keys stay
			}
		}
	}
	for _, s := range []*Store{h.leader, h.follower} {
		if _, err := s.UnsafeDestroyRange(h.ctx, start, end); err != nil {
			h.fatalf("destroy [%q, %q): %v", start, end, err)
		}
	}
	h.step("destroy [%q, %q)", start, end)
}

// split splits the leader's region at a random key.
func (h *latestHarness) split() {
	k := h.keys[1+h.rnd.Intn(len(h.keys)-1)]
	if _, _, err := h.leader.SplitRegion(h.ctx, k); err != nil {
		h.step("split at %q: %v", k, err)
		return
	}
	h.step("split at %q", k)
}

// randRange returns a random range of the keys (end nil: to the end).
func (h *latestHarness) randRange() (start, end []byte) {
	i := h.rnd.Intn(len(h.keys))
	start = h.keys[i]
	if h.rnd.Intn(4) == 0 {
		start = []byte{}
	}
	if j := i + 1 + h.rnd.Intn(len(h.keys)); j < len(h.keys) {
		end = h.keys[j]
	}
	return start, end
}

func (h *latestHarness) run(rounds int) {
	for round := range rounds {
		switch x := h.rnd.Intn(100); {
		case x < 60:
			h.txn()
		case x < 68:
			h.resolve()
		case x < 76:
			h.gc()
		case x < 80:
			if err := h.leader.db.Flush(); err != nil {
				h.fatalf("flush: %v", err)
			}
			h.step("flush")
		case x < 83:
			if err := h.leader.db.Compact([]byte{0}, []byte{0xff}, false); err != nil {
				h.fatalf("compact: %v", err)
			}
			h.step("compact")
		case x < 86:
			h.split()
		case x < 90:
			h.snapshot(false)
		case x < 92:
			h.crash()
		case x < 94:
			h.restart()
		case x < 96:
			h.destroy()
		case x < 99:
			h.toggle()
		}
		if !h.synced && h.rnd.Intn(4) == 0 {
			h.snapshot(true)
		}
		if round%5 == 0 {
			h.check(fmt.Sprintf("round %d", round))
		}
	}
	for len(h.pending) > 0 {
		h.resolve()
	}
	h.gc()
	h.snapshot(true)
	h.check("end")
	kinds := map[string]int{}
	for _, l := range h.trace {
		kinds[strings.Fields(l)[0]]++
	}
	h.t.Logf("%d steps: %v", len(h.trace), kinds)
}

// check compares the read paths of both stores at several timestamps
// over random ranges, and the latest space's invariant.
func (h *latestHarness) check(when string) {
	h.t.Helper()
	stamps := []uint64{h.safePoint + 1, h.ts, h.ts + 1000, math.MaxUint64}
	for range 3 {
		stamps = append(stamps, h.safePoint+uint64(h.rnd.Int63n(int64(h.ts-h.safePoint)+1)))
	}
	for _, at := range stamps {
		for range 2 {
			start, end := h.randRange()
			keyOnly := h.rnd.Intn(3) == 0
			limit := 0
			if h.rnd.Intn(3) == 0 {
				limit = 1 + h.rnd.Intn(10)
			}
			lead := h.walks(h.leader, when, at, start, end, keyOnly, limit)
			if h.synced {
				fol := h.walks(h.follower, when+" (follower)", at, start, end, keyOnly, limit)
				if !slices.Equal(lead, fol) {
					h.fatalf("%s, at %d, [%q, %q): leader %q, follower %q", when, at, start, end, lead, fol)
				}
			}
		}
	}
	if err := latestInvariant(h.leader); err != nil {
		h.fatalf("%s: %v", when, err)
	}
	if err := latestInvariant(h.follower); err != nil {
		h.fatalf("%s (follower): %v", when, err)
	}
}

// walks runs the three walks of [start, end) at ts on s (the latest
// space forward, the write space forward and reverse) over one snapshot
// and fails unless they agree; it returns the pairs as strings.
func (h *latestHarness) walks(s *Store, when string, at uint64, start, end []byte, keyOnly bool, limit int) []string {
	h.t.Helper()
	snap := s.db.NewSnapshot()
	defer snap.Close()
	walk := func(latest, reverse bool) []string {
		r := newMVCCReader(snap)
		defer r.close()
		r.latest = latest
		var out []string
		err := r.visit(h.ctx, start, end, at, reverse, keyOnly, func(k, v []byte) (bool, error) {
			out = append(out, fmt.Sprintf("%s=%s", k, v))
			return false, nil
		})
		if err != nil {
			h.fatalf("%s: walk at %d (latest %v, reverse %v): %v", when, at, latest, reverse, err)
		}
		if reverse {
			slices.Reverse(out)
		}
		return out
	}
	versions, back := walk(false, false), walk(false, true)
	copies := versions
	if latestOnIn(s.latest.load()) {
		copies = walk(true, false)
	}
	if !slices.Equal(copies, versions) || !slices.Equal(versions, back) {
		h.fatalf("%s, at %d, [%q, %q): latest space %q, write space %q, reverse %q", when, at, start, end, copies, versions, back)
	}
	// A limited walk stops after its first pairs on either path.
	if limit > 0 {
		r := newMVCCReader(snap)
		defer r.close()
		r.latest = latestOnIn(s.latest.load())
		var got []string
		if err := r.visit(h.ctx, start, end, at, false, keyOnly, func(k, v []byte) (bool, error) {
			got = append(got, fmt.Sprintf("%s=%s", k, v))
			return len(got) == limit, nil
		}); err != nil {
			h.fatalf("%s: limited walk: %v", when, err)
		}
		if want := copies[:min(limit, len(copies))]; !slices.Equal(got, want) {
			h.fatalf("%s, at %d, limit %d: %q, want %q", when, at, limit, got, want)
		}
	}
	return copies
}

// invariant checks the latest space of s against its write space: while
// it is on, a copy for exactly the keys with a Put or Delete record, the
// newest, but that a Delete at or below the safe point may have none
// (backfillBatch); while it is off, nothing.
func latestInvariant(s *Store) error {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	if set := s.latest.ranges.set.Load(); !latestOnIn(s.latest.load()) && set != nil {
		return latestInvariantOf(snap, func(key []byte) bool { r, ok := latestRangeOfKey(key); return ok && set.on(r) }, s.GCSafePoint())
	}
	return latestInvariantIn(snap, latestOnIn(s.latest.load()), s.GCSafePoint())
}

// latestInvariantIn is latestInvariant over the view db, on telling
// whether the space was on in it, sp a safe point at or above the one in
// force when it was taken.
func latestInvariantIn(db pebble.Reader, on bool, sp uint64) error {
	return latestInvariantOf(db, func([]byte) bool { return on }, sp)
}

// latestInvariantOf is latestInvariantIn with the keys whose copies the
// space keeps told by covered: the others must have none.
func latestInvariantOf(db pebble.Reader, covered func(key []byte) bool, sp uint64) error {
	want := map[string][]byte{}
	optional := map[string]bool{}
	iter, err := db.NewIter(&pebble.IterOptions{LowerBound: keyspace.SpaceStart(keyspace.Write), UpperBound: keyspace.SpaceEnd(keyspace.Write)})
	if err != nil {
		return err
	}
	for ok := iter.First(); ok; ok = iter.Next() {
		key, commitTS, err := keyspace.DecodeWriteKey(iter.Key())
		if err != nil {
			return err
		}
		if _, seen := want[string(key)]; seen {
			continue
		}
		w, err := txntypes.DecodeWrite(iter.Value())
		if err != nil {
			return err
		}
		if (w.Type == txntypes.WritePut || w.Type == txntypes.WriteDelete) && covered(key) {
			want[string(key)] = latestValue(commitTS, w)
			optional[string(key)] = w.Type == txntypes.WriteDelete && commitTS <= sp
		}
	}
	if err := errors.Join(iter.Error(), iter.Close()); err != nil {
		return err
	}
	got := map[string][]byte{}
	iter, err = db.NewIter(&pebble.IterOptions{LowerBound: keyspace.SpaceStart(keyspace.Latest), UpperBound: keyspace.SpaceEnd(keyspace.Latest)})
	if err != nil {
		return err
	}
	for ok := iter.First(); ok; ok = iter.Next() {
		key, err := keyspace.DecodeLatestKey(iter.Key())
		if err != nil {
			return err
		}
		got[string(key)] = append([]byte(nil), iter.Value()...)
	}
	if err := errors.Join(iter.Error(), iter.Close()); err != nil {
		return err
	}
	for k := range got {
		if !covered([]byte(k)) {
			return fmt.Errorf("key %q has a copy but the space is off for it", k)
		}
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok && optional[k] {
			continue
		}
		if !ok || !bytes.Equal(g, v) {
			return fmt.Errorf("key %q: copy %x, want %x (its newest Put or Delete)", k, g, v)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			return fmt.Errorf("key %q has a copy %x but no Put or Delete record", k, g)
		}
	}
	return nil
}

// TestLatestSwitchUnderWrites: the latest space switched on and off while
// writers commit and GC collects, concurrently: after every switch on,
// the space holds exactly the copies the write space says (no commit
// falls between a backfill batch's read of a key and its copy, no GC
// deletion misses a copy), and a walk through it reads what the versions
// say; after every switch off, it is empty.
func TestLatestSwitchUnderWrites(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, Latest: LatestOff})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	const writers, keysEach = 3, 400
	c := churnWithGC(t, s, writers, 0, func(w int, rnd *rand.Rand) []byte {
		return []byte(fmt.Sprintf("k%d-%04d", w, rnd.Intn(keysEach)))
	})
	clock, commits, stop := c.clock, c.commits, c.stop
	check := func(when string) {
		t.Helper()
		snap := s.db.NewSnapshot()
		defer snap.Close()
		at := clock.Load()
		walk := func(latest bool) []string {
			r := newMVCCReader(snap)
			defer r.close()
			r.latest = latest
			var out []string
			if err := r.visit(ctx, nil, nil, at, false, false, func(k, v []byte) (bool, error) {
				out = append(out, string(k)+"="+string(v))
				return false, nil
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if on := latestOnIn(s.latest.load()); on {
			if err := latestInvariantIn(snap, on, s.GCSafePoint()); err != nil {
				t.Fatalf("%s: %v", when, err)
			}
		}
		if versions := walk(false); latestOnIn(s.latest.load()) {
			if copies := walk(true); !slices.Equal(copies, versions) {
				t.Fatalf("%s, at %d: %d pairs through the latest space, %d through the versions", when, at, len(copies), len(versions))
			}
		}
	}
	for i := range 12 {
		for commits.Load() < uint64(200*(i+1)) && !t.Failed() {
			runtime.Gosched()
		}
		if err := s.EnableLatestSpace(ctx); err != nil {
			t.Fatal(err)
		}
		if !latestOnIn(s.latest.load()) {
			t.Fatal("the space is not on after EnableLatestSpace")
		}
		check(fmt.Sprintf("switch %d on", i))
		if i%2 == 1 {
			if err := s.DisableLatestSpace(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop()
	if err := s.EnableLatestSpace(ctx); err != nil {
		t.Fatal(err)
	}
	if err := latestInvariant(s); err != nil {
		t.Fatal(err)
	}
	check("at the end")
	st := s.LatestSpaceStats()
	t.Logf("%d commits, %d switches on, %d off", commits.Load(), st.SwitchedOn, st.SwitchedOff)
}

// churn is what churnWithGC started.
type churn struct {
	// clock is the timestamps' source, commits counts the commits.
	clock, commits *atomic.Uint64
	// published[w] is at or below writer w's running start_ts (MaxUint64:
	// none runs); the slots after the writers' are readers' pins. GC
	// stays below every one.
	published []atomic.Uint64
	writers   int
	stop      func()
	// gcMu is held by a GC pass from the choice of its safe point to its
	// end, and by pin: a pin is either seen by a pass or comes after it.
	gcMu *sync.Mutex
}

// pin returns a read timestamp at which every commit is applied (no
// writer runs with a commit_ts at or below it) and that GC stays below
// until unpin, for reader slot reader.
func (c *churn) pin(reader int) (ts uint64, unpin func()) {
	c.gcMu.Lock()
	defer c.gcMu.Unlock()
	// No pass runs meanwhile; the next one stays below ts itself (not
	// the clock: a writer whose start bounded ts may finish first).
	ts = c.clock.Load()
	for w := range c.writers {
		ts = min(ts, c.published[w].Load())
	}
	slot := &c.published[c.writers+reader]
	slot.Store(ts)
	return ts, func() { slot.Store(math.MaxUint64) }
}

// churnWithGC starts writers goroutines, each committing puts and (one in
// four) deletes of the keys keyOf picks, one a transaction, and one
// collecting at a safe point below every running writer's start_ts and
// every pin of readers reader slots, over s's first region; stop ends
// the goroutines and waits for them.
func churnWithGC(t *testing.T, s *Store, writers, readers int, keyOf func(w int, rnd *rand.Rand) []byte) *churn {
	ctx := context.Background()
	rc := s.Regions()[0].Ctx()
	clock, commits := new(atomic.Uint64), new(atomic.Uint64)
	clock.Store(100)
	published := make([]atomic.Uint64, writers+readers)
	for i := range published {
		published[i].Store(math.MaxUint64)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	gcMu := new(sync.Mutex)
	// gcPass collects at a safe point below every running writer's
	// start_ts and every reader's pin.
	gcPass := func() error {
		gcMu.Lock()
		defer gcMu.Unlock()
		sp := clock.Load()
		for i := range published {
			sp = min(sp, published[i].Load())
		}
		if sp <= 110 {
			return nil
		}
		req := &GCRequest{Region: rc, SafePoint: sp - 10}
		for {
			resp, err := s.GC(ctx, req)
			if err != nil || resp.Next == nil {
				return err
			}
			req.Start = resp.Next
		}
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(w)))
			for {
				select {
				case <-done:
					return
				default:
				}
				published[w].Store(clock.Load())
				startTS := clock.Add(1)
				k := keyOf(w, rnd)
				m := Mutation{Op: OpPut, Key: k, Value: []byte(fmt.Sprintf("v%d", startTS))}
				if rnd.Intn(4) == 0 {
					m = Mutation{Op: OpDelete, Key: k}
				}
				resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: []Mutation{m}, Primary: k, StartTS: startTS, LockTTL: 1 << 40})
				if err != nil || len(resp.Errors) > 0 {
					t.Errorf("prewrite: %v %v", resp, err)
					return
				}
				if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{k}, StartTS: startTS, CommitTS: clock.Add(1)}); err != nil {
					t.Errorf("commit: %v", err)
					return
				}
				published[w].Store(math.MaxUint64)
				commits.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := gcPass(); err != nil {
				t.Errorf("gc: %v", err)
				return
			}
		}
	}()
	return &churn{clock: clock, commits: commits, published: published, writers: writers, gcMu: gcMu, stop: func() { close(done); wg.Wait() }}
}
