// Package executor holds the KV-level operators that turn table rows into
// reads and writes of a Percolator transaction (package txn): the layer
// under the go-mysql-server backend and the fast path that bypasses it.
// The byte formats live in the tablecodec subpackage, and the programs
// the store evaluates next to the data (filters, partial aggregates,
// top-N) in the copr subpackage; this package knows a
// table's shape (Table: columns by ID, how rows are identified, indexes)
// and keeps rows and index entries in step.
//
// # Tables and handles
//
// A Table is described by the SQL layer and validated once. Each row is
// identified by a handle (tablecodec.Handle): the value of an integer
// primary key (HandleInt), the encoded values of a clustered primary key
// (HandleCommon), or a hidden row ID that the caller allocates
// (HandleRowID). A row lives at t{table}_r{handle}; each secondary index
// holds one entry per row at t{table}_i{index}{values}[handle] (see
// tablecodec). Indexed strings are keyed by their collation sort key
// (IndexColumn.CollationKey) and, for prefix indexes, by their prefix, so
// rows are always read back from the row value, never from an index key.
//
// # Reads
//
//   - GetRow, BatchGetRows: rows by handle, one Get or one BatchGet.
//   - UniqueLookup: unique index entry -> handle -> row, two point reads.
//   - ScanIndex: the entries of an index in a key range, in order or in
//     reverse, with a limit, yielding handles.
//   - IndexLookup: ScanIndex, then the rows of the handles by BatchGet in
//     growing batches, yielded in index order.
//   - ScanTable: rows in a handle range (a full scan or a primary-key
//     range), in order or in reverse.
//
// Ranges are built with Table.IndexRange and Table.HandleRange from bounds
// on a prefix of the key's columns, which become [start, end) key ranges
// through tablecodec's prefix bounds. Point reads take a Reader: a
// *txn.Txn, or a LatestReader for autocommit point reads without a
// timestamp. Scans take a Scanner (a *txn.Txn): one snapshot throughout.
// A RowDecoder decodes row values into full rows or projections, filling
// columns added after a row was written with their origin default.
//
// # Writes
//
// AddRecord, UpdateRecord and RemoveRecord buffer the row and every index
// entry in one transaction, deleting the entries of old values and writing
// those of new ones. A unique key (a primary-key row key; a unique index
// entry without NULLs, whose key carries no handle) is checked twice:
//
//  1. at statement time, by reading it through the transaction, which sees
//     its snapshot and its own earlier writes: a duplicate is a
//     *DuplicateKeyError (MySQL 1062, "Duplicate entry 'v' for key
//     't.idx'") returned before anything is written, carrying the other
//     row's handle for REPLACE and ON DUPLICATE KEY UPDATE;
//  2. at commit, by writing it with txn.Insert: a concurrent transaction
//     that wrote the key fails one of the two commits (a write conflict,
//     which the client retries and then meets case 1, or an
//     already-exists error that DuplicateFromCommit names).
//
// Non-unique entries and entries with NULLs carry the handle in the key
// and never collide. The operators are not safe for concurrent use on one
// transaction, as txn.Txn is not.
package executor
