// Package planrules holds percdb's analyzer rules that give GMS's planner
// the predicates it can turn into index access, and the index reads and
// orders it misses, where GMS v0.20.0 misses them.
//
// GMS builds index ranges (and lookup joins) only from comparisons of a
// single column with a value: col = v, col IN (...), col < v, col IS
// NULL, and ANDs and ORs of those. A row constructor, (a, b) = (1, 2) or
// (a, b) IN ((1, 2), (3, 4)), is one comparison of two tuples to GMS, so
// a statement that names a composite primary key that way (TPC-C's
// new-order reads and updates stock so) scanned the whole table.
//
// MySQL compares rows column by column: (a, b) = (c, d) is a = c AND
// b = d, and r IN (r1, r2) is r = r1 OR r = r2 (package sql's
// sql/compat/rows.go already writes comparisons of rows that may hold NULL
// so, since GMS gets those wrong). ExpandRowComparisons writes the row
// comparisons of a WHERE clause that hold a column so before GMS chooses
// access paths, where its range builder and lookup-join planner see
// them. The rewritten form is MySQL's definition, so it changes no
// answer (GMS's whole-row comparison failed on some values the pairs
// compare fine: (s, a) = (9223372036854775807, 5) on a VARCHAR(8) s).
// An IN list longer than MaxRowExpansionTuples stays as it is: GMS
// hashes it, and the rewritten form would compare every row with every
// tuple.
//
// Once GMS has chosen access paths, PreferPinnedIndex moves a read to
// the index the WHERE clause pins the most leading columns of (GMS's
// coster, without histograms, prefers an unpinned unique index),
// OrderByIndex drops a sort the index read already gives once pinned
// columns are set aside (indexorder.go), or the read of a join's outer
// table gives (outerorder.go), and MinMaxByIndex answers MIN or MAX from
// the first row of such a read.
//
// The package depends only on GMS; package sql puts the rule among
// GMS's (sql/analyzer.go) and runs it for the one-table UPDATE and
// DELETE, which GMS analyzes with a short rule list of its own
// (sql/writeaccess.go).
package planrules
