package sql

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/txn"
)

// RENAME TABLE a.t TO b.t moves a table to another database, as MySQL
// does. GMS v0.20.0 plans a RENAME TABLE in one database, the current
// one, with the names' qualifiers dropped; planDatabaseOf gives it the
// names' database when they share one. When they do not, it records the
// renames with their databases (renameAcross) and gives the planner
// renameAcrossMarker, for which the provider answers a renameAcrossDB:
// GMS's RenameTable takes its renames in order, asking for each old
// table and then renaming it, and renameAcrossDB answers both from the
// recorded rename it is at. Rows are keyed by table ID, so a move
// changes only the definition's database and name.

// codeTriggerInWrongSchema is MySQL's ER_TRG_IN_WRONG_SCHEMA.
const codeTriggerInWrongSchema = 1435

// renamePair is one rename of a RENAME TABLE, with its databases.
type renamePair struct {
	fromDB, from, toDB, to string
}

// renamePairs returns the renames of ddl with the current database
// where a name has none.
func renamePairs(ddl *ast.DDL, current string) []renamePair {
	var pairs []renamePair
	for i := range ddl.FromTables {
		if i >= len(ddl.ToTables) {
			break
		}
		p := renamePair{
			fromDB: ddl.FromTables[i].DbQualifier.String(), from: ddl.FromTables[i].Name.String(),
			toDB: ddl.ToTables[i].DbQualifier.String(), to: ddl.ToTables[i].Name.String(),
		}
		if p.fromDB == "" {
			p.fromDB = current
		}
		if p.toDB == "" {
			p.toDB = current
		}
		pairs = append(pairs, p)
	}
	return pairs
}

// renameAcross is the RENAME TABLE between databases a session's
// command runs: its renames and the one GMS is at. Session.CommandEnd
// drops it; a prepared statement's execution sets it again
// (planDatabaseForExecution).
type renameAcross struct {
	pairs []renamePair
	// next is the rename GMS is at: RenameTable moves to the next.
	next int
}

// renameAcrossDB is the database GMS plans a RENAME TABLE between
// databases in; what it answers comes from the session's renameAcross.
type renameAcrossDB struct {
	provider *DatabaseProvider
	first    string // the database of the first old name, as planned
}

var (
	_ gsql.Database     = renameAcrossDB{}
	_ gsql.TableRenamer = renameAcrossDB{}
)

// renames returns the session's renames.
func (r renameAcrossDB) renames(ctx *gsql.Context) (*renameAcross, error) {
	s, err := sessionOf(ctx)
	if err != nil {
		return nil, err
	}
	if s.renameAcross == nil || len(s.renameAcross.pairs) == 0 {
		return nil, gsql.ErrUnsupportedFeature.New("RENAME TABLE from one database to another here")
	}
	return s.renameAcross, nil
}

// Name implements sql.Nameable: the database of the first old name.
func (r renameAcrossDB) Name() string { return r.first }

// fromDatabase is the database of the old name of the rename GMS is at.
func (r renameAcrossDB) fromDatabase(ctx *gsql.Context) (gsql.Database, error) {
	ra, err := r.renames(ctx)
	if err != nil {
		return nil, err
	}
	return r.provider.Database(ctx, ra.pairs[min(ra.next, len(ra.pairs)-1)].fromDB)
}

// GetTableInsensitive implements sql.Database, in the database of the
// current rename's old name.
func (r renameAcrossDB) GetTableInsensitive(ctx *gsql.Context, name string) (gsql.Table, bool, error) {
	db, err := r.fromDatabase(ctx)
	if err != nil {
		return nil, false, err
	}
	return db.GetTableInsensitive(ctx, name)
}

// GetTableNames implements sql.Database.
func (r renameAcrossDB) GetTableNames(ctx *gsql.Context) ([]string, error) {
	db, err := r.fromDatabase(ctx)
	if err != nil {
		return nil, err
	}
	return db.GetTableNames(ctx)
}

// RenameTable implements sql.TableRenamer: the current rename, within
// its database or to another.
func (r renameAcrossDB) RenameTable(ctx *gsql.Context, oldName, newName string) error {
	ra, err := r.renames(ctx)
	if err != nil {
		return err
	}
	if ra.next >= len(ra.pairs) {
		return fmt.Errorf("rename table %q: no rename left of the statement", oldName)
	}
	p := ra.pairs[ra.next]
	ra.next++
	if !strings.EqualFold(p.from, oldName) || !strings.EqualFold(p.to, newName) {
		return fmt.Errorf("rename table %q to %q: the statement's rename is %s.%s to %s.%s", oldName, newName, p.fromDB, p.from, p.toDB, p.to)
	}
	from, err := r.database(ctx, p.fromDB)
	if err != nil {
		return err
	}
	if strings.EqualFold(p.fromDB, p.toDB) {
		return from.RenameTable(ctx, p.from, p.to)
	}
	to, err := r.database(ctx, p.toDB)
	if err != nil {
		return err
	}
	if err := checkMovePrivileges(ctx, r.provider.accounts, p); err != nil {
		return err
	}
	return from.moveTable(ctx, p.from, to, p.to)
}

// database returns percdb's database name.
func (r renameAcrossDB) database(ctx *gsql.Context, name string) (*Database, error) {
	db, err := r.provider.Database(ctx, name)
	if err != nil {
		return nil, err
	}
	d, ok := db.(*Database)
	if !ok {
		return nil, gsql.ErrUnsupportedFeature.New("RENAME TABLE into or out of database " + name)
	}
	return d, nil
}

// checkMovePrivileges checks, as MySQL does, ALTER and DROP on the old
// table and CREATE and INSERT on the new one. GMS checked the statement's
// names in the planning database only.
func checkMovePrivileges(ctx *gsql.Context, accounts *mysql_db.MySQLDb, p renamePair) error {
	if accounts == nil || !accounts.Enabled() {
		return nil
	}
	ps := accounts.UserActivePrivilegeSet(ctx)
	checks := []struct {
		db, table string
		priv      gsql.PrivilegeType
	}{
		{p.fromDB, p.from, gsql.PrivilegeType_Alter},
		{p.fromDB, p.from, gsql.PrivilegeType_Drop},
		{p.toDB, p.to, gsql.PrivilegeType_Create},
		{p.toDB, p.to, gsql.PrivilegeType_Insert},
	}
	for _, c := range checks {
		dbs := ps.Database(c.db)
		if ps.Has(c.priv) || dbs.Has(c.priv) || dbs.Table(c.table).Has(c.priv) {
			continue
		}
		client := ctx.Session.Client()
		return mysql.NewSQLError(codeTableAccess, "42000", "%s command denied to user '%s'@'%s' for table '%s'",
			strings.ToUpper(c.priv.String()), client.User, client.Address, c.table)
	}
	return nil
}

// moveTable renames table oldName of d to newName of database to. A
// table with triggers stays (1435, as MySQL); so does one with foreign
// keys, declared or referenced, and a temporary table (1235).
func (d *Database) moveTable(ctx *gsql.Context, oldName string, to *Database, newName string) error {
	if sessionTempTable(ctx, d.def.Name, oldName) != nil {
		return gsql.ErrUnsupportedFeature.New("RENAME TABLE of a temporary table from one database to another")
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		cur, ok := c.Table(d.def.ID, oldName)
		if !ok {
			return gsql.ErrTableNotFound.New(oldName)
		}
		if _, ok := c.Table(to.def.ID, newName); ok {
			return gsql.ErrTableAlreadyExists.New(newName)
		}
		for _, t := range c.SortedTriggers(d.def.ID) {
			if strings.EqualFold(t.Table, cur.Name) {
				return mysql.NewSQLError(codeTriggerInWrongSchema, "HY000", "Trigger in wrong schema")
			}
		}
		if len(cur.ForeignKeys) > 0 || referenced(c, d.def.Name, cur.Name) {
			return gsql.ErrUnsupportedFeature.New("RENAME TABLE from one database to another of a table with foreign keys")
		}
		def, err := renamedDef(ctx, cur)
		if err != nil {
			return err
		}
		if err := k.Delete(catalog.TableKey(d.def.ID, cur.Name)); err != nil {
			return fmt.Errorf("rename table %q: %w", oldName, err)
		}
		delete(c.Tables[d.def.ID], strings.ToLower(cur.Name))
		def.DBID, def.Name = to.def.ID, newName
		return putTableDef(c, k, def)
	})
}

// renamedDef returns a copy of table definition cur to rename. The fence
// this statement raised before the rename (fenceRenameTables) comes down
// with it; another statement's rewrite of the table must end first.
func renamedDef(ctx *gsql.Context, cur *catalog.TableDef) (*catalog.TableDef, error) {
	def := cur.Clone()
	if cur.Fence == "" {
		return def, nil
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	if !tx.ownsFence(cur.ID) {
		return nil, errSchemaChangeInProgress(cur.Name, cur.Fence)
	}
	def.Fence = ""
	return def, nil
}

// referenced reports whether a foreign key of any table references table
// of database db. It walks the catalog, which a DDL is changing
// (Catalog.Referencing keeps an index).
func referenced(c *catalog.Catalog, db, table string) bool {
	for _, d := range c.SortedDatabases() {
		for _, t := range c.SortedTables(d.ID) {
			for _, fk := range t.ForeignKeys {
				if strings.EqualFold(fk.ParentDB, db) && strings.EqualFold(fk.ParentTable, table) {
					return true
				}
			}
		}
	}
	return false
}
