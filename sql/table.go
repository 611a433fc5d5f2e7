package sql

import (
	"context"
	"fmt"
	"io"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// Table is one table as GMS sees it: its schema, its indexes, and row
// access through the calling transaction. A Table holds the definition it
// was resolved with; every read and write goes through the transaction of
// the context it is given.
type Table struct {
	db   *Database
	meta *tableMeta
	// projection holds the schema positions GMS asked for (nil: all
	// columns); projected is the matching schema.
	projection []int
	projected  gsql.Schema
	projNames  []string
}

var (
	_ gsql.Table                    = (*Table)(nil)
	_ gsql.ProjectedTable           = (*Table)(nil)
	_ gsql.IndexAddressableTable    = (*Table)(nil)
	_ gsql.PrimaryKeyTable          = (*Table)(nil)
	_ gsql.CommentedTable           = (*Table)(nil)
	_ gsql.InsertableTable          = (*Table)(nil)
	_ gsql.UpdatableTable           = (*Table)(nil)
	_ gsql.DeletableTable           = (*Table)(nil)
	_ gsql.ReplaceableTable         = (*Table)(nil)
	_ gsql.TruncateableTable        = (*Table)(nil)
	_ gsql.AutoIncrementTable       = (*Table)(nil)
	_ gsql.Databaseable             = (*Table)(nil)
	_ gsql.IndexedTable             = (*IndexedTable)(nil)
	_ gsql.PartitionIter            = (*partitionIter)(nil)
	_ gsql.RowIter                  = (*rowIter)(nil)
	_ gsql.AutoIncrementSetter      = (*autoIncrementSetter)(nil)
	_ gsql.IndexAddressableTable    = (*IndexedTable)(nil)
	_ gsql.ProjectedTable           = (*IndexedTable)(nil)
	_ gsql.IndexedTable             = (*Table)(nil)
	_ gsql.PrimaryKeyAlterableTable = (*Table)(nil)
)

// newTable returns the table of def as seen by ctx's transaction.
func newTable(ctx *gsql.Context, d *Database, def *TableDef) (*Table, error) {
	m, err := d.provider.metas.get(ctx, d.def.Name, def)
	if err != nil {
		return nil, err
	}
	return &Table{db: d, meta: m}, nil
}

// Name implements sql.Nameable.
func (t *Table) Name() string { return t.meta.def.Name }

// Database implements sql.Databaseable.
func (t *Table) Database() string { return t.meta.dbName }

// String implements fmt.Stringer.
func (t *Table) String() string { return t.meta.def.Name }

// Schema implements sql.Table: the projected columns when projected.
func (t *Table) Schema() gsql.Schema {
	if t.projection != nil {
		return t.projected
	}
	return t.meta.schema.Schema
}

// PrimaryKeySchema implements sql.PrimaryKeyTable.
func (t *Table) PrimaryKeySchema() gsql.PrimaryKeySchema { return t.meta.schema }

// Collation implements sql.Table.
func (t *Table) Collation() gsql.CollationID {
	c, err := gsql.ParseCollation("", t.meta.def.Collation, false)
	if err != nil {
		return defaultCollationID()
	}
	return c
}

// Comment implements sql.CommentedTable.
func (t *Table) Comment() string { return t.meta.def.Comment }

// WithProjections implements sql.ProjectedTable.
func (t *Table) WithProjections(names []string) gsql.Table {
	n := *t
	n.projection = make([]int, 0, len(names))
	n.projected = make(gsql.Schema, 0, len(names))
	n.projNames = names
	for _, name := range names {
		for i, col := range t.meta.schema.Schema {
			if strings.EqualFold(col.Name, name) {
				n.projection = append(n.projection, i)
				n.projected = append(n.projected, col)
				break
			}
		}
	}
	return &n
}

// Projections implements sql.ProjectedTable.
func (t *Table) Projections() []string { return t.projNames }

// Partitions implements sql.Table: a table is one partition, read by one
// range scan.
func (t *Table) Partitions(*gsql.Context) (gsql.PartitionIter, error) {
	return &partitionIter{parts: []gsql.Partition{scanPartition{}}}, nil
}

// PartitionRows implements sql.Table.
func (t *Table) PartitionRows(ctx *gsql.Context, p gsql.Partition) (gsql.RowIter, error) {
	switch p := p.(type) {
	case scanPartition:
		start, end := tablecodec.RecordRange(t.meta.def.ID)
		return t.newRowIter(ctx, nil, []keyRange{{start: start, end: end}})
	case lookupPartition:
		return t.newRowIter(ctx, p.index, p.ranges)
	}
	return nil, fmt.Errorf("table %s: unknown partition %T", t.Name(), p)
}

// GetIndexes implements sql.IndexAddressable.
func (t *Table) GetIndexes(*gsql.Context) ([]gsql.Index, error) {
	out := make([]gsql.Index, 0, len(t.meta.indexes)+1)
	if t.meta.primary != nil {
		out = append(out, &Index{table: t, im: t.meta.primary})
	}
	for _, im := range t.meta.indexes {
		out = append(out, &Index{table: t, im: im})
	}
	return out, nil
}

// PreciseMatch implements sql.IndexAddressable: lookups may return more
// rows than asked (see keyRanges), so GMS keeps its filters.
func (t *Table) PreciseMatch() bool { return false }

// IndexedAccess implements sql.IndexAddressable.
func (t *Table) IndexedAccess(_ *gsql.Context, lookup gsql.IndexLookup) gsql.IndexedTable {
	return &IndexedTable{Table: t, lookup: lookup}
}

// LookupPartitions implements sql.IndexedTable.
func (t *Table) LookupPartitions(ctx *gsql.Context, lookup gsql.IndexLookup) (gsql.PartitionIter, error) {
	x, ok := lookup.Index.(*Index)
	if !ok {
		return nil, fmt.Errorf("table %s: lookup on foreign index %T", t.Name(), lookup.Index)
	}
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("table %s: unsupported ranges %T", t.Name(), lookup.Ranges)
	}
	if lookup.IsEmptyRange {
		return &partitionIter{}, nil
	}
	krs, err := t.meta.keyRanges(ctx, x.im, ranges)
	if err != nil {
		return nil, err
	}
	return &partitionIter{parts: []gsql.Partition{lookupPartition{index: x.im, ranges: krs}}}, nil
}

// IndexedTable is a Table read through one index lookup.
type IndexedTable struct {
	*Table
	lookup gsql.IndexLookup
}

// LookupPartitions implements sql.IndexedTable.
func (t *IndexedTable) LookupPartitions(ctx *gsql.Context, lookup gsql.IndexLookup) (gsql.PartitionIter, error) {
	return t.Table.LookupPartitions(ctx, lookup)
}

// Partitions implements sql.Table.
func (t *IndexedTable) Partitions(ctx *gsql.Context) (gsql.PartitionIter, error) {
	return t.Table.LookupPartitions(ctx, t.lookup)
}

// WithProjections implements sql.ProjectedTable.
func (t *IndexedTable) WithProjections(names []string) gsql.Table {
	return &IndexedTable{Table: t.Table.WithProjections(names).(*Table), lookup: t.lookup}
}

// scanPartition is a full scan of a table's rows.
type scanPartition struct{}

// Key implements sql.Partition.
func (scanPartition) Key() []byte { return []byte("scan") }

// lookupPartition is an index lookup: key ranges of one index (the primary
// key's ranges are row-key ranges).
type lookupPartition struct {
	index  *indexMeta
	ranges []keyRange
}

// Key implements sql.Partition.
func (lookupPartition) Key() []byte { return []byte("lookup") }

type partitionIter struct {
	parts []gsql.Partition
	i     int
}

func (p *partitionIter) Next(*gsql.Context) (gsql.Partition, error) {
	if p.i >= len(p.parts) {
		return nil, io.EOF
	}
	p.i++
	return p.parts[p.i-1], nil
}

func (p *partitionIter) Close(*gsql.Context) error { return nil }

// outputOrds returns the schema positions a read returns.
func (t *Table) outputOrds() []int {
	if t.projection != nil {
		return t.projection
	}
	all := make([]int, len(t.meta.schema.Schema))
	for i := range all {
		all[i] = i
	}
	return all
}

// rowBatch is how many row keys a secondary-index read fetches at once.
const rowBatch = 128

// rowIter reads rows by key ranges: of the row keys themselves (index nil
// or primary), or of a secondary index whose entries lead to the rows.
type rowIter struct {
	t      *Table
	tx     *Transaction
	k      *txn.Txn
	index  *indexMeta
	ranges []keyRange
	ords   []int
	colIDs []int64
	lock   bool

	it      txn.Iterator
	pending []gsql.Row // rows fetched ahead (point and index reads)
	vals    []any
	present []bool
}

func (t *Table) newRowIter(ctx *gsql.Context, index *indexMeta, ranges []keyRange) (*rowIter, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	k, err := tx.txn(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	ords := t.outputOrds()
	ids := make([]int64, len(ords))
	for i, o := range ords {
		ids[i] = t.meta.colIDs[o]
	}
	s, _ := sessionOf(ctx)
	r := &rowIter{
		t: t, tx: tx, k: k, index: index, ranges: ranges, ords: ords, colIDs: ids,
		vals: make([]any, len(ids)), present: make([]bool, len(ids)),
		lock: s != nil && s.forUpdate && s.inExplicitTransaction(),
	}
	if index != nil && index.primary {
		r.index = nil
	}
	return r, nil
}

// Next implements sql.RowIter.
func (r *rowIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := r.next(ctx)
	if err != nil && err != io.EOF {
		return nil, toSQLError(err)
	}
	return row, err
}

func (r *rowIter) next(ctx *gsql.Context) (gsql.Row, error) {
	for {
		if len(r.pending) > 0 {
			row := r.pending[0]
			r.pending = r.pending[1:]
			return row, nil
		}
		if r.it != nil && r.it.Valid() {
			if r.index == nil {
				row, err := r.decode(ctx, r.it.Key(), r.it.Value())
				if err != nil {
					return nil, err
				}
				if err := r.it.Next(ctx); err != nil {
					return nil, err
				}
				return row, nil
			}
			if err := r.fetchIndexed(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if r.it != nil {
			r.it.Close()
			r.it = nil
		}
		if len(r.ranges) == 0 {
			return nil, io.EOF
		}
		// Consecutive point ranges are read with one batch get.
		if r.ranges[0].point {
			n := 1
			for n < len(r.ranges) && n < rowBatch && r.ranges[n].point {
				n++
			}
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = r.ranges[i].start
			}
			r.ranges = r.ranges[n:]
			if err := r.fetchPoints(ctx, keys); err != nil {
				return nil, err
			}
			continue
		}
		kr := r.ranges[0]
		r.ranges = r.ranges[1:]
		it, err := r.k.Iter(ctx, kr.start, kr.end)
		if err != nil {
			return nil, err
		}
		r.it = it
	}
}

// fetchPoints reads exact keys: row keys, or unique index keys whose
// values are handles.
func (r *rowIter) fetchPoints(ctx context.Context, keys [][]byte) error {
	got, err := r.k.BatchGet(ctx, keys)
	if err != nil {
		return err
	}
	if r.index == nil {
		for _, key := range keys {
			if v, ok := got[string(key)]; ok {
				row, err := r.decode(ctx, key, v)
				if err != nil {
					return err
				}
				r.pending = append(r.pending, row)
			}
		}
		return nil
	}
	rowKeys := make([][]byte, 0, len(keys))
	for _, key := range keys {
		if v, ok := got[string(key)]; ok {
			h, err := tablecodec.DecodeIndexHandle(key, v, len(r.index.ords), r.t.meta.handle == handleCommon)
			if err != nil {
				return err
			}
			rowKeys = append(rowKeys, r.t.meta.rowKey(h))
		}
	}
	return r.fetchRows(ctx, rowKeys)
}

// fetchIndexed reads up to rowBatch entries of the current index range and
// the rows they point to.
func (r *rowIter) fetchIndexed(ctx context.Context) error {
	rowKeys := make([][]byte, 0, rowBatch)
	for r.it.Valid() && len(rowKeys) < rowBatch {
		h, err := tablecodec.DecodeIndexHandle(r.it.Key(), r.it.Value(), len(r.index.ords), r.t.meta.handle == handleCommon)
		if err != nil {
			return err
		}
		rowKeys = append(rowKeys, r.t.meta.rowKey(h))
		if err := r.it.Next(ctx); err != nil {
			return err
		}
	}
	return r.fetchRows(ctx, rowKeys)
}

// fetchRows reads rows by key, in the order given.
func (r *rowIter) fetchRows(ctx context.Context, rowKeys [][]byte) error {
	if len(rowKeys) == 0 {
		return nil
	}
	got, err := r.k.BatchGet(ctx, rowKeys)
	if err != nil {
		return err
	}
	for _, key := range rowKeys {
		v, ok := got[string(key)]
		if !ok {
			return fmt.Errorf("table %s: index %s points to missing row %q", r.t.Name(), r.index.def.Name, key)
		}
		row, err := r.decode(ctx, key, v)
		if err != nil {
			return err
		}
		r.pending = append(r.pending, row)
	}
	return nil
}

// decode turns a stored row into the output row, locking it first for
// SELECT ... FOR UPDATE.
func (r *rowIter) decode(ctx context.Context, key, value []byte) (gsql.Row, error) {
	if r.lock {
		if err := r.k.LockKeys(ctx, append([]byte(nil), key...)); err != nil {
			return nil, err
		}
	}
	if err := tablecodec.DecodeRow(value, r.colIDs, r.vals, r.present); err != nil {
		return nil, fmt.Errorf("table %s: row %q: %w", r.t.Name(), key, err)
	}
	row := make(gsql.Row, len(r.vals))
	for i, v := range r.vals {
		if r.present[i] {
			row[i] = v
			continue
		}
		d, err := r.t.missingValue(ctx, r.ords[i])
		if err != nil {
			return nil, err
		}
		row[i] = d
	}
	if r.tx.keyless != nil && r.t.meta.handle == handleHidden && r.t.projection == nil {
		r.tx.keyless.remember(r.t.meta, value, key)
	}
	return row, nil
}

// missingValue is the value of a column absent from a stored row (added
// after the row was written without a rewrite: nullable, no default).
func (t *Table) missingValue(ctx context.Context, ord int) (any, error) {
	col := t.meta.schema.Schema[ord]
	if col.Default == nil {
		return nil, nil
	}
	return col.Default.Eval(schemaContext(ctx), nil)
}

// Close implements sql.RowIter.
func (r *rowIter) Close(*gsql.Context) error {
	if r.it != nil {
		r.it.Close()
		r.it = nil
	}
	return nil
}
