// Package deadlock is the deadlock detector of a cluster (TiKV's
// src/server/lock_manager/deadlock.rs): one wait-for graph for the waits
// of every KV node, so that a cycle of pessimistic lock waits whose keys
// live on several stores is found when it closes, not broken by
// innodb_lock_wait_timeout.
//
// # Roles
//
// Every KV node runs a Server (the Detector gRPC service) and a Client,
// which is its store's kv.DeadlockDetector. The Server answers only while
// its node leads the region holding the first key of the key space (the
// role moves with that leadership, as in TiKV); any other node's Server
// answers FAILED_PRECONDITION. A Server that becomes the detector starts
// with an empty graph (kv.WaitForGraph); the node tells it of every
// change of its leaderships (LeadershipChanged), so that a leadership
// lost and regained between two requests starts afresh too: the waits
// and clean-ups sent meanwhile went to another detector.
//
// The Client finds the detector by asking pd for the first region's
// leader, asks its own Server in process when that is its node, and
// otherwise sends:
//   - Detect, when one of its store's lock requests is about to wait and
//     no other request of the store already waits on the same pair
//     (waiter txn, holder txn): the detector checks the edge and answers
//     the cycle it would close (the store refuses the wait with
//     *kv.DeadlockError, MySQL 1213 for the victim) or records it. A
//     second wait on the same pair needs no check: the pair's edge is in
//     the graph already, and the graph never holds a cycle.
//   - CleanUp, in the background, when the last wait on a pair ended.
//
// # Moves and losses
//
// A Client that finds the detector moved (another address than the one
// it last sent to) re-sends all its waits in progress with its next
// request; and every RefreshInterval it re-sends them anyway, which both
// moves them to a new detector that no Detect reached yet and refreshes
// their stamps. Re-sent edges are recorded unchecked (they were checked
// when they began) and only once per pair. The detector drops edges not
// recorded or re-sent for EdgeTTL: the waits of a node that crashed, or
// a CleanUp that was lost, do not make later waits look like deadlocks.
//
// A detector that cannot be reached within RequestTimeout makes Detect
// answer "no deadlock", and the Detects of the next RequestTimeout
// answer so at once (the store's requests to the detector are one at a
// time, kv's waiterTable.detectMu: a detector out of reach must not hold
// up every wait of the store, nor the end of every wait);
// the refresh delivers the waits once it answers again. An unchecked wait
// lasts its wait slice (1 s, the store's LockWaitSlice), after which the
// request is asked again and checked again, so a cycle is found at the
// latest about one slice after the detector is back, and
// innodb_lock_wait_timeout bounds the rest.
//
// # Imprecision
//
// A pair waited on from two nodes is one edge in the graph, counted per
// node by Detect and CleanUp; after a move it is re-sent once, so the
// first CleanUp removes it while the other node still waits. The cycle
// through it is then found when that wait's next slice asks again.
package deadlock
