// Package ddljob holds what a DDL leaves behind it on a node: the online
// schema change jobs that ADMIN SHOW DDL JOBS lists and ADMIN CANCEL DDL
// JOBS stops (Jobs, Job), and the delete ranges, the data a DDL made
// unreachable, recorded in the DDL's own transaction and destroyed by the
// garbage collector once no reader can need it (ScheduleRange,
// ScheduleTable, Deleter, GCRanges; deleterange.go says how).
//
// Its contract with package sql, which runs the DDLs (ddl.go: the schema
// steps, the index backfill, the fences of a table rewrite, all methods
// of its provider and transaction): sql registers each online change with
// Jobs.Start and reports its states and end through the Job; it records
// a range in the transaction that makes it unreachable, and kicks the
// node's Deleter once that transaction committed (and at the node's
// start). The Deleter and GCRanges read and write only the records under
// RangesPrefix, in transactions of their own on the node's txn.Store, so
// they work the same when the regions live on other processes.
package ddljob
