package compat

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS's planner refuses FLUSH LOCAL and FLUSH NO_WRITE_TO_BINLOG (1105
// "LOCAL not supported") and FLUSH LOGS, ERROR/GENERAL/SLOW/RELAY LOGS,
// HOSTS, OPTIMIZER_COSTS and USER_RESOURCES ("logs not supported"). The
// tools send them: mariadb-dump --lock-all-tables and --master-data begin
// with FLUSH /*!40101 LOCAL */ TABLES, mariadb-admin flush-logs and
// flush-hosts send FLUSH LOGS and FLUSH HOSTS, and logrotate's usual
// postrotate step is mariadb-admin flush-logs. For percdb each is what it
// is in MySQL with nothing to act on: LOCAL only keeps the statement out
// of the binary log, which percdb has not; percdb keeps no host cache,
// optimizer cost tables or per-user resource counters; its only log file,
// the slow query log, is opened again when it was moved or removed
// (sql/slowlog), as FLUSH SLOW LOGS would. flushNoOps writes such a
// FLUSH as FLUSH BINARY LOGS, which GMS runs as a statement that does
// nothing. FLUSH STATUS (which resets status counters) is left to GMS.

// flushNoOps rewrites the FLUSH statements described above.
func flushNoOps(stmt ast.Statement) ast.Statement {
	f, ok := stmt.(*ast.Flush)
	if !ok || f.Option == nil {
		return stmt
	}
	switch strings.ToLower(f.Type) {
	case "local", "no_write_to_binlog":
		out := *f
		out.Type = ""
		f = &out
	}
	switch strings.ToLower(f.Option.Name) {
	case "logs", "error logs", "general logs", "slow logs", "relay logs", "hosts", "optimizer_costs", "user_resources":
		out := *f
		out.Option = &ast.FlushOption{Name: "binary logs"}
		f = &out
	}
	return f
}

// In MySQL, CREATE SCHEMA is CREATE DATABASE. GMS's planner makes it a
// schema inside the current database (for backends with schemas, as
// Doltgres), which fails with 1046 without a current database and
// otherwise does not create the database MySQL does: mariadb-slap, among
// others, begins with CREATE SCHEMA `mysqlslap`. schemaAsDatabase writes
// CREATE SCHEMA as CREATE DATABASE.

// schemaAsDatabase rewrites CREATE SCHEMA as described above.
func schemaAsDatabase(stmt ast.Statement) ast.Statement {
	d, ok := stmt.(*ast.DBDDL)
	if !ok || !strings.EqualFold(d.SchemaOrDatabase, "schema") {
		return stmt
	}
	out := *d
	out.SchemaOrDatabase = "database"
	return &out
}
