package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor/tablecodec"
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
)

// CreateIndex implements sql.IndexAlterableTable.
func (t *Table) CreateIndex(ctx *gsql.Context, def gsql.IndexDef) error {
	switch {
	case def.IsPrimary():
		return gsql.ErrUnsupportedFeature.New("adding a primary key with CREATE INDEX")
	case def.IsFullText(), def.IsSpatial(), def.IsVector():
		return gsql.ErrUnsupportedFeature.New("FULLTEXT, SPATIAL and VECTOR indexes")
	}
	var added *TableDef
	err := t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *TableDef, _ *txn.Txn) error {
		if _, _, ok := td.index(def.Name); ok || strings.EqualFold(def.Name, "PRIMARY") {
			return mysql.NewSQLError(mysql.ERDupKeyName, "42000", "Duplicate key name '%s'", def.Name)
		}
		idx := IndexDef{ID: td.NextIndexID, Name: def.Name, Unique: def.IsUnique(), Comment: def.Comment}
		for _, c := range def.Columns {
			col, _, ok := td.columnByName(c.Name)
			if !ok {
				return gsql.ErrKeyColumnDoesNotExist.New(c.Name)
			}
			idx.Columns = append(idx.Columns, IndexColumnDef{ColumnID: col.ID, Length: c.Length})
		}
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
func (t *Table) backfillIndex(ctx *gsql.Context, def *TableDef, name string) error {
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
	var im *indexMeta
	for _, x := range nt.meta.indexes {
		if strings.EqualFold(x.def.Name, name) {
			im = x
		}
	}
	if im == nil {
		return fmt.Errorf("index %q vanished while it was created", name)
	}
	start, end := tablecodec.RecordRange(def.ID)
	it, err := k.Iter(ctx, start, end)
	if err != nil {
		return err
	}
	defer it.Close()
	var writes [][2][]byte
	for it.Valid() {
		_, h, err := tablecodec.DecodeRowKey(it.Key(), nt.meta.handle == handleCommon)
		if err != nil {
			return err
		}
		row, err := nt.decodeFull(ctx, it.Value())
		if err != nil {
			return err
		}
		key, value, hasNull, err := nt.meta.indexEntry(im, row, h)
		if err != nil {
			return err
		}
		if im.unique && !hasNull {
			// The entries written so far are buffered, so a duplicate among
			// the existing rows is found here.
			if _, found, err := k.Get(ctx, key); err != nil {
				return err
			} else if found {
				return mysql.NewSQLError(codeDupEntry, stateIntegrity, "Duplicate entry '%s' for key '%s.%s'",
					im.formatKeyValues(row), def.Name, im.def.Name)
			}
			if err := k.Insert(key, value); err != nil {
				return err
			}
		} else {
			writes = append(writes, [2][]byte{key, value})
		}
		if err := it.Next(ctx); err != nil {
			return err
		}
	}
	for _, w := range writes {
		if err := k.Set(w[0], w[1]); err != nil {
			return err
		}
	}
	return nil
}

// DropIndex implements sql.IndexAlterableTable.
func (t *Table) DropIndex(ctx *gsql.Context, name string) error {
	return t.db.changeTable(ctx, t.Name(), func(ctx context.Context, td *TableDef, k *txn.Txn) error {
		idx, i, ok := td.index(name)
		if !ok {
			return gsql.ErrIndexNotFound.New(name)
		}
		start, end := tablecodec.IndexRange(td.ID, idx.ID)
		if err := deleteRange(ctx, k, start, end); err != nil {
			return err
		}
		td.Indexes = append(td.Indexes[:i], td.Indexes[i+1:]...)
		return nil
	})
}

// RenameIndex implements sql.IndexAlterableTable.
func (t *Table) RenameIndex(ctx *gsql.Context, from, to string) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *TableDef, _ *txn.Txn) error {
		idx, _, ok := td.index(from)
		if !ok {
			return gsql.ErrIndexNotFound.New(from)
		}
		if _, _, taken := td.index(to); taken && !strings.EqualFold(from, to) {
			return mysql.NewSQLError(mysql.ERDupKeyName, "42000", "Duplicate key name '%s'", to)
		}
		idx.Name = to
		return nil
	})
}

// ShouldRewriteTable implements sql.RewritableTable: every column and
// primary-key change rewrites the table, which keeps one code path for all
// of them (type conversions, new defaults, NOT NULL, index changes).
func (t *Table) ShouldRewriteTable(*gsql.Context, gsql.PrimaryKeySchema, gsql.PrimaryKeySchema, *gsql.Column, *gsql.Column) bool {
	return true
}

// RewriteInserter implements sql.RewritableTable: the new definition takes
// a new table ID at once, the returned inserter writes the converted rows
// under it, and Close deletes the old rows.
func (t *Table) RewriteInserter(ctx *gsql.Context, oldSchema, newSchema gsql.PrimaryKeySchema, oldCol, newCol *gsql.Column, _ []gsql.IndexColumn) (gsql.RowInserter, error) {
	old := t.meta.def
	var nd *TableDef
	err := t.db.changeCatalog(ctx, func(c *catalogData, k *txn.Txn) error {
		cur, ok := c.table(old.DBID, old.Name)
		if !ok {
			return gsql.ErrTableNotFound.New(old.Name)
		}
		var err error
		if nd, err = rewrittenDef(cur, newSchema, oldCol, newCol); err != nil {
			return err
		}
		if nd.ID, err = nextCatalogID(ctx, k); err != nil {
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
	if t.meta.autoIncOrd >= 0 && nt.meta.autoIncOrd >= 0 {
		next, err := t.autoIncrement().peek(ctx)
		if err != nil {
			return nil, toSQLError(err)
		}
		if err := nt.autoIncrement().reset(ctx, next); err != nil {
			return nil, toSQLError(err)
		}
	}
	return &rewriter{tableEditor: tableEditor{t: nt}, old: t.meta.def}, nil
}

// rewriter writes the rows of a rewritten table and drops the old rows
// when done.
type rewriter struct {
	tableEditor
	old *TableDef
}

// Close implements sql.Closer.
func (r *rewriter) Close(ctx *gsql.Context) error {
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	k, err := tx.writable(ctx)
	if err != nil {
		return toSQLError(err)
	}
	tx.statementEnd(true)
	return toSQLError(dropTableData(ctx, k, r.old))
}

// rewrittenDef builds the definition of a table after a column or
// primary-key change: columns keep their IDs (a renamed column is oldCol
// under newCol's name), new columns get fresh ones, and indexes lose
// dropped columns (an index left without columns is dropped).
func rewrittenDef(cur *TableDef, newSchema gsql.PrimaryKeySchema, oldCol, newCol *gsql.Column) (*TableDef, error) {
	nd := cur.clone()
	nd.Columns = nil
	kept := make(map[int64]bool)
	for _, col := range newSchema.Schema {
		var id int64
		switch {
		case oldCol != nil && newCol != nil && strings.EqualFold(col.Name, newCol.Name):
			if c, _, ok := cur.columnByName(oldCol.Name); ok {
				id = c.ID
			}
		default:
			if oldCol != nil && newCol != nil && strings.EqualFold(col.Name, oldCol.Name) {
				break // the old name of a renamed column is a new column
			}
			if c, _, ok := cur.columnByName(col.Name); ok {
				id = c.ID
			}
		}
		if id == 0 {
			id = nd.NextColumnID
			nd.NextColumnID++
		}
		c, err := columnDefFromGMS(col, id)
		if err != nil {
			return nil, err
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
		var cols []IndexColumnDef
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
	return nd, nil
}

// AddColumn implements sql.AlterableTable. GMS rewrites the table instead
// (ShouldRewriteTable), so this only records the column: rows written
// before it read it as its default.
func (t *Table) AddColumn(ctx *gsql.Context, column *gsql.Column, order *gsql.ColumnOrder) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *TableDef, _ *txn.Txn) error {
		c, err := columnDefFromGMS(column, td.NextColumnID)
		if err != nil {
			return err
		}
		td.NextColumnID++
		pos := len(td.Columns)
		if order != nil {
			if order.First {
				pos = 0
			} else if order.AfterColumn != "" {
				_, i, ok := td.columnByName(order.AfterColumn)
				if !ok {
					return gsql.ErrTableColumnNotFound.New(td.Name, order.AfterColumn)
				}
				pos = i + 1
			}
		}
		td.Columns = append(td.Columns[:pos], append([]ColumnDef{c}, td.Columns[pos:]...)...)
		return nil
	})
}

// DropColumn implements sql.AlterableTable (see AddColumn).
func (t *Table) DropColumn(ctx *gsql.Context, name string) error {
	return gsql.ErrUnsupportedFeature.New("DROP COLUMN without a table rewrite")
}

// ModifyColumn implements sql.AlterableTable (see AddColumn).
func (t *Table) ModifyColumn(ctx *gsql.Context, name string, column *gsql.Column, order *gsql.ColumnOrder) error {
	return gsql.ErrUnsupportedFeature.New("MODIFY COLUMN without a table rewrite")
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
