// Package statistics holds the table statistics the planner uses: what
// ANALYZE TABLE collects, how it is stored in the store so that it
// survives a restart and every SQL node sees it, and how the planner reads
// it. The model is TiDB's (stats_meta, stats_histograms, stats_buckets,
// stats_top_n; ANALYZE with sampling and an FM sketch; a stats cache with
// a version) with MySQL's outputs (SHOW INDEX Cardinality,
// information_schema.STATISTICS.CARDINALITY and TABLES.TABLE_ROWS).
//
// # What is collected
//
// Collect runs a sampling program (executor/copr, sample.go) over every
// row of a table through the coprocessor: the work is done where the
// regions are, one sub-range per core at most, and each region answers
// with a bounded collection (counts, distinct-value sketches, a bottom-k
// sample of 10,000 rows), merged here. Memory is bounded whatever the
// table's size. Build turns the merged collection into a Table:
//
//   - the row count (exact: every row is read);
//   - per column: NDV (exact below 10,000 distinct values, within a few
//     per cent above), NULL count, average encoded size, and a histogram
//     of the non-NULL values: up to MaxTopN most frequent values (those
//     at least twice as frequent as a uniform column's) with their
//     counts, and up to MaxBuckets equal-depth buckets of the others
//     (lower and upper bound, rows, rows equal to the upper bound,
//     distinct values), scaled from the sample to the table;
//   - per index (the primary key and each public secondary index): the
//     NDV of each prefix of its columns (NULLs counted as one value),
//     and a histogram of its whole tuples.
//
// Values are tablecodec key encodings (a tuple is the concatenation of
// its values' encodings), so they sort as the values do, strings by their
// bytes: under a case-insensitive collation 'a' and 'A' count as two
// values (an overestimate of NDV, never a wrong answer). A string longer
// than 64 bytes is cut in the sample (its sketch hashes it whole).
//
// # How it is stored
//
// format.go documents the byte layouts: a version entry per table
// (m:s:v:<tableID>) and the statistics (m:s:h:<tableID>), written in one
// transaction whose start timestamp is the version (Save). Two ANALYZEs of
// one table that store at once conflict on the version entry and the
// later retries, so the last one wins whole; an ANALYZE whose table was
// dropped meanwhile stores nothing. A table's ID changes when ALTER TABLE
// rewrites its rows and is never reused, so statistics of an old ID are
// never read again (they stay in the store, a few kilobytes).
//
// # When it is refreshed
//
// By ANALYZE TABLE, and by auto-analyze (package sql, autoanalyze.go):
// Modifications counts the row keys each committed transaction of the
// node changed per table, in memory, and a background worker analyzes the
// table whose changes pass tidb_auto_analyze_ratio of its rows. Every
// node's Cache scans the version entries at most once per DefaultLease
// and reads the statistics of the tables whose version changed.
//
// # How the planner uses it
//
// Package sql's statistics provider (sql/stats.go) answers GMS's
// sql.StatsProvider from the Cache: the row count (plus the rows changed
// since, as this node counted them), and per index a sql.Statistic
// (ToGMS: distinct count, histogram with bounds decoded to the columns'
// types, most common values; Prefix for a prefix of its columns), which
// GMS's index costing and join planner read. sql/planrules's
// PreferPinnedIndex chooses among indexes pinned by equalities by
// estimated rows (rows / NDV of the pinned prefix) when every index has
// statistics, and by its rules otherwise. RangeSelectivity (estimate.go)
// estimates a range read of an index from per-column statistics, which
// package sql gives GMS's join planner and EXPLAIN (sql/rangeest.go,
// sql/joincard.go). Without statistics every path behaves as before they
// existed: statistics change plans, never answers.
package statistics
