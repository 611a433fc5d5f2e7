package sql

import (
	"context"
	"reflect"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/foreignkey"
	"github.com/percdb/percdb/txn"
)

// Foreign keys (package foreignkey says how percdb enforces them): Table
// implements sql.ForeignKeyTable over the stored definitions, and
// foreignkey.Table for the package's rules; Session implements
// foreignkey.Session. A reference check locks the parent row it reads
// (SetReferenceCheck), so that a concurrent delete of the parent
// conflicts with the child's insert.

var (
	_ gsql.ForeignKeyTable  = (*Table)(nil)
	_ gsql.ForeignKeyEditor = (*fkEditor)(nil)
	_ gsql.ReferenceChecker = (*IndexedTable)(nil)
	_ foreignkey.Table      = (*Table)(nil)
	_ foreignkey.Session    = (*Session)(nil)
)

// CurrentDef returns the table's definition in the catalog ctx's
// transaction sees now, which a DDL statement may have changed since the
// table was resolved; the resolved one if the table is gone. It
// implements foreignkey.Table.
func (t *Table) CurrentDef(ctx *gsql.Context) (*catalog.TableDef, *catalog.Catalog, error) {
	_, cat, err := t.db.catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	if t.meta.Def.Temporary {
		return t.meta.Def, cat, nil
	}
	if def, ok := cat.Table(t.meta.Def.DBID, t.Name()); ok {
		return def, cat, nil
	}
	return t.meta.Def, cat, nil
}

// GetDeclaredForeignKeys implements sql.ForeignKeyTable.
func (t *Table) GetDeclaredForeignKeys(ctx *gsql.Context) ([]gsql.ForeignKeyConstraint, error) {
	def, _, err := t.CurrentDef(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]gsql.ForeignKeyConstraint, len(def.ForeignKeys))
	for i := range def.ForeignKeys {
		out[i] = foreignkey.ToGMS(&def.ForeignKeys[i], t.db.def.Name, def.Name)
	}
	return out, nil
}

// GetReferencedForeignKeys implements sql.ForeignKeyTable.
func (t *Table) GetReferencedForeignKeys(ctx *gsql.Context) ([]gsql.ForeignKeyConstraint, error) {
	_, cat, err := t.CurrentDef(ctx)
	if err != nil || t.meta.Def.Temporary {
		return nil, err
	}
	refs := cat.Referencing(t.db.def.Name, t.Name())
	out := make([]gsql.ForeignKeyConstraint, len(refs))
	for i, r := range refs {
		out[i] = foreignkey.ToGMS(r.Key, r.ChildDB, r.Child.Name)
	}
	return out, nil
}

// AddForeignKey implements sql.ForeignKeyTable. GMS has checked the
// definition and, with foreign_key_checks on, the existing rows. On a
// table other transactions can write, that check read a snapshot behind
// which they may have written, so the table is first fenced (ddl.go: its
// writers finish or wait) and its rows are checked again, locking the
// parent rows they reference.
func (t *Table) AddForeignKey(ctx *gsql.Context, fk gsql.ForeignKeyConstraint) error {
	if err := foreignkey.CheckActions(fk); err != nil {
		return err
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	checks := foreignkey.Checks(ctx)
	if checks && !tx.createdHere(t.meta.Def.ID) {
		def, _, err := t.CurrentDef(ctx)
		if err != nil {
			return err
		}
		if err := tx.fenceForRewrite(ctx, def, "ALTER TABLE ADD FOREIGN KEY "+fk.Name); err != nil {
			return toSQLError(err)
		}
		if err := t.checkExistingRows(ctx, fk); err != nil {
			return err
		}
	}
	return t.db.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		for _, td := range c.Tables[t.db.def.ID] {
			for _, other := range td.ForeignKeys {
				if strings.EqualFold(other.Name, fk.Name) {
					return foreignkey.ErrDuplicateName(fk.Name)
				}
			}
		}
		cur, ok := c.Table(t.db.def.ID, t.Name())
		if !ok {
			return gsql.ErrTableNotFound.New(t.Name())
		}
		def := cur.Clone()
		def.Fence = "" // the fence, if any, was this statement's
		def.ForeignKeys = append(def.ForeignKeys, foreignkey.FromGMS(fk))
		return putTableDef(c, k, def)
	})
}

// checkExistingRows checks that every row of the table has the parent fk
// asks for, through GMS's reference check (which locks each parent row
// found: SetReferenceCheck), in the transaction as it now is.
func (t *Table) checkExistingRows(ctx *gsql.Context, fk gsql.ForeignKeyConstraint) error {
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	if err := tx.statementBegin(ctx); err != nil {
		return toSQLError(err)
	}
	child, err := t.reresolve(ctx, t.db.def.Name, t.Name())
	if err != nil {
		return err
	}
	parent, err := t.reresolve(ctx, fk.ParentDatabase, fk.ParentTable)
	if err != nil {
		return err
	}
	return foreignkey.CheckRows(ctx, child, parent, fk)
}

// reresolve returns table name of database db as ctx's transaction sees
// it now.
func (t *Table) reresolve(ctx *gsql.Context, db, name string) (*Table, error) {
	d, err := t.db.provider.Database(ctx, db)
	if err != nil {
		return nil, err
	}
	tbl, ok, err := d.GetTableInsensitive(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, gsql.ErrTableNotFound.New(name)
	}
	return tbl.(*Table), nil
}

// DropForeignKey implements sql.ForeignKeyTable.
func (t *Table) DropForeignKey(ctx *gsql.Context, name string) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		for i, fk := range td.ForeignKeys {
			if strings.EqualFold(fk.Name, name) {
				td.ForeignKeys = append(td.ForeignKeys[:i], td.ForeignKeys[i+1:]...)
				return nil
			}
		}
		return foreignkey.ErrNotFound(name)
	})
}

// UpdateForeignKey implements sql.ForeignKeyTable (GMS calls it when a
// column the key names is renamed). GMS also calls it for every MODIFY
// COLUMN of such a column, with the key unchanged: that changes nothing,
// so that the table rewrite that follows may fence the table first.
func (t *Table) UpdateForeignKey(ctx *gsql.Context, name string, fk gsql.ForeignKeyConstraint) error {
	def, _, err := t.CurrentDef(ctx)
	if err != nil {
		return err
	}
	want := foreignkey.FromGMS(fk)
	for _, have := range def.ForeignKeys {
		if strings.EqualFold(have.Name, name) && reflect.DeepEqual(have, want) {
			return nil
		}
	}
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		for i := range td.ForeignKeys {
			if strings.EqualFold(td.ForeignKeys[i].Name, name) {
				td.ForeignKeys[i] = foreignkey.FromGMS(fk)
				return nil
			}
		}
		return gsql.ErrForeignKeyNotFound.New(name, td.Name)
	})
}

// CreateIndexForForeignKey implements sql.ForeignKeyTable: the index
// InnoDB adds on a child's columns when no index starts with them. GMS
// looked for one in the table as resolved, which in CREATE TABLE is
// before the table's own indexes were added, so the current definition
// is looked at again.
func (t *Table) CreateIndexForForeignKey(ctx *gsql.Context, idx gsql.IndexDef) error {
	def, _, err := t.CurrentDef(ctx)
	if err != nil {
		return err
	}
	if foreignkey.HasIndexPrefix(def, idx.Columns) {
		return nil
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	if tx.createdHere(def.ID) {
		return t.createIndex(ctx, idx, true)
	}
	// The index is built online, in steps committed by transactions of
	// their own; this statement's transaction, which has written
	// nothing, starts over after them to see it.
	if tx.catDirty || (tx.kv != nil && !tx.kv.IsReadOnly()) {
		return gsql.ErrUnsupportedFeature.New("adding a foreign key that needs a new index after other changes in the same transaction")
	}
	if err := t.createIndex(ctx, idx, true); err != nil {
		return err
	}
	tx.startOver(ctx)
	return nil
}

// GetForeignKeyEditor implements sql.ForeignKeyTable.
func (t *Table) GetForeignKeyEditor(*gsql.Context) gsql.ForeignKeyEditor {
	return &fkEditor{tableEditor: t.editor()}
}

// fkEditor is the table editor GMS's foreign key handler writes through
// and looks rows up with (a parent's rows for a reference check, a
// child's for a referential action), in the statement's transaction.
type fkEditor struct {
	*tableEditor
}

// GetIndexes implements sql.IndexAddressable.
func (e *fkEditor) GetIndexes(ctx *gsql.Context) ([]gsql.Index, error) {
	return e.t.GetIndexes(ctx)
}

// IndexedAccess implements sql.IndexAddressable.
func (e *fkEditor) IndexedAccess(ctx *gsql.Context, lookup gsql.IndexLookup) gsql.IndexedTable {
	return e.t.IndexedAccess(ctx, lookup)
}

// PreciseMatch implements sql.IndexAddressable.
func (e *fkEditor) PreciseMatch() bool { return e.t.PreciseMatch() }

// SetReferenceCheck implements sql.ReferenceChecker: GMS reads a parent
// row to check a child's reference; the rows read are locked, so that a
// concurrent delete or key change of the parent conflicts with this
// transaction (see package foreignkey).
func (t *IndexedTable) SetReferenceCheck() error {
	c := *t.Table
	c.lockReads = true
	t.Table = &c
	return nil
}

// HasTemporaryTables implements foreignkey.Session.
func (s *Session) HasTemporaryTables() bool { return s.temps.any() }

// HasTemporaryTable implements foreignkey.Session.
func (s *Session) HasTemporaryTable(db, name string) bool { return s.temps.get(db, name) != nil }
