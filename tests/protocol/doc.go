// Package protocol checks what percdb says on the wire where drivers
// depend on it and no SQL-level test can see it, with the raw client of
// package wirefuzz: the server status flags of the greeting and of every
// OK and EOF packet (SERVER_STATUS_AUTOCOMMIT, SERVER_STATUS_IN_TRANS,
// SERVER_MORE_RESULTS_EXISTS), which PyMySQL and mysqlclient read to
// decide whether a transaction is open or autocommit is on.
//
// Each test runs against percdb twice, with the fast path and with every
// statement going through go-mysql-server, and, with PERCDB_TEST_MARIADB=1
// (see tests/isolation/testserver), against a private MariaDB as the
// reference.
package protocol
