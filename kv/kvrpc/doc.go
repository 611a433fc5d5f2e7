// Package kvrpc serves the kv.Client contract over gRPC and calls it: the
// wire between the transaction layer of a SQL node and the stores of KV
// nodes (kv/kvpb holds the protocol).
//
// Server wraps a Backend (a *kv.Store, or a KV node that checks routes
// against the regions pd gave it) and answers each command of the
// contract; Client is a kv.Client that routes with a Router (the region
// cache fed by pd) and sends each command to the store of its region, one
// connection per store. txn never knows which client it has: its whole
// test suite runs over this package on loopback (PERCDB_TEST_KV=grpc go
// test ./txn; kvrpctest).
//
// # Errors
//
// Every request carries its region id and epoch. A store that does not
// serve the region as named answers a region error, which the client
// returns as *kv.RegionError; its Reason starts with the kind (the
// Reason* constants): not found, epoch not match (with the store's view of
// the region), key not in region, not leader (with the leader's address),
// server is busy. The txn layer drops the route, locates the keys again
// and retries with backoff. The outcomes of a command on its keys (locked,
// write conflict, ...) cross the wire field for field and come back as
// kv's own error types.
//
// A store that cannot be reached (a KV process restarting) is retried by
// the client itself, with backoff, up to Options.UnavailableTimeout and
// the caller's context, and then fails with *kv.StoreUnavailableError,
// which the SQL layer reports as MySQL error 9002 (TiDB's "TiKV server
// timeout"). Sending a command again is safe for every Percolator command
// (a prewrite finds its own lock, a commit its own commit record, a
// pessimistic lock request its own lock and the conflict it was taken
// with, so the answer is the first attempt's), except a
// one-phase commit: one whose call broke in flight may have committed, so
// it is not sent again and fails with an undetermined
// *kv.StoreUnavailableError; one refused before it was sent is retried.
//
// # Lock waits
//
// AcquirePessimisticLock with a WaitTimeout is one unary call that lasts
// as long as the wait: the caller's context is the call's deadline and
// cancellation, the store bounds one wait by its lock-wait slice and
// answers *kv.KeyIsLockedError, and the client's txn layer checks the
// holder and asks again, as in process.
package kvrpc
