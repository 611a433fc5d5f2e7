// Package testserver gives the correctness tests (tests/isolation,
// tests/elle) a MySQL-protocol server to run against, and says which kind
// it is, because the tests expect percdb's snapshot isolation and document
// how InnoDB's REPEATABLE READ differs.
//
// A test calls ForTest, which picks, in order:
//
//   - PERCDB_TEST_DSN: an already running server (go-sql-driver/mysql DSN,
//     with a database), of the flavor named by PERCDB_TEST_FLAVOR ("percdb",
//     the default, or "mariadb");
//   - PERCDB_TEST_MARIADB=1 (or a path to mariadbd): a private MariaDB
//     started for the test in a temporary data directory, on its own port
//     and socket, stopped when the test ends;
//   - otherwise an in-process percdb node (package sql) with an in-memory
//     store, started for the test and stopped when it ends.
//
// A package whose tests share one server holds a Shared.
package testserver
