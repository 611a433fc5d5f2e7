package raftstore

import "sync/atomic"

// Stats counts a store's raft work since it was opened, for its KV node's
// metrics (the operator's view of replication: proposals, snapshots,
// leader transfers). Each field only grows.
type Stats struct {
	// Proposals are the command batches handed to raft by a leading
	// replica; ProposalsRefused those raft refused at once (the replica
	// no longer led, or a transfer was under way).
	Proposals, ProposalsRefused uint64
	// SnapshotsSent and SnapshotSendFailures count the snapshots a
	// leader sent to followers whose log it had truncated, and the sends
	// that failed (raft sends again); SnapshotsInstalled the snapshots
	// received and installed here.
	SnapshotsSent, SnapshotSendFailures, SnapshotsInstalled uint64
	// LeaderTransfers counts the leader transfers begun here (pd's
	// balance, or the store closing).
	LeaderTransfers uint64
}

// storeStats are Stats' counters, written from the loop and the
// snapshot senders, read by Stats at any time.
type storeStats struct {
	proposals, proposalsRefused                           atomic.Uint64
	snapshotsSent, snapshotSendFailures, snapshotsInstall atomic.Uint64
	leaderTransfers                                       atomic.Uint64
}

// Stats returns the store's counts so far.
func (s *Store) Stats() Stats {
	c := &s.stats
	return Stats{
		Proposals: c.proposals.Load(), ProposalsRefused: c.proposalsRefused.Load(),
		SnapshotsSent: c.snapshotsSent.Load(), SnapshotSendFailures: c.snapshotSendFailures.Load(),
		SnapshotsInstalled: c.snapshotsInstall.Load(), LeaderTransfers: c.leaderTransfers.Load(),
	}
}

// DiskUsage returns the bytes the raft engine holds on disk (Pebble's
// estimate from its metrics: live and obsolete files, the log, the
// manifest), for the node's report of its used space; ErrStopped once
// the store is closed.
func (s *Store) DiskUsage() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock() // Close closes the engine only after it marked the store closed
	if s.closed {
		return 0, ErrStopped
	}
	return s.db.Metrics().DiskSpaceUsage(), nil
}

// Progress is a replica's place in its log: the highest index known
// committed and the highest applied. Commit - Applied is how far the
// replica's state lags what its group decided (entries in flight to the
// store, or a replica catching up after a restart or a snapshot).
type Progress struct {
	Commit, Applied uint64
}

// Progress returns the replica's progress as of the loop's last round.
func (r *Replica) Progress() Progress {
	return Progress{Commit: r.commitIndex.Load(), Applied: r.appliedIndex.Load()}
}
