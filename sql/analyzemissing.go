package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// ANALYZE TABLE (and OPTIMIZE and REPAIR TABLE, which run as it,
// maintenance.go) of a table that does not exist: MySQL and MariaDB
// answer the statement's result set with, for that table, a row
// `db.t | analyze | Error | Table 'db.t' doesn't exist` and a row
// `db.t | analyze | status | Operation failed`, and go on with the
// other tables. GMS v0.20.0's planner fails the whole statement with
// 1146 instead. The parser (planParser) therefore points such a table
// at a database of its own, missingTablesMarker followed by the table's
// database, whose every table is a missingTable; buildAnalyze
// (statsinfo.go) answers a missingTable with the two rows. The mark is
// in the statement itself, so a prepared ANALYZE answers alike at every
// execution. Only tables of an existing percdb database that is neither
// a table nor a view there are marked: a missing database, a view or a
// system table is left to GMS as before.

// missingTablesMarker prefixes the database name given to a missing
// table of ANALYZE TABLE.
const missingTablesMarker = "\x00percdb missing "

// markMissingAnalyzeTables marks the missing tables of stmt, when it is
// an ANALYZE TABLE, as the comment above says.
func markMissingAnalyzeTables(ctx context.Context, stmt ast.Statement) {
	a, ok := stmt.(*ast.Analyze)
	if !ok || a.Action != "" {
		return
	}
	sctx, ok := ctx.(*gsql.Context)
	if !ok {
		return
	}
	s, ok := sctx.Session.(*Session)
	if !ok || s.provider == nil {
		return
	}
	for i, tn := range a.Tables {
		db := tn.DbQualifier.String()
		if db == "" {
			db = sctx.GetCurrentDatabase()
		}
		if db == "" || db[0] == 0 {
			continue
		}
		d, err := s.provider.Database(sctx, db)
		if err != nil {
			continue
		}
		pd, ok := d.(*Database)
		if !ok {
			continue
		}
		name := tn.Name.String()
		if _, found, err := pd.GetTableInsensitive(sctx, name); err != nil || found {
			continue
		}
		if _, isView, err := pd.GetViewDefinition(sctx, name); err != nil || isView {
			continue
		}
		a.Tables[i].DbQualifier = ast.NewTableIdent(missingTablesMarker + pd.Name())
	}
}

// missingTablesDB is the database of missingTablesMarker + db: a table
// in it is db's own if db has it by now (a prepared ANALYZE of a table
// created since it was prepared), else a missingTable.
type missingTablesDB struct {
	db       string
	provider *DatabaseProvider
}

// Name implements sql.Database: the marker, by which GMS finds the
// database again when it resolves the statement's tables anew.
func (d missingTablesDB) Name() string { return missingTablesMarker + d.db }

// AliasedName implements sql.AliasedDatabase: privileges are checked on
// the table's own database.
func (d missingTablesDB) AliasedName() string { return d.db }

// GetTableInsensitive implements sql.Database.
func (d missingTablesDB) GetTableInsensitive(ctx *gsql.Context, name string) (gsql.Table, bool, error) {
	if real, err := d.provider.Database(ctx, d.db); err == nil {
		if t, found, err := real.GetTableInsensitive(ctx, name); err != nil || found {
			return t, found, err
		}
	}
	return missingTable{emptyTable: &emptyTable{name: name}, db: d.db}, true, nil
}

// GetTableNames implements sql.Database: none to list.
func (missingTablesDB) GetTableNames(*gsql.Context) ([]string, error) { return nil, nil }

// GetViewDefinition implements sql.ViewDatabase, which GMS's planner
// asks of a table's database before its tables: no view.
func (missingTablesDB) GetViewDefinition(*gsql.Context, string) (gsql.ViewDefinition, bool, error) {
	return gsql.ViewDefinition{}, false, nil
}

// AllViews implements sql.ViewDatabase: none.
func (missingTablesDB) AllViews(*gsql.Context) ([]gsql.ViewDefinition, error) { return nil, nil }

// CreateView implements sql.ViewDatabase: nothing is created here.
func (d missingTablesDB) CreateView(_ *gsql.Context, name, _, _ string) error {
	return gsql.ErrTableNotFound.New(name)
}

// DropView implements sql.ViewDatabase: there is no view to drop.
func (missingTablesDB) DropView(_ *gsql.Context, name string) error {
	return gsql.ErrViewDoesNotExist.New(name)
}

// missingTable stands for a table of database db that ANALYZE TABLE
// names and that does not exist.
type missingTable struct {
	*emptyTable
	db string
}

// missingTableRows are ANALYZE's rows for t under op.
func missingTableRows(t missingTable, op string) []gsql.Row {
	name := t.db + "." + t.Name()
	return []gsql.Row{
		{name, op, "Error", fmt.Sprintf("Table '%s' doesn't exist", name)},
		{name, op, "status", "Operation failed"},
	}
}

// missingTablesDatabase answers the provider's Database for a name
// missingTablesMarker begins; ok is false for any other name.
func (p *DatabaseProvider) missingTablesDatabase(name string) (gsql.Database, bool) {
	db, ok := strings.CutPrefix(name, missingTablesMarker)
	if !ok {
		return nil, false
	}
	return missingTablesDB{db: db, provider: p}, true
}
