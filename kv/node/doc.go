// Package node is a KV node of a cluster (percdb kv): one store (package
// kv, Pebble underneath) serving the regions pd gave it over the KV
// protocol (package kvrpc).
//
// # Life
//
// Open opens the store, registers with pd (a new store gets an id; a
// known one, from the state file, keeps it), takes its regions from a
// first heartbeat, and raises the store's max_read_ts to a fresh
// timestamp from pd's oracle before serving, so that a one-phase commit
// after a restart is calculated above every read served before it (kv's
// doc.go, "Regions and max_read_ts"). Then it heartbeats pd every
// HeartbeatInterval and takes the regions pd lists. The store id and the
// regions are kept in DataDir/store-state (a pdpb.StoreState), written
// atomically, so a restarted node serves its regions even before pd
// answers again. Every write is synced by the store before it is
// answered (kv.SyncAlways), so a node killed with SIGKILL loses nothing it
// acknowledged.
//
// # Routing and the proposer seam
//
// The node checks every request's region against its own view (id,
// epoch, keys in range) and answers a *kv.RegionError otherwise (not
// found, epoch not match with its view, key not in region). A region
// that passes goes to its replica's Proposer (route.go), which runs the
// command: directly on the store in this version, one replica per region;
// through a raft group per region (raft.RawNode, go.etcd.io/raft/v3) next,
// without changes to the node's routing, the wire or the client. The
// store underneath serves the whole key space as its one region: the node,
// not the store, knows the cluster's regions.
//
// # What comes next
//
// Three replicas per region (raft: the raft log and hard state in the
// same Pebble, written with the data in one batch and one sync per round
// across regions), leader leases and ReadIndex, max_read_ts re-established
// from the oracle after a leader change, snapshots for lagging replicas,
// splits (AskBatchSplit) and balance (docs/cluster.md).
package node
