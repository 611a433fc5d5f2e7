// Package isolation holds Hermitage's isolation cases (github.com/ept/hermitage)
// as Go tests, one per named anomaly, run through two or three MySQL
// connections against the server testserver picks.
//
// Every case starts from the table Hermitage uses,
//
//	create table test (id int primary key, value int);
//	insert into test (id, value) values (1, 10), (2, 20);
//
// and plays a script of statements, each from a given session (T1, T2,
// T3), in a fixed order. A statement Hermitage marks "BLOCKS" is started
// without waiting: it either finishes (an optimistic percdb transaction
// holds no row locks before COMMIT) or the server reports it waiting for a
// lock (InnoDB, or percdb in pessimistic mode), and the
// script goes on with the other sessions until one of them releases it.
// After an error, a session's transaction is over: the harness rolls it
// back and skips the session's statements up to its COMMIT or ROLLBACK, so
// that nothing runs outside the transaction by accident.
//
// The cases assert what percdb promises (snapshot isolation, docs
// transactions.md): G0, G1a, G1b, G1c, OTV, PMP, P4 (lost update) and
// G-single (read skew) are prevented, by the snapshot or by error 1213 on
// the second committer; G2-item (write skew) happens, and a case shows it.
// Against MariaDB (PERCDB_TEST_FLAVOR=mariadb, or PERCDB_TEST_MARIADB=1)
// the same scripts run, checks that also hold for InnoDB's REPEATABLE READ
// are asserted, and the documented differences (InnoDB lets P4 through,
// reads the latest version in UPDATE and DELETE, blocks instead of failing)
// are logged rather than asserted.
//
// The cases run in percdb's default mode, pessimistic, unless
// PERCDB_TEST_TXN_MODE names the mode (percdb_txn_mode: optimistic or
// pessimistic). In pessimistic mode statements wait for row locks, which
// the harness sees in ADMIN SHOW LOCK WAITS, and a transaction whose first
// reading statement waited commits after the holder instead of failing
// (a serial history; firstStatementWaits); in optimistic mode the second
// committer fails with 1213. Every anomaly stays prevented in both.
package isolation
