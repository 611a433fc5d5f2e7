// Package sqllogic runs sqllogictest files (SQLite's format, as regenerated
// for MySQL 8) against a MySQL-protocol server, as the engine "mysql".
//
// # Format
//
// A .test file is a list of records separated by blank lines:
//
//	statement ok|error        SQL follows; "error" passes on any error
//	query TYPES [SORT [LABEL]] SQL, "----", then one value per line or
//	                          "N values hashing to MD5"
//	hash-threshold N          results of more than N values are hashed
//	skipif E / onlyif E       guard the next record; every guard must allow
//	halt                      stop the file
//
// TYPES has one letter per column: I (integer, printed %d), R (real, printed
// %.3f) or T (text; the empty string is "(empty)"); NULL is "NULL". SORT is
// nosort (the default), rowsort (rows sorted column by column as byte
// strings) or valuesort (every value sorted on its own). The hash is the MD5
// of the sorted values, each followed by "\n". Queries with the same LABEL in
// one file must give the same results. Lines starting with '#' are comments;
// a directive line may end in a "# comment"; SQL and result lines are taken
// verbatim.
//
// # Running
//
// Run executes each file on a fresh database handed out by a Target, several
// files at once, each file's records in order on one Session (one pinned
// connection, so that SET and transactions carry from record to record). A
// record passes, fails, is skipped (its guards exclude the engine), or is
// not run (the time budget ran out first, or its file's database could not
// be set up). Records after a halt that runs are not counted: they do not
// run on the engine. A record that exceeds the record timeout fails alone:
// the session drops its connection (asking the server to kill the query)
// and reconnects to the same database for the next record.
//
// Column types: under StrictTypes (the default) a column's declared type
// must match its letter (integer types I; DECIMAL, FLOAT, DOUBLE R; the rest
// T), except that an integer column satisfies R and a NULL-typed column
// satisfies anything; values are then formatted by the letter. LooseTypes
// formats by the letter only, as SQLite's reference runner does.
//
// # Why not github.com/dolthub/sqllogictest/go
//
// That runner keeps the current file and record in package variables and
// prints every result to stdout, so files cannot run in parallel and the
// results cannot be collected; it panics on a malformed file; it ignores
// labels; and its parser cuts every line at '#', SQL included. The format is
// small, so this package parses it itself and keeps the parts the corpus
// depends on (hashing, sorting, formatting, the strict type rule under which
// Dolt's figures were measured) compatible with it.
package sqllogic
