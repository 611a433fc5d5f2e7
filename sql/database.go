package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// Database is one database of the catalog as GMS sees it. It is a cheap
// handle: every call reads the definitions through the calling
// transaction, so it never serves a stale schema.
type Database struct {
	provider *DatabaseProvider
	def      *catalog.DatabaseDef
}

var (
	_ gsql.Database         = (*Database)(nil)
	_ gsql.TableCreator     = (*Database)(nil)
	_ gsql.TableDropper     = (*Database)(nil)
	_ gsql.TableRenamer     = (*Database)(nil)
	_ gsql.ViewDatabase     = (*Database)(nil)
	_ gsql.CollatedDatabase = (*Database)(nil)
)

// Name implements sql.Nameable.
func (d *Database) Name() string { return d.def.Name }

// catalog returns the catalog of ctx's transaction.
func (d *Database) catalog(ctx *gsql.Context) (*Transaction, *catalog.Catalog, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	cat, err := tx.catalog(ctx)
	if err != nil {
		return nil, nil, toSQLError(err)
	}
	return tx, cat, nil
}

// GetTableInsensitive implements sql.Database. A temporary table of the
// session shadows a table of the same name.
func (d *Database) GetTableInsensitive(ctx *gsql.Context, name string) (gsql.Table, bool, error) {
	if tt := sessionTempTable(ctx, d.def.Name, name); tt != nil {
		return &Table{db: d, meta: tt.meta}, true, nil
	}
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return nil, false, err
	}
	def, ok := cat.Table(d.def.ID, name)
	if !ok {
		return nil, false, nil
	}
	t, err := newTable(ctx, d, def)
	if err != nil {
		return nil, false, err
	}
	return t, true, nil
}

// GetTableNames implements sql.Database.
func (d *Database) GetTableNames(ctx *gsql.Context) ([]string, error) {
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return nil, err
	}
	defs := cat.SortedTables(d.def.ID)
	names := make([]string, len(defs))
	for i, t := range defs {
		names[i] = t.Name
	}
	return names, nil
}

// GetCollation implements sql.CollatedDatabase.
func (d *Database) GetCollation(ctx *gsql.Context) gsql.CollationID {
	c, err := gsql.ParseCollation("", d.def.Collation, false)
	if err != nil {
		return tablemeta.DefaultCollationID()
	}
	return c
}

// SetCollation implements sql.CollatedDatabase (ALTER DATABASE ...
// COLLATE).
func (d *Database) SetCollation(ctx *gsql.Context, collation gsql.CollationID) error {
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	return toSQLError(tx.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		cur, ok := c.Database(d.def.Name)
		if !ok {
			return gsql.ErrDatabaseNotFound.New(d.def.Name)
		}
		def := *cur
		def.Collation = collation.Name()
		if err := catalog.PutJSON(k, catalog.DatabaseKey(def.Name), &def); err != nil {
			return err
		}
		c.Databases[strings.ToLower(def.Name)] = &def
		return nil
	}))
}

// CreateTable implements sql.TableCreator.
func (d *Database) CreateTable(ctx *gsql.Context, name string, schema gsql.PrimaryKeySchema, collation gsql.CollationID, comment string) error {
	def, err := tablemeta.DefFromSchema(name, schema, collation, comment)
	if err != nil {
		return err
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		if _, ok := c.Table(d.def.ID, name); ok {
			return gsql.ErrTableAlreadyExists.New(name)
		}
		if _, ok := c.View(d.def.ID, name); ok {
			return gsql.ErrTableAlreadyExists.New(name)
		}
		id, err := catalog.NextID(ctx, k)
		if err != nil {
			return err
		}
		def.ID, def.DBID = id, d.def.ID
		return putTableDef(c, k, def)
	})
}

// DropTable implements sql.TableDropper: the definition goes in the
// statement's transaction, and the table's rows and index entries are
// left to the garbage collector, which destroys their key range once its
// safe point has passed the DROP (package ddljob). A temporary table of
// the session goes first, as in MySQL.
func (d *Database) DropTable(ctx *gsql.Context, name string) error {
	if s, err := sessionOf(ctx); err == nil && s.temps.get(d.def.Name, name) != nil {
		tt := s.temps.remove(d.def.Name, name)
		return toSQLError(d.provider.dropTempTableData(ctx, tt.def))
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		def, ok := c.Table(d.def.ID, name)
		if !ok {
			return gsql.ErrTableNotFound.New(name)
		}
		k.AllowWhenDiskFull() // it frees space, so it must work on a full disk
		if err := ddljob.ScheduleTable(k, def, "DROP TABLE"); err != nil {
			return err
		}
		if err := k.Delete(catalog.TableKey(d.def.ID, def.Name)); err != nil {
			return fmt.Errorf("drop table %q: %w", name, err)
		}
		delete(c.Tables[d.def.ID], strings.ToLower(def.Name))
		return nil
	})
}

// RenameTable implements sql.TableRenamer. Rows are keyed by table ID, so
// only the definition moves, and the table's triggers with it.
func (d *Database) RenameTable(ctx *gsql.Context, oldName, newName string) error {
	if tt := sessionTempTable(ctx, d.def.Name, oldName); tt != nil {
		if sessionTempTable(ctx, d.def.Name, newName) != nil {
			return gsql.ErrTableAlreadyExists.New(newName)
		}
		s, err := sessionOf(ctx)
		if err != nil {
			return err
		}
		s.temps.remove(d.def.Name, oldName)
		return d.changeTempTable(ctx, tt, func(_ context.Context, def *catalog.TableDef, _ *txn.Txn) error {
			def.Name = newName
			return nil
		})
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		cur, ok := c.Table(d.def.ID, oldName)
		if !ok {
			return gsql.ErrTableNotFound.New(oldName)
		}
		if other, ok := c.Table(d.def.ID, newName); ok && other != cur {
			return gsql.ErrTableAlreadyExists.New(newName)
		}
		if err := k.Delete(catalog.TableKey(d.def.ID, cur.Name)); err != nil {
			return fmt.Errorf("rename table %q: %w", oldName, err)
		}
		def, err := renamedDef(ctx, cur)
		if err != nil {
			return err
		}
		delete(c.Tables[d.def.ID], strings.ToLower(cur.Name))
		def.Name = newName
		if err := putTableDef(c, k, def); err != nil {
			return err
		}
		return renameTableTriggers(c, k, d.def.ID, cur.Name, newName)
	})
}

// CreateView implements sql.ViewDatabase.
func (d *Database) CreateView(ctx *gsql.Context, name string, selectStatement, createViewStmt string) error {
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		if _, ok := c.View(d.def.ID, name); ok {
			return gsql.ErrExistingView.New(d.def.Name, name)
		}
		if _, ok := c.Table(d.def.ID, name); ok {
			return gsql.ErrTableAlreadyExists.New(name)
		}
		v := &catalog.ViewDef{
			Name:                name,
			TextDefinition:      selectStatement,
			CreateViewStatement: createViewStmt,
			SQLMode:             gsql.LoadSqlMode(ctx).String(),
		}
		if err := catalog.PutJSON(k, catalog.ViewKey(d.def.ID, name), v); err != nil {
			return err
		}
		c.PutView(d.def.ID, v)
		return nil
	})
}

// DropView implements sql.ViewDatabase.
func (d *Database) DropView(ctx *gsql.Context, name string) error {
	err := d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		if _, ok := c.View(d.def.ID, name); !ok {
			if _, isTable := c.Table(d.def.ID, name); isTable {
				return notViewError(d.def.Name, name) // compat_dropnames.go
			}
			return gsql.ErrViewDoesNotExist.New(d.def.Name, name)
		}
		if err := k.Delete(catalog.ViewKey(d.def.ID, name)); err != nil {
			return fmt.Errorf("drop view %q: %w", name, err)
		}
		delete(c.Views[d.def.ID], strings.ToLower(name))
		return nil
	})
	if gsql.ErrViewDoesNotExist.Is(err) {
		missingViewNote(ctx, d.def.Name, name) // compat_dropnames.go
	}
	return err
}

// GetViewDefinition implements sql.ViewDatabase.
func (d *Database) GetViewDefinition(ctx *gsql.Context, name string) (gsql.ViewDefinition, bool, error) {
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return gsql.ViewDefinition{}, false, err
	}
	v, ok := cat.View(d.def.ID, name)
	if !ok {
		return gsql.ViewDefinition{}, false, nil
	}
	offerView(ctx, d.def.Name, v.CreateViewStatement)
	return viewToGMS(v), true, nil
}

// AllViews implements sql.ViewDatabase.
func (d *Database) AllViews(ctx *gsql.Context) ([]gsql.ViewDefinition, error) {
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return nil, err
	}
	listingViews(ctx, d.def.Name)
	views := cat.SortedViews(d.def.ID)
	out := make([]gsql.ViewDefinition, len(views))
	for i, v := range views {
		out[i] = viewToGMS(v)
	}
	return out, nil
}

func viewToGMS(v *catalog.ViewDef) gsql.ViewDefinition {
	return gsql.ViewDefinition{
		Name:                v.Name,
		TextDefinition:      v.TextDefinition,
		CreateViewStatement: v.CreateViewStatement,
		SqlMode:             v.SQLMode,
	}
}

// changeCatalog runs a DDL change of this database in ctx's transaction.
func (d *Database) changeCatalog(ctx *gsql.Context, fn func(c *catalog.Catalog, k *txn.Txn) error) error {
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	return toSQLError(tx.changeCatalog(ctx, fn))
}

// changeTable runs a DDL change of one table: fn gets a copy of the
// table's current definition to change, and the changed copy is stored.
func (d *Database) changeTable(ctx *gsql.Context, name string, fn func(ctx context.Context, def *catalog.TableDef, k *txn.Txn) error) error {
	if tt := sessionTempTable(ctx, d.def.Name, name); tt != nil {
		return d.changeTempTable(ctx, tt, fn)
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		cur, ok := c.Table(d.def.ID, name)
		if !ok {
			return gsql.ErrTableNotFound.New(name)
		}
		def := cur.Clone()
		if err := fn(ctx, def, k); err != nil {
			return err
		}
		return putTableDef(c, k, def)
	})
}

// putTableDef stores def in the transaction and in the catalog copy.
func putTableDef(c *catalog.Catalog, k *txn.Txn, def *catalog.TableDef) error {
	if err := def.Validate(); err != nil {
		return err
	}
	if err := catalog.PutJSON(k, catalog.TableKey(def.DBID, def.Name), def); err != nil {
		return err
	}
	c.PutTable(def)
	return nil
}
