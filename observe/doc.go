// Package observe runs Percolator's observers (the paper's section 2.4)
// on percdb's transactions: functions that run, each in a transaction of
// its own, after a write to a column they watch, so that a database kept
// by transactions becomes an incremental-processing engine.
//
// # The model
//
// An Observer has a name, the table and columns it watches, and a Func.
// A transaction that changes a watched column of a row (package executor
// does it for every SQL write, from the watches the catalog holds) marks
// the row's key notified for the observer (txn.Txn.Notify); the store
// sets the key's notify entry, for the observer, when the key commits:
// a hint kept in the store's notify space, not transactional data.
//
// A Runner's scanners look for notify entries. Each scanner starts at a
// random key of the range where entries were last seen, scans forward a
// page at a time and wraps around. It names itself to the store with a
// random number (txn.Store.ScanNotifyPage), and the store keeps, for a
// lease, where each scanner reads next and which entries it was handed
// (only those of the Runner's observers):
// a page leaves out the entries another live scanner holds, and says when
// another scanner reads next inside it. A scanner told so jumps to a new
// random key, so that scanners spread out instead of trailing each other
// (the paper's convoys). Scanners of every process see each other this
// way. Each entry of a registered observer becomes a run, at most
// Options.MaxRuns at a time:
//
//  1. begin a transaction; read the row (so that its snapshot holds every
//     commit of the row below its start_ts, 1PC commits included: the
//     read pushes the region's max_read_ts);
//  2. strong notifications: txn.Txn.Acknowledge at the row's ack key
//     (tablecodec.AckKey): if the observer's last committed run started
//     at or after the entry's commit_ts it saw the change, and the run ends
//     here, clearing the entry; else the ack is set to this run's
//     start_ts, an ordinary write;
//  3. mark a statement (txn.Txn.BeginStatement), so that a pessimistic
//     run that moves its snapshot has the reads of the row and the ack
//     validated; call the Func with the transaction and the row key, and
//     commit.
//     Two runs for one notification both wrote the ack: the second to
//     commit meets a write conflict, or, starting later, reads the first
//     one's ack and stops. At most one of them commits;
//  4. after the commit, clear the entry unless a newer commit set it
//     again (kv's ClearNotify compares timestamps), in which case the
//     next pass runs the observer again.
//
// Several writes to a row before a run leave one entry at the newest
// commit_ts: one run sees them all (message collapsing). A run that dies
// (its context cancelled, its process killed) leaves the entry in place,
// and a later pass runs it again; its transaction's locks are resolved as
// any dead transaction's. A conflict is retried with backoff up to
// Options.MaxAttempts times, then left to a later pass.
//
// A run that fails (an error of its Func or its commit, or MaxAttempts
// conflicts) leaves its notification, which the Runner runs again only
// after a backoff (Options.FailureBackoff, doubling per failure in a
// row): an observer that fails for good costs a run per backoff, not a
// spinning scanner. ObserverStats counts each observer's runs and
// failures and keeps its last error; EntryOf gives a Func the
// notification it runs for; ReadHistory reads back a row's changes and
// committed runs, the evidence of the guarantees (History.RunTwice,
// Unobserved).
//
// Weak notifications (Observer.Weak, Fluo's) skip the acknowledgement:
// no ack write, so runs never conflict on it, and a notification may run
// more than once (at least once); for observers of hot rows whose Func
// is idempotent.
//
// # Processes
//
// Runners in several processes over one store cooperate through the
// store alone: the store's record of scanners keeps a notification one
// scanner holds from the others while its run goes on (a hint, soft
// state of the node that serves the region), and acks make runs of one
// notification exclude each other when the hint fails (a lease ran out,
// a region's leader changed).
package observe
