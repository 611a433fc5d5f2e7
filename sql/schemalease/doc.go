// Package schemalease keeps F1's rule of online schema change on one SQL
// node: at most two schema versions are in use at any time.
//
// A schema change (F1's "Online, Asynchronous Schema Change in F1", as
// TiDB implements it) moves a table through states that are safe to have
// in use two at a time: an index goes absent, delete-only, write-only,
// public; a table about to be rewritten goes public, then write-fenced.
// Each state change is one committed transaction that bumps the schema
// version. Before the next change may commit, every transaction still
// using a version older than the one just published must be gone; if it
// were not, a transaction two states behind could write what the newest
// state cannot account for (a row without its index entry, a row into a
// table that is being copied).
//
// The Tracker enforces that rule for the transactions of this node:
//
//   - a transaction registers (Tracker.Begin) before it takes its start
//     timestamp, with the newest version this node knows as a lower bound
//     of the version it will see, and reports the version it actually read
//     (Use.Observe);
//   - a schema change that committed version v calls Tracker.Published(v)
//     and then Tracker.WaitOlder(ctx, v, ...): it waits until no
//     registered transaction uses a version below v;
//   - a transaction that outlives the wait (a long explicit transaction)
//     is marked stale instead of being waited for: when it tries to commit
//     writes (Use.BeginCommit) it fails with ErrSchemaChanged, the
//     retryable error TiDB calls 8028 "Information schema is changed".
//     A transaction already committing is never marked: the wait goes on
//     until its commit finishes, which takes no longer than a commit, so
//     a commit can never slip between the check and the change.
//
// Several SQL nodes sharing one cluster need the same rule across nodes:
// each node then renews a lease on the versions its transactions use and
// a change waits for every node's lease (the cluster issue). The Tracker
// is the per-node half of that protocol.
package schemalease
