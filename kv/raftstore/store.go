package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Applier is the state machine under the raft groups: the KV store
// (*kv.Store). ApplyReplicated applies one committed command's batch;
// UpdateMaxReadTS raises the max_read_ts of the store's regions before a
// new leader serves (see the package comment).
type Applier interface {
	ApplyReplicated(ctx context.Context, batch []byte) error
	UpdateMaxReadTS(ts uint64)
	// Sync makes every batch applied so far durable: a replica calls it
	// before it drops applied entries from its log.
	Sync(ctx context.Context) error
	// ExportRange sends the keys of a region's range [start, end), from
	// one consistent state, to emit in chunks of about chunkBytes: a
	// snapshot for a follower behind the truncated log.
	ExportRange(ctx context.Context, start, end []byte, chunkBytes int, emit func(chunk []byte) error) error
	// ImportRange replaces the keys of [start, end) with those of chunks
	// atomically and durably.
	ImportRange(ctx context.Context, start, end []byte, chunks [][]byte) error
}

// Envelope is one raft message of one region, addressed by the message's
// To and From, which are store ids (a region has at most one replica per
// store, so a store id names the replica).
type Envelope struct {
	RegionID uint64
	Msg      *pb.Message
}

// Transport carries raft messages between stores. Send is called from the
// store's loop once per round per destination store, with every message
// of the round to that store; it must not block for long (queue and
// return). A message lost is harmless: raft sends again.
type Transport interface {
	Send(to uint64, msgs []Envelope)
	// SendSnapshot sends a region's snapshot to store to: env's message
	// (raft's MsgSnap), then the chunks export emits. It returns once
	// the receiver installed it, or with the error that stopped it.
	SendSnapshot(ctx context.Context, to uint64, env Envelope, export func(emit func(chunk []byte) error) error) error
}

// snapshotChunkBytes is the size of a snapshot's chunks.
const snapshotChunkBytes = 1 << 20

// Config configures a Store.
type Config struct {
	// StoreID is this store's id in the cluster, the raft id of each of its
	// replicas.
	StoreID uint64
	// Dir is the raft engine's directory (a Pebble of its own); ignored
	// with InMemory.
	Dir      string
	InMemory bool
	// Applier applies committed commands.
	Applier Applier
	// Transport sends raft messages to other stores.
	Transport Transport
	// FreshTS returns a timestamp from the oracle: a replica that becomes
	// leader raises max_read_ts to it before it serves.
	FreshTS func(ctx context.Context) (uint64, error)
	// TickInterval is the raft tick. Default 100 ms.
	TickInterval time.Duration
	// ElectionTicks and HeartbeatTicks are raft's election timeout and
	// heartbeat interval in ticks. Defaults 10 and 2: an election after a
	// leader's death takes 1-2 s.
	ElectionTicks, HeartbeatTicks int
	// LogCompactThreshold is how many applied entries a region's log
	// holds before its leader proposes to truncate it up to what every
	// follower has. Default 1024.
	LogCompactThreshold int
	// LogCountLimit is how many applied entries a region's log holds
	// before its leader truncates it past a follower that lags (the
	// follower then catches up by snapshot). Default 4 x
	// LogCompactThreshold.
	LogCountLimit int
	// Now is the clock leader leases are measured on (monotonic readings:
	// time.Now's). Default time.Now; tests drive a clock of their own.
	Now func() time.Time
	// MaxClockDrift bounds how much less time a follower's ticks may
	// measure than the leader's clock over an election timeout (clock
	// rates differ): the leader lease is shortened by it (see the package
	// comment). Default TickInterval; a drift of an election timeout or
	// more disables lease reads (every read then asks a quorum).
	MaxClockDrift time.Duration
	// OnLeaderChange is called (from its own goroutine) when a replica on
	// this store becomes a serving leader or stops being one, or applies a
	// conf change, so that the node tells pd at once.
	OnLeaderChange func()
	// OnSplit is called (from its own goroutine) when a replica on this
	// store applied a split: parent kept the left part, child is the new
	// region, whose replica exists on the store now.
	OnSplit func(parent, child uint64)
	// Logger logs the store's life. Default slog.Default().
	Logger *slog.Logger
}

// Store holds the raft groups of one KV node's replicas: their logs in a
// Pebble of its own, one loop that drives every group (tick, step, Ready:
// persist with one sync, send, apply, advance), and the transport. Safe
// for concurrent use.
type Store struct {
	cfg Config
	db  *pebble.DB

	mu       sync.Mutex
	replicas map[uint64]*Replica
	inbox    []Envelope
	// orphans are messages that arrived for regions this store does not
	// hold (loop only), each with the tick it arrived at: a region split
	// off on another store first (its new leader campaigns at once) is
	// created here when this store applies the split, and its first
	// messages are stepped then instead of waiting for raft to send them
	// again after an election timeout.
	orphans []orphan
	// snaps are snapshots received, to install; reports are the outcomes
	// of snapshots sent, for raft.
	snaps   []inSnapshot
	reports []snapshotReport
	// removals are the regions whose replicas are to be destroyed.
	removals []uint64
	// transferring: the store is being stopped and hands its leaderships
	// away (TransferLeaders).
	transferring bool
	// dirty are the replicas with something for the loop (a proposal, a
	// read, a request of the node's, raft work left from a round), under
	// dirtyMu, a lock taken last; allDirty: every replica (a tick). A
	// round handles the replicas dirty or stepped since the last one, so
	// that its cost follows the regions with work, not all the regions
	// (TiKV's batch system polls only the regions with messages too).
	// stats counts the store's raft work (Stats).
	stats storeStats

	dirtyMu  sync.Mutex
	dirty    map[uint64]*Replica
	allDirty bool
	closed   bool

	// ticks counts the loop's ticks (loop only).
	ticks int

	// wake nudges the loop: something arrived in an inbox.
	wake chan struct{}
	stop context.CancelFunc
	done chan struct{}
	// bg bounds the goroutines the loop starts (oracle calls).
	bg context.Context
	wg sync.WaitGroup
}

// Open opens the raft engine in cfg.Dir. The store's loop runs once Start
// is called; replicas are added with AddRegion.
func Open(cfg Config) (*Store, error) {
	if cfg.StoreID == 0 || cfg.Applier == nil || cfg.Transport == nil || cfg.FreshTS == nil {
		return nil, errors.New("raftstore: StoreID, Applier, Transport and FreshTS are required")
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = 100 * time.Millisecond
	}
	if cfg.ElectionTicks <= 0 {
		cfg.ElectionTicks = 10
	}
	if cfg.HeartbeatTicks <= 0 {
		cfg.HeartbeatTicks = 2
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxClockDrift <= 0 {
		cfg.MaxClockDrift = cfg.TickInterval
	}
	if cfg.LogCompactThreshold <= 0 {
		cfg.LogCompactThreshold = 1024
	}
	if cfg.LogCountLimit < cfg.LogCompactThreshold {
		cfg.LogCountLimit = 4 * cfg.LogCompactThreshold
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	opts := &pebble.Options{}
	dir := cfg.Dir
	if cfg.InMemory {
		opts.FS, dir = vfs.NewMem(), ""
	} else if dir == "" {
		return nil, errors.New("raftstore: empty Dir (set InMemory for a memory store)")
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("raftstore: open %q: %w", dir, err)
	}
	bg, stop := context.WithCancel(context.Background())
	return &Store{cfg: cfg, db: db, replicas: map[uint64]*Replica{}, wake: make(chan struct{}, 1),
		dirty: map[uint64]*Replica{}, bg: bg, stop: stop}, nil
}

// Start runs the store's loop until Close.
func (s *Store) Start() {
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.run(s.bg)
	}()
}

// Close stops the loop, fails the commands waiting on it, and closes the
// raft engine.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	if s.done != nil {
		<-s.done
	}
	s.wg.Wait()
	s.mu.Lock()
	for _, r := range s.replicas {
		r.failAll(ErrStopped, true)
	}
	for _, in := range s.snaps {
		in.done <- ErrStopped
	}
	s.snaps = nil
	s.mu.Unlock()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("raftstore: close: %w", err)
	}
	return nil
}

// leaseDuration is how long after sending a message that a quorum of a
// region's voters acknowledged its leader may serve reads from its
// commit index without asking the quorum again: two ticks less than the
// election timeout (a follower's first tick after hearing from the
// leader may come at once, and one more tick held while its loop was
// busy may follow it), less the clock drift (the package comment
// argues it). Zero or less: no lease reads.
func (s *Store) leaseDuration() time.Duration {
	return time.Duration(s.cfg.ElectionTicks-2)*s.cfg.TickInterval - s.cfg.MaxClockDrift
}

// ErrStopped: the store is closing.
var ErrStopped = errors.New("raftstore: store stopped")

// ErrUndetermined is the outcome of a proposal whose entry this replica
// never applied on its own because a snapshot moved it past the entry's
// index: the entry may or may not have been the proposal. The replica's
// state includes whatever was committed there.
var ErrUndetermined = errors.New("raftstore: proposal's outcome unknown (a snapshot moved the replica past its entry)")

// AddRegion creates (or, after a restart, reloads from the raft engine)
// this store's replica of region id, desc as pd has it (the descriptor
// the raft engine kept wins), at configuration confVer (pd's record),
// whose peers are peers (store ids), and returns it; a region already
// added is returned as it is. A replica new to this store is created
// from the region's initial state when confVer and desc.Version are 1
// (the cluster's first region: its voters are peers, this store among
// them), else uninitialized: a replica a conf change added, or a region
// split off another while this store's replica did not apply the split,
// which its leader's snapshot initializes. *ErrTombstoned when this
// store's replica was removed at confVer or later.
func (s *Store) AddRegion(id uint64, desc Descriptor, peers []uint64, confVer uint64) (*Replica, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.replicas[id]; ok {
		return r, nil
	}
	if s.closed {
		return nil, ErrStopped
	}
	r, err := newReplica(s, id, desc.clone(), peers, confVer)
	if err != nil {
		return nil, err
	}
	s.replicas[id] = r
	s.touch(r)
	return r, nil
}

// RemoveRegion destroys this store's replica of region id (a conf change
// removed it from its group): the loop stops driving it and fails what
// waits on it, replaces its raft state with a tombstone (synced), then
// deletes its range's keys from the KV store. No-op for a region not
// held.
func (s *Store) RemoveRegion(id uint64) {
	s.mu.Lock()
	s.removals = append(s.removals, id)
	s.mu.Unlock()
	s.nudge()
}

// destroy carries out a RemoveRegion. Loop only.
func (s *Store) destroy(ctx context.Context, id uint64) error {
	s.mu.Lock()
	r := s.replicas[id]
	delete(s.replicas, id)
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	r.failAll(&NotLeaderError{RegionID: id}, true)
	b := s.db.NewBatch()
	defer b.Close()
	if err := writeTombstone(b, id, r.confVer); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("raftstore: region %d: write tombstone: %w", id, err)
	}
	d := r.Region()
	if err := s.cfg.Applier.ImportRange(ctx, d.Start, d.End, nil); err != nil {
		return fmt.Errorf("raftstore: region %d: delete the removed replica's keys: %w", id, err)
	}
	s.cfg.Logger.Info("raftstore: replica removed", "region", id, "conf_ver", r.confVer)
	return nil
}

// TransferLeaders hands every leadership on this store to an up-to-date
// voter on another store (raft's leader transfer: the transferee campaigns
// at once, with the leader's blessing, instead of after an election
// timeout) and returns once no replica here leads (but those alone in
// their groups), or with ctx's error. A leader whose quorum is gone steps
// down by itself within an election timeout (CheckQuorum). A
// node being stopped calls it first, so that its regions are served by
// new leaders at once (TiKV transfers leaders away from a store being
// stopped too). The store keeps handing leaderships away until it closes.
func (s *Store) TransferLeaders(ctx context.Context) error {
	s.mu.Lock()
	s.transferring = true
	s.mu.Unlock()
	s.nudge()
	for {
		leading := 0
		for _, r := range s.sorted() {
			if r.Leader() == s.cfg.StoreID && len(r.Conf().Voters) > 1 {
				leading++
			}
		}
		if leading == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("raftstore: %d leaderships not handed away: %w", leading, context.Cause(ctx))
		case <-time.After(20 * time.Millisecond):
			s.nudge()
		}
	}
}

// Replica returns this store's replica of region id, or nil.
func (s *Store) Replica(id uint64) *Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replicas[id]
}

// Regions returns the regions this store holds a replica of, sorted.
func (s *Store) Regions() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.replicas))
}

// Step queues raft messages that arrived from another store.
func (s *Store) Step(msgs []Envelope) {
	s.mu.Lock()
	s.inbox = append(s.inbox, msgs...)
	s.mu.Unlock()
	s.nudge()
}

// touch marks r as having work for the loop and nudges it.
func (s *Store) touch(r *Replica) {
	s.dirtyMu.Lock()
	s.dirty[r.id] = r
	s.dirtyMu.Unlock()
	s.nudge()
}

func (s *Store) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run is the loop: every tick and whenever something arrives, one round.
func (s *Store) run(ctx context.Context) {
	t := time.NewTicker(s.cfg.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.tick()
		case <-s.wake:
		}
		if err := s.round(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			// The raft engine failed a write: nothing of the round was
			// acknowledged; the next round tries again.
			s.cfg.Logger.Error("raftstore: round failed", "err", err)
		}
	}
}

// sorted returns the replicas by region id (a fixed order keeps tests
// deterministic).
func (s *Store) sorted() []*Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Replica, 0, len(s.replicas))
	for _, r := range s.replicas {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// tick advances every group's logical clock by one tick, renews the
// leases of leaders whose reads use them (Replica.maybeRenewLease), counts
// down the vote guard of restarted replicas, and forgets a
// conf change proposed a few election timeouts ago and never applied
// (raft drops a conf change proposed while another is pending, and a
// leader's term may end): the repair proposes again.
func (s *Store) tick() {
	s.ticks++
	s.dirtyMu.Lock()
	s.allDirty = true
	s.dirtyMu.Unlock()
	now := s.cfg.Now()
	for _, r := range s.sorted() {
		r.rn.Tick()
		r.updateLeaderless()
		r.maybeRenewLease(now)
		if r.voteGuard > 0 {
			r.voteGuard--
		}
		if r.confTicks > 0 {
			if r.confTicks++; r.confTicks > 3*s.cfg.ElectionTicks {
				r.confTicks = 0
			}
		}
		if r.transferTicks > 0 {
			if r.transferTicks++; r.transferTicks > 2*s.cfg.ElectionTicks {
				r.resume()
			}
		}
	}
}

// round steps what arrived, hands proposals and read requests to their
// groups, and handles every group's Ready: the entries and hard states of
// all groups go to the raft engine in one batch with one sync, then the
// messages are sent (one Send per destination store), the committed
// entries applied, and the groups advanced.
func (s *Store) round(ctx context.Context) error {
	s.mu.Lock()
	inbox, snaps, reports, removals := s.inbox, s.snaps, s.reports, s.removals
	s.inbox, s.snaps, s.reports, s.removals = nil, nil, nil, nil
	s.mu.Unlock()
	for _, id := range removals {
		if err := s.destroy(ctx, id); err != nil {
			// The replica is out of the loop; a restart loads it again,
			// and the node removes it again once pd says so.
			s.cfg.Logger.Error("raftstore: remove replica", "region", id, "err", err)
		}
	}
	s.dirtyMu.Lock()
	work, all := s.dirty, s.allDirty
	s.dirty, s.allDirty = map[uint64]*Replica{}, false
	s.dirtyMu.Unlock()
	for _, rep := range reports {
		if r := s.Replica(rep.region); r != nil {
			if so, ok := r.snapsOut[rep.to]; ok && rep.status == raft.SnapshotFailure {
				delete(r.snapsOut, rep.to) // raft sends another
			} else if ok {
				so.done = max(s.ticks, 1)
				r.snapsOut[rep.to] = so
			}
			r.rn.ReportSnapshot(rep.to, rep.status)
			work[r.id] = r
		}
	}
	for _, in := range snaps {
		in.done <- s.install(ctx, in)
		if r := s.Replica(in.env.RegionID); r != nil {
			work[r.id] = r
		}
	}
	orphans := s.orphans
	s.orphans = nil
	for _, o := range orphans {
		if r := s.step(o.Envelope, o.tick); r != nil {
			work[r.id] = r
		}
	}
	for _, env := range inbox {
		if r := s.step(env, s.ticks); r != nil {
			work[r.id] = r
		}
	}
	s.mu.Lock()
	transferring := s.transferring
	s.mu.Unlock()
	var replicas []*Replica
	if all || transferring {
		replicas = s.sorted()
	} else {
		replicas = make([]*Replica, 0, len(work))
		for _, r := range work {
			if s.Replica(r.id) == r { // not removed meanwhile
				replicas = append(replicas, r)
			}
		}
		sort.Slice(replicas, func(i, j int) bool { return replicas[i].id < replicas[j].id })
	}
	for _, r := range replicas {
		r.feed()
	}
	if transferring {
		for _, r := range replicas {
			r.transferAway()
		}
	}
	type ready struct {
		r  *Replica
		rd raft.Ready
	}
	var rds []ready
	for _, r := range replicas {
		if r.rn.HasReady() {
			rds = append(rds, ready{r, r.rn.Ready()})
		}
	}
	if len(rds) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, x := range rds {
		if snap := x.rd.Snapshot; !raft.IsEmptySnap(snap) {
			// The snapshot's keys are in the KV store (install): the
			// log up to it goes.
			md := snap.GetMetadata()
			at := confAt{ver: snapshotConfVer(snap.GetData()), conf: md.GetConfState()}
			desc, ok := snapshotDesc(snap.GetData())
			if !ok {
				desc = x.r.Region()
			}
			if err := writeSnapshot(b, x.r.id, truncated{index: md.GetIndex(), term: md.GetTerm()}, at, desc); err != nil {
				return err
			}
		}
		if err := writeReady(b, x.r.id, x.rd.Entries, x.rd.HardState); err != nil {
			return err
		}
	}
	if !b.Empty() {
		if err := b.Commit(pebble.Sync); err != nil {
			return fmt.Errorf("raftstore: persist raft state: %w", err)
		}
	}
	out := map[uint64][]Envelope{}
	for _, x := range rds {
		if err := x.r.stored(x.rd); err != nil {
			return err
		}
		for _, m := range x.rd.Messages {
			if m.GetType() == pb.MsgSnap {
				s.sendSnapshot(x.r, m)
				continue
			}
			out[m.GetTo()] = append(out[m.GetTo()], Envelope{RegionID: x.r.id, Msg: m})
		}
	}
	tos := make([]uint64, 0, len(out))
	for to := range out {
		tos = append(tos, to)
	}
	sort.Slice(tos, func(i, j int) bool { return tos[i] < tos[j] })
	for _, to := range tos {
		s.cfg.Transport.Send(to, out[to])
	}
	for _, x := range rds {
		x.r.apply(ctx, x.rd)
		x.r.rn.Advance(x.rd)
		x.r.maybeCompact()
	}
	// Advancing may leave more to do (entries appended this round are
	// committed once acknowledged, proposals fed after Ready): go again.
	for _, r := range replicas {
		if r.rn.HasReady() {
			s.touch(r)
		}
	}
	return nil
}

// step steps a message that arrived at tick into its replica's group and
// returns the replica. A message for a region this store does not hold
// (yet) is kept for a few ticks, in case a split here creates the region
// (raft sends again anyway), and nil returned. Loop only.
func (s *Store) step(env Envelope, tick int) *Replica {
	r := s.Replica(env.RegionID)
	if r == nil {
		if s.ticks-tick <= orphanTicks && len(s.orphans) < maxOrphans {
			s.orphans = append(s.orphans, orphan{Envelope: env, tick: tick})
		}
		return nil
	}
	r.heard[env.Msg.GetFrom()] = s.ticks
	if r.voteGuard > 0 && isVoteRequest(env.Msg) {
		// A restarted replica does not vote for its first election
		// timeout (see the package comment: leases).
		return r
	}
	if err := r.rn.Step(env.Msg); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		s.cfg.Logger.Debug("raftstore: step", "region", env.RegionID, "err", err)
	}
	return r
}

// orphan is a message for a region the store did not hold when it
// arrived, and the tick it arrived at.
type orphan struct {
	Envelope
	tick int
}

// orphanTicks is how long an orphan waits for its region, maxOrphans how
// many the store keeps.
const (
	orphanTicks = 5
	maxOrphans  = 256
)

// inSnapshot is a snapshot received for one of this store's replicas:
// raft's MsgSnap and the region's keys.
type inSnapshot struct {
	env    Envelope
	chunks [][]byte
	done   chan error
}

// snapshotReport is the outcome of a snapshot sent, for raft's progress
// of the follower.
type snapshotReport struct {
	region, to uint64
	status     raft.SnapshotStatus
}

// ReceiveSnapshot queues a snapshot received from another store (env:
// its MsgSnap; chunks: the region's keys) for the loop, and returns the
// channel the loop answers on once it installed it (or refused it).
func (s *Store) ReceiveSnapshot(env Envelope, chunks [][]byte) <-chan error {
	done := make(chan error, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		done <- ErrStopped
		return done
	}
	s.snaps = append(s.snaps, inSnapshot{env: env, chunks: chunks, done: done})
	s.mu.Unlock()
	s.nudge()
	return done
}

// install installs a snapshot received: the region's keys replace the
// replica's in the KV store, then raft steps the MsgSnap (its Ready
// carries the snapshot, which the round persists: the log up to it is
// dropped). A snapshot at or below the replica's commit index would take
// its state back past entries it applied: its keys are not installed,
// and raft, which restores only a snapshot above its commit index,
// answers with what it has. Loop only.
func (s *Store) install(ctx context.Context, in inSnapshot) error {
	r := s.Replica(in.env.RegionID)
	if r == nil {
		var err error
		if r, err = s.replicaForSnapshot(in.env); err != nil {
			return err
		}
	}
	md := in.env.Msg.GetSnapshot().GetMetadata()
	st := r.rn.BasicStatus()
	if st.RaftState == raft.StateLeader {
		// A leader of an older term: stepping the MsgSnap would make it
		// a follower that restores the snapshot, keys not installed.
		// Refused, the sender reports the failure and sends again.
		return fmt.Errorf("raftstore: region %d: snapshot at %d refused by a leader", r.id, md.GetIndex())
	}
	if md.GetIndex() > st.HardState.GetCommit() {
		d, ok := snapshotDesc(in.env.Msg.GetSnapshot().GetData())
		if !ok {
			d = r.Region()
		}
		if err := s.cfg.Applier.ImportRange(ctx, d.Start, d.End, in.chunks); err != nil {
			return fmt.Errorf("raftstore: region %d: install snapshot at %d: %w", r.id, md.GetIndex(), err)
		}
		s.stats.snapshotsInstall.Add(1)
		s.cfg.Logger.Info("raftstore: snapshot installed", "region", r.id, "index", md.GetIndex(), "chunks", len(in.chunks))
	}
	if err := r.rn.Step(in.env.Msg); err != nil {
		return fmt.Errorf("raftstore: region %d: step snapshot: %w", r.id, err)
	}
	return nil
}

// replicaForSnapshot creates this store's replica of a region a snapshot
// arrived for before the node created it, as TiKV's store creates a peer
// on a message for a region it does not hold (maybe_create_peer): pd
// lists the region to the store only once the leader reported the conf
// change that added it, a heartbeat or two after the leader sent the
// snapshot, which failed, and raft sent it again only after the
// replica, created meanwhile, answered a heartbeat. The replica is made
// if the snapshot's configuration lists this store, its data carries the
// region's descriptor and conf_ver, no replica here holds part of its
// range (a replica of an older region whose split is to create this one,
// or a newer one: the snapshot is stale), and this store's replica of
// the region was not removed at that conf_ver or later (a tombstone:
// ErrTombstoned). The node adopts it once pd lists the region, and
// destroys it if pd's record shows a newer configuration without the
// store first. Loop only.
func (s *Store) replicaForSnapshot(env Envelope) (*Replica, error) {
	id := env.RegionID
	snap := env.Msg.GetSnapshot()
	cs := snap.GetMetadata().GetConfState()
	member := slices.Concat(cs.GetVoters(), cs.GetLearners(), cs.GetVotersOutgoing(), cs.GetLearnersNext())
	desc, ok := snapshotDesc(snap.GetData())
	confVer := snapshotConfVer(snap.GetData())
	switch {
	case !slices.Contains(member, s.cfg.StoreID):
		return nil, fmt.Errorf("raftstore: snapshot for region %d, which store %d does not hold and is no member of", id, s.cfg.StoreID)
	case !ok || confVer == 0:
		return nil, fmt.Errorf("raftstore: snapshot for region %d, which store %d does not hold, without the region's descriptor", id, s.cfg.StoreID)
	}
	s.mu.Lock()
	for _, r := range s.replicas {
		if d := r.Region(); overlaps(d, desc) {
			s.mu.Unlock()
			return nil, fmt.Errorf("raftstore: snapshot for region %d, which store %d does not hold, overlaps its replica of region %d", id, s.cfg.StoreID, r.id)
		}
	}
	s.mu.Unlock()
	r, err := s.AddRegion(id, desc, cs.GetVoters(), confVer)
	if err != nil {
		return nil, fmt.Errorf("raftstore: create region %d's replica for a snapshot: %w", id, err)
	}
	s.cfg.Logger.Info("raftstore: replica created for a snapshot that came first", "region", id, "conf_ver", confVer)
	return r, nil
}

// overlaps reports whether two descriptors' ranges share a key.
func overlaps(a, b Descriptor) bool {
	return (len(a.End) == 0 || bytes.Compare(b.Start, a.End) < 0) && (len(b.End) == 0 || bytes.Compare(a.Start, b.End) < 0)
}

// sendSnapshot sends a follower the region's snapshot raft asked for
// (m, a MsgSnap: the log is truncated past the follower), off the loop,
// and reports the outcome to raft, which sends again after a failure.
// The keys are the KV store's state when the export starts, at or after
// the snapshot's index; the follower applies the entries after the index
// again, which leaves the same state.
func (s *Store) sendSnapshot(r *Replica, m *pb.Message) {
	r.snapsOut[m.GetTo()] = snapOut{index: m.GetSnapshot().GetMetadata().GetIndex()} // the log after it is kept (maybeCompact)
	d, ok := snapshotDesc(m.GetSnapshot().GetData())
	if !ok {
		d = r.Region()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := s.cfg.Transport.SendSnapshot(s.bg, m.GetTo(), Envelope{RegionID: r.id, Msg: m}, func(emit func([]byte) error) error {
			return s.cfg.Applier.ExportRange(s.bg, d.Start, d.End, snapshotChunkBytes, emit)
		})
		status := raft.SnapshotFinish
		if err != nil {
			status = raft.SnapshotFailure
			s.stats.snapshotSendFailures.Add(1)
			s.cfg.Logger.Warn("raftstore: snapshot not sent", "region", r.id, "to", m.GetTo(), "err", err)
		} else {
			s.stats.snapshotsSent.Add(1)
			s.cfg.Logger.Info("raftstore: snapshot sent", "region", r.id, "to", m.GetTo(), "index", m.GetSnapshot().GetMetadata().GetIndex())
		}
		s.mu.Lock()
		s.reports = append(s.reports, snapshotReport{region: r.id, to: m.GetTo(), status: status})
		s.mu.Unlock()
		s.nudge()
	}()
}

// slogLogger adapts slog to raft's Logger: raft's debug and info lines
// at debug, its warnings and errors as they are.
type slogLogger struct{ l *slog.Logger }

func (g slogLogger) Debug(v ...any)              { g.l.Debug(fmt.Sprint(v...)) }
func (g slogLogger) Debugf(f string, v ...any)   { g.l.Debug(fmt.Sprintf(f, v...)) }
func (g slogLogger) Info(v ...any)               { g.l.Debug(fmt.Sprint(v...)) }
func (g slogLogger) Infof(f string, v ...any)    { g.l.Debug(fmt.Sprintf(f, v...)) }
func (g slogLogger) Warning(v ...any)            { g.l.Warn(fmt.Sprint(v...)) }
func (g slogLogger) Warningf(f string, v ...any) { g.l.Warn(fmt.Sprintf(f, v...)) }
func (g slogLogger) Error(v ...any)              { g.l.Error(fmt.Sprint(v...)) }
func (g slogLogger) Errorf(f string, v ...any)   { g.l.Error(fmt.Sprintf(f, v...)) }
func (g slogLogger) Fatal(v ...any)              { g.l.Error(fmt.Sprint(v...)); panic(fmt.Sprint(v...)) }
func (g slogLogger) Fatalf(f string, v ...any)   { g.Fatal(fmt.Sprintf(f, v...)) }
func (g slogLogger) Panic(v ...any)              { g.Fatal(v...) }
func (g slogLogger) Panicf(f string, v ...any)   { g.Fatal(fmt.Sprintf(f, v...)) }

// isVoteRequest reports whether m asks for a vote (or a pre-vote) in an
// ordinary election, not one a leader transfer started (raft marks those
// with the context "CampaignTransfer", and grants them even to a
// follower that just heard from its leader: the leader asked for it).
func isVoteRequest(m *pb.Message) bool {
	t := m.GetType()
	return (t == pb.MsgVote || t == pb.MsgPreVote) && string(m.GetContext()) != "CampaignTransfer"
}
