// Package stmtsummary keeps statement statistics by digest, as MySQL's
// performance_schema.events_statements_summary_by_digest does: for each
// (default database, statement digest) the statements that were run,
// their latency (sum, minimum, maximum and a latency histogram for
// percentiles), the rows they sent, examined and affected, their errors,
// when the digest was first and last seen, and the text of its slowest
// statement.
//
// The memory is bounded: a Summary holds at most its size in digests.
// Once full, statements of digests it does not hold are counted in one
// overflow row, which MySQL shows with a NULL SCHEMA_NAME, DIGEST and
// DIGEST_TEXT. Reset empties it (TRUNCATE TABLE on the table).
//
// Latency percentiles come from a histogram of fixed logarithmic buckets,
// four to a doubling (each bucket's upper bound is 2^(1/4), about 19%,
// above the one before it), from 1 µs to about 70 minutes: a percentile
// is the upper bound of the bucket it falls in, as MySQL's QUANTILE_95
// is. MySQL's histogram is finer (450 buckets, about 4.7% apart); the
// coarser one keeps a digest under a kilobyte.
//
// The package knows nothing of SQL: the caller normalizes statements and
// computes digests (the TiDB parser's NormalizeDigest) and tells it what
// each statement did.
package stmtsummary
