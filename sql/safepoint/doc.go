// Package safepoint keeps service safe points: a timestamp that a service
// outside the transactions (a change feed) still reads from, stored under
// m:gc:svc:<id> so that the garbage collector of any node sees it and it
// survives a restart. Set keeps or renews one for a time to live; Source
// gives the entries in force to the GC worker (gcworker's
// ServiceSafePointSource), forgetting the expired ones; Read, TableName,
// Schema and Rows list them for the console and
// information_schema.PERCDB_SERVICE_SAFE_POINTS.
//
// It depends on the transaction layer (txn.Store, txn/gcworker), the
// catalog's JSON records and memtable's columns. Package sql keeps a
// change feed's entry (changefeed_exec.go), gives Source to the node's
// GC (gc.go) and serves the table (infoschema.go).
package safepoint
