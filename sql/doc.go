// Package sql is percdb's MySQL front end: go-mysql-server (GMS) as the
// SQL engine and wire server, with a storage backend whose every read and
// write is part of a Percolator transaction (package txn), and Server, the
// node that puts the store, the oracle and the MySQL server together.
//
// # From a statement to keys
//
// A client's command arrives at GMS's handler, wrapped by percdb's
// (handler.go). GMS parses and analyzes the statement against the catalog
// this package serves (DatabaseProvider, Database, Table) and executes
// the plan: reads call Table.PartitionRows or, when the analyzer chose an
// index, IndexedTable.LookupPartitions with the ranges it derived from the
// WHERE clause; writes call the table editors. Both end in package
// executor, which owns the row and index layout (executor/tablecodec):
//
//   - a full scan is one range scan of the table's row keys;
//   - a lookup's ranges become key ranges of the primary key (row keys) or
//     of a secondary index (index.go); a range that pins every column of a
//     unique key is a point read (a batch get of row keys, or a unique
//     index entry then its row), any other range a scan, an index scan
//     then batch gets of the rows it points to;
//   - INSERT, UPDATE, DELETE and REPLACE write the row and every index
//     entry through executor.AddRecord, UpdateRecord and RemoveRecord,
//     which read primary and unique keys first, so that a duplicate fails
//     the statement at once with the row that holds the key (which ON
//     DUPLICATE KEY UPDATE and REPLACE need), and write them as inserts,
//     so that a concurrent insert of the same key fails one of the two
//     commits.
//
// Writes are buffered in the transaction and reach the store only at
// commit, by Percolator's two phases (or one, for a small transaction in
// one region).
//
// A prepared statement that the fast path does not run is analysed once
// per parameter types and its plan reused with each execution's values
// (package plancache, used by plancache_exec.go, per session): the values are put into the plan's
// literals and its index reads' ranges derived again from its filters; a
// plan whose shape the values would change, or that holds state of an
// execution (subqueries, hash lookups), is analysed every time by GMS, as
// is everything after a schema change or a SET.
//
// # Transactions
//
// Session implements sql.TransactionSession. GMS starts a transaction
// before each statement in autocommit mode and at BEGIN otherwise; each is
// one Transaction, which begins its Percolator transaction on first use
// (a statement that touches no table costs nothing) and fetches its start
// timestamp on its first read. COMMIT, or the end of an autocommit
// statement, commits it; a write conflict fails the commit with MySQL
// error 1213 (SQLSTATE 40001), which drivers and sysbench retry, and ends
// the transaction.
//
// Each writing statement opens a stage of the transaction's buffered
// writes (txn.Txn.Staging). The stage is released when the statement
// succeeds and cleaned up, undoing only that statement, when it fails;
// the handler ends it after every command because GMS does not always
// tell the table editors of a failure. Savepoints are stages too. SELECT
// ... FOR UPDATE, whose clause GMS parses and ignores, is recognised by
// the handler; the rows such a statement reads inside a transaction are
// locked (txn.Txn.LockKeys), so a concurrent write to one of them fails
// the commit of one of the two transactions.
//
// In pessimistic mode (percdb_txn_mode, BEGIN PESSIMISTIC; pessimistic.go)
// an explicit transaction's Percolator transaction is pessimistic: the
// table editors lock each row's keys as they write them, and FOR UPDATE
// rows as they are read, in the store (waiting for other transactions, up
// to innodb_lock_wait_timeout). A lock that meets a commit newer than the
// snapshot in the transaction's first reading statement marks the
// statement for the handler, which moves the snapshot and runs it again
// (handler.run) as long as none of its rows reached the client; later, it
// is 1213 and the transaction is rolled back, as after a deadlock. Such a
// transaction's statements go through GMS, not the fast path, whose
// plans do not lock. ADMIN SHOW LOCK WAITS lists the waits by connection.
//
// # Catalog
//
// Databases, tables (columns, types, defaults, primary key, indexes, CHECK
// constraints, foreign keys, package foreignkey), views, triggers, stored procedures and functions are JSON definitions
// under the meta prefix "m" (package catalog; GMS parses and runs triggers
// from their stored statements, trigger.go; procedures GMS parses and
// percdb's interpreter runs, routines.go, procexec.go; functions, which
// GMS lacks, storedfunc.go). A DDL statement changes them in its own transaction, with
// the data it moves (an index backfill, a table rewrite, the rows of a
// dropped table), and bumps the schema version key, so concurrent DDLs
// conflict and every node sees the change atomically. Each transaction
// reads the version key at its snapshot and uses the in-memory catalog of
// that version, loading it only when the version is new. Table and index
// IDs come from a counter in the same key space. AUTO_INCREMENT values
// and hidden row IDs come from per-table allocators that reserve batches
// of IDs in transactions of their own (catalog.Allocators).
//
// A table's definition also holds the watches of Percolator observers
// (package observe; observers.go, with the actions of ADMIN WATCH ... DO
// parsed and scheduled by package observeraction, each run by
// observeractions.go): the
// executor's row writes mark the
// rows they change notified for them. Server.Watch records one as a
// schema change, Server.ObserverTxns gives observer runs transactions
// under the node's schema rules, and ADMIN SHOW OBSERVERS lists them.
// CHANGEFEED FOR db.t streams a table's committed changes to a client as
// a result set that does not end (package changefeed, run by
// changefeed_exec.go).
//
// # Operations
//
// The outermost protocol handler (observe.go) sees every statement whole:
// it counts it in the node's Prometheus metrics (package nodemetrics, a
// registry of the node's own) and writes it to MySQL's slow query log when it took
// at least long_query_time (package slowlog). The node's counters of the fast
// path, the oracle and the transaction layer are listed once
// (counters.go) for SHOW STATUS and /metrics alike. Config.StatusAddr
// starts the status port (package internal/statusserver: /status, /metrics,
// /debug/pprof/). docs/operations.md is the operator's guide.
//
// The node's MVCC garbage collector (gc.go over package gcworker) runs
// every percdb_gc_run_interval and keeps versions for
// percdb_gc_life_time, both persisted global variables; it destroys the
// key ranges DDL left behind (package ddljob) once its safe point has
// passed them, so DROP and TRUNCATE TABLE return at once. Its safe point
// stays behind the service safe points of change feeds (package
// safepoint).
// percdb_txn_total_size_limit bounds one transaction's buffer
// (txnlimit.go, error 8004).
//
// # GMS at v0.20.0
//
// percdb works around GMS's defects in its own code rather than in GMS:
// see docs/compatibility.md for the list and for where percdb differs
// from MySQL 8. Most of them are analyzer rules that newAnalyzer
// (analyzer.go) puts among GMS's own: planning (package joinrules orders
// joins and caches nested-loop inputs, stats.go gives the
// planner row counts, planrules picks the index whose equalities pin the
// longest prefix and reads indexes in ORDER BY order, copr.go pushes
// filters, aggregates, top-N and limits over full scans to the
// coprocessor) and MySQL's answers where
// GMS's differ
// (package compat: correlated NOT EXISTS, collations in hashing, integer
// arithmetic, FLOAT against decimal literals), with compat_exec.go
// building the row iterators of percdb's own plan nodes and applying
// compat's rules to the one-table UPDATE and DELETE. Package
// planrules gives GMS's range builder the predicates it misses (row
// constructors, ORs over an index's columns), for the one-table UPDATE
// and DELETE too (writeaccess.go), and package explain answers EXPLAIN
// in MySQL's format from the plan (describe.go).
//
// # Package map
//
// Package sql is the SQL front and ties the node together; jobs that stand
// on their own live in packages under it, each with a doc.go. They import
// nothing of package sql (which imports them), only what lies below it
// (executor, txn, kv, tso) and each other downward:
//
//   - catalog: the stored definitions (databases, tables, columns,
//     indexes, views, triggers, procedures, foreign keys, observers), the
//     meta key layout under "m", a catalog version as read at a snapshot
//     and the node's cache of the newest, and the AUTO_INCREMENT and row
//     ID allocators. It does not know GMS: what turns a definition into
//     GMS's terms (schemas, constraints, trigger and procedure details)
//     is package sql's.
//   - tablemeta: what a read or write of a table needs, derived once per
//     definition (its GMS schema, the executor's description of it, its
//     indexes' positions and types), the conversions between definitions
//     and GMS's schemas, and the collation keys of strings.
//   - fastpath: the statement shapes OLTP traffic is made of, recognised
//     on the TiDB parser's AST (Shape, ShapeOf, and Candidate, the
//     lexical check before the parser), their plans against a catalog
//     version (Plan, Resolve), the server's cache of decisions and plans
//     by digest (Cache, Entry, generic over this package's plan type,
//     fastpath_plan.go), the seqlock that lets autocommit reads trust the
//     cached catalog (SchemaGuard) and a range SELECT's aggregates on the
//     SQL node (LocalAggregates). Running a plan on package executor's
//     operators in the session's transaction is still here
//     (fastpath_*.go); it is to move there once it sees a session through
//     a small interface that package sql implements (the session's
//     variables, its transaction, the table editors), so that the session
//     itself stays here.
//   - compat: the workarounds of GMS's defects that need nothing of
//     package sql: analyzer rules that make GMS's answers MySQL's, the
//     expressions and plan nodes they put in, functions that take the
//     place of GMS's (Function), and rewrites of a parsed statement
//     (RewriteParsed); its doc.go lists them by family.
//   - storedproc: the interpreter of stored procedure bodies (handlers,
//     conditions, cursors, diagnostics, SIGNAL and RESIGNAL) over
//     vitess's syntax tree, statements run through GMS's engine.
//   - changefeed: CHANGEFEED FOR's syntax and an open feed, which turns
//     the changes committed to a table between two timestamps into the
//     feed's rows.
//   - observeraction: observers' built-in actions (ADMIN WATCH ... DO):
//     their text (statements and NEW.column references) and the node's
//     runner of them, kept in step with the catalog's watches; what one
//     run does in the SQL layer is observeractions.go's (Host).
//   - plancache: the plan cache of prepared statements that run through
//     GMS: which analysed plans are templates new values can be put into,
//     and putting them in (the session's use of it, counting and running
//     a plan through GMS's handler, is plancache_exec.go and boundexec.go;
//     an autocommit plan that reads nothing from the store, SELECT 1 or
//     DO 1, runs without a snapshot under the node's cached catalog,
//     storeless.go).
//   - foreignkey: foreign keys in GMS's terms: the conversions between
//     stored definitions and GMS's, the analyzer rules that give MySQL's
//     errors for a key that cannot be made, enforce keys in a
//     multi-table UPDATE and refuse a write through a key a temporary
//     table shadows, and MySQL's errors for GMS's; it sees a table's
//     current definition and the session's temporary tables through
//     two small interfaces (Table, Session), while Table's
//     implementation of GMS's sql.ForeignKeyTable stays here (fk.go).
//   - slowlog: MySQL's slow query log: an entry's layout, the file it is
//     appended to (which follows slow_query_log_file and a rotation) and
//     the variables that turn it on; what an entry holds is gathered by
//     observe.go.
//   - perfschema: the performance_schema database, served from memory
//     with the statement statistics by digest (package stmtsummary) that
//     observe.go records.
//   - memtable: what the tables served from memory share (their columns,
//     MySQL's VARCHAR of information_schema, their one partition).
//   - ddljob: what a DDL leaves behind it: the online schema change jobs
//     ADMIN SHOW DDL JOBS lists and ADMIN CANCEL DDL JOBS stops, and the
//     delete ranges (the data a DDL made unreachable), recorded in the
//     DDL's transaction, stamped by the node's Deleter and destroyed by
//     the garbage collector through GCRanges. The schema steps, the
//     index backfill and the fences of a rewrite stay here (ddl.go):
//     they are methods of the provider and the transaction.
//   - internal/lexical: the byte-level tests of a statement's text made
//     before, or instead of, parsing it (word and space bytes, leading
//     space and comments, a leading word) and a statement's kind by its
//     first word (Kind, Classify: the metrics' type label).
//   - nodemetrics: the node's Prometheus metrics in a registry of its own:
//     statements by kind and result, their durations, connections, slow
//     queries, KV requests by command (KV, with the key-space heatmap),
//     the oracle client's batching, and the node's counters, which stay
//     listed here (counters.go, for SHOW STATUS too) and are read at
//     scrape time through nodemetrics.Counters.
//   - planrules: analyzer rules that give GMS's range builder and index
//     choice what they miss; explain: EXPLAIN in MySQL's format;
//     schemalease: F1's at-most-two-versions rule of online schema change;
//     stmtsummary: statement statistics by digest; keyviz: the key-space
//     heatmap; console, autocerts: the status port's web console and the
//     TLS certificate; sqltest: servers inside tests. (The status port
//     itself is internal/statusserver, which pd and the KV nodes serve too.)
//   - loaddata: LOAD DATA's file read as MySQL does, the rows of GMS's
//     LoadData node that GMS's INSERT writes, and the local_infile
//     variable; the row-iterator builder builds it (loaddata_exec.go).
//   - split: TiDB's region statements (SPLIT TABLE, SHOW TABLE ...
//     REGIONS) and region boundaries written as TiDB writes them; the
//     provider is its Node (split_exec.go).
//   - tablelock: the node's table locks (LOCK TABLES, FLUSH TABLES WITH
//     READ LOCK): who holds what and who waits; which tables a
//     statement uses, and the statements, are tablelocks.go's.
//   - joinrules: analyzer rules over joins: a greedy join order for
//     joins of three or more tables before GMS's planner, and caching
//     the right inputs of nested loops that do not depend on the outer
//     row; newAnalyzer puts them among GMS's rules (analyzerrules.go).
//   - privileges: roles (CURRENT_ROLE(), SET ROLE, SET DEFAULT ROLE,
//     GRANT and REVOKE naming CURRENT_USER()) beside GMS's accounts;
//     the handler runs them in a session (privileges_exec.go). The
//     grant tables' reload, SHOW CREATE USER and account locking are
//     still here (grantreload.go, showcreateuser.go, accountlock.go).
//   - safepoint: service safe points (m:gc:svc:), which hold the node's
//     GC back for a change feed's position until they expire, and
//     information_schema.PERCDB_SERVICE_SAFE_POINTS.
//
// What stays in package sql: Server; the GMS backend (DatabaseProvider,
// Database, Table and its editors and index lookups); sessions and
// transactions; the handler wrappers; DDL and its jobs; the
// workarounds of GMS's defects that need the session, the provider or
// the handler (compat_*.go: the row-iterator builder, views' databases,
// the handler's fixes of results); the analyzer rules that plan better
// (copr.go, stats.go); the system tables
// (information_schema, processlist); what a job
// moved into a package needs of the node, each in a file named after the
// package (plancache_exec.go, changefeed_exec.go, observeractions.go);
// and the console's data source (console*.go), which is
// console.Source's implementation over the Server's state. Natural seams
// for later packages: the fast path's execution (fastpath_*.go, behind
// an interface of the session's), the schema steps (ddl.go, behind an
// interface of the provider's and the transaction's), the rest of the
// operations group (processlist.go and counters.go: methods of Session
// and DatabaseProvider) and the observers' watches (observers.go, methods of Server, DatabaseProvider
// and the handler).
package sql
