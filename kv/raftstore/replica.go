package raftstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"
)

// NotLeaderError: this replica does not serve its region (it is not the
// leader, or it is a leader that has not yet caught up and raised
// max_read_ts). Leader is the store id of the leader it knows of (0: none
// known; this store's own id: itself, soon to serve). Unavailable: the
// replica has known no leader for longer than two election timeouts (an
// election among a quorum would have ended) and has not heard from a
// quorum of its voters within them: a quorum of the group is down or cut
// off from it.
type NotLeaderError struct {
	RegionID    uint64
	Leader      uint64
	Unavailable bool
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("raftstore: region %d: not leader (leader: store %d)", e.RegionID, e.Leader)
}

// proposalKey names a proposal: the term its leader proposed it in and
// an id unique on that leader. Only this replica proposes in a term it
// leads, so an entry of that term with that id is the proposal.
type proposalKey struct{ term, id uint64 }

// proposal is a batch waiting to enter the log.
type proposal struct {
	key  proposalKey
	data []byte
}

// readRequest is a read waiting for its ReadIndex and then for the
// replica to apply up to it.
type readRequest struct {
	id, term uint64
	done     chan error
	index    uint64
	indexed  bool
	// asked is when the loop asked raft's ReadIndex for it (zero: it was
	// served under the lease): a quorum's answer renews the lease from
	// then.
	asked time.Time
}

// Replica is one region's replica on a Store: a raft.RawNode over a
// MemoryStorage that mirrors the raft engine (entries are appended to it
// once persisted). The loop owns rn and the loop-only fields; the fields
// under mu are shared with the commands.
type Replica struct {
	s  *Store
	id uint64
	// desc is the region's range and version as applied (what its
	// snapshots carry); the loop writes it under mu.
	desc Descriptor
	rn   *raft.RawNode
	ms   *raft.MemoryStorage

	// Loop only.
	applied uint64
	// conf is the group's configuration as of applied, confVer the
	// number of conf changes in it (keys.go).
	conf    *pb.ConfState
	confVer uint64
	// truncConf is the configuration at the truncated index, confLog the
	// conf changes applied after it: a truncation records the
	// configuration at its index (keys.go).
	truncConf confAt
	confLog   []confChangeAt
	// confTicks counts the ticks since this replica, leading, proposed a
	// conf change not yet applied (0: none): another waits for it, or
	// for raft to have dropped it (a few election timeouts).
	confTicks int
	// replayTo is the applied floor a restarted replica found above its
	// truncated index (0: none): raft delivers the log again from the
	// truncated index, and the entries up to replayTo, whose effects the
	// KV store made durable before the restart, are applied for their
	// configuration changes only (keys.go: the applied floor).
	replayTo uint64
	// compactAsked is the highest index a compaction this replica
	// proposed (as leader) truncates to.
	compactAsked uint64
	// snapsOut is, for each follower a snapshot of this leader is on its
	// way to, the snapshot: maybeCompact keeps the log after its index
	// until the follower has it.
	snapsOut  map[uint64]snapOut
	wasLeader bool
	// barrier is a new leader's way to serving: a ReadIndex in its term
	// (raft answers it once an entry of the term is committed), then the
	// entries applied up to that index, then max_read_ts raised from a
	// fresh oracle timestamp.
	barrier struct {
		term           uint64
		asked, indexed bool
		fetching       bool
		index          uint64
		askedAt        time.Time
	}
	reads map[uint64]*readRequest
	// lease is the leader lease of the leadership in term (the package
	// comment argues it): reads may be served from the commit index,
	// without a quorum round, before until. used is when a read last
	// relied on it (a lease nobody uses is not renewed); renewing, since
	// renewAt, a ReadIndex asked only to renew it is under way. noLease is
	// a term in which this replica began a leader transfer: its
	// transferee may be elected at once, votes forced, so no lease holds
	// for the rest of that term.
	lease struct {
		term, noLease uint64
		until, used   time.Time
		renewing      bool
		renewAt       time.Time
	}
	// voteGuard counts down the ticks during which this replica, loaded
	// from a raft state with a term past the initial one (a restart),
	// refuses to vote: it may have acknowledged a leader whose lease
	// still holds, and raft's own refusal (a follower that heard from
	// its leader within the election timeout) forgot that with the
	// restart.
	voteGuard int

	mu        sync.Mutex
	lead      uint64
	term      uint64
	readyTerm uint64
	nextID    uint64
	waiting   map[proposalKey]chan error
	// atIndex maps a log index to the waiting proposal appended there:
	// once an entry is applied at that index, the proposal is settled,
	// applied if the entry is it, dropped if another leader's entry took
	// its place. A proposal in the log is settled so even after its
	// leader's term ended, since it may still be committed: answering
	// NotLeader before knowing would tell a one-phase commit's client it
	// failed when it may not have.
	atIndex  map[uint64]proposalKey
	newProps []proposal
	newReads []*readRequest
	// pub is the applied configuration, as Conf returns it.
	pub Conf
	// leaderless: the replica has known no leader for longer than two
	// election timeouts (leaderlessTicks, loop only, counts them) and has
	// not heard from a quorum of voters within them (heard, loop only:
	// the store's tick at which each peer's last message arrived).
	leaderless      bool
	leaderlessTicks int
	heard           map[uint64]int
	// want is the replica repair pd asked of this replica as leader;
	// transferTo the voter pd asked it to hand its leadership to.
	want       *peerChange
	transferTo uint64
	// transferTicks counts the ticks since this leader began handing its
	// leadership away (0: it is not), during which it does not serve
	// (suspend). Loop only.
	transferTicks int
	// appliedBytes counts the bytes of the batches applied: the node's
	// split check compares it with what it last checked.
	appliedBytes atomic.Uint64
	// commitIndex and appliedIndex publish the loop's commit index and
	// applied for Progress.
	commitIndex, appliedIndex atomic.Uint64
}

// snapOut is a snapshot sent to a follower: its index, and the store's
// tick at which the send was reported done (0: under way; the transport
// bounds a send, which then fails).
type snapOut struct {
	index uint64
	done  int
}

// snapHeldTicks is how long after a snapshot's send was reported done
// the leader keeps its log for the follower, in election timeouts: the
// follower answers once it installed it, at once; one that does not (it
// died) holds the log no longer.
const snapHeldTicks = 2

// confChangeAt is a conf change applied at a log index: the
// configuration it made.
type confChangeAt struct {
	index uint64
	at    confAt
}

// ErrTombstoned: the replica of the region was removed from this store
// at a configuration at least as new as the one asked for.
var ErrTombstoned = errors.New("raftstore: replica removed from this store (tombstone)")

// newReplica builds the replica of region id from what the raft engine
// kept of it, or, for a replica not yet created on this store, from the
// region's initial state (confVer 1: its voters are peers, this store
// among them) or uninitialized (a replica added by a conf change: it
// waits for its leader's snapshot). Called with s.mu held.
func newReplica(s *Store, id uint64, desc Descriptor, peers []uint64, confVer uint64) (*Replica, error) {
	kept, err := loadRegion(s.db, id)
	if err != nil {
		return nil, err
	}
	if kept.desc != nil {
		desc = *kept.desc
	}
	desc.Version = max(desc.Version, 1)
	if kept.tombstone != 0 && !kept.initialized() {
		if confVer <= kept.tombstone {
			return nil, fmt.Errorf("raftstore: region %d at conf_ver %d (removed at %d): %w", id, confVer, kept.tombstone, ErrTombstoned)
		}
	}
	ms := raft.NewMemoryStorage()
	var at confAt
	switch {
	case kept.conf != nil:
		at = *kept.conf
	case kept.initialized() || (confVer <= 1 && desc.Version <= 1):
		// The initial state of the cluster's first region, or a replica
		// created from it before configurations were recorded: its
		// voters are the initial peers. (A region split off another
		// starts from the split on the stores that applied it; elsewhere
		// it waits for a snapshot, as a replica a conf change added.)
		if !slices.Contains(peers, s.cfg.StoreID) {
			return nil, fmt.Errorf("raftstore: region %d: store %d is not among its peers %v", id, s.cfg.StoreID, peers)
		}
		at = confAt{ver: 1, conf: &pb.ConfState{Voters: append([]uint64(nil), peers...)}}
		b := s.db.NewBatch()
		err := writeState(b, id, kept.trunc, at, desc)
		if err == nil {
			err = b.Commit(pebble.Sync)
		}
		_ = b.Close()
		if err != nil {
			return nil, fmt.Errorf("raftstore: region %d: record initial configuration: %w", id, err)
		}
	}
	hs := kept.hardState
	if at.conf != nil {
		snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: proto.Uint64(kept.trunc.index), Term: proto.Uint64(kept.trunc.term),
			ConfState: at.conf}, Data: snapshotData(at.ver, desc)}
		if err := ms.ApplySnapshot(snap); err != nil {
			return nil, fmt.Errorf("raftstore: region %d: initial state: %w", id, err)
		}
		switch {
		case hs == nil:
			hs = &pb.HardState{Term: proto.Uint64(initTerm), Commit: proto.Uint64(initIndex)}
		case hs.GetCommit() < kept.trunc.index:
			// The hard state of an uninitialized replica (its votes) that
			// a split initialized: its commit is the initial state's.
			hs = proto.Clone(hs).(*pb.HardState)
			hs.Commit = proto.Uint64(kept.trunc.index)
			hs.Term = proto.Uint64(max(hs.GetTerm(), kept.trunc.term))
		}
	} else {
		kept.trunc = truncated{}
	}
	if hs != nil {
		if err := ms.SetHardState(hs); err != nil {
			return nil, fmt.Errorf("raftstore: region %d: hard state: %w", id, err)
		}
	}
	if len(kept.entries) > 0 {
		if err := ms.Append(kept.entries); err != nil {
			return nil, fmt.Errorf("raftstore: region %d: log: %w", id, err)
		}
	}
	r := &Replica{s: s, id: id, desc: desc, ms: ms, conf: at.conf, confVer: at.ver, truncConf: at, heard: map[uint64]int{}, snapsOut: map[uint64]snapOut{},
		applied: kept.trunc.index, reads: map[uint64]*readRequest{},
		waiting: map[proposalKey]chan error{}, atIndex: map[uint64]proposalKey{}, term: hs.GetTerm()}
	if kept.floor > kept.trunc.index {
		// The configuration recorded is the one at the truncated index:
		// the conf changes between it and the floor are in the log, and
		// raft must see them applied again, or the replica would go on
		// from an old configuration (a member that believes itself
		// removed, or the reverse).
		r.replayTo = kept.floor
	}
	r.commitIndex.Store(hs.GetCommit())
	r.appliedIndex.Store(r.applied)
	if hs.GetTerm() > initTerm {
		r.voteGuard = s.cfg.ElectionTicks
	}
	if r.conf == nil {
		r.conf = &pb.ConfState{}
	}
	r.publishConf()
	rn, err := raft.NewRawNode(&raft.Config{
		ID:              s.cfg.StoreID,
		ElectionTick:    s.cfg.ElectionTicks,
		HeartbeatTick:   s.cfg.HeartbeatTicks,
		Storage:         replicaStorage{MemoryStorage: ms, r: r},
		Applied:         r.applied,
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		CheckQuorum:     true,
		PreVote:         true,
		ReadOnlyOption:  raft.ReadOnlySafe,
		Logger:          slogLogger{s.cfg.Logger.With("region", id)},
	})
	if err != nil {
		return nil, fmt.Errorf("raftstore: region %d: %w", id, err)
	}
	r.rn = rn
	if len(r.conf.GetVoters()) == 1 && r.conf.GetVoters()[0] == s.cfg.StoreID {
		// Alone in its group: no one else would start an election.
		if err := rn.Campaign(); err != nil {
			return nil, fmt.Errorf("raftstore: region %d: campaign: %w", id, err)
		}
	}
	return r, nil
}

// replicaStorage is the replica's raft.Storage: its MemoryStorage, whose
// snapshots are made when raft asks for one (a follower behind the
// truncated log, or a replica just added), at the replica's applied
// index with the configuration there, so that a replica added by a conf
// change finds itself in the snapshot's configuration (raft ignores a
// snapshot that does not name its receiver) and the receiver applies as
// little of the log again as possible. raft calls it from the store's
// loop, which owns the fields it reads.
type replicaStorage struct {
	*raft.MemoryStorage
	r *Replica
}

// Snapshot implements raft.Storage.
func (st replicaStorage) Snapshot() (*pb.Snapshot, error) {
	r := st.r
	if r.applied < r.replayTo {
		// Still applying the log again up to the floor after a restart:
		// the configuration is not yet the one the KV store's keys go
		// with. Raft asks again.
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	if r.applied == 0 {
		return st.MemoryStorage.Snapshot()
	}
	term, err := st.MemoryStorage.Term(r.applied)
	if err != nil {
		return st.MemoryStorage.Snapshot()
	}
	return &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: proto.Uint64(r.applied), Term: proto.Uint64(term),
		ConfState: proto.Clone(r.conf).(*pb.ConfState)}, Data: snapshotData(r.confVer, r.desc)}, nil
}

// publishConf copies the applied configuration where the commands and the
// node read it. Loop only (and newReplica).
func (r *Replica) publishConf() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pub = Conf{Ver: r.confVer, Voters: append(append([]uint64(nil), r.conf.GetVoters()...), r.conf.GetVotersOutgoing()...),
		Learners: append(append([]uint64(nil), r.conf.GetLearners()...), r.conf.GetLearnersNext()...)}
	slices.Sort(r.pub.Voters)
	r.pub.Voters = slices.Compact(r.pub.Voters)
	slices.Sort(r.pub.Learners)
	r.pub.Learners = slices.Compact(r.pub.Learners)
}

// Conf is a region's raft configuration as a replica applied it: Ver
// counts the conf changes applied (1: the initial voters; 0: an
// uninitialized replica, which knows none yet), Voters includes the
// outgoing voters of a joint configuration.
type Conf struct {
	Ver      uint64
	Voters   []uint64
	Learners []uint64
}

// Conf returns the configuration this replica applied.
func (r *Replica) Conf() Conf {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pub
}

// updateLeaderless counts a tick of the replica's leaderless time and
// sets leaderless (see NotLeaderError.Unavailable). Loop only.
func (r *Replica) updateLeaderless() {
	window := 2 * r.s.cfg.ElectionTicks
	r.leaderlessTicks++
	if r.rn.BasicStatus().Lead != 0 {
		r.leaderlessTicks = 0
	}
	voters := r.conf.GetVoters()
	heard := 0
	for _, v := range voters {
		if at, ok := r.heard[v]; v == r.s.cfg.StoreID || (ok && r.s.ticks-at <= window) {
			heard++
		}
	}
	leaderless := r.leaderlessTicks > window && heard < len(voters)/2+1
	r.mu.Lock()
	r.leaderless = leaderless
	r.mu.Unlock()
}

// ID is the region's id.
func (r *Replica) ID() uint64 { return r.id }

// Leader returns the store id of the leader this replica knows of (0:
// none known).
func (r *Replica) Leader() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lead
}

// Leadership is a serving leadership of a replica in one term: the
// commands run under it replicate their writes (Replicate, a
// kv.Replicator) and read after a barrier (ReadBarrier), and both fail
// with *NotLeaderError once the term has ended.
type Leadership struct {
	r    *Replica
	term uint64
	desc Descriptor
}

// Leading returns the replica's serving leadership, or *NotLeaderError.
func (r *Replica) Leading() (Leadership, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readyTerm == 0 || r.lead != r.s.cfg.StoreID {
		return Leadership{}, r.notLeader()
	}
	return Leadership{r: r, term: r.readyTerm, desc: r.desc}, nil
}

// notLeader returns the error for a leadership that ended. Called with
// r.mu held.
func (r *Replica) notLeader() error {
	return &NotLeaderError{RegionID: r.id, Leader: r.lead, Unavailable: r.lead == 0 && r.leaderless}
}

// Replicate implements kv.Replicator: it proposes batch in the
// leadership's term and returns once this replica applied it (nil or the
// apply's error), or with *NotLeaderError when the term ended first and
// the batch is known not to be in the log (it was never appended here,
// or another leader's entry took its index), or with ErrUndetermined
// when this replica installed a snapshot past its index or was removed.
//
// It returns only once the batch's fate is settled on this replica, even
// after ctx ends: the caller holds the batch's latches and, for a
// one-phase commit, has published its keys to readers (kv's memory lock
// table) under a commit_ts already chosen, and both must last until this
// replica's state shows the batch or never will. A batch abandoned while
// it may still commit would let a reader here, at a timestamp above that
// commit_ts, read the key without it (the commit lands below a read
// already served: a lost update), and a writer decide over a state that
// lacks it. The wait ends when an entry at its index is applied here
// (as leader or as follower), when a snapshot moves the replica past it,
// or when the replica is removed or the store stops; the replica cannot
// serve again before one of these. If ctx ended, its error is returned
// whatever the fate, wrapping the settled error if any.
func (l Leadership) Replicate(ctx context.Context, batch []byte) error {
	return l.replicate(ctx, kindBatch, batch)
}

// replicate proposes a command of kind and waits for its fate as
// Replicate says.
func (l Leadership) replicate(ctx context.Context, kind byte, body []byte) error {
	r := l.r
	_, done, err := l.propose(kind, body)
	if err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	r.s.cfg.Logger.Warn("raftstore: replicate's context ended; waiting for its entry's fate", "region", r.id, "err", context.Cause(ctx))
	settled := <-done
	if settled == nil {
		return fmt.Errorf("raftstore: region %d: replicate: %w (the batch was applied)", r.id, context.Cause(ctx))
	}
	return fmt.Errorf("raftstore: region %d: replicate: %w (%w)", r.id, context.Cause(ctx), settled)
}

// propose queues batch for the loop and returns the channel its result
// comes on.
func (l Leadership) propose(kind byte, body []byte) (proposalKey, chan error, error) {
	r := l.r
	done := make(chan error, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readyTerm != l.term {
		return proposalKey{}, nil, r.notLeader()
	}
	r.nextID++
	key := proposalKey{term: l.term, id: r.nextID}
	data := make([]byte, commandHeader, commandHeader+len(body))
	binary.BigEndian.PutUint64(data, key.term)
	binary.BigEndian.PutUint64(data[8:], key.id)
	binary.BigEndian.PutUint64(data[16:], l.desc.Version)
	data[24] = kind
	r.waiting[key] = done
	r.newProps = append(r.newProps, proposal{key: key, data: append(data, body...)})
	r.s.touch(r)
	return key, done, nil
}

// ReadBarrier returns once a read on this replica sees every write
// committed before it was called: while the leader lease holds, the
// leader's commit index; otherwise raft's ReadIndex (ReadOnlySafe: a
// heartbeat round that a quorum acknowledges, shared by the reads of one
// loop round, which renews the lease); then this replica applied up to
// that index. *NotLeaderError when the leadership ended.
func (l Leadership) ReadBarrier(ctx context.Context) error {
	req, err := l.askRead()
	if err != nil {
		return err
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("raftstore: region %d: read barrier: %w", l.r.id, context.Cause(ctx))
	}
}

// askRead queues a read request for the loop.
func (l Leadership) askRead() (*readRequest, error) {
	r := l.r
	req := &readRequest{term: l.term, done: make(chan error, 1)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readyTerm != l.term {
		return nil, r.notLeader()
	}
	r.nextID++
	req.id = r.nextID
	r.newReads = append(r.newReads, req)
	r.s.touch(r)
	return req, nil
}

// The kinds of ReadIndex request contexts: a new leader's barrier (v:
// its term), reads (v: the newest read id the request covers), a lease
// renewal (v: the term).
const (
	ctxBarrier byte = 'b'
	ctxRead    byte = 'r'
	ctxLease   byte = 'l'
)

func readCtx(kind byte, v uint64) []byte { return binary.BigEndian.AppendUint64([]byte{kind}, v) }

// feed hands the queued proposals and reads to raft, and asks a new
// leader's barrier. A read is served from the commit index while the
// lease holds; the others of the round share one ReadIndex. Loop only.
func (r *Replica) feed() {
	r.mu.Lock()
	props, reads := r.newProps, r.newReads
	r.newProps, r.newReads = nil, nil
	r.mu.Unlock()
	for _, p := range props {
		r.s.stats.proposals.Add(1)
		if err := r.rn.Propose(p.data); err != nil {
			r.s.stats.proposalsRefused.Add(1)
			r.finish(p.key, &NotLeaderError{RegionID: r.id, Leader: r.rn.BasicStatus().Lead})
		}
	}
	var now time.Time
	if len(reads) > 0 || (r.barrier.term != 0 && !r.barrier.asked) {
		now = r.s.cfg.Now()
	}
	var asked *readRequest
	var commit uint64 // the commit index, once read
	for _, q := range reads {
		r.reads[q.id] = q
		if r.leaseHolds(q.term, now) {
			if commit == 0 {
				commit = r.rn.BasicStatus().HardState.GetCommit()
			}
			q.indexed, q.index = true, commit
			r.lease.used = now
			continue
		}
		q.asked = now
		asked = q
	}
	if asked != nil {
		r.rn.ReadIndex(readCtx(ctxRead, asked.id))
	}
	if b := &r.barrier; b.term != 0 && !b.asked {
		b.asked, b.askedAt = true, now
		r.rn.ReadIndex(readCtx(ctxBarrier, b.term))
	}
	r.settleReads()
	r.driveConfChange()
	r.driveTransfer()
}

// TransferLeader asks the replica, if it leads, to hand its leadership
// to the voter on store to (raft's leader transfer: to campaigns at once
// with the leader's blessing, once its log is up to date). pd asks it to
// balance the leaderships across stores.
func (r *Replica) TransferLeader(to uint64) {
	r.mu.Lock()
	r.transferTo = to
	r.mu.Unlock()
	r.s.touch(r)
}

// driveTransfer starts the leader transfer TransferLeader asked, if this
// replica leads, to is one of its voters, and no transfer or conf change
// is under way. Loop only.
func (r *Replica) driveTransfer() {
	r.mu.Lock()
	to := r.transferTo
	r.transferTo = 0
	r.mu.Unlock()
	if to == 0 || to == r.s.cfg.StoreID || r.confTicks > 0 || !slices.Contains(r.conf.GetVoters(), to) || len(r.conf.GetVotersOutgoing()) > 0 {
		return
	}
	st := r.rn.BasicStatus()
	if st.RaftState != raft.StateLeader || st.LeadTransferee != 0 {
		return
	}
	r.s.cfg.Logger.Info("raftstore: transferring leadership", "region", r.id, "to", to)
	r.suspend(to)
	r.s.stats.leaderTransfers.Add(1)
	r.rn.TransferLeader(to)
}

// suspend stops this leader serving while it hands its leadership to
// store to: raft's transferee campaigns at once, and the followers vote
// for it at once, lease or not, so this leader's lease no longer
// promises that no other leader commits (a lease read could miss a
// write the transferee's term committed). Reads waiting fail. Proposals
// are left to their fate: raft drops those proposed from now on (the
// feed answers NotLeader), and one it took, maybe this very round, is
// settled when an entry at its index is applied, as after any change of
// leader. Should the transfer not succeed, the leader serves again after
// two election timeouts (resume). Loop only.
func (r *Replica) suspend(to uint64) {
	r.transferTicks = 1
	r.mu.Lock()
	serving := r.readyTerm != 0
	r.readyTerm = 0
	newReads := r.newReads
	r.newReads = nil
	r.mu.Unlock()
	err := &NotLeaderError{RegionID: r.id, Leader: to}
	for _, q := range newReads {
		q.done <- err
	}
	for id, q := range r.reads {
		q.done <- err
		delete(r.reads, id)
	}
	if serving {
		r.s.leaderChanged()
	}
}

// resume lets a leader whose transfer did not succeed serve again, once
// two election timeouts passed since it began: by then CheckQuorum has
// had this leader hear from a quorum in a full period after the
// transferee's forced campaign could have begun, and a quorum member
// that had voted in a newer term would have answered with it and ended
// this leadership. It goes through the new leader's barrier again (a
// ReadIndex of its term, applied up to it, max_read_ts from the
// oracle). Loop only.
func (r *Replica) resume() {
	st := r.rn.BasicStatus()
	switch {
	case st.RaftState != raft.StateLeader || st.HardState.GetTerm() != r.barrier.term:
		r.transferTicks = 0 // the leadership ended: stored saw to it
	case st.LeadTransferee != 0:
		r.transferTicks = 1 // still under way
	default:
		r.transferTicks = 0
		r.barrier.asked, r.barrier.indexed, r.barrier.fetching = false, false, false
		r.s.cfg.Logger.Info("raftstore: leader transfer did not happen; serving again", "region", r.id, "term", r.barrier.term)
		r.s.touch(r)
	}
}

// leaseHolds reports whether the leadership of term may serve a read at
// now from its commit index: its lease, renewed in this term, has not
// expired, and it began no leader transfer in the term. Loop only.
func (r *Replica) leaseHolds(term uint64, now time.Time) bool {
	l := &r.lease
	return term != 0 && l.term == term && term == r.barrier.term && term != l.noLease && now.Before(l.until)
}

// renewLease extends the lease of the leadership of term to sent plus
// the lease duration: a quorum acknowledged a heartbeat round asked at
// sent (a ReadIndex's), so each of its members heard from this leader
// after sent. Loop only.
func (r *Replica) renewLease(term uint64, sent time.Time) {
	d := r.s.leaseDuration()
	l := &r.lease
	if d <= 0 || sent.IsZero() || term == 0 || term != r.barrier.term || term == l.noLease {
		return
	}
	if l.term != term {
		l.term, l.until, l.used = term, time.Time{}, time.Time{}
	}
	if until := sent.Add(d); until.After(l.until) {
		l.until = until
	}
}

// maybeRenewLease asks a ReadIndex only to renew the lease of a leader
// whose reads rely on it (one served within the lease's span) once less
// than half of it remains, so that a leader under a steady read load
// keeps serving from its commit index instead of making one read in each
// lease wait for a quorum round. Called each tick. Loop only.
func (r *Replica) maybeRenewLease(now time.Time) {
	l, d := &r.lease, r.s.leaseDuration()
	term := r.barrier.term
	if l.renewing && !now.Before(l.renewAt.Add(d)) {
		l.renewing = false // unanswered (lost, or no quorum): ask again
	}
	if d <= 0 || l.renewing || !r.leaseHolds(term, now) || l.until.Sub(now) > d/2 || l.used.Before(l.until.Add(-d)) {
		return
	}
	l.renewing, l.renewAt = true, now
	r.rn.ReadIndex(readCtx(ctxLease, term))
	r.s.nudge()
}

// settleReads answers the reads whose index this replica applied. Loop
// only.
func (r *Replica) settleReads() {
	for id, q := range r.reads {
		if q.indexed && q.index <= r.applied {
			q.done <- nil
			delete(r.reads, id)
		}
	}
}

// finish answers the proposal key's waiter, if it still waits.
func (r *Replica) finish(key proposalKey, err error) {
	r.mu.Lock()
	ch, ok := r.waiting[key]
	delete(r.waiting, key)
	r.mu.Unlock()
	if ok {
		ch <- err
	}
}

// settleUpTo answers the proposals waiting at log indexes up to index
// with err: a snapshot moved the replica past them, so they will never
// be applied here one by one.
func (r *Replica) settleUpTo(index uint64, err error) {
	r.mu.Lock()
	var keys []proposalKey
	for i, k := range r.atIndex {
		if i <= index {
			keys = append(keys, k)
			delete(r.atIndex, i)
		}
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.finish(k, err)
	}
}

// failAll fails every waiting read, and every waiting proposal that is
// not in the log (all of them when inLogToo: the store is closing), with
// err.
func (r *Replica) failAll(err error, inLogToo bool) {
	r.mu.Lock()
	waiting, newReads := r.waiting, r.newReads
	r.waiting, r.newReads, r.newProps = map[proposalKey]chan error{}, nil, nil
	if inLogToo {
		r.atIndex = map[uint64]proposalKey{}
	} else {
		for _, k := range r.atIndex {
			if ch, ok := waiting[k]; ok {
				r.waiting[k] = ch
				delete(waiting, k)
			}
		}
	}
	r.mu.Unlock()
	for _, ch := range waiting {
		ch <- err
	}
	for _, q := range newReads {
		q.done <- err
	}
	for id, q := range r.reads {
		q.done <- err
		delete(r.reads, id)
	}
}

// stored takes a Ready's state after its entries and hard state were
// persisted: the memory storage gets them, and a change of leadership is
// noted. Loop only.
func (r *Replica) stored(rd raft.Ready) error {
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := r.ms.ApplySnapshot(rd.Snapshot); err != nil {
			return fmt.Errorf("raftstore: region %d: %w", r.id, err)
		}
	}
	if hs := rd.HardState; hs != nil && !raft.IsEmptyHardState(hs) {
		if err := r.ms.SetHardState(hs); err != nil {
			return fmt.Errorf("raftstore: region %d: %w", r.id, err)
		}
		r.commitIndex.Store(hs.GetCommit())
	}
	if len(rd.Entries) > 0 {
		if err := r.ms.Append(rd.Entries); err != nil {
			return fmt.Errorf("raftstore: region %d: %w", r.id, err)
		}
		r.mu.Lock()
		for _, e := range rd.Entries {
			if key, ok := entryProposal(e); ok && r.waiting[key] != nil {
				r.atIndex[e.GetIndex()] = key
			}
		}
		r.mu.Unlock()
	}
	st := r.rn.BasicStatus()
	term := st.HardState.GetTerm()
	isLeader := st.RaftState == raft.StateLeader
	r.mu.Lock()
	r.lead, r.term = st.Lead, term
	lost := r.wasLeader && (!isLeader || r.barrier.term != term)
	if lost {
		r.readyTerm = 0
	}
	r.mu.Unlock()
	if isLeader && st.LeadTransferee != 0 && r.lease.noLease != term {
		// MsgTimeoutNow may be on its way (it goes out after this):
		// the transferee's election ignores the followers' leases.
		r.lease.noLease, r.lease.until = term, time.Time{}
	}
	if lost {
		r.s.cfg.Logger.Info("raftstore: leadership ended", "region", r.id, "term", term, "lead", st.Lead, "state", st.RaftState.String())
		r.failAll(r.errNotLeader(), false)
		r.barrier.term = 0
		r.lease.term, r.lease.until, r.lease.renewing = 0, time.Time{}, false
		r.confTicks = 0
		r.transferTicks = 0
		clear(r.snapsOut)
		r.s.leaderChanged()
	}
	if isLeader && (!r.wasLeader || lost) {
		r.barrier.term, r.barrier.asked, r.barrier.indexed, r.barrier.fetching = term, false, false, false
		r.s.touch(r)
	}
	r.wasLeader = isLeader
	return nil
}

func (r *Replica) errNotLeader() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notLeader()
}

// apply applies a Ready's committed entries, answers their proposers, and
// settles reads and the barrier its ReadStates and the new applied index
// allow. Loop only.
func (r *Replica) apply(ctx context.Context, rd raft.Ready) {
	for _, rs := range rd.ReadStates {
		if len(rs.RequestCtx) != 9 {
			continue
		}
		v := binary.BigEndian.Uint64(rs.RequestCtx[1:])
		switch rs.RequestCtx[0] {
		case ctxBarrier:
			if v == r.barrier.term {
				r.barrier.indexed, r.barrier.index = true, rs.Index
				r.renewLease(v, r.barrier.askedAt)
			}
		case ctxRead:
			// The request covers every read fed before it.
			if q := r.reads[v]; q != nil {
				r.renewLease(q.term, q.asked)
			}
			for id, q := range r.reads {
				if id <= v && !q.indexed {
					q.indexed, q.index = true, rs.Index
				}
			}
		case ctxLease:
			if v == r.barrier.term && r.lease.renewing {
				r.lease.renewing = false
				r.renewLease(v, r.lease.renewAt)
			}
		}
	}
	if snap := rd.Snapshot; !raft.IsEmptySnap(snap) {
		// Its keys were installed before raft stepped it.
		md := snap.GetMetadata()
		r.applied, r.conf, r.confVer = md.GetIndex(), md.GetConfState(), snapshotConfVer(snap.GetData())
		if d, ok := snapshotDesc(snap.GetData()); ok {
			r.mu.Lock()
			r.desc = d
			r.mu.Unlock()
		}
		r.settleUpTo(md.GetIndex(), ErrUndetermined)
		r.truncConf, r.confLog = confAt{ver: r.confVer, conf: r.conf}, nil
		r.publishConf()
	}
	for _, e := range rd.CommittedEntries {
		r.applyEntry(ctx, e)
		r.applied = e.GetIndex()
	}
	r.appliedIndex.Store(r.applied)
	r.settleReads()
	if b := &r.barrier; b.term != 0 && b.indexed && !b.fetching && b.index <= r.applied {
		b.fetching = true
		r.s.raiseMaxReadTS(r, b.term)
	}
}

// applyEntry applies one committed entry.
func (r *Replica) applyEntry(ctx context.Context, e *pb.Entry) {
	switch e.GetType() {
	case pb.EntryConfChange:
		cc := &pb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err == nil {
			r.applyConfChange(e.GetIndex(), cc)
		}
		return
	case pb.EntryConfChangeV2:
		cc := &pb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), cc); err == nil {
			r.applyConfChange(e.GetIndex(), cc)
		}
		return
	}
	if e.GetIndex() <= r.replayTo {
		// Applied before the restart, up to the applied floor: its
		// effect is durable, and applying it again could take back keys
		// a split gave another region since.
		return
	}
	key, ok := entryProposal(e)
	var err error
	if to, compact := compactEntry(e); compact {
		if err := r.truncate(ctx, to); err != nil {
			// The log is kept whole: nothing is lost, the next
			// compaction tries again.
			r.s.cfg.Logger.Error("raftstore: log truncation failed", "region", r.id, "index", to, "err", err)
		}
	} else if ok {
		err = r.applyCommand(ctx, e)
	}
	r.mu.Lock()
	mine, waited := r.atIndex[e.GetIndex()]
	delete(r.atIndex, e.GetIndex())
	r.mu.Unlock()
	if waited && (!ok || mine != key) {
		// Another leader's entry took the proposal's place: it was
		// dropped, and the client may send the command again.
		r.finish(mine, r.errNotLeader())
	}
	if ok {
		r.finish(key, err)
	}
}

// applyCommand applies a command entry: its batch, or a split, if the
// version it was decided under is still the region's (every replica
// skips it alike otherwise: it may hold keys a split gave another
// region). Loop only.
func (r *Replica) applyCommand(ctx context.Context, e *pb.Entry) error {
	data := e.GetData()
	if len(data) < commandHeader {
		return fmt.Errorf("raftstore: region %d: malformed command entry at %d", r.id, e.GetIndex())
	}
	if v := binary.BigEndian.Uint64(data[16:]); v != r.desc.Version {
		return &EpochError{RegionID: r.id, Version: v, Current: r.desc.clone()}
	}
	body := data[commandHeader:]
	switch data[24] {
	case kindBatch:
		if err := r.s.cfg.Applier.ApplyReplicated(ctx, body); err != nil {
			r.s.cfg.Logger.Error("raftstore: apply failed", "region", r.id, "index", e.GetIndex(), "err", err)
			return err
		}
		r.appliedBytes.Add(uint64(len(body)))
		return nil
	case kindSplit:
		err := r.applySplit(ctx, e.GetIndex(), body)
		if err != nil && !errors.Is(err, ErrSplitRefused) {
			r.s.cfg.Logger.Error("raftstore: split failed", "region", r.id, "index", e.GetIndex(), "err", err)
		}
		return err
	}
	return fmt.Errorf("raftstore: region %d: command entry of unknown kind %q at %d", r.id, data[24], e.GetIndex())
}

// applyConfChange applies a committed conf change at index: raft's
// configuration changes, conf_ver counts one more, the node is told (it
// reports the configuration to pd), and a replica the change removed
// from its group is destroyed (it must neither serve nor vote again).
// Loop only.
func (r *Replica) applyConfChange(index uint64, cc pb.ConfChangeI) {
	r.conf = r.rn.ApplyConfChange(cc)
	r.confVer++
	r.confLog = append(r.confLog, confChangeAt{index: index, at: confAt{ver: r.confVer, conf: r.conf}})
	r.confTicks = 0
	r.publishConf()
	self := r.s.cfg.StoreID
	member := false
	for _, set := range [][]uint64{r.conf.GetVoters(), r.conf.GetVotersOutgoing(), r.conf.GetLearners(), r.conf.GetLearnersNext()} {
		member = member || slices.Contains(set, self)
	}
	r.s.cfg.Logger.Info("raftstore: conf change applied", "region", r.id, "index", index, "conf_ver", r.confVer,
		"voters", r.conf.GetVoters(), "outgoing", r.conf.GetVotersOutgoing(), "learners", r.conf.GetLearners())
	if !member {
		r.s.RemoveRegion(r.id)
	}
	r.s.leaderChanged()
}

// transferAway starts a leader transfer to the voter that holds the most
// of the log (the lowest store id among equals), if this replica leads
// and no transfer is under way (raft abandons one that did not finish
// within an election timeout; the next round starts another). Loop only.
func (r *Replica) transferAway() {
	st := r.rn.Status()
	if st.RaftState != raft.StateLeader || st.LeadTransferee != 0 {
		return
	}
	var best, bestMatch uint64
	for id, pr := range st.Progress {
		if id == r.s.cfg.StoreID || pr.IsLearner {
			continue
		}
		if best == 0 || pr.Match > bestMatch || (pr.Match == bestMatch && id < best) {
			best, bestMatch = id, pr.Match
		}
	}
	if best != 0 {
		r.s.cfg.Logger.Info("raftstore: transferring leadership away", "region", r.id, "to", best)
		r.suspend(best)
		r.s.stats.leaderTransfers.Add(1)
		r.rn.TransferLeader(best)
	}
}

// peerChange is a replica repair asked of a leader: replace the replica
// on store remove by one on store add.
type peerChange struct{ remove, add uint64 }

// ChangePeer asks the replica, while it leads, to replace the replica
// on store remove by one on store add through raft conf changes, one at
// a time, each proposed once the previous one applied: add as a learner
// (a learner that is neither add nor remove is removed first); once the
// learner caught up (raft replicates to it from its log: it installed
// the snapshot it needed), one ConfChangeV2 that promotes it and removes
// remove, which raft runs as joint consensus and leaves by itself; or,
// when remove is no member any more, just the promotion. The leader never
// removes itself. Asking again what is under way changes nothing; pd asks
// with every heartbeat until the configuration it is told lacks remove.
func (r *Replica) ChangePeer(remove, add uint64) {
	r.mu.Lock()
	r.want = &peerChange{remove: remove, add: add}
	r.mu.Unlock()
	r.s.touch(r)
}

// driveConfChange proposes the next conf change of the repair asked
// (ChangePeer), if this replica leads and no conf change is under way;
// a replica that does not lead drops the request (driveTransfer drops a
// transfer alike). Loop only.
func (r *Replica) driveConfChange() {
	leading := r.rn.BasicStatus().RaftState == raft.StateLeader
	r.mu.Lock()
	want := r.want
	if !leading {
		// Asked of a leader that no longer leads (or never did: pd's
		// directory was behind): dropped. pd asks the new leader once
		// it reports; kept, it would be carried out should this replica
		// lead again, long after pd decided otherwise (removing the
		// learner of a later move to add its own).
		r.want = nil
	}
	r.mu.Unlock()
	if want == nil || r.confTicks > 0 || !leading {
		return
	}
	cs := r.conf
	if len(cs.GetVotersOutgoing()) > 0 {
		return // joint: raft proposes leaving it once it applied the entry
	}
	isVoter := func(id uint64) bool { return slices.Contains(cs.GetVoters(), id) }
	isLearner := func(id uint64) bool { return slices.Contains(cs.GetLearners(), id) }
	done := func() {
		r.mu.Lock()
		if r.want == want {
			r.want = nil
		}
		r.mu.Unlock()
	}
	var changes []*pb.ConfChangeSingle
	change := func(t pb.ConfChangeType, id uint64) {
		changes = append(changes, &pb.ConfChangeSingle{Type: t.Enum(), NodeId: proto.Uint64(id)})
	}
	member := func(id uint64) bool { return isVoter(id) || isLearner(id) }
	switch {
	case want.remove == r.s.cfg.StoreID || want.add == 0 || want.add == want.remove:
		r.s.cfg.Logger.Warn("raftstore: replica change refused", "region", r.id, "remove", want.remove, "add", want.add)
		done()
		return
	case isVoter(want.add):
		if !member(want.remove) {
			done()
			return
		}
		change(pb.ConfChangeType_ConfChangeRemoveNode, want.remove)
	case isLearner(want.add):
		if !r.caughtUp(want.add) {
			return
		}
		change(pb.ConfChangeType_ConfChangeAddNode, want.add)
		if member(want.remove) {
			change(pb.ConfChangeType_ConfChangeRemoveNode, want.remove)
		}
	default:
		for _, l := range cs.GetLearners() {
			if l != want.add {
				change(pb.ConfChangeType_ConfChangeRemoveNode, l)
				break
			}
		}
		if changes == nil {
			if !isVoter(want.remove) {
				done() // nothing to replace (pd's view is behind)
				return
			}
			change(pb.ConfChangeType_ConfChangeAddLearnerNode, want.add)
		}
	}
	cc := &pb.ConfChangeV2{Changes: changes}
	if err := r.rn.ProposeConfChange(cc); err != nil {
		r.s.cfg.Logger.Warn("raftstore: conf change not proposed", "region", r.id, "err", err)
		return
	}
	r.confTicks = 1
	r.s.cfg.Logger.Info("raftstore: conf change proposed", "region", r.id, "change", changeString(changes))
}

// changeString renders conf changes for the log: "+l4" adds a learner,
// "+v4" a voter (or promotes a learner), "-3" removes.
func changeString(changes []*pb.ConfChangeSingle) string {
	var out []string
	for _, c := range changes {
		op := "-"
		switch c.GetType() {
		case pb.ConfChangeType_ConfChangeAddLearnerNode:
			op = "+l"
		case pb.ConfChangeType_ConfChangeAddNode:
			op = "+v"
		}
		out = append(out, fmt.Sprintf("%s%d", op, c.GetNodeId()))
	}
	return strings.Join(out, " ")
}

// caughtUp reports whether the leader replicates to learner id from its
// log: it installed the snapshot it needed and holds the log up to the
// leader's first index, so that promoting it makes a voter that needs
// nothing but entries the leader has. Loop only.
func (r *Replica) caughtUp(id uint64) bool {
	first, err := r.ms.FirstIndex()
	if err != nil {
		return false
	}
	ok := false
	r.rn.WithProgress(func(pid uint64, _ raft.ProgressType, pr tracker.Progress) {
		if pid == id {
			ok = pr.State == tracker.StateReplicate && pr.Match+1 >= first
		}
	})
	return ok
}

// A normal entry's data, the one place it is laid out:
//
//	command:    term (8) | proposal id (8) | version (8) | kind (1) | body
//	            kind 'w': body = a write batch (kv's replicated form)
//	            kind 's': body = new region id (8) | split key (split.go)
//	compaction: 0 (8) | 'c' | index (8)
//
// A command's term is its leader's, never 0 (terms start at initTerm),
// so a zero term marks the replica's own admin entries. version is the
// region's epoch version its leader decided it under.
const (
	adminCompact  byte = 'c'
	kindBatch     byte = 'w'
	kindSplit     byte = 's'
	commandHeader      = 25
)

// entryProposal returns the proposal key of a command entry; false for
// an empty entry (a new leader's), an admin entry or a conf change.
func entryProposal(e *pb.Entry) (proposalKey, bool) {
	data := e.GetData()
	if e.GetType() != pb.EntryNormal || len(data) < 16 {
		return proposalKey{}, false
	}
	key := proposalKey{term: binary.BigEndian.Uint64(data), id: binary.BigEndian.Uint64(data[8:])}
	return key, key.term != 0
}

// encodeCompact returns the data of a compaction entry: every replica
// truncates its log up to and including index once it applies it.
func encodeCompact(index uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 8), adminCompact), index)
}

// compactEntry returns the index a compaction entry truncates to.
func compactEntry(e *pb.Entry) (uint64, bool) {
	data := e.GetData()
	if e.GetType() != pb.EntryNormal || len(data) != 17 || binary.BigEndian.Uint64(data) != 0 || data[8] != adminCompact {
		return 0, false
	}
	return binary.BigEndian.Uint64(data[9:]), true
}

// maybeCompact proposes, on a leader whose log holds at least the
// store's LogCompactThreshold applied entries, that every replica
// truncate its log up to the highest index every follower has (so none
// needs a snapshot) and this replica applied; once the log holds
// LogCountLimit applied entries, up to the applied index, past a
// follower that lags (it catches up by snapshot), so that a follower
// down does not make the log grow without bound, but never past the
// index of a snapshot on its way to a follower, until the follower's
// progress shows it (it then catches up from the log) or the send
// failed (raft sends another), as CockroachDB's log truncation keeps
// the log for pending snapshots: truncated meanwhile, the follower
// installed a snapshot only to need another, and under a steady write
// load another, so that the learner of a move was never promoted and
// pd gave the move up. Raft orders the
// truncation with the commands, as TiKV's CompactLog: every replica
// truncates at the same index, so a follower that becomes leader holds
// the entries its followers may still need. Loop only.
func (r *Replica) maybeCompact() {
	first, err := r.ms.FirstIndex()
	limit := uint64(r.s.cfg.LogCompactThreshold)
	if err != nil || r.applied+1 < first+limit || r.rn.BasicStatus().RaftState != raft.StateLeader {
		return
	}
	to := r.applied
	self := r.s.cfg.StoreID
	waitAll := r.applied+1 < first+uint64(r.s.cfg.LogCountLimit)
	var snapsOut map[uint64]snapOut // those not seen among the members yet
	if len(r.snapsOut) > 0 {
		snapsOut = maps.Clone(r.snapsOut)
	}
	r.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if id == self {
			return
		}
		if waitAll && pr.Match < to {
			to = pr.Match
		}
		if so, ok := snapsOut[id]; ok {
			delete(snapsOut, id)
			switch {
			case pr.Match >= so.index: // it has the snapshot
				delete(r.snapsOut, id)
			case so.done != 0 && r.s.ticks-so.done > snapHeldTicks*r.s.cfg.ElectionTicks:
				delete(r.snapsOut, id) // sent, and no word since
			case so.index < to:
				to = so.index
			}
		}
	})
	for id := range snapsOut {
		delete(r.snapsOut, id) // no longer a member
	}
	if to+1 < first+limit/2 || to <= r.compactAsked {
		return // a follower lags: wait for it
	}
	if err := r.rn.Propose(encodeCompact(to)); err == nil {
		r.compactAsked = to
	}
}

// truncate drops the log up to and including index (at most the applied
// index): the KV store first makes what it applied durable, then the
// truncated state and the entries' deletion are written in one batch
// (no sync of its own: the next round's sync covers it, and until then a
// restart finds the log whole), and the memory storage drops them. Loop
// only.
func (r *Replica) truncate(ctx context.Context, index uint64) error {
	index = min(index, r.applied)
	first, err := r.ms.FirstIndex()
	if err != nil || index < first {
		return err // already truncated there
	}
	term, err := r.ms.Term(index)
	if err != nil {
		return fmt.Errorf("term of %d: %w", index, err)
	}
	if err := r.s.cfg.Applier.Sync(ctx); err != nil {
		return err
	}
	// The configuration at index: the conf changes up to it folded in.
	at, rest := r.truncConf, r.confLog
	for len(rest) > 0 && rest[0].index <= index {
		at, rest = rest[0].at, rest[1:]
	}
	b := r.s.db.NewBatch()
	defer b.Close()
	// The descriptor in force is the one at max(index, applied floor):
	// the last split wrote the floor (keys.go).
	if err := writeTruncate(b, r.id, truncated{index: index, term: term}, at, r.desc); err != nil {
		return err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("persist truncation: %w", err)
	}
	r.truncConf, r.confLog = at, rest
	if _, err := r.ms.CreateSnapshot(index, at.conf, snapshotData(at.ver, r.desc)); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
		return err
	}
	if err := r.ms.Compact(index); err != nil && !errors.Is(err, raft.ErrCompacted) {
		return err
	}
	return nil
}

// raiseMaxReadTS raises max_read_ts from a fresh oracle timestamp, off
// the loop, and then lets the leadership of term serve, if it still
// holds. A timestamp the oracle issues now is above every timestamp a
// read on an earlier leader used, so no commit timestamp this leader
// calculates (one-phase commit) can fall at or below such a read.
func (s *Store) raiseMaxReadTS(r *Replica, term uint64) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			ts, err := s.cfg.FreshTS(s.bg)
			if err == nil {
				s.cfg.Applier.UpdateMaxReadTS(ts)
				break
			}
			if s.bg.Err() != nil {
				return
			}
			s.cfg.Logger.Warn("raftstore: new leader waits for the oracle", "region", r.id, "err", err)
			select {
			case <-s.bg.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		r.mu.Lock()
		serving := r.term == term && r.lead == s.cfg.StoreID
		if serving {
			r.readyTerm = term
		}
		r.mu.Unlock()
		if serving {
			s.cfg.Logger.Info("raftstore: leader serving", "region", r.id, "term", term)
			s.leaderChanged()
		}
	}()
}

// leaderChanged tells the node that a leadership on this store began or
// ended.
func (s *Store) leaderChanged() {
	if f := s.cfg.OnLeaderChange; f != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			f()
		}()
	}
}
