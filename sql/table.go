package sql

import (
	"context"
	"fmt"
	"io"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// Table is one table as GMS sees it: its schema, its indexes, and row
// access through the calling transaction. A Table holds the definition it
// was resolved with; every read and write goes through the transaction of
// the context it is given.
type Table struct {
	db   *Database
	meta *tablemeta.Table
	// projection holds the schema positions GMS asked for (nil: all
	// columns); projected is the matching schema.
	projection []int
	projected  gsql.Schema
	projNames  []string
	// scanColumns names the projection in scan cache keys (see
	// projectionKey), spelled once per projection rather than once per
	// range read.
	scanColumns string
	// lockReads: the rows read are locked in the transaction (a foreign
	// key's reference check reads its parent so, see package foreignkey).
	lockReads bool
	// lockBound, when not 0, is the most rows the reader of a locking
	// read takes (a LIMIT directly above it, lockbound.go): its first
	// page of locks is that many rows.
	lockBound int
}

var (
	_ gsql.Table                 = (*Table)(nil)
	_ gsql.ProjectedTable        = (*Table)(nil)
	_ gsql.IndexAddressableTable = (*Table)(nil)
	_ gsql.PrimaryKeyTable       = (*Table)(nil)
	_ gsql.CommentedTable        = (*Table)(nil)
	_ gsql.InsertableTable       = (*Table)(nil)
	_ gsql.UpdatableTable        = (*Table)(nil)
	_ gsql.DeletableTable        = (*Table)(nil)
	_ gsql.ReplaceableTable      = (*Table)(nil)
	_ gsql.TruncateableTable     = (*Table)(nil)
	_ gsql.AutoIncrementTable    = (*Table)(nil)
	_ gsql.Databaseable          = (*Table)(nil)
	_ gsql.IndexedTable          = (*IndexedTable)(nil)
	_ gsql.PartitionIter         = (*partitionIter)(nil)
	_ gsql.RowIter               = (*rowIter)(nil)
	_ gsql.AutoIncrementSetter   = (*autoIncrementSetter)(nil)
	_ gsql.IndexAddressableTable = (*IndexedTable)(nil)
	_ gsql.ProjectedTable        = (*IndexedTable)(nil)
	_ gsql.IndexedTable          = (*Table)(nil)
)

// newTable returns the table of def as seen by ctx's transaction.
func newTable(ctx *gsql.Context, d *Database, def *catalog.TableDef) (*Table, error) {
	if def.Temporary {
		// A temporary table's metadata is kept with it in its session,
		// not in the provider's cache, which would keep it forever.
		if tt := sessionTempTable(ctx, d.def.Name, def.Name); tt != nil && tt.def == def {
			return &Table{db: d, meta: tt.meta}, nil
		}
		m, err := tablemeta.New(ctx, d.def.Name, def)
		if err != nil {
			return nil, err
		}
		return &Table{db: d, meta: m}, nil
	}
	m, err := d.provider.metas.Get(ctx, d.def.Name, def)
	if err != nil {
		return nil, err
	}
	return &Table{db: d, meta: m}, nil
}

// Name implements sql.Nameable.
func (t *Table) Name() string { return t.meta.Def.Name }

// IsTemporary implements sql.TemporaryTable (temptable.go). GMS v0.20.0's
// validateReadOnlyTransaction calls IsTemporary on a nil interface for a
// table that does not implement it, so without this a write in a READ
// ONLY transaction panics (and the client loses its connection) instead of
// failing with error 1792.
func (t *Table) IsTemporary() bool { return t.meta.Def.Temporary }

// Database implements sql.Databaseable.
func (t *Table) Database() string { return t.meta.DBName }

// String implements fmt.Stringer.
func (t *Table) String() string { return t.meta.Def.Name }

// Schema implements sql.Table: the projected columns when projected.
func (t *Table) Schema() gsql.Schema {
	if t.projection != nil {
		return t.projected
	}
	return t.meta.Schema.Schema
}

// PrimaryKeySchema implements sql.PrimaryKeyTable.
func (t *Table) PrimaryKeySchema() gsql.PrimaryKeySchema { return t.meta.Schema }

// Collation implements sql.Table.
func (t *Table) Collation() gsql.CollationID {
	c, err := gsql.ParseCollation("", t.meta.Def.Collation, false)
	if err != nil {
		return tablemeta.DefaultCollationID()
	}
	return c
}

// Comment implements sql.CommentedTable.
func (t *Table) Comment() string { return t.meta.Def.Comment }

// WithProjections implements sql.ProjectedTable.
func (t *Table) WithProjections(names []string) gsql.Table {
	if t.meta.Schema.Schema.HasVirtualColumns() {
		// GMS computes VIRTUAL columns over the table's whole row
		// (generated.go), so such a table is not projected.
		return t
	}
	n := *t
	n.projection = make([]int, 0, len(names))
	n.projected = make(gsql.Schema, 0, len(names))
	n.projNames = names
	for _, name := range names {
		for i, col := range t.meta.Schema.Schema {
			if strings.EqualFold(col.Name, name) {
				n.projection = append(n.projection, i)
				n.projected = append(n.projected, col)
				break
			}
		}
	}
	n.scanColumns = projectionKey(n.projection)
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
		markFullScan(ctx)
		return t.newRowIter(ctx, nil, []keyRange{{KeyRange: t.meta.Exec.RowRange()}})
	case lookupPartition:
		r, err := t.newRowIter(ctx, p.index, p.ranges)
		if err != nil {
			return nil, err
		}
		r.reverse = p.reverse
		if p.index.Prefixed {
			// Keys of a prefix index order rows by the prefix only; GMS
			// relies on index order (it drops ORDER BY), so sort them.
			return newSortedIter(ctx, r, p.index, t.projection), nil
		}
		return r, nil
	}
	return nil, fmt.Errorf("table %s: unknown partition %T", t.Name(), p)
}

// GetIndexes implements sql.IndexAddressable.
func (t *Table) GetIndexes(*gsql.Context) ([]gsql.Index, error) {
	out := make([]gsql.Index, 0, len(t.meta.Indexes)+1)
	if t.meta.Primary != nil {
		out = append(out, &Index{table: t, im: t.meta.Primary})
	}
	for _, im := range t.meta.Indexes {
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
	if wholeIndex(ranges) {
		markFullScan(ctx)
	}
	krs, err := keyRanges(ctx, t.meta, x.im, ranges)
	if err != nil {
		return nil, err
	}
	return &partitionIter{parts: []gsql.Partition{lookupPartition{index: x.im, ranges: krs, reverse: lookup.IsReverse}}}, nil
}

// markFullScan records in ctx's session that its statement reads a whole
// table or index (SERVER_QUERY_NO_INDEX_USED, status.go).
func markFullScan(ctx *gsql.Context) {
	if s, ok := ctx.Session.(*Session); ok {
		s.fullScan.Store(true)
	}
}

// wholeIndex reports whether ranges read a whole index: a range with no
// bound on its first column (a merge join's or an ordered scan's).
func wholeIndex(ranges gsql.MySQLRangeCollection) bool {
	for _, r := range ranges {
		if len(r) == 0 {
			return true
		}
		_, below := r[0].LowerBound.(gsql.BelowNull)
		_, above := r[0].UpperBound.(gsql.AboveAll)
		if below && above {
			return true
		}
	}
	return false
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

// Unindexed implements planrules.IndexedReader: the table read whole.
func (t *IndexedTable) Unindexed() gsql.Table { return t.Table }

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
	index  *tablemeta.Index
	ranges []keyRange
	// reverse reads in descending key order (ORDER BY ... DESC).
	reverse bool
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

// rowIter runs the reads of a partition: scans of row or index key
// ranges and point reads, through the executor's operators, in key order.
type rowIter struct {
	t     *Table
	tx    *Transaction
	k     *txn.Txn
	index *tablemeta.Index // nil: the rows themselves (a scan or primary key)
	reads []keyRange
	dec   *executor.RowDecoder
	lock  bool
	// reverse reads the ranges, and each range, in descending key order.
	reverse bool
	// track: remember where rows came from, for UPDATE and DELETE of a
	// table without a primary key (see keylessTracker).
	track bool

	cur     executor.RowIterator
	pending []executor.Row
	// taken counts the reads started, so that a row read by a range
	// scan or a unique point is known to come from read taken-1
	// (primary-key points are read together: not so for them); from is
	// that read of the row nextRow returned last (reads ahead of a
	// locking read move taken past it).
	taken int
	from  int

	// pid is the statement reading; rec collects the rows of the current
	// range read for the scan cache while recording is set.
	pid       uint64
	recKey    scanKey
	rec       []executor.Row
	recording bool

	// covering, when set, reads rows of the secondary index from its
	// entries alone and converts their values (covering.go).
	covering []func(any) any

	// sess is the reading session, nil outside one; examined counts the
	// rows read, added to sess.rowsExamined at Close.
	sess     *Session
	examined uint64

	// lockPages: a SELECT ... FOR UPDATE that waits for locks (not SKIP
	// LOCKED, which leaves rows out one by one) locks its rows a page at
	// a time, one store request a page where each row was one (see
	// readLockedPage); locked holds the rows read and locked ahead,
	// served before anything else is read, and pageSize the size of the
	// next page.
	lockPages bool
	locked    []lockedRow
	pageSize  int
	// firstPage, when not 0, is the size of the first page: the rows
	// the reader takes at most (Table.lockBound).
	firstPage int
	// lockFirst: a locking read in a pessimistic REPEATABLE READ
	// transaction that waits for locks locks a batch of primary-key
	// points before it reads them, those with rows only, and gets the
	// rows with their locks (lockRowsReadingIfExist): one request where
	// a read and a lock were two.
	lockFirst bool
}

// lockedRow is a row read ahead and locked, with the read it came from
// (rowIter.from).
type lockedRow struct {
	row  executor.Row
	from int
}

// maxLockPage bounds the rows a locking read reads ahead and locks with
// one request.
const maxLockPage = 256

func (t *Table) newRowIter(ctx *gsql.Context, index *tablemeta.Index, reads []keyRange) (*rowIter, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	k, err := tx.txn(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	dec, err := t.meta.Exec.NewRowDecoder(t.projection)
	if err != nil {
		return nil, err
	}
	s, _ := sessionOf(ctx)
	r := &rowIter{
		t: t, tx: tx, k: k, index: index, reads: reads, dec: dec,
		// A reference check locks only inside a writing statement: the
		// check of existing rows that GMS runs for ALTER TABLE ... ADD
		// FOREIGN KEY is repeated by AddForeignKey after a fence.
		lock:  (t.lockReads && tx.stmtOpen) || (s != nil && s.forUpdate && s.inExplicitTransaction()),
		track: t.meta.Exec.HandleKind == executor.HandleRowID && t.projection == nil,
		pid:   ctx.Pid(),
		sess:  s,
	}
	if index != nil && index.IsPrimary {
		r.index = nil
	}
	if r.lock && s != nil && !(t.lockReads && tx.stmtOpen) && s.lockWait != compat.LockSkipLocked {
		// A SELECT ... FOR UPDATE, not a reference check of a writing
		// statement, whose reads ahead could miss the statement's own
		// later writes.
		r.lockPages = true
		r.firstPage = t.lockBound
		r.lockFirst = lockBeforeRead(tx, k) && s.lockWait == compat.LockWaitDefault
	}
	if r.index != nil && !r.lock && !r.track {
		// A locking read takes the rows' latest versions through the
		// row path.
		r.covering = coveringRead(t, r.index)
	}
	return r, nil
}

// Next implements sql.RowIter.
func (r *rowIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := r.nextRow(ctx)
	if err != nil {
		return nil, err
	}
	return gsql.Row(row.Values), nil
}

// nextRow is Next with the row's handle: the next row read, locked when
// the statement locks what it reads.
func (r *rowIter) nextRow(ctx *gsql.Context) (executor.Row, error) {
	if r.lockPages {
		if len(r.locked) == 0 {
			if err := r.readLockedPage(ctx); err != nil {
				return executor.Row{}, err
			}
		}
		l := r.locked[0]
		r.locked = r.locked[1:]
		r.from = l.from
		return l.row, nil
	}
	row, err := r.next(ctx)
	r.from = r.taken - 1
	if err != nil {
		if err == io.EOF {
			return executor.Row{}, err
		}
		return executor.Row{}, toSQLError(err)
	}
	r.examined++
	for r.lock {
		err := lockRows(ctx, r.tx, r.k, r.t.meta.Exec, row.Handle)
		if err == nil {
			break
		}
		if err != errLockedRowSkipped {
			return executor.Row{}, err
		}
		// SKIP LOCKED: the next row instead.
		if row, err = r.next(ctx); err != nil {
			if err == io.EOF {
				return executor.Row{}, err
			}
			return executor.Row{}, toSQLError(err)
		}
		r.from = r.taken - 1
		r.examined++
	}
	if r.track && r.tx.keyless != nil {
		if err := r.tx.keyless.remember(r.t.meta, row); err != nil {
			return executor.Row{}, err
		}
	}
	return row, nil
}

// readLockedPage reads the next page of a locking read's rows into
// r.locked and locks them with one request (io.EOF: no row left). Pages
// grow from one row to maxLockPage, doubling: a read that GMS stops early
// (a LIMIT) has locked at most as many rows again as it returned, and a
// long one makes one request per maxLockPage rows. A read whose reader
// takes at most n rows (firstPage, a LIMIT right above it) reads and
// locks those n first, exactly what it returns; should the reader ask
// for more, the pages grow from one row again. A commit newer than
// the statement's snapshot to a row of the page, or a wait too long,
// fails the statement as a row's lock does (lockError); a row read and
// locked is the newest version, as the lock is taken at the snapshot the
// row was read at.
func (r *rowIter) readLockedPage(ctx *gsql.Context) error {
	n := max(r.pageSize, 1)
	r.pageSize = min(2*n, maxLockPage)
	if r.firstPage > 0 {
		n, r.firstPage, r.pageSize = r.firstPage, 0, 1
	}
	r.locked = r.locked[:0]
	for len(r.locked) < n {
		row, err := r.next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return toSQLError(err)
		}
		r.examined++
		if r.track && r.tx.keyless != nil {
			if err := r.tx.keyless.remember(r.t.meta, row); err != nil {
				return err
			}
		}
		r.locked = append(r.locked, lockedRow{row: row, from: r.taken - 1})
	}
	if len(r.locked) == 0 {
		return io.EOF
	}
	handles := make([]tablecodec.Handle, len(r.locked))
	for i, l := range r.locked {
		handles[i] = l.row.Handle
	}
	if err := lockRows(ctx, r.tx, r.k, r.t.meta.Exec, handles...); err != nil {
		r.locked = r.locked[:0]
		return err
	}
	return nil
}

func (r *rowIter) next(ctx context.Context) (executor.Row, error) {
	for {
		if len(r.pending) > 0 {
			row := r.pending[0]
			r.pending = r.pending[1:]
			return row, nil
		}
		if r.cur != nil {
			row, err := r.cur.Next(ctx)
			if err == nil && r.recording {
				if len(r.rec) < maxCachedScan {
					r.rec = append(r.rec, executor.Row{Handle: row.Handle, Values: append([]any(nil), row.Values...)})
				} else {
					r.recording, r.rec = false, nil
				}
			}
			if err != io.EOF {
				return row, err
			}
			r.cur.Close()
			r.cur = nil
			if r.recording {
				r.tx.scans.put(r.pid, r.recKey, r.rec)
				r.recording, r.rec = false, nil
			}
		}
		if len(r.reads) == 0 {
			return executor.Row{}, io.EOF
		}
		if err := r.start(ctx); err != nil {
			return executor.Row{}, err
		}
	}
}

// start begins the next read: consecutive primary-key points are read
// with one batch get, a unique index point with a unique lookup, a range
// with a scan of the rows or of the index. Rows come in key order, which
// GMS relies on to skip sorting by an index's columns.
func (r *rowIter) start(ctx context.Context) error {
	m := r.t.meta
	kr := r.take()
	switch {
	case kr.point && r.index == nil:
		handles := []tablecodec.Handle{kr.handle}
		for r.nextIsPoint() {
			handles = append(handles, r.take().handle)
		}
		if gctx, ok := ctx.(*gsql.Context); ok && r.lockFirst && (r.t.lockBound == 0 || len(handles) <= r.t.lockBound) {
			// The rows come with their locks (every point is read:
			// no LIMIT stops the read before the last);
			// readLockedPage then finds them locked and asks for
			// nothing. A point without a row is not locked.
			if _, err := lockRowsReadingIfExist(gctx, r.tx, r.k, m.Exec, handles...); err != nil {
				return err
			}
		}
		rows, err := executor.BatchGetRows(ctx, r.k, m.Exec, r.dec, handles)
		r.pending = rows
		return err
	case kr.point:
		row, found, err := executor.UniqueLookup(ctx, r.k, m.Exec, r.index.Exec, r.dec, kr.vals)
		if found {
			r.pending = append(r.pending, row)
		}
		return err
	}
	cacheable := r.cacheable()
	if cacheable {
		key := newScanKey(m.Def, r.indexID(), kr, r.reverse, r.t.scanColumns)
		rows, cached, keep := r.tx.scans.lookup(r.pid, key)
		if cached {
			r.pending = cloneRows(rows)
			return nil
		}
		if keep {
			r.recKey, r.rec, r.recording = key, nil, true
		}
	}
	opts := executor.ScanOptions{Reverse: r.reverse}
	var err error
	if r.index == nil {
		r.cur, err = executor.ScanTable(ctx, r.k, m.Exec, r.dec, kr.KeyRange, opts)
	} else if r.covering != nil {
		var it executor.RowIterator
		it, err = executor.IndexOnly(ctx, r.k, m.Exec, r.index.Exec, r.t.projection, kr.KeyRange, opts)
		if err == nil {
			r.cur = coveredRows{RowIterator: it, conv: r.covering}
		}
	} else {
		r.cur, err = executor.IndexLookup(ctx, r.k, m.Exec, r.index.Exec, r.dec, kr.KeyRange, opts)
	}
	return err
}

// cacheable reports whether range reads may use the scan cache: the
// statement writes nothing (no editor stage is open) and changed no
// definition.
func (r *rowIter) cacheable() bool {
	return r.pid != 0 && !r.tx.stmtOpen && !r.tx.catDirty
}

// indexID names the index read in a scan key (0: the rows).
func (r *rowIter) indexID() int64 {
	if r.index == nil {
		return 0
	}
	return r.index.Def.ID
}

// take removes the next read: the first, or the last when reading in
// reverse.
func (r *rowIter) take() keyRange {
	r.taken++
	if r.reverse {
		kr := r.reads[len(r.reads)-1]
		r.reads = r.reads[:len(r.reads)-1]
		return kr
	}
	kr := r.reads[0]
	r.reads = r.reads[1:]
	return kr
}

// nextIsPoint reports whether the next read is a primary-key point.
func (r *rowIter) nextIsPoint() bool {
	if len(r.reads) == 0 || r.index != nil {
		return false
	}
	if r.reverse {
		return r.reads[len(r.reads)-1].point
	}
	return r.reads[0].point
}

// Close implements sql.RowIter.
func (r *rowIter) Close(*gsql.Context) error {
	if r.sess != nil && r.examined > 0 {
		r.sess.rowsExamined.Add(r.examined)
		r.examined = 0
	}
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
	return nil
}
