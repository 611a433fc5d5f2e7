package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/memtable"
)

// Tables of MySQL's mysql database that GMS's lacks or cannot read, and
// that tools read.
// GMS's catalog answers the name mysql with its own grant tables, a fixed
// list (mysql_db.MySQLDb), so no table can be added there. mariadb-dump
// --all-databases reads mysql.general_log and mysql.slow_log whatever
// SHOW TABLES lists, and --system=users and account tools read
// mysql.default_roles; each failed with 1146. percdb serves them, empty
// and read-only, from a database of its own (mysqlExtraDB) that the
// parser puts in their place (extraMysqlTables): mysql.x, or x while the
// current database is mysql. Empty is what they hold on percdb: it keeps
// no log tables (the slow log is a file) and no default roles (every role
// granted to an account is active in its sessions, package privileges).

// mysqlExtraMarker is the database name the parser gives these tables;
// the provider answers it with mysqlExtraDB (planMarkerDatabase).
const mysqlExtraMarker = "\x00percdb mysql"

// mysqlExtraTables are the tables by lower-case name, MySQL 8's columns.
// Not changed after the package is initialized.
var mysqlExtraTables = func() map[string]*emptyTable {
	// MySQL's tables are utf8mb3.
	str := func(t querypb.Type, n int64) gsql.Type {
		return types.MustCreateString(t, n, gsql.Collation_utf8mb3_general_ci)
	}
	char := func(n int64) gsql.Type { return str(sqltypes.Char, n) }
	text, u64, u32 := str(sqltypes.Text, types.MediumTextBlobMax/3), types.Uint64, types.Uint32
	ts, tm := types.TimestampMaxPrecision, types.Time
	tables := map[string][]memtable.Column{
		"default_roles": {
			{"HOST", char(255), false},
			{"USER", char(32), false},
			{"DEFAULT_ROLE_HOST", char(255), false},
			{"DEFAULT_ROLE_USER", char(32), false},
		},
		"general_log": {
			{"event_time", ts, false},
			{"user_host", text, false},
			{"thread_id", u64, false},
			{"server_id", u32, false},
			{"command_type", str(sqltypes.VarChar, 64), false},
			{"argument", types.MediumBlob, false},
		},
		"slow_log": {
			{"start_time", ts, false},
			{"user_host", text, false},
			{"query_time", tm, false},
			{"lock_time", tm, false},
			{"rows_sent", types.Int32, false},
			{"rows_examined", types.Int32, false},
			{"db", str(sqltypes.VarChar, 512), false},
			{"last_insert_id", types.Int32, false},
			{"insert_id", types.Int32, false},
			{"server_id", u32, false},
			{"sql_text", types.MediumBlob, false},
			{"thread_id", u64, false},
		},
	}
	out := make(map[string]*emptyTable, len(tables))
	for name, cols := range tables {
		s := memtable.Schema(name, cols)
		for _, c := range s {
			c.DatabaseSource = "mysql"
		}
		out[name] = &emptyTable{name: name, schema: s}
	}
	// GMS's help tables answer every read with a row of no columns
	// (1105 "unable to find field with index 0"), which failed
	// mariadb-dump --all-databases; percdb serves them in their place,
	// in GMS's columns, empty as GMS's are.
	gms := mysql_db.CreateEmptyMySQLDb()
	for _, name := range []string{"help_category", "help_keyword", "help_relation", "help_topic"} {
		t, ok, err := gms.GetTableInsensitive(nil, name)
		if err != nil || !ok {
			panic(fmt.Sprintf("GMS's mysql database has no table %s", name))
		}
		out[name] = &emptyTable{name: name, schema: t.Schema()}
	}
	return out
}()

// gmsGrantTables are the tables of GMS's mysql database that are not
// mysqlExtraTables, by lower-case name. Not changed after the package is
// initialized.
var gmsGrantTables = func() map[string]bool {
	names, err := mysql_db.CreateEmptyMySQLDb().GetTableNames(nil)
	if err != nil {
		panic(fmt.Sprintf("GMS's mysql database: %v", err))
	}
	out := map[string]bool{}
	for _, n := range names {
		if mysqlExtraTables[strings.ToLower(n)] == nil {
			out[strings.ToLower(n)] = true
		}
	}
	return out
}()

// extraMysqlTables points the tables stmt (parsed from query) names that
// are mysqlExtraTables (mysql.x, or x when the session's current
// database is mysql) at mysqlExtraMarker. A statement whose text names
// none of them is not walked.
func extraMysqlTables(ctx context.Context, query string, stmt ast.Statement) {
	show := lexical.LeadingWordIs(query, "show")
	if !show && indexFold(query, "general_log") < 0 && indexFold(query, "slow_log") < 0 && indexFold(query, "default_roles") < 0 && indexFold(query, "help_") < 0 {
		return
	}
	currentDB := currentDatabase(ctx)
	redirect := func(tn ast.TableName, grants bool) (ast.TableName, bool) {
		db := tn.DbQualifier.String()
		if db == "" {
			db = currentDB
		}
		name := strings.ToLower(tn.Name.String())
		if !strings.EqualFold(db, "mysql") || (mysqlExtraTables[name] == nil && !(grants && gmsGrantTables[name])) {
			return tn, false
		}
		tn.DbQualifier = ast.NewTableIdent(mysqlExtraMarker)
		return tn, true
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.AliasedTableExpr:
			if tn, ok := n.Expr.(ast.TableName); ok {
				if tn, ok := redirect(tn, false); ok {
					n.Expr = tn
				}
			}
		case *ast.Insert:
			// INSERT INTO mysql.default_roles (defaultRolesTable).
			if tn, ok := redirect(n.Table, false); ok {
				n.Table = tn
			}
		case *ast.Show:
			// SHOW CREATE TABLE and SHOW COLUMNS of GMS's grant
			// tables too, in their columns as sourcedTable fixes them
			// (mysqllisted.go).
			if tn, ok := redirect(n.Table, true); ok {
				n.Table = tn
			}
		}
		return true, nil
	}, stmt)
}

// mysqlExtraDB is the database of mysqlExtraTables. Its name is the
// marker, by which GMS finds it again when it resolves a statement's
// tables anew; privileges are checked as on mysql (AliasedName).
type mysqlExtraDB struct {
	memtable.SystemDatabase
	// grants are GMS's grant tables, which SHOW statements read here.
	grants *mysql_db.MySQLDb
}

// Name implements sql.Database.
func (mysqlExtraDB) Name() string { return mysqlExtraMarker }

// AliasedName implements sql.AliasedDatabase.
func (mysqlExtraDB) AliasedName() string { return "mysql" }

// GetTableInsensitive implements sql.Database.
func (d mysqlExtraDB) GetTableInsensitive(ctx *gsql.Context, name string) (gsql.Table, bool, error) {
	if t, ok := mysqlExtraTables[strings.ToLower(name)]; ok {
		if t.name == "default_roles" {
			return defaultRolesTable{t}, true, nil
		}
		return t, true, nil
	}
	if d.grants != nil && gmsGrantTables[strings.ToLower(name)] {
		t, ok, err := d.grants.GetTableInsensitive(ctx, name)
		if err != nil || !ok {
			return nil, false, err
		}
		return sourcedTable{t}, true, nil
	}
	return nil, false, nil
}

// GetTableNames implements sql.Database.
func (mysqlExtraDB) GetTableNames(*gsql.Context) ([]string, error) {
	names := make([]string, 0, len(mysqlExtraTables))
	for n := range mysqlExtraTables {
		names = append(names, n)
	}
	return names, nil
}

// emptyTable is a read-only table without rows.
type emptyTable struct {
	name   string
	schema gsql.Schema
}

// Name implements sql.Nameable.
func (t *emptyTable) Name() string { return t.name }

// String implements fmt.Stringer.
func (t *emptyTable) String() string { return t.name }

// Schema implements sql.Table.
func (t *emptyTable) Schema() gsql.Schema { return t.schema }

// Collation implements sql.Table.
func (*emptyTable) Collation() gsql.CollationID { return gsql.Collation_utf8mb3_general_ci }

// Partitions implements sql.Table: one partition.
func (*emptyTable) Partitions(*gsql.Context) (gsql.PartitionIter, error) {
	return gsql.PartitionsToPartitionIter(memtable.Partition{}), nil
}

// PartitionRows implements sql.Table: no rows.
func (*emptyTable) PartitionRows(*gsql.Context, gsql.Partition) (gsql.RowIter, error) {
	return gsql.RowsToRowIter(), nil
}

// currentDatabase returns the current database of ctx's session, "" when
// ctx is not a session's.
func currentDatabase(ctx context.Context) string {
	if sctx, ok := ctx.(*gsql.Context); ok && sctx.Session != nil {
		return sctx.GetCurrentDatabase()
	}
	return ""
}

// defaultRolesTable is mysql.default_roles, which takes rows and keeps
// none: percdb has no default roles (every role granted to an account is
// active in its sessions, package privileges), as SET DEFAULT ROLE keeps none. A
// dump of mysql (mariadb-dump --all-databases, mysqldump) writes its
// rows, and GMS answered 1105 (the table did not take INSERT); each
// statement that inserts gets a warning 1235 that says the rows are not
// kept, as SET DEFAULT ROLE's.
type defaultRolesTable struct {
	*emptyTable
}

var (
	_ gsql.InsertableTable  = defaultRolesTable{}
	_ gsql.ReplaceableTable = defaultRolesTable{}
)

// Inserter implements sql.InsertableTable.
func (defaultRolesTable) Inserter(*gsql.Context) gsql.RowInserter { return &defaultRolesEditor{} }

// Replacer implements sql.ReplaceableTable.
func (defaultRolesTable) Replacer(*gsql.Context) gsql.RowReplacer { return &defaultRolesEditor{} }

// defaultRolesEditor counts the rows a statement gives
// mysql.default_roles.
type defaultRolesEditor struct {
	rows int
}

// StatementBegin implements sql.EditOpenerCloser.
func (e *defaultRolesEditor) StatementBegin(*gsql.Context) { e.rows = 0 }

// DiscardChanges implements sql.EditOpenerCloser.
func (*defaultRolesEditor) DiscardChanges(*gsql.Context, error) error { return nil }

// StatementComplete implements sql.EditOpenerCloser.
func (e *defaultRolesEditor) StatementComplete(ctx *gsql.Context) error {
	if e.rows > 0 {
		ctx.Session.Warn(&gsql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
			Message: fmt.Sprintf("mysql.default_roles keeps no rows (%d given): every role granted to an account is active in its sessions", e.rows)})
	}
	return nil
}

// Insert implements sql.RowInserter.
func (e *defaultRolesEditor) Insert(*gsql.Context, gsql.Row) error {
	e.rows++
	return nil
}

// Delete implements sql.RowDeleter.
func (*defaultRolesEditor) Delete(*gsql.Context, gsql.Row) error { return nil }

// Close implements sql.Closer.
func (*defaultRolesEditor) Close(*gsql.Context) error { return nil }
