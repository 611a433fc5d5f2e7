// Package fastpath is percdb's fast path. It runs the statements OLTP
// traffic is made of directly on the executor's operators, in front of
// GMS, which plans every statement from scratch (about 100 us of analysis for a point select, twice the
// cost of the MySQL protocol itself):
//
//   - SELECT cols FROM t WHERE pk = v, pk IN (v, ...), or unique = v,
//     with or without FOR UPDATE;
//   - UPDATE t SET col = v | col = intcol +/- v | col = deccol +/- int,
//     ... WHERE pk = v;
//   - DELETE FROM t WHERE pk = v;
//   - UPDATE and DELETE by a key prefix (prefix.go): WHERE k1 = v1 AND
//     ... over the leading columns of a composite integer primary key,
//     the rows of the range read through the transaction and each
//     written as above, in key order (at most 4,096 rows, else GMS);
//   - INSERT INTO t (cols) VALUES (...), ... (AUTO_INCREMENT included);
//   - BEGIN / START TRANSACTION, COMMIT, ROLLBACK;
//   - range SELECTs (Kind Scan, scanshape.go and scanplan.go): SELECT
//     [DISTINCT] cols | * | COUNT/SUM/AVG/MIN/MAX FROM t WHERE conditions
//     on integer columns, some of which bound a primary key of integer
//     columns (BETWEEN, <, <=, >, >=, =, <=>, IN, and ORs of those on
//     one column, whose ranges are the union of the branches'; a
//     composite key's leading columns pinned by =, <=> or IN and the
//     next one bounded),
//     and conditions on strings, DECIMALs and temporal columns that
//     the SQL node evaluates with GMS's expressions, [ORDER BY cols [DESC]]
//     [LIMIT [m,] n | LIMIT n OFFSET m], run as a coprocessor program over
//     the key's range (filters and aggregates next to the data, behind the
//     kv.Client contract), then sorted with the collated comparer, made
//     distinct and cut in the SQL node (package sql's fastpath_scan.go);
//     where the conditions pin every column of the primary key (IN
//     lists, row IN), the rows are read with one batched point read
//     (copr.RunPoints), not one coprocessor request per point;
//     over a secondary index (scanindex.go) whose leading columns the
//     conditions pin, its rows read by primary key in batches, where
//     every plan GMS may choose answers in the same order (the ranges
//     of an IN list or an OR read ahead with one request per region,
//     and, where the index holds every integer column the statement
//     reads, the rows made from its entries without reading them, as
//     GMS's covering read does: copr.LookupOptions). A row IN list
//     of integer columns, (w, id) IN ((1, 5), (1, 77)), is each column's
//     IN list (the ranges' points) and a filter that keeps the rows of
//     one tuple (rowInConds). MIN and MAX of the key's column after
//     those pinned are each read from one end of the ranges, one row
//     past the NULLs (fastpath_scanends.go), as GMS's path reads them,
//     where the coprocessor aggregated the whole range. An ORDER BY
//     that is the key's own ascending order (columns pinned by = may be
//     left out or named anywhere) sorts nothing, and a LIMIT stops the
//     read; the key's order backwards (each column DESC) under a LIMIT
//     is read backwards, the primary key's next to the data
//     (copr.RunReverse: a reverse coprocessor walk, regions from the
//     last), an index's entries on the SQL node (copr.RunLookupReverse),
//     and stops at the limit too. The WHERE clause may be left out under
//     such an ORDER BY and a LIMIT (the key's first or last rows, ORDER
//     BY k DESC, id DESC LIMIT 10 over an index on k), and of MIN and
//     MAX of a key's first column (SELECT MIN(k), MAX(k) FROM t); FOR
//     UPDATE is taken where every condition bounds the
//     primary key and the rows come in key order, so that the rows read
//     are those returned (and those OFFSET skips), which are locked
//     before the answer is sent, as GMS's scan locks each row it reads:
//     TPC-C Delivery's `... WHERE no_w_id = ? AND no_d_id = ? ORDER BY
//     no_o_id LIMIT 1 FOR UPDATE` reads and locks one row. An ORDER BY
//     that is not the key's order is taken under FOR UPDATE without a
//     LIMIT: every row read is returned, locked in key order (one batch)
//     before the SQL node sorts them (New-Order's `(s_w_id, s_i_id) IN
//     (...) ORDER BY s_i_id FOR UPDATE`).
//
// A range SELECT may also be grouped by one integer column (SELECT g,
// COUNT(*), SUM(x), ... WHERE ... GROUP BY g [ORDER BY g [DESC]]
// [LIMIT]): the coprocessor groups the rows of the primary key's or an
// index's ranges by g with partial aggregates (the covering read of an
// index that holds g and the aggregates' columns reads no row), and the
// SQL node merges the groups of the regions and sorts them by g before
// OFFSET and LIMIT; without an ORDER BY only where g is the read key's
// column after those pinned to one value, so that GMS's path meets its
// groups in that order too. HAVING, WITH ROLLUP, a string g and
// conditions the SQL node evaluates are GMS's (scanshape.go's setGroupBy,
// ScanPlan.Grouped).
//
// pk = v may also be pk1 = v1 AND pk2 = v2 ... over every column of a
// composite primary key of integer columns. The columns written are
// integers, utf8mb4 strings, and DECIMAL, DATETIME and DATE from values
// that convert exactly (integers, and strings spelled as the value is).
//
// A COM_QUERY's text is first reduced to the TiDB parser's normalized
// digest (literals erased): the decision and the plan are cached per
// digest and database (Cache), so a statement the fast path does
// not run costs one lexer pass, and one it runs a parse (for its literal
// values) and a map lookup. Before that, the text protocol's cache of
// shapes (literals.go, and package sql's fastpath_literals.go; TiDB's
// non-prepared plan cache is the model) spares the parse too:
// ScanLiterals cuts the text into a template, its integer and plain
// string literals replaced by parameter markers, and a template seen
// before runs with the shape its text was parsed into once, the literals
// bound to its parameters as a prepared statement's arguments are (a
// literal's type is checked at each execution, as an argument's is: the
// shape and the plan never depend on it); its digest is the template's.
// The session variable percdb_text_plan_cache turns it off. A
// COM_STMT_PREPARE is parsed once, and its
// decision kept per statement ID with the session (fastSession). A plan is
// resolved against the catalog of one schema version and rebuilt when the
// version changes.
//
// Statements run in the session's transaction, as GMS's would: the same
// Transaction (begun by BEGIN or left open with autocommit off), the same
// statement stages, the same table editor (tableEditor, hence the same
// executor operators and codec) for writes. In autocommit mode a read
// takes no timestamp at all: the row is read at the latest committed state
// (txn.Store.PointGet and BatchPointGet), under the cached catalog, which
// SchemaGuard vouches for without a read of the schema version. An
// autocommit write runs in a transaction of its own, committed at the end
// by txn, in one phase with a calculated commit timestamp when its keys
// lie in one region. Oracle calls per statement, fast path against GMS:
//
//	autocommit SELECT by key          0 (GMS: 1, the start_ts)
//	autocommit SELECT ... IN (...)    0, or 1 if the keys span regions or
//	                                  meet a lock
//	autocommit range SELECT by the    0 when one request to one region
//	primary key                       serves it (txn.Store.BeginLatest),
//	                                  else 1
//	autocommit range SELECT through   1 (the index and its rows are two
//	an index                          requests)
//	autocommit UPDATE/DELETE/INSERT   1, the start_ts its reads need (txn
//	                                  fetches it twice when the oracle's
//	                                  answer equals the commit_ts it
//	                                  calculated for its last one-phase
//	                                  commit); none for the commit in one
//	                                  region (two phases: +1)
//	BEGIN, ROLLBACK                   0
//	COMMIT                            0 in one region, else 1
//	statements inside a transaction   its start_ts, once, at first read
//
// Privileges are GMS's to check: the handler offers statements to the
// fast path only for users whose global privileges cover them
// (mayUseFastPath). Fast statements do not appear in GMS's process list.
// The counters are served by SHOW STATUS in session scope (SHOW GLOBAL
// STATUS lists only GMS's process-wide registry, which percdb leaves
// alone).
//
// Result sets and OK packets are GMS's, byte for byte: rows are converted
// by GMS's own RowToSQL, the column definitions are those GMS sent for the
// plan's first execution (which the fast path lets GMS answer to learn
// them), OK packets carry GMS's counts and info text, and the session's
// ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID(), warnings, status flags and
// Questions counter end as GMS leaves them. Whatever the fast path does
// not reproduce exactly goes to GMS (Reason lists why), counted in
// SHOW STATUS as Percdb_fastpath_fallthrough_<reason>.
//
// The fast path is off for a server started with Config.DisableFastPath,
// and for a session that sets @percdb_fastpath = 0 (differential tests
// compare the two).
//
// # Declining to GMS
//
// The fast path never guesses: a statement goes to GMS, whole, when its
// text cannot have a shape (Candidate, a lexical check that errs only on
// the side of letting a statement through to the parser), when the TiDB
// parser's AST has anything a shape does not model (ShapeOf returns nil:
// a join, an alias, a function, GROUP BY of more than one column or an
// expression, HAVING, a hint, FOR SHARE, ...), when
// the catalog says the table is not one the fast path writes (triggers,
// foreign keys, generated columns, CHECK constraints), when a value does
// not convert exactly as GMS would convert it, or when the session's state
// is one the fast path does not reproduce (a pessimistic transaction's
// first locking read, sql_mode, character_set_results, ...). Each reason
// is counted (Reason in package sql).
//
// # Equal to GMS
//
// Every answer must be GMS's, byte for byte. The differential tests
// (fastpath_diff_test.go, and fastpath_scan_diff_test.go for random range
// SELECTs over random rows) run each statement on two servers, one with the
// fast path and one without, and compare the bytes sent back, the session
// functions after each statement and the tables at the end;
// fastpath_oracle_test.go checks the timestamps the fast path does not
// take (point reads stay linearizable against dying two-phase writers)
// and the schema changes it must notice; BenchmarkPointSelect
// (fastpath_bench_test.go) is sysbench's point select in process.
// candidate_test.go checks that Candidate turns down no statement with a
// shape (on sqllogictest's files too), and FuzzFastPathShape that the
// classifier never panics and that every shape it gives is well formed.
//
// # What lives where
//
// This package holds what needs nothing of a server: the shapes (Shape,
// ShapeOf: a statement reduced to what the fast path runs, before name
// resolution, a pure function of the statement's structure so that it
// can be cached per normalized digest), the lexical pre-filter
// (Candidate), plans (Plan, Resolve: a shape resolved against one
// catalog version and the tables' metadata, with its decoders and the
// result metadata it learns from GMS), the server's cache of decisions
// and plans by digest (Cache, Entry: generic over the user's plan type,
// which names its Plan through Planned), the seqlock that lets
// autocommit reads trust the cached catalog (SchemaGuard), and the
// aggregates a range SELECT computes on the SQL node (LocalAggregates).
// Running a plan in the session's transaction and the protocol glue are
// still package sql's (fastpath_plan.go, fastpath_exec.go,
// fastpath_scan*.go, fastpath_handler.go): they use the session, its
// transaction and the table editors directly, and move here once they
// see a session through an interface of the fast path's.
package fastpath
