// Package tablelock holds the table locks of one SQL node: LOCK TABLES,
// UNLOCK TABLES and FLUSH TABLES WITH READ LOCK as MySQL runs them (GMS
// v0.20.0 accepts them and takes no lock, so a mariadb-dump with its
// default --lock-tables was not consistent across tables while others
// wrote).
//
//   - LOCK TABLES t READ lets every session read t and none write it; t
//     WRITE lets no other session read or write it. A statement of
//     another session that would conflict waits until the lock is
//     released, up to lock_wait_timeout (1205). LOCK TABLES itself waits
//     for conflicting locks of other sessions, and first releases the
//     session's own (Manager.Lock).
//   - The locking session may use only the tables it locked, under the
//     names (aliases) it locked them by: 1100 for another table, 1099 for
//     a write to a table locked READ (Manager.Admit). information_schema,
//     performance_schema and the session's temporary tables are exempt,
//     as in MySQL: the caller leaves them out of a statement's uses.
//   - FLUSH TABLES WITH READ LOCK takes the global read lock
//     (Manager.LockGlobal): every writing statement of other sessions
//     waits until it is released, and the holder's own fail with 1223.
//     FLUSH TABLES t, u WITH READ LOCK is LOCK TABLES t READ, u READ.
//   - UNLOCK TABLES, and the end of the session, release all of them
//     (Manager.Release).
//
// Manager.Active is one atomic load, so that statements pay nothing
// while no session holds a lock. The locks are this SQL node's (one
// Manager per package sql's DatabaseProvider): sessions on other nodes
// of a cluster do not see them (docs/compatibility.md).
//
// It depends on vitess's MySQL errors only. Which tables a statement
// uses, and the statements that take and release locks, are package
// sql's (tablelocks.go), which knows the session and parses statements.
package tablelock
