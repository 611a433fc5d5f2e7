// Package elle checks snapshot isolation from the outside, the way Jepsen's
// Elle does: run a list-append workload against a MySQL-protocol server,
// record every transaction with its outcome, then infer from the history
// alone which transaction depended on which and look for cycles.
//
// # Workload
//
// Keys are rows (k INT PRIMARY KEY, v TEXT) whose value is a comma-separated
// list of integers. A transaction is a few micro-operations: append(k, x),
// which adds x to the end of k's list (UPDATE ... SET v = CONCAT(v, ',', x),
// or INSERT when the row does not exist yet), and read(k), which returns the
// whole list. Every appended value is unique per key, so a value read names
// the transaction that wrote it. Many clients run transactions concurrently
// over database/sql; each transaction is recorded with its invocation and
// completion times and an outcome: ok (COMMIT succeeded), fail (it certainly
// did not commit: an error before COMMIT, or a conflict error from COMMIT)
// or info (COMMIT's outcome is unknown, for example the connection broke).
//
// # Why lists
//
// A list is its own history: if a read of k returns [1 2 3], the versions of
// k were installed in the order 1, 2, 3, and every read of k must be a prefix
// of the longest one. That gives the version order of every key without any
// access to the database's internals, and from it Adya's dependency edges:
//
//   - ww: T1 appended x, T2 appended the element right after x: T2 overwrote
//     T1's version.
//   - wr: T2 read a list whose last element T1 appended: T2 saw T1.
//   - rw: T1 read a list and T2 appended the element that followed it: T1
//     did not see T2 (an anti-dependency).
//   - rt: T1 completed before T2 was invoked. A timestamp oracle promises
//     T2 a snapshot that includes T1 (strong snapshot isolation), so a cycle
//     through a real-time edge is as wrong as one through data edges.
//     Real-time order implies each client's own order, so no separate
//     process edges are needed.
//
// # Classes
//
// Each strongly connected component of the graph (Tarjan) is searched for
// the shortest cycle of each class, from the most to the least severe:
//
//   - G0: only ww edges (dirty write).
//   - G1c: ww and wr edges, at least one wr (circular information flow).
//   - G-single: exactly one rw edge (read skew, lost update).
//   - G2-item: two or more rw edges (write skew): allowed under snapshot
//     isolation, reported but not a failure.
//
// A class found only with rt edges gets a "-realtime" suffix. Besides
// cycles, the checker reports G1a (a committed read saw an element of a
// failed transaction), G1b (a read saw a transaction's intermediate append),
// internal inconsistencies (a transaction that does not read its own
// appends, or whose second read of a key differs from its first plus its
// own appends), duplicate elements, garbage reads (an element nobody
// appended) and incompatible orders (two reads of a key that are not
// prefixes of one another).
package elle
