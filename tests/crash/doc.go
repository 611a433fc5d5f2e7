// Package crash tests that percdb keeps its promises when processes die:
// the server, killed with SIGKILL at random moments under a write
// workload; a client process, killed while it commits; and Percolator
// clients that die half way through a commit, at each point of the
// protocol where that leaves something behind.
//
// # Workload and history
//
// Worker runs three kinds of transaction over go-sql-driver/mysql, chosen
// at random:
//
//   - a bank transfer: BEGIN, read the source balance, UPDATE both
//     accounts, INSERT the transfer into a ledger table, COMMIT;
//   - an autocommit INSERT of an item with a unique secondary key and a
//     value long enough to live in the store's data space;
//   - an order: BEGIN, INSERT the order, INSERT its lines, UPDATE the
//     worker's counters row, COMMIT: three tables, and for a third of the
//     orders more than the 16 KiB that one-phase commit takes, so that
//     they commit in two phases with a primary lock and secondary locks
//     in several batches, which is what a crash can leave half done.
//
// Every transaction has a unique id and is recorded (Recorder) before its
// commit is sent (Pending) and with its outcome (Done): Committed when the
// commit returned OK, Failed when the server answered with an error (or
// COMMIT was never sent), Unknown when the connection died with the commit
// in flight. A process that can be killed records on stdout, one JSON line
// per record (LineRecorder, ReadHistory).
//
// # Checks
//
// Checker reads every table in one read-only transaction and checks the
// data against the history: a committed transaction is there, whole; a
// failed one is not there at all; one of unknown outcome is all there or
// not at all; no row is there that no client committed; each balance is
// the initial one plus the ledger's transfers and the sum never changes;
// orders, lines and counters agree; reads through each secondary index
// find what the table scan finds. Its own tests break each rule on
// purpose, to show it notices.
//
// # Tests
//
// TestServerKill builds cmd/percdb, runs it on a data directory of its
// own on a free port of 127.0.0.1, and per cycle runs four workers, waits
// for a random moment with a commit in flight, SIGKILLs the server,
// counts the locks the dead process left (on a copy of its store, so
// that the server's own recovery is what the restart exercises), restarts
// it on the same directory and checks. At the end a writer pass writes
// every account and counters row (committing through any lock left) and
// the server must stop cleanly on SIGTERM.
//
// TestClientKilledMidCommit runs the workload in child processes (the
// test binary again, TestClientProcess) against a server in the test
// process, SIGKILLs each child while it has a commit in flight, and
// checks the server against what the child had been told.
//
// TestAbandonedCommits drives package txn directly: bank transfers over
// raw keys in three regions, from clients whose txn.CommitHooks make them
// die after prewriting the primary, after prewriting everything, or after
// committing the primary. Other clients write through the abandoned locks
// (waiting out their TTL), a reader checks the sum in every snapshot, and
// at the end the ledger holds exactly the transfers that passed their
// commit point and a scan of everything leaves no lock.
//
// Waits are bounded generously (a server that does not start, a workload
// that makes no progress, a check that does not finish fail the test) but
// nothing is timed. Long runs:
//
//	PERCDB_CRASH_CYCLES=100 go test ./tests/crash -run TestServerKill -timeout 2h
//	PERCDB_CRASH_CLIENT_KILLS=50 go test ./tests/crash -run TestClientKilledMidCommit
//	PERCDB_CRASH_ABANDON_TXNS=300 go test ./tests/crash -run TestAbandonedCommits
//
// PERCDB_CRASH_SEED replays a run's random choices (the timing of kills
// still varies).
package crash
