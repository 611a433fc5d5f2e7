package sql

import "context"

// QuiesceBackground waits until the node's delete-range stamper has no
// round running or pending, so that a test counting timestamps
// (Percdb_oracle_calls) does not count the rounds a start or a DDL woke:
// they run in a goroutine of their own, and on a loaded machine late. It
// assumes no DDL commits meanwhile.
func (s *Server) QuiesceBackground(ctx context.Context) error {
	return s.provider.ranges.Quiesce(ctx)
}

// FlushStorage writes the node's memtables to table files, so that the
// storage page's size estimates count what was written.
func (s *Server) FlushStorage() error { return s.kvStore.Flush() }

// SetBackfillBatchHook makes every index backfill call f after each of
// its batches. Set it before any DDL runs.
func (s *Server) SetBackfillBatchHook(f func()) { s.provider.jobs.TestingAfterBatch = f }

// WithoutObservation returns cfg for a server that observes no statement
// (no statement metrics, digests, slow log or process-list statement
// record), for measuring what the observation costs.
func WithoutObservation(cfg Config) Config {
	cfg.unobserved = true
	return cfg
}
