// Package tpcc is a TPC-C workload for any MySQL-protocol server: the nine
// tables of the specification (revision 5.11) with their primary keys and
// the two secondary indexes every implementation adds, a parallel loader
// that follows the population rules of clause 4.3.3.1, the five
// transactions of clause 2 in the standard mix, and the consistency
// conditions 3.3.2.1 to 3.3.2.12 as checks.
//
// # How it talks to the server
//
// Like a MySQL application, not like a stored-procedure kit: every worker
// holds one connection, prepares its statements on it once (server-side
// prepared statements through go-sql-driver/mysql, COM_STMT_PREPARE and
// COM_STMT_EXECUTE), and runs each business transaction as BEGIN;
// SELECT ... FOR UPDATE; UPDATE ...; COMMIT on that connection. Keying and
// think times are off: a worker starts its next transaction as soon as the
// previous one ends, so the figures are a throughput test of the server,
// not a compliant TPC-C result (which needs 10 terminals per warehouse at
// most 12.86 tpmC each).
//
// # What is measured
//
// tpmC is the number of committed New-Order transactions per minute of the
// measured interval; the 1% that roll back by design (an unused item
// number) are counted apart. Latency is that of the whole business
// transaction as the client sees it, retries included, from BEGIN to the
// answer to COMMIT. Errors are counted per transaction type and per MySQL
// error code. With Retry (the default, as a well-behaved client does) a
// transaction that fails with 1213 (deadlock or write conflict), 1205
// (lock wait timeout) or 8028 (schema changed) is rolled back and started
// again with the same input, and every such attempt is counted as a retry;
// without Retry the error is counted and the worker goes on with the next
// transaction.
//
// A server that makes no progress is bounded, not waited for: the run ends
// at its duration, the transactions still running get a grace period, and
// what is still running after it is cancelled and reported as unfinished.
//
// # Scale
//
// Scale holds the cardinalities of clause 4.3.3.1 (100,000 items, 10
// districts per warehouse, 3,000 customers and orders per district, the
// last 900 orders new); StandardScale returns them, and tests use a tiny
// Scale with the same rules, so that the code paths are the ones a full
// run takes.
package tpcc
