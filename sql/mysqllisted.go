package sql

import (
	"sort"
	"strings"

	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// information_schema.TABLES and COLUMNS list the tables of mysql, as
// MySQL's do. GMS's list the databases of its catalog's AllDatabases,
// which leaves mysql out (GMS serves it beside the provider's), so
// mariadb-dump --all-databases, which reads a table's columns from
// COLUMNS and its type from SHOW TABLE STATUS (TABLES), dumped no rows
// of mysql's tables ("it has no fields") and warned about each. percdb
// gives those two tables a catalog that adds mysql (mysqlCatalog): GMS's
// grant tables and the ones percdb serves (mysqlExtraTables), to an
// account with any privilege on mysql, as SHOW DATABASES shows it.

// mysqlCatalog is a catalog whose AllDatabases includes mysql.
type mysqlCatalog struct {
	gsql.Catalog
}

// AllDatabases implements sql.Catalog.
func (c mysqlCatalog) AllDatabases(ctx *gsql.Context) []gsql.Database {
	dbs := c.Catalog.AllDatabases(ctx)
	db, err := c.Catalog.Database(ctx, "mysql")
	if err != nil {
		return dbs
	}
	grants, ok := db.(*mysql_db.MySQLDb)
	if !ok {
		return dbs
	}
	ps := grants.UserActivePrivilegeSet(ctx)
	if ps.Count() == 0 && !ps.Database("mysql").HasPrivileges() {
		return dbs
	}
	for _, d := range dbs {
		if strings.EqualFold(d.Name(), "mysql") {
			return dbs
		}
	}
	i := sort.Search(len(dbs), func(i int) bool { return dbs[i].Name() > "mysql" })
	out := make([]gsql.Database, 0, len(dbs)+1)
	out = append(out, dbs[:i]...)
	out = append(out, mysqlListing{grants})
	return append(out, dbs[i:]...)
}

// mysqlListing is mysql as information_schema lists it: GMS's grant
// tables and mysqlExtraTables.
type mysqlListing struct {
	*mysql_db.MySQLDb
}

// GetTableInsensitive implements sql.Database.
func (d mysqlListing) GetTableInsensitive(ctx *gsql.Context, name string) (gsql.Table, bool, error) {
	if t, ok, err := d.MySQLDb.GetTableInsensitive(ctx, name); ok || err != nil {
		if err != nil {
			return nil, false, err
		}
		return sourcedTable{t}, true, nil
	}
	t, ok := mysqlExtraTables[strings.ToLower(name)]
	if !ok {
		return nil, false, nil
	}
	return t, true, nil
}

// GetTableNames implements sql.Database.
func (d mysqlListing) GetTableNames(ctx *gsql.Context) ([]string, error) {
	names, err := d.MySQLDb.GetTableNames(ctx)
	if err != nil {
		return nil, err
	}
	for n := range mysqlExtraTables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// sourcedTable is a grant table of GMS whose columns all name it as
// their table. COLUMNS finds a table's columns by that name, and GMS's
// procs_priv names tables_priv for its Timestamp column: COLUMNS listed
// one column of tables_priv and seven of procs_priv, and mariadb-dump
// wrote rows of tables_priv with the timestamp alone.
type sourcedTable struct {
	gsql.Table
}

// Schema implements sql.Table. A default that is a TIMESTAMP literal
// becomes its text: GMS wrote tables_priv's and procs_priv's as
// DEFAULT 1970-01-01 00:00:01 +0000 UTC in SHOW CREATE TABLE, which no
// parser reads back (a dump of mysql failed to load, 1064).
func (t sourcedTable) Schema() gsql.Schema {
	s := t.Table.Schema().Copy()
	for _, c := range s {
		c.Source = t.Table.Name()
		c.DatabaseSource = "mysql"
		if c.Default == nil || !c.Default.IsLiteral() {
			continue
		}
		lit, ok := c.Default.Expr.(*expression.Literal)
		if !ok {
			continue
		}
		if tm, ok := lit.Value().(time.Time); ok {
			text := tm.UTC().Format("2006-01-02 15:04:05")
			if d, err := gsql.NewColumnDefaultValue(expression.NewLiteral(text, types.LongText), c.Type, true, false, c.Nullable); err == nil {
				c.Default = d
			}
		}
	}
	return s
}

// mysqlListedTable is an information_schema table given mysqlCatalog.
type mysqlListedTable struct {
	gsql.Table
}

var _ gsql.CatalogTable = mysqlListedTable{}

// AssignCatalog implements sql.CatalogTable.
func (t mysqlListedTable) AssignCatalog(cat gsql.Catalog) gsql.Table {
	if c, ok := t.Table.(gsql.CatalogTable); ok {
		return mysqlListedTable{c.AssignCatalog(mysqlCatalog{cat})}
	}
	return t
}
