// Package memtable is what the node's tables served from memory share:
// information_schema's tables of percdb's own, performance_schema's and
// percdb's status tables (package sql's infoschema.go, regionstatus.go;
// packages safepoint and perfschema) describe their columns with Column
// and Schema, in MySQL's types for them (VarChar), and are read as one
// Partition; their databases embed SystemDatabase (no views, triggers,
// stored procedures or events; package perfschema, and the tables of
// mysql percdb serves, package sql's mysqlextra.go).
package memtable
