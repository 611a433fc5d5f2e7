package sql

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// ALTER TABLE. Index changes are done in place: CREATE INDEX writes the
// new index's entries for every existing row (the backfill) in the DDL's
// transaction, DROP INDEX deletes them. Column and primary-key changes
// rewrite the table: GMS streams the old rows through RewriteInserter into
// a new table ID with the new definition, and the old rows are deleted,
// all in the DDL's transaction, so a failed ALTER leaves nothing behind.

var (
	_ gsql.IndexAlterableTable      = (*Table)(nil)
	_ gsql.AlterableTable           = (*Table)(nil)
	_ gsql.RewritableTable          = (*Table)(nil)
	_ gsql.PrimaryKeyAlterableTable = (*Table)(nil)
	_ gsql.CheckAlterableTable      = (*Table)(nil)
	_ gsql.CheckTable               = (*Table)(nil)
)

// GetChecks implements sql.CheckTable.
func (t *Table) GetChecks(*gsql.Context) ([]gsql.CheckDefinition, error) {
	out := make([]gsql.CheckDefinition, len(t.meta.Def.Checks))
	for i, c := range t.meta.Def.Checks {
		out[i] = gsql.CheckDefinition{Name: c.Name, CheckExpression: c.Expression, Enforced: c.Enforced}
	}
	return out, nil
}

// CreateCheck implements sql.CheckAlterableTable. GMS has checked the
// existing rows against it.
func (t *Table) CreateCheck(ctx *gsql.Context, check *gsql.CheckDefinition) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		for _, c := range td.Checks {
			if strings.EqualFold(c.Name, check.Name) {
				return mysql.NewSQLError(3822, "HY000", "Duplicate check constraint name '%s'.", check.Name)
			}
		}
		td.Checks = append(td.Checks, catalog.CheckDef{Name: check.Name, Expression: check.CheckExpression, Enforced: check.Enforced})
		return nil
	})
}

// DropCheck implements sql.CheckAlterableTable.
func (t *Table) DropCheck(ctx *gsql.Context, name string) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		for i, c := range td.Checks {
			if strings.EqualFold(c.Name, name) {
				td.Checks = append(td.Checks[:i], td.Checks[i+1:]...)
				return nil
			}
		}
		return gsql.ErrUnknownConstraint.New(name)
	})
}

// CreateIndex implements sql.IndexAlterableTable. An index percdb added
// for a foreign key that the new index serves as well goes (foreignkey.Superseded).
func (t *Table) CreateIndex(ctx *gsql.Context, def gsql.IndexDef) error {
	if err := t.createIndex(ctx, def, false); err != nil {
		return err
	}
	return t.dropSupersededForeignKeyIndexes(ctx, def.Name)
}

// createIndex adds index def; forForeignKey marks one added for a
// foreign key (catalog.IndexDef.ForForeignKey).
func (t *Table) createIndex(ctx *gsql.Context, def gsql.IndexDef, forForeignKey bool) error {
	switch {
	case def.IsPrimary():
		return gsql.ErrUnsupportedFeature.New("adding a primary key with CREATE INDEX")
	case def.IsFullText(), def.IsSpatial(), def.IsVector():
		return gsql.ErrUnsupportedFeature.New("FULLTEXT, SPATIAL and VECTOR indexes")
	}
	if strings.EqualFold(def.Name, "PRIMARY") {
		return mysql.NewSQLError(mysql.ERDupKeyName, "42000", "Duplicate key name '%s'", def.Name)
	}
	idx := catalog.IndexDef{Name: def.Name, Unique: def.IsUnique(), Comment: def.Comment, ForForeignKey: forForeignKey}
	for _, c := range def.Columns {
		col, _, ok := t.meta.Def.ColumnByName(c.Name)
		if !ok {
			return gsql.ErrKeyColumnDoesNotExist.New(c.Name)
		}
		idx.Columns = append(idx.Columns, catalog.IndexColumnDef{ColumnID: col.ID, Length: c.Length})
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	if !tx.createdHere(t.meta.Def.ID) && !tx.changedHere(t.meta.Def.ID) && !t.meta.Def.Temporary {
		// Other transactions see the table: build the index online, in
		// steps and batches of their own (ddl.go). This statement's own
		// transaction writes nothing: no step waits for it. (When an
		// earlier clause of the statement changed the table in this
		// transaction, the index is built in it too, below.)
		if tx.use != nil {
			tx.use.Exempt()
		}
		if err := t.db.provider.buildIndexOnline(ctx, tx.use, t.db.def.Name, t.meta.Def, idx); err != nil {
			return toSQLError(err)
		}
		if s, ok := ctx.Session.(*Session); ok {
			s.stepsCommitted = true
		}
		if !tx.catDirty && (tx.kv == nil || tx.kv.IsReadOnly()) {
			// The statement's later clauses (ALTER TABLE t ADD INDEX
			// ..., DROP INDEX ...) must see the new index: its
			// transaction, which wrote nothing, starts over after it.
			tx.startOver(ctx)
		}
		return nil
	}
	// A table this transaction created is private to it, and one it
	// changed is fenced by it: index it here.
	var added *catalog.TableDef
	err = t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		if _, _, ok := td.Index(def.Name); ok {
			return mysql.NewSQLError(mysql.ERDupKeyName, "42000", "Duplicate key name '%s'", def.Name)
		}
		idx.ID = td.NextIndexID
		td.NextIndexID++
		td.Indexes = append(td.Indexes, idx)
		added = td
		return nil
	})
	if err != nil {
		return err
	}
	return toSQLError(t.backfillIndex(ctx, added, def.Name))
}

// backfillIndex writes the entries of index name of def for every row.
// The executor has no operator that writes one index's entries for
// existing rows, so this assembles them from tablecodec, taking the key
// encoding of the indexed values (collation keys, prefixes) from the
// executor's own range bounds.
func (t *Table) backfillIndex(ctx *gsql.Context, def *catalog.TableDef, name string) error {
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	k, err := tx.writable(ctx)
	if err != nil {
		return err
	}
	nt, err := newTable(ctx, t.db, def)
	if err != nil {
		return err
	}
	et := nt.meta.Exec
	var ix *executor.Index
	for i := range et.Indexes {
		if strings.EqualFold(et.Indexes[i].Name, name) {
			ix = &et.Indexes[i]
		}
	}
	if ix == nil {
		return fmt.Errorf("index %q vanished while it was created", name)
	}
	dec, err := et.NewRowDecoder(nil)
	if err != nil {
		return err
	}
	it, err := executor.ScanTable(ctx, k, et, dec, et.RowRange(), executor.ScanOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	prefixLen := len(tablecodec.IndexPrefix(nil, et.ID, ix.ID))
	for {
		row, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		vals := make([]any, len(ix.Columns))
		hasNull := false
		for i, c := range ix.Columns {
			vals[i] = row.Values[c.Offset]
			hasNull = hasNull || vals[i] == nil
		}
		r, err := et.IndexRange(ix, executor.Bound{Values: vals, Inclusive: true}, executor.Bound{})
		if err != nil {
			return err
		}
		enc := r.Start[prefixLen:]
		key := tablecodec.IndexKey(nil, et.ID, ix.ID, enc, ix.Unique, hasNull, row.Handle)
		value := tablecodec.IndexValue(nil, ix.Unique, hasNull, row.Handle)
		if !ix.Unique || hasNull {
			if err := k.Set(key, value); err != nil {
				return err
			}
			continue
		}
		// The entries written so far are buffered in the transaction, so
		// a duplicate among the existing rows is found here.
		if _, found, err := k.Get(ctx, key); err != nil {
			return err
		} else if found {
			dup := &executor.DuplicateKeyError{Table: def.Name, Index: ix.Name, Values: vals}
			return mysql.NewSQLError(codeDupEntry, stateIntegrity, "%s", dup.Error())
		}
		if err := k.Insert(key, value); err != nil {
			return err
		}
	}
}

// DropIndex implements sql.IndexAlterableTable.
func (t *Table) DropIndex(ctx *gsql.Context, name string) error {
	return t.db.changeTable(ctx, t.Name(), func(ctx context.Context, td *catalog.TableDef, k *txn.Txn) error {
		idx, i, ok := td.Index(name)
		if !ok {
			return gsql.ErrIndexNotFound.New(name)
		}
		start, end := tablecodec.IndexRange(td.ID, idx.ID)
		k.AllowWhenDiskFull() // it frees space, so it must work on a full disk
		if err := ddljob.ScheduleRange(k, start, end, "DROP INDEX "+idx.Name); err != nil {
			return err
		}
		td.Indexes = append(td.Indexes[:i], td.Indexes[i+1:]...)
		return nil
	})
}

// RenameIndex implements sql.IndexAlterableTable.
func (t *Table) RenameIndex(ctx *gsql.Context, from, to string) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		idx, _, ok := td.Index(from)
		if !ok {
			return gsql.ErrIndexNotFound.New(from)
		}
		if _, _, taken := td.Index(to); taken && !strings.EqualFold(from, to) {
			return mysql.NewSQLError(mysql.ERDupKeyName, "42000", "Duplicate key name '%s'", to)
		}
		idx.Name = to
		return nil
	})
}

// ShouldRewriteTable implements sql.RewritableTable: every column and
// primary-key change rewrites the table, which keeps one code path for all
// of them (type conversions, new defaults, NOT NULL, index changes),
// except a CHANGE COLUMN that only renames a column in its place, which
// changes the catalog alone, as RENAME COLUMN does (ModifyColumn). GMS
// renames the column in the table's foreign keys first, a catalog change
// after which a rewrite could not fence the table (1235).
func (t *Table) ShouldRewriteTable(_ *gsql.Context, oldSchema, newSchema gsql.PrimaryKeySchema, oldCol, newCol *gsql.Column) bool {
	return !renameOnly(oldSchema, newSchema, oldCol, newCol)
}

// renameOnly reports whether the change from oldSchema to newSchema is
// the column oldCol renamed to newCol, nothing else of it or of the
// table changed.
func renameOnly(oldSchema, newSchema gsql.PrimaryKeySchema, oldCol, newCol *gsql.Column) bool {
	if oldCol == nil || newCol == nil || len(oldSchema.Schema) != len(newSchema.Schema) ||
		!slices.Equal(oldSchema.PkOrdinals, newSchema.PkOrdinals) {
		return false
	}
	at := oldSchema.Schema.IndexOfColName(oldCol.Name)
	if at < 0 || newSchema.Schema.IndexOfColName(newCol.Name) != at {
		return false
	}
	o, err := tablemeta.ColumnDefFromGMS(oldCol, 0)
	if err != nil {
		return false
	}
	n, err := tablemeta.ColumnDefFromGMS(newCol, 0)
	if err != nil {
		return false
	}
	o.Name = n.Name
	if slices.Contains(oldSchema.PkOrdinals, at) {
		// A primary-key column is NOT NULL whatever the new definition
		// says, as in MySQL.
		n.Nullable = false
	}
	return o == n
}

// RewriteInserter implements sql.RewritableTable: the new definition takes
// a new table ID at once, the returned inserter writes the converted rows
// under it, and Close deletes the old rows.
func (t *Table) RewriteInserter(ctx *gsql.Context, oldSchema, newSchema gsql.PrimaryKeySchema, oldCol, newCol *gsql.Column, idxCols []gsql.IndexColumn) (gsql.RowInserter, error) {
	if idxCols != nil && oldCol == nil && newCol == nil &&
		slices.Equal(oldSchema.PkOrdinals, newSchema.PkOrdinals) && oldSchema.Schema.Equals(newSchema.Schema) {
		// GMS "rewrites" the table after CREATE UNIQUE INDEX; CreateIndex
		// has built and checked the index already, so the rows it sends
		// are dropped.
		return discardInserter{}, nil
	}
	if t.meta.Def.Temporary {
		return t.rewriteTemp(ctx, newSchema, oldCol, newCol)
	}
	old := t.meta.Def
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	if err := tx.fenceForRewrite(ctx, old, "ALTER TABLE"); err != nil {
		return nil, toSQLError(err)
	}
	var nd *catalog.TableDef
	err = t.db.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		cur, ok := c.Table(old.DBID, old.Name)
		if !ok || cur.ID != old.ID {
			return gsql.ErrTableNotFound.New(old.Name)
		}
		var err error
		if nd, err = rewrittenDef(cur, newSchema, oldCol, newCol); err != nil {
			return err
		}
		nd.Fence = "" // the rewritten table replaces the fenced one
		if nd.ID, err = catalog.NextID(ctx, k); err != nil {
			return err
		}
		return putTableDef(c, k, nd)
	})
	if err != nil {
		return nil, err
	}
	nt, err := newTable(ctx, t.db, nd)
	if err != nil {
		return nil, err
	}
	if t.meta.AutoIncOrd >= 0 && nt.meta.AutoIncOrd >= 0 {
		next, err := t.autoIncrement().Peek(ctx)
		if err != nil {
			return nil, toSQLError(err)
		}
		if err := nt.autoIncrement().Reset(ctx, next); err != nil {
			return nil, toSQLError(err)
		}
	}
	return &rewriter{tableEditor: tableEditor{t: nt}, old: t.meta.Def}, nil
}

// discardInserter takes rows and does nothing with them.
type discardInserter struct{}

func (discardInserter) StatementBegin(*gsql.Context)              {}
func (discardInserter) DiscardChanges(*gsql.Context, error) error { return nil }
func (discardInserter) StatementComplete(*gsql.Context) error     { return nil }
func (discardInserter) Insert(*gsql.Context, gsql.Row) error      { return nil }
func (discardInserter) Close(*gsql.Context) error                 { return nil }

// rewriter writes the rows of a rewritten table and drops the old rows
// when done.
type rewriter struct {
	tableEditor
	old *catalog.TableDef
}

// Close implements sql.Closer.
func (r *rewriter) Close(ctx *gsql.Context) error {
	tx, k, err := writableOf(ctx)
	if err != nil {
		return err
	}
	tx.statementEnd(true)
	return toSQLError(ddljob.ScheduleTable(k, r.old, "ALTER TABLE"))
}

// rewrittenDef builds the definition of a table after a column or
// primary-key change: columns keep their IDs (a renamed column is oldCol
// under newCol's name), new columns get fresh ones, and indexes lose
// dropped columns (an index left without columns is dropped).
func rewrittenDef(cur *catalog.TableDef, newSchema gsql.PrimaryKeySchema, oldCol, newCol *gsql.Column) (*catalog.TableDef, error) {
	nd := cur.Clone()
	nd.Columns = nil
	kept := make(map[int64]bool)
	for _, col := range newSchema.Schema {
		var id int64
		switch {
		case oldCol != nil && newCol != nil && strings.EqualFold(col.Name, newCol.Name):
			if c, _, ok := cur.ColumnByName(oldCol.Name); ok {
				id = c.ID
			}
		default:
			if oldCol != nil && newCol != nil && strings.EqualFold(col.Name, oldCol.Name) {
				break // the old name of a renamed column is a new column
			}
			if c, _, ok := cur.ColumnByName(col.Name); ok {
				id = c.ID
			}
		}
		if id == 0 {
			id = nd.NextColumnID
			nd.NextColumnID++
		}
		c, err := tablemeta.ColumnDefFromGMS(col, id)
		if err != nil {
			return nil, err
		}
		if old, _, ok := cur.Column(id); ok && (newCol == nil || !strings.EqualFold(col.Name, newCol.Name)) {
			c.Type = keptScale(old.Type, c.Type)
		}
		nd.Columns = append(nd.Columns, c)
		kept[id] = true
	}
	nd.PrimaryKey = nil
	for _, ord := range newSchema.PkOrdinals {
		nd.PrimaryKey = append(nd.PrimaryKey, nd.Columns[ord].ID)
	}
	nd.Indexes = nil
	for _, idx := range cur.Indexes {
		var cols []catalog.IndexColumnDef
		for _, ic := range idx.Columns {
			if kept[ic.ColumnID] {
				cols = append(cols, ic)
			}
		}
		if len(cols) == 0 {
			continue
		}
		idx.Columns = cols
		nd.Indexes = append(nd.Indexes, idx)
	}
	nd.KeepObservers(kept)
	return nd, nil
}

// AddColumn implements sql.AlterableTable. GMS rewrites the table instead
// (ShouldRewriteTable), so this only records the column: rows written
// before it read it as its default.
func (t *Table) AddColumn(ctx *gsql.Context, column *gsql.Column, order *gsql.ColumnOrder) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		c, err := tablemeta.ColumnDefFromGMS(column, td.NextColumnID)
		if err != nil {
			return err
		}
		td.NextColumnID++
		pos := len(td.Columns)
		if order != nil {
			if order.First {
				pos = 0
			} else if order.AfterColumn != "" {
				_, i, ok := td.ColumnByName(order.AfterColumn)
				if !ok {
					return gsql.ErrTableColumnNotFound.New(td.Name, order.AfterColumn)
				}
				pos = i + 1
			}
		}
		td.Columns = append(td.Columns[:pos], append([]catalog.ColumnDef{c}, td.Columns[pos:]...)...)
		return nil
	})
}

// DropColumn implements sql.AlterableTable (see AddColumn).
func (t *Table) DropColumn(ctx *gsql.Context, name string) error {
	return gsql.ErrUnsupportedFeature.New("DROP COLUMN without a table rewrite")
}

// ModifyColumn implements sql.AlterableTable. GMS rewrites the table for
// every change but a rename (ALTER TABLE ... RENAME COLUMN), which comes
// here: rows and indexes name columns by ID, so only the definition
// changes.
func (t *Table) ModifyColumn(ctx *gsql.Context, name string, column *gsql.Column, order *gsql.ColumnOrder) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		cur, i, ok := td.ColumnByName(name)
		if !ok {
			return gsql.ErrTableColumnNotFound.New(td.Name, name)
		}
		nc, err := tablemeta.ColumnDefFromGMS(column, cur.ID)
		if err != nil {
			return err
		}
		nc.Type = keptScale(cur.Type, nc.Type)
		if slices.Contains(td.PrimaryKey, cur.ID) {
			nc.Nullable = false // a primary-key column (renameOnly)
		}
		same := *cur
		same.Name = nc.Name
		if same != nc || order != nil {
			return gsql.ErrUnsupportedFeature.New("MODIFY COLUMN without a table rewrite")
		}
		if other, _, taken := td.ColumnByName(nc.Name); taken && other.ID != cur.ID {
			return gsql.ErrColumnExists.New(nc.Name)
		}
		td.Columns[i].Name = nc.Name
		return nil
	})
}

// CreatePrimaryKey implements sql.PrimaryKeyAlterableTable; GMS rewrites
// the table instead.
func (t *Table) CreatePrimaryKey(*gsql.Context, []gsql.IndexColumn) error {
	return gsql.ErrUnsupportedFeature.New("ADD PRIMARY KEY without a table rewrite")
}

// DropPrimaryKey implements sql.PrimaryKeyAlterableTable; GMS rewrites the
// table instead.
func (t *Table) DropPrimaryKey(*gsql.Context) error {
	return gsql.ErrUnsupportedFeature.New("DROP PRIMARY KEY without a table rewrite")
}
