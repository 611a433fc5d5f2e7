// Package copr is percdb's coprocessor: programs over a table's rows that
// the store evaluates next to the data (kv.CoprocessorRequest), region by
// region, so that only the rows a query keeps, or partial aggregates,
// reach the SQL node. The model is TiDB's coprocessor (selection,
// projection, partial aggregation, top-N and limit pushed to TiKV), with a
// row-at-a-time evaluator.
//
// # Where it lives
//
// The store (package kv) knows keys and values, not rows; it is given a
// kv.Coprocessor when it is opened, and this package's Evaluator is the
// one percdb wires (cmd/percdb through package sql, and the test setups).
// So kv imports nothing above it, and the row codec stays in one place
// (executor/tablecodec), which this package uses on both sides: the store
// decodes rows with it, and the outputs are tablecodec row values.
//
// # Programs
//
// A Program (program.go) names the table columns it reads by ID (with
// their origin defaults, for rows written before a column was added), a
// filter (a conjunction of expressions over those columns), and what to
// output:
//
//   - rows: the listed columns of each row that passes, at most Limit of
//     them in key order, or the Limit first by OrderBy (top-N);
//   - groups: rows that pass, grouped by the GroupBy expressions, with
//     partial aggregates (COUNT, COUNT(*), MIN, MAX, exact SUM of
//     integers) per group and the
//     Keep columns of the group's first row (the SQL layer evaluates its
//     own expressions over them, so output values are exactly its own);
//   - a distinct set (DistinctInts): the distinct non-NULL values of one
//     integer expression, for COUNT(DISTINCT col), sent as a sorted,
//     delta-encoded set of integers rather than as one group row each
//     (appended as rows come and sorted when a page fills, merged as
//     sorted runs: no hashing);
//   - a sample (Sample, sample.go): what ANALYZE TABLE collects of every
//     row, in bounded memory: counts, NULLs, distinct-value sketches per
//     column and index prefix, and a bottom-k sample of rows, which the
//     SQL layer merges region by region (package sql/statistics).
//
// Expressions are a small closed set whose meaning is MySQL's as
// go-mysql-server v0.20.0 evaluates it: integer columns and constants,
// comparisons (signed with signed as BIGINT, unsigned with unsigned as
// BIGINT UNSIGNED, mixed as DOUBLE, as GMS compares them), AND, OR, NOT
// with three-valued logic, IS [NOT] NULL, IN over a list (NULL when
// nothing matched and the list holds a NULL) and integer MOD by a
// constant.
// The SQL layer (sql/copr.go) pushes an operator only when every
// expression in it is in the set; otherwise the plan is unchanged.
//
// A row is read lazily (eval.go): the evaluation takes the encoded value
// of each column it reads (tablecodec.RowColumnSpans, which stops at the
// last of them) and decodes a column only when an expression, the sort
// or the output first needs it; comparisons, sums, counts, group keys
// and distinct sets read integers straight from the encoded values
// (tablecodec.ColumnInt) without boxing them into interface values. So
// a row that the filter rejects, or that a top-N's first key rules out,
// costs the decoding of those columns alone, and no allocation.
//
// A program that outputs rows as they come copies the encoded values of
// its output columns into the output rows when they need no conversion
// (verbatim.go), decoding only what its filter reads. A program that
// reads no column (COUNT(*)) decodes nothing and is fed keys alone
// (kv.KeyOnlyProgram): the store reads no value, not even one kept in
// its data space, so it may count a table's rows or an index's entries.
// Partial aggregates are kept unboxed (eval.go's slot), so adding a row
// to a count or an integer sum allocates nothing.
//
// A program travels in a binary form of its own (wire.go, whose comment
// has the layout; Program.Encode and Decode): JSON cost about 5% of the
// server's CPU in sysbench's range reads. An output is a sequence of rows, each a uvarint
// length and a tablecodec row value whose column IDs are the output
// positions; a distinct set's layout is in result.go.
//
// # Evaluation
//
// Compile checks a program and returns an evaluation that the store feeds
// with the visible pairs of a range (kv.CoprocessorProgram). Run
// (run.go) sends a program over a table range through the transaction
// (txn.Txn.Coprocessor); when the transaction has buffered writes in the
// range, which the store cannot see, it evaluates the same program in
// process over the transaction's merged iterator instead. Merger
// (result.go) merges the partial aggregates of the regions into final
// ones. Split and RunParallel (parallel.go) cut a range into sub-ranges
// evaluated by goroutines of their own, read back in key order.
// RunLookup (lookup.go) evaluates a program over the rows an index range
// points to (RunLookupRanges over a list of them, its batches of rows
// spanning the ranges, the ranges read forwards to their ends read
// ahead with one request per region; RunLookupWith's Convert makes the
// rows from the entries of an index that holds every column the program
// reads, without reading them), and RunPoints (points.go) over a set of row keys (an IN list
// over a whole primary key), both read with batched point reads and
// evaluated in process. RunRanges (ranges.go) is Run over a list of
// ranges, one program over all of them, the ranges of a region sent in
// one request (txn.Txn.CoprocessorRanges). RunReverse (reverse.go) is
// RunRanges in descending key order, next to the data as well
// (txn.Txn.CoprocessorReverse, regions from the last), a Limit counted
// over the whole walk.
package copr
