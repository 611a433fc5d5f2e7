// Package catalog holds percdb's schema as it is stored: the definitions
// of databases, tables (columns, primary key, indexes and their online
// states, CHECK constraints, foreign keys, observers' watches, a rewrite's
// fence), views, triggers and stored procedures, each a JSON value under
// the meta prefix "m" of the user key space (table data lives under "t",
// see executor/tablecodec).
//
// It owns:
//
//   - the meta key layout, documented once at the top of catalog.go
//     (m:version, m:nextid, m:c:<kind>:..., m:a:...), with the functions
//     that build those keys (DatabaseKey, TableKey, ...) and the counters'
//     encoding (EncodeUint64, DecodeUint64);
//   - Catalog, every definition at one schema version, decoded from one
//     scan of m:c: (Catalog.DecodeEntry) and never changed once
//     published: a DDL changes a Clone in its own transaction, writes the
//     definitions it replaced with PutJSON and bumps m:version, so that
//     two DDLs conflict and every reader sees a change whole;
//   - Cache, the node's newest Catalog, which a transaction reuses when
//     the version key at its snapshot names it (one read instead of a
//     scan);
//   - NextID, the database, table and trigger IDs handed out in a DDL's
//     transaction;
//   - Allocators, the AUTO_INCREMENT and hidden row ID allocators, which
//     reserve batches of IDs in short transactions of their own (m:a:).
//
// It imports txn and executor (for an observer's watch, executor.Watch),
// never GMS or package sql: turning a definition into GMS's terms (a
// schema, a foreign key constraint, a trigger's or a procedure's details)
// is package tablemeta's, package foreignkey's and package sql's
// (trigger.go, routines.go), and the DDL statements that change definitions are
// package sql's (ddl.go, alter.go). docs/architecture.md
// lists every key prefix of the store.
package catalog
