// Package schemalease keeps F1's rule of online schema change: at most two
// schema versions are in use at any time, on one SQL node (Tracker) and
// across the SQL nodes of a cluster (Lease).
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
// Across the SQL nodes of a cluster, each node holds a schema lease in
// pd (Lease; TiDB's schema lease, 45 s there, 10 s by default here):
//
//   - the node reports to pd, every half lease, the version it has
//     loaded with no transaction of an older one still able to commit
//     writes to what changed; pd keeps the report under an etcd lease of
//     the lease's length, so that it goes when the node stops reporting;
//   - it watches the version that schema changes publish in pd; on a new
//     one it loads the catalog, runs the Tracker's wait for its own
//     transactions that wrote a table that changed (marking stale those
//     that outlive the DDL wait), and reports the version at once;
//   - a schema change, once it committed version v and waited for its
//     own node's transactions, publishes v and waits (Lease.Sync) until
//     every node whose lease is alive reports v. Before it commits, it
//     waits the same way for the version it builds on, so that a change
//     whose wait was cut short (killed, or its node died) cannot lead to a
//     third version in use;
//   - a node that cannot renew its lease, or that has stayed behind a
//     published version for longer than a DDL wait and a lease (it
//     cannot load the catalog), stops being waited for once pd's record
//     ends. It refuses commits from the moment its lease may have ended
//     (ErrLeaseExpired, TiDB's 8027), counted from the sending of its last
//     successful renewal less a tenth of the lease for the clocks' rates,
//     so that it never commits after a change stopped waiting for it. The
//     check runs once the commit's commit_ts is fixed (txn.CommitGuard):
//     the timestamp was issued before the check, hence before any later
//     change's. A renewal that finds pd's record had ended starts a new
//     epoch, and a transaction begun in an older one fails its commit
//     with ErrSchemaChanged (8028, retryable): it may have used a schema
//     that changes elsewhere stopped waiting for;
//   - a node that shuts down gives its lease up (Lease.Leave): it reports
//     that it holds back no version, and changes stop waiting for it;
//   - reads that use the node's cached schema without checking the
//     version in the store may do so only while the lease is held and the
//     node knows of no newer version than it reports (Lease.Current):
//     otherwise changes may have gone on without it, and its cache may be
//     more than one version old.
//
// The single node has no lease: nothing of this runs there.
package schemalease
