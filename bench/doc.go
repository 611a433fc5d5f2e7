// Package bench measures percdb against MariaDB with sysbench, side by side,
// on the same machine and in the same sitting, and reports the result as a
// table, a markdown section and a chart.
//
// # Why it is built this way
//
// Throughput on a shared two-core machine moves by 10-20% from minute to
// minute, so a figure is only worth quoting next to the reference measured
// right beside it. A Harness therefore:
//
//  1. starts one private server per system (MariaDB from the Debian package
//     in its own temporary data directory, port and socket, bound to
//     127.0.0.1; percdb built from the checkout into a temporary directory,
//     with its own data directory and port), records each one's idle
//     resident memory, and prepares the same sysbench tables on both;
//  2. picks the duration of one sysbench run, either as given or so that
//     the whole measurement fits a time budget;
//  3. runs every (workload, threads) pair once per server per round, the
//     servers back to back, rotating which goes first from pair to pair and
//     round to round so neither systematically gets the warmer or the
//     quieter slot;
//  4. re-creates the tables at the start of every round after the first, and
//     orders the workloads of a round from read-only to row-deleting, so
//     every round sees the same data (oltp_insert grows the table and
//     oltp_delete empties it);
//  5. always stops both servers, also on error and on Ctrl-C, and reads
//     their peak resident memory (VmHWM) before it does.
//
// The figure quoted for a pair and server is the median over the rounds;
// the percdb/MariaDB ratio is the median of the per-round ratios, because
// the two runs of one round ran a few seconds apart and so share the
// machine's state.
//
// A run is flagged when sysbench failed, printed FATAL, reconnected, or left
// no report. Errors sysbench retries by itself (deadlock 1213, 1020 and lock
// wait timeout 1205, its --mysql-ignore-errors default) are counted, not
// flagged: a snapshot-isolation database is expected to abort conflicting
// writers and let the client retry.
//
// The same private servers serve the other benchmarks (StartServers):
// bench/tpcc is a TPC-C workload with its consistency checks, run side by
// side by bench/cmd/tpcc, and bench/scan times scan and analytics queries,
// run by bench/cmd/scanbench.
//
// Everything that can be checked without a server (parsing sysbench's
// report, medians and ratios, table rendering, markdown section
// replacement, the budget arithmetic and the chart) is a pure function so
// that the tests can run without starting anything.
package bench
