// Package raftstore replicates a KV node's regions through raft: one raft
// group per region (go.etcd.io/raft/v3's RawNode), its replicas on three
// stores (one when the cluster has one), every write command's batch
// proposed through the group and applied on each replica by the store's
// existing apply path (kv.Store.ApplyReplicated).
//
// # The protocol
//
// A command reaches the region's leader (package kv/node routes it; a
// follower answers *NotLeaderError naming the leader it knows, which the
// node turns into the KV protocol's NotLeader with the leader's address).
// The leader runs the command's decision on its store under the store's
// latches, as a single node does, and hands the resulting write batch to
// the replica (Leadership.Replicate, a kv.Replicator) instead of to
// Pebble. The batch, tagged with the leader's term and a proposal id, is
// appended to the raft log; once committed, every replica applies it in
// log order, and the leader's command returns when its own replica applied
// it, with its latches still held, so that the next command on the same
// keys decides over it.
//
// Reads are served by the leader after a read barrier
// (Leadership.ReadBarrier): the leader's commit index while its lease
// holds, otherwise raft's ReadIndex with ReadOnlySafe, a heartbeat round
// that a quorum acknowledges, one for all the reads of a loop round;
// then the replica applied up to that index.
//
// # Leader leases
//
// A lease read must never miss a write another leader committed. etcd
// raft's own lease (ReadOnlyLeaseBased) does not ensure it: it answers
// from the commit index whenever the replica is leader, and a leader cut
// off from its followers steps down only at a quorum check (CheckQuorum),
// which comes once per election timeout and passes if the quorum was
// heard from at any time since the previous one: up to two election
// timeouts after it last heard from them, while the followers may elect
// a new leader one election timeout after (their randomized timeouts
// start there). A leader reachable by clients but not by its followers
// could so serve reads about a second stale, missing commits below the
// read's timestamp: a snapshot-isolation violation.
//
// The lease is TiKV's, on raft's guarantees. A follower of a leader
// refuses (pre-)votes of an ordinary election while it heard from its
// leader within the election timeout (raft, with CheckQuorum), counted
// in its ticks. So if a quorum acknowledged a message the leader sent at
// time t, each of its members heard from it after t, and none votes
// before its ticks counted an election timeout after that; every quorum
// that could elect a new leader includes one of them, so no new leader
// exists, and none has committed anything, before t plus the election
// timeout as that member's ticks measure it. Ticks can measure less than
// the leader's clock in three ways, each taken off the lease
// (Store.leaseDuration): the first tick after the message may come at
// once (one tick); one tick held in the ticker while the loop was busy
// may come right after it (one tick); and the follower's clock may run
// slower than the leader's (Config.MaxClockDrift, one tick by default).
// With the default 10 ticks of 100 ms the lease is 700 ms. The leader
// takes t as the time it asked a ReadIndex round (its heartbeats go out
// after), so each answered ReadIndex, the new leader's barrier among
// them, renews the lease to t plus the lease's length. A read arriving
// while the lease holds is answered from the commit index (only the
// leader commits, and none other can have); one arriving after it waits
// for a ReadIndex round, and a leader with reads that rely on the lease
// renews it by a ReadIndex of its own once half of it is left
// (maybeRenewLease), so a steady read load never waits. The clocks are
// monotonic readings (Config.Now).
//
// Two elections escape the followers' refusal, and each ends the lease.
// A leader transfer's election is granted votes regardless: a leader
// that began a transfer serves no lease read for the rest of its term
// (its MsgTimeoutNow may reach the transferee late). A restarted
// replica forgot that it heard from a leader: a replica loaded with a
// term past the initial one drops (pre-)vote requests of ordinary
// elections for its first election timeout (Replica.voteGuard).
//
// ReadOnlySafe alone (a quorum round for every read batch) was the other
// choice; it needs no clock assumption, but every KV command passes the
// barrier, so each would wait for a round trip to a follower and its
// loop; the lease keeps that cost to one round per lease, off the reads'
// path. Measured on one loaded 2-core machine (pd, three KV nodes and a
// SQL node; one client running point selects): about 2,800-3,200 a
// second at a p50 of 280-295 us with the lease, 1,600-1,700 at 530-590
// us with a round each (percdb kv --raft-max-clock-drift 1h disables the
// lease); in process, BenchmarkReadBarrier: 2-5 us against 30-260 us.
//
// A new leader serves only after three steps (the barrier, Replica's
// barrier field): a ReadIndex in its term, which raft answers only once an
// entry of the term is committed, so everything committed by earlier
// leaders is below the index; the replica applied up to that index; and
// max_read_ts raised to a fresh timestamp from the oracle. The last step
// is what Percolator needs of a leader change: an old leader may have
// served a read at ts T and recorded T only in its own memory; a
// timestamp issued now is above T, so no commit timestamp the new leader
// calculates (one-phase commit, kv's doc.go "Regions and max_read_ts") is
// at or below a read already served. Until then, and after the term ends,
// Leading fails with *NotLeaderError; a read waiting when the term ends
// fails with it too, and so does a proposal not in the replica's log. A
// proposal in the log waits until an entry at its index is applied here
// (it, or another leader's entry that took its place: NotLeader), a
// snapshot moves the replica past it, or the store stops; it waits so
// even after its caller's context ended (the client went away, a
// keepalive broke the connection): the command holds its keys' latches
// and, for a one-phase commit, shows readers its keys under a commit_ts
// already chosen, and releasing them while the batch may still commit
// would let a read above that commit_ts, served meanwhile, miss it (a
// lost update).
//
// # Storage
//
// The raft log and hard state live in a Pebble of their own (keys.go
// documents the keys), not in the store's: the KV store owns its Pebble
// privately, and a separate engine lets the loop make a whole round of
// raft state durable with one sync across every region while the data
// applies need no sync of their own (the KV store runs with
// kv.SyncNone): the raft log is the durable record of what was applied
// since the log's truncation. TiKV kept its raft log in a RocksDB of its
// own (raftdb) for the same reasons.
//
// # Log truncation
//
// Once a leader's log holds Config.LogCompactThreshold applied entries,
// it proposes a compaction entry (TiKV's CompactLog) naming the highest
// index that it applied and that every follower has; each replica, when
// it applies that entry, has the KV store sync what it applied
// (Applier.Sync), then writes the truncated state (the index and its
// term) and deletes the entries up to it in the raft engine, and drops
// them from its memory storage. The truncated index is the replica's
// persisted applied index: a restarted replica starts from it and applies
// the rest of its log again, which leaves the same state (each batch is
// blind puts and deletes, so replaying a suffix in order is idempotent).
// This was chosen over recording the applied index in each data batch
// because it costs one KV sync per threshold entries and no change to the
// store's write path. Memory holds at most LogCountLimit entries plus
// those not yet applied: below that limit the leader truncates only what
// every follower has; at it, up to its applied index, past a follower
// that lags or is down, but not past the index of a snapshot on its way
// to a follower (CockroachDB's truncation constraint for pending
// snapshots), until the follower's progress shows it, the send failed,
// or two election timeouts passed since it was done: truncated
// meanwhile, under a steady write load, the follower needed snapshot
// after snapshot, and the learner of a move was never promoted.
//
// # Snapshots
//
// A follower behind the truncated log gets a snapshot. The leader's
// memory storage holds the truncation's snapshot (index, term and conf
// state, no data); when raft sends it (MsgSnap), the store sends, on a
// gRPC stream of its own (Raft.Snapshot), the MsgSnap and then the
// region's keys in 1 MiB chunks (kv.Store.ExportRange: the data, lock,
// notify and write spaces of the region's range, from one Pebble
// snapshot taken when the export starts, so at or after the snapshot's
// index), and tells raft whether it arrived (ReportSnapshot; raft sends
// again after a failure). The follower gathers the chunks, and its loop
// replaces the region's keys with them in one batch with range deletions
// first, synced (kv.Store.ImportRange), unless the snapshot is at or
// below its commit index; then raft steps the MsgSnap, and the round
// persists the snapshot as the truncated state with the whole log
// deleted, and takes its index as applied. Entries after the index are
// applied again over a state that may be later than the index, which
// leaves the same state, as a restart's replay does. A whole region's
// keys are held in memory on both sides while a snapshot is under way
// (regions are split by size, kv/node, which bounds it). A snapshot for a
// region the store holds no replica of creates the replica when the
// snapshot's configuration lists the store, no replica here overlaps its
// range and no tombstone forbids it (store.go's replicaForSnapshot, as
// TiKV's maybe_create_peer): the node learns a region a conf change gave
// its store only from pd, a heartbeat or two later, and a snapshot that
// came first failed until then.
//
// Every region starts from the same initial state on each replica
// (index initIndex, term initTerm, the voters pd placed), so creating a
// replica needs no message: the node creates it from pd's directory.
// A snapshot is made when raft asks for one, at the leader's applied
// index with the configuration there (replicaStorage), not at the
// truncated index: a replica that a conf change added must find itself
// in the snapshot's configuration.
//
// # Conf changes
//
// A replica lost with its store is replaced (Replica.ChangePeer, asked
// by pd of the region's leader; pd's repair.go) through raft's own conf
// changes, one at a time, each proposed once the previous one applied:
// the new store's replica is added as a learner (ConfChangeV2 with one
// AddLearnerNode); it starts uninitialized (no log, no configuration),
// raft finds its log empty and sends it a snapshot, which initializes
// it; once the leader replicates to it from its log (StateReplicate), one
// ConfChangeV2 promotes it and removes the lost replica, which raft runs
// as joint consensus (both the old and the new voters' quorums) and
// leaves by itself (an empty ConfChangeV2 once the joint one applied).
// The leader never removes itself. Every applied conf change counts one
// in the group's conf_ver (the same on every replica: they apply the same
// log; a snapshot carries it), which the leader reports to pd with its
// voters and learners; pd's directory follows the reports. A replica
// that applies its own removal destroys itself; a replica that missed it
// (its store was down) is destroyed by its node once pd's record shows a
// newer configuration without it (Store.RemoveRegion): its raft state is
// replaced by a tombstone and its range's keys are deleted, and the
// region is not created again on the store at that configuration or an
// older one, so the replica neither serves nor votes again. The
// configuration at the truncated index is recorded with the truncated
// state (keys.go), so a restarted replica applies each later conf change
// once.
//
// # Splits
//
// A region's leader splits it by proposing a split entry (the key and the
// new region's id, split.go); every replica applies it at the same index:
// the region keeps [start, key) and its id, a new region takes
// [key, end) with the same voters, both at the next epoch version, and
// the new region's replica is created on the store from the split (its
// initial state over the keys the store holds, the parent's as of the
// split's index), not from messages; on the parent leader's store it
// campaigns at once, and messages for it that reach a store before that
// store applied the split wait there for a few ticks (orphans). Every
// command entry carries the version its leader decided it under
// (Leadership.Region); one whose version is no longer the region's when
// it is applied (a split was applied first) is skipped on every replica
// and its proposer gets *EpochError, since its keys may belong to the
// new region, which only the new region's log may write. Applying a
// split syncs the KV store and records the index as the replica's
// applied floor (keys.go), so that no command from before a split is
// applied again after a restart: the parent's old entries would take
// back keys the new region wrote since (its conf changes are: the
// configuration must be the one in force at the floor). A snapshot carries the region's
// descriptor, and installs only the keys of its range. A split is
// refused while a conf change is under way (learners or a joint
// configuration).
//
// # The loop
//
// One goroutine drives every group of the store (Store.run, after TiKV's
// batch system): each tick and each time a message, proposal or read
// arrives, one round: step the messages, hand proposals and reads to their
// groups, collect every group's Ready, write all their entries and hard
// states in one Pebble batch with one sync, send the messages (one
// Transport.Send per destination store, which the gRPC transport sends as
// one batch on that store's stream), apply the committed entries, and
// advance. A round handles only the groups with work: those a message,
// proposal, read or request of the node's reached, or that raft left work
// in after the last round, and every group after a tick; so a store with
// many regions pays per request for the regions it touches, not for all
// of them. A replica's raft ids are store ids: a region has at most one
// replica per store.
//
// # Leader transfer
//
// A store being stopped hands every leadership away
// (Store.TransferLeaders); pd's leader balance asks one region's leader
// at a time to hand its leadership to a given voter
// (Replica.TransferLeader). Both use raft's leader transfer: the
// transferee campaigns at once, with the leader's blessing, once its log
// is up to date, and the followers vote for it at once, whatever the
// leader's lease; so the leader stops serving when it begins a transfer
// (a lease read could miss what the transferee's term commits), and
// serves again only if the transfer did not happen, two election
// timeouts later, through a new leader's barrier.
//
// # Not yet
//
// Merges, replica balance, snapshots streamed to disk instead of memory,
// and hibernating idle regions.
package raftstore
