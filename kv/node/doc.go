// Package node is a KV node of a cluster (percdb kv): one store (package
// kv, Pebble underneath) holding replicas of the regions pd placed on it,
// each a member of its region's raft group (package kv/raftstore), serving
// the regions it leads over the KV protocol (package kvrpc).
//
// # Life
//
// Open opens the store, registers with pd (a new store gets an id; a
// known one, from the state file, keeps it), opens the raft store
// (DataDir/raft) with its gRPC transport, creates a replica for each
// region of its state file and of a first heartbeat (from the region's
// initial state, or, after a restart, from the raft log, which it applies
// again), and raises the store's max_read_ts to a fresh timestamp before
// serving. Then it heartbeats pd every HeartbeatInterval, and at once
// when one of its replicas starts or stops leading, telling pd which
// regions it leads (pd sends clients there) and taking the regions pd
// lists. A heartbeat reports only the regions whose report changed since
// pd acknowledged it, and pd answers the list only when it changed
// (report.go); every region goes in a full report, the node's first, one
// every Config.FullReportInterval and one whenever pd asks. The store id and the regions with their peers are kept in
// DataDir/store-state (a pdpb.StoreState), written atomically, so a
// restarted node takes part in its groups even before pd answers again.
// The store applies without syncing: the raft log, synced once per round,
// is the durable record, so a node killed with SIGKILL loses nothing raft
// acknowledged.
//
// # Routing
//
// The node's replica of a request's region must lead and serve (a new
// leader serves once it caught up and raised max_read_ts), or the
// request gets NotLeader with the leader's address; then the request's
// epoch version and keys are checked against the region as the replica
// applied it (its range and version, which splits change), and a
// *kv.RegionError answers a mismatch (not found, epoch not match with
// the replica's view, key not in region); then it passes the replica's
// read barrier (ReadIndex under the leader lease, then applied up to
// it), so that it sees every write committed before it arrived, and the
// version is checked again (a split applied meanwhile). The command
// then runs on the store with the replica's leadership in its context
// (kv.WithReplicator): its write batch is proposed through raft, tagged
// with the version it was decided under, and applied on every replica
// unless a split came first (then EpochNotMatch), and the command
// returns once its own replica applied it. The store underneath serves
// every key the node holds as its one region: the node, not the store,
// knows the cluster's regions, and bounds the commands that walk a
// region (ResolveLock without keys, ScanLock, GC) to its range.
//
// # Splits
//
// split.go: a region's leader splits it on request (SplitRegion, from
// SPLIT TABLE) or when its split check finds it larger than
// Config.SplitSize (checked with the heartbeat, for the regions whose
// replica applied an eighth of that since the last check), with a new
// region id from pd. Every store that applies the split serves the new
// region at once and reports both regions' ranges to pd, which keeps the
// directory by version. A region pd lists whose range a replica here
// still holds at an older version is not created from pd's list: that
// replica's split will create it.
//
// # Replica repair
//
// The heartbeat carries, for each region the node leads, the raft
// configuration its replica applied (conf_ver, voters, learners), and
// its answer the repairs pd asks (replace the replica on a down store by
// one on a live store), which the node hands to the leading replica
// (raftstore.Replica.ChangePeer). A region pd starts listing for the
// store at a conf_ver above 1 is one a conf change added it to: its
// replica is created uninitialized and waits for the leader's snapshot.
// A region pd stops listing stops being served; once pd's record shows a
// newer configuration without this store, its replica is destroyed
// (tombstone: raftstore.Store.RemoveRegion). Requests are checked against
// the region's version only: a conf change moves no key.
//
// # Garbage collection
//
// GC and ScanLock are served by the region's leader; GC's deletions go
// through raft; UnsafeDestroyRange is carried out locally on every store
// it is sent to; the store learns pd's safe point with each heartbeat
// (gc.go).
//
// # Deadlock detection
//
// The store's lock waits are checked by the cluster's one deadlock
// detector (package kv/deadlock): the node serves the Detector service
// and answers it while it leads the region holding the first key; its
// store's detector is a deadlock.Client that finds the detector through
// pd and asks the node's own Server in process when it is this node.
//
// # Leader balance
//
// pd answers a heartbeat with the leaderships to hand away
// (raftstore.Replica.TransferLeader), so that every live store leads
// about its share of the regions.
//
// # Status port
//
// metrics.go and load.go: the node counts each region's keys and bytes
// read and written as its leader serves them and turns them into rates
// with each heartbeat, which carries each led region's counts of the
// last interval to pd (pdpb.RegionLoad, as TiKV's region heartbeats), so
// that pd knows the whole cluster's load by region; Collector serves the
// store's regions, leaders, heartbeats, raft's work (raftstore.Stats)
// and apply lag, and the hottest regions, and Handler /store (the
// store's figures: statusserver.StoreFigures), /regions and
// /regions/hot in JSON, which cmd/percdb serves on the node's status
// port. The heartbeats register that port (Config.StatusAddr) with pd,
// where a SQL node's console finds it.
//
// # Placement and disk space
//
// The heartbeat also carries the store's disk (space.go: capacity, or
// Config.Capacity when smaller, available, the bytes the engines hold
// from their Pebble metrics, refreshed off the heartbeat's path every
// spaceRefreshEvery, whether the disk protection refuses writes). pd's placement moves
// replicas between stores (balance, a store being drained, a store low on
// space) with the same ChangePeer as a repair, and asks a leading replica
// to hand its leadership away first when its own replica is to move. The
// node registers Config.Labels (zone, host) with pd, which keeps a
// region's replicas apart by them.
//
// # What comes next
//
// Merges (docs/cluster.md).
package node
