// Package difftest is a randomized differential tester: it runs random
// schemas, data, queries and data-changing statements on percdb (in
// process) and on a MariaDB server of its own (bench.StartMariaDB, on a
// loopback port with a temporary data directory) and reports every
// difference in results, errors, affected-row counts and table contents.
//
// A seed fixes everything one run does: the schema (INT, BIGINT, DECIMAL,
// DOUBLE, VARCHAR under a binary and a case-insensitive collation, DATE,
// DATETIME, nullable or not; single and composite primary keys;
// secondary, composite and unique indexes; with -difftest.types also
// TINYINT UNSIGNED, YEAR, CHAR, TEXT and TIME), the rows (drawn from small
// domains, so duplicates, NULLs and join matches are common) and the
// statements (gen.go): queries with joins (inner, left, self, on
// composite keys), subqueries, GROUP BY, DISTINCT, ORDER BY ... LIMIT,
// UNION, derived tables and CTEs; data changes by UPDATE, DELETE,
// REPLACE, INSERT ... ON DUPLICATE KEY UPDATE and the multi-table UPDATE
// and DELETE, whose affected-row counts and resulting tables are
// compared. Each query is sent as text and, with its literals
// as parameters, as a prepared statement.
//
// Each seed also runs wide queries (widegen.go, -difftest.wide per
// seed), drawn from a stream of their own so that the narrow ones above
// stay what they were: scalar subqueries in the select list and in
// HAVING, joins of four tables, INTERSECT and EXCEPT [ALL], window
// functions (ranking, LEAD/LAG, SUM/AVG/COUNT over partitions and
// frames), and string, temporal and DECIMAL functions in the select
// list and in WHERE.
//
// With -difftest.apps N each seed also runs N statements of the
// application shapes (appgen.go), from a stream of their own: recursive
// CTEs, GROUP BY ... WITH ROLLUP and by expressions, aggregates of
// expressions, GROUP_CONCAT, LIMIT in derived tables, scalar and IN
// subqueries, ANY/SOME/ALL, ORDER BY a column not selected, a CTE used
// twice; and data changes by INSERT ... SELECT of another table, UPDATE
// and DELETE with ORDER BY ... LIMIT, and UPDATE and DELETE of both
// tables of a join.
//
// With -difftest.rollup N each seed also runs N queries of the rollup
// shapes (rollupgen.go), from a stream of their own: WITH ROLLUP under
// a correlated EXISTS, in a derived table and in a CTE with a column
// list; unions whose first side names two columns alike, ordered by
// position; a union side with its own ORDER BY ... LIMIT; a recursive
// CTE in a union.
//
// A mismatch is minimized (minimize.go): rows, WHERE conditions, joins,
// select items and clauses are dropped while the mismatch persists, and
// the result is printed as a small reproduction (CREATE, INSERT, the
// query, both answers). A data change's mismatch is printed after the
// statements that make the tables as they were before it. Where MariaDB itself departs from MySQL 8, the
// case is listed in deviations.go with the reason and not counted
// against percdb.
//
// TestRepro runs a file of statements on both servers and prints both
// answers, for looking into a mismatch by hand (repro_test.go).
//
// go test runs a fixed set of seeds (TestDifferential, a few minutes);
// the flags -difftest.seeds, -difftest.queries and -difftest.seed run
// more:
//
//	go test ./tests/difftest -run TestDifferential -difftest.seeds 100 -difftest.queries 1000 -v
//
// It skips, saying so, when mariadbd is not installed.
//
// TestFuncProbe (funcprobe_test.go) is not random: it runs the
// expressions of testdata/funcprobe.txt (date and time, string, numeric,
// JSON, cast and control-flow functions, operators, collations) on both
// servers and reports those answered differently, values, errors and
// warnings, by class, against a ceiling (testdata/funcprobe_ceiling.txt).
package difftest
