// Package explain answers EXPLAIN in MySQL's tabular format (id,
// select_type, table, partitions, type, possible_keys, key, key_len, ref,
// rows, filtered, Extra), derived from the plan GMS's analyzer built and
// percdb runs, so that a MySQL user can see which index a statement
// uses. GMS v0.20.0 answers EXPLAIN with one row of NULLs; its plan text
// stays available as EXPLAIN FORMAT=TREE (and EXPLAIN PLAN).
//
// One row per table read, in the order the plan reads them (the outer
// side of a join first), numbered by query block: the statement is block
// 1, each subquery and derived table a block of its own. The access type
// is read off the table's node:
//
//   - ALL: a full scan (a ResolvedTable);
//   - const: a static lookup of one point on every column of a unique
//     key (at most one row);
//   - ref: a static lookup of one point on a prefix of an index, or on
//     all of a non-unique one;
//   - range: any other static lookup (several points, or bounds);
//   - eq_ref / ref: a lookup per row of the outer side of a join (a GMS
//     lookup join), eq_ref when it is strict (a unique key, every column,
//     no NULL matches), with the outer columns as ref;
//   - index: a read of a whole index in its order (the sides of a merge
//     join).
//
// A static lookup whose columns all come from the index's entries (a
// covering read, the table implementing CoveringTable) has "Using index"
// in Extra, as in MySQL. A scan whose filter, aggregation, top-N or limit runs in the
// coprocessor (a node implementing Pushed) is explained as the plan it
// replaced, with "Using coprocessor (what)" in Extra.
//
// key_len is MySQL's byte length of the key prefix used (the columns a
// lookup pins, plus the column it bounds), so a user can tell how much of
// a composite key a lookup uses. rows is exact for lookups of unique
// points (one per point); for a lookup of a pinned index prefix (ref, or
// range over points) the statistics' estimate, rows over the prefix's
// distinct values, per point, once the table was analyzed; otherwise the
// table's row count as the planner's statistics provider knows it, an
// upper bound. filtered is always 100.
package explain
