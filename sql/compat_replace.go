package sql

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL counts a REPLACE row as one, plus one for every row it deleted
// to make room: a new row that collides with one row on its primary key
// and with another on a unique key counts 3. GMS counts 2 for any number
// of deleted rows (rowexec's replaceRowHandler looks only at whether the
// row it returns carries an old row).
//
// countedReplace gives the REPLACE's destination table a replacer that
// counts the rows deleted for each inserted row, and the statement's
// iterator (rowsAffectedIter) adds those GMS did not count to its OK
// result. It is built by
// percdb's row-iterator builder (compat_exec.go). A row replaced by the
// same row counts 1 where MySQL changes it in place (replacesInPlace).

// replaceDeletes counts, for one REPLACE statement, the deletes GMS's
// count misses, and the rows it counts that MySQL does not.
type replaceDeletes struct {
	pending int      // deletes since the last insert
	last    gsql.Row // the row deleted last
	missed  int      // deletes beyond the first of each inserted row, less the rows replaced by themselves
}

// countedReplace returns ii with its destination's replacer counting
// deletes, and the counter; false when ii is no REPLACE of a table or is
// counted already.
func countedReplace(ii *plan.InsertInto) (*plan.InsertInto, *replaceDeletes, bool) {
	if !ii.IsReplace {
		return ii, nil, false
	}
	rt, ok := destinationTable(ii)
	if !ok {
		return ii, nil, false
	}
	if _, done := rt.Table.(*countingReplaceTable); done {
		return ii, nil, false
	}
	// The table may be wrapped (GMS's ProcessTable): GMS finds the
	// insertable table under the wrappers, and so does this.
	ins, err := plan.GetInsertable(rt)
	if err != nil {
		return ii, nil, false
	}
	rep, ok := ins.(gsql.ReplaceableTable)
	if !ok {
		return ii, nil, false
	}
	c := &replaceDeletes{}
	ret, ok := withDestinationTable(ii, rt, &countingReplaceTable{Table: rt.Table, ins: ins, rep: rep, count: c})
	return ret, c, ok
}

// destinationTable returns the table ii writes: its destination, or the
// child of an InsertDestination.
func destinationTable(ii *plan.InsertInto) (*plan.ResolvedTable, bool) {
	dest := ii.Destination
	if d, ok := dest.(*plan.InsertDestination); ok {
		dest = d.Child
	}
	rt, ok := dest.(*plan.ResolvedTable)
	return rt, ok
}

// withDestinationTable returns ii writing t in place of rt's table, rt
// being destinationTable's answer.
func withDestinationTable(ii *plan.InsertInto, rt *plan.ResolvedTable, t gsql.Table) (*plan.InsertInto, bool) {
	dest, err := rt.WithTable(t)
	if err != nil {
		return ii, false
	}
	var out gsql.Node = dest
	if id, ok := ii.Destination.(*plan.InsertDestination); ok {
		if out, err = id.WithChildren(dest); err != nil {
			return ii, false
		}
	}
	ret := *ii
	ret.Destination = out
	return &ret, true
}

// countingReplaceTable is a table whose replacer counts deletes.
type countingReplaceTable struct {
	gsql.Table
	ins   gsql.InsertableTable // the insertable table under Table's wrappers
	rep   gsql.ReplaceableTable
	count *replaceDeletes
}

var (
	_ gsql.ReplaceableTable = (*countingReplaceTable)(nil)
	_ gsql.TableWrapper     = (*countingReplaceTable)(nil)
)

// Underlying implements sql.TableWrapper.
func (t *countingReplaceTable) Underlying() gsql.Table { return t.Table }

// Inserter implements sql.InsertableTable.
func (t *countingReplaceTable) Inserter(ctx *gsql.Context) gsql.RowInserter {
	return t.ins.Inserter(ctx)
}

// Replacer implements sql.ReplaceableTable.
func (t *countingReplaceTable) Replacer(ctx *gsql.Context) gsql.RowReplacer {
	tbl, ok := t.ins.(*Table)
	inPlace := ok && tbl.replacesInPlace(ctx)
	return &countingReplacer{RowReplacer: t.rep.Replacer(ctx), count: t.count, inPlace: inPlace}
}

// countingReplacer is a replacer that counts deletes.
type countingReplacer struct {
	gsql.RowReplacer
	count *replaceDeletes
	// inPlace: MySQL changes a row a new one collides with in place
	// (Table.replacesInPlace), and counts it 1, not 2, when the new
	// row is the same.
	inPlace bool
}

// Insert implements sql.RowReplacer.
func (r *countingReplacer) Insert(ctx *gsql.Context, row gsql.Row) error {
	if err := r.RowReplacer.Insert(ctx, row); err != nil {
		return err
	}
	switch {
	case r.count.pending > 1:
		r.count.missed += r.count.pending - 1
	case r.count.pending == 1 && r.inPlace && rowValuesKey(r.count.last) == rowValuesKey(row):
		r.count.missed--
	}
	r.count.pending = 0
	r.count.last = nil
	return nil
}

// Delete implements sql.RowReplacer.
func (r *countingReplacer) Delete(ctx *gsql.Context, row gsql.Row) error {
	if err := r.RowReplacer.Delete(ctx, row); err != nil {
		return err
	}
	r.count.pending++
	r.count.last = row
	return nil
}

// replacesInPlace reports whether MySQL's REPLACE changes a row of t that
// a new row collides with in place rather than deleting it and inserting
// the new one (sql_insert.cc, write_record): it does when the index of
// the collision is the table's last unique one, no foreign key
// references the table and it has no DELETE trigger. A new row the same
// as the old then counts 1 (HA_ERR_RECORD_IS_THE_SAME), where a delete
// and an insert count 2. A row the same as the old collides first on
// the primary key, so percdb asks for t's only unique index.
func (t *Table) replacesInPlace(ctx *gsql.Context) bool {
	unique := 0
	if t.meta.Primary != nil {
		unique++
	}
	for _, im := range t.meta.Indexes {
		if im.Unique {
			unique++
		}
	}
	if unique != 1 {
		return false
	}
	if fks, err := t.GetReferencedForeignKeys(ctx); err != nil || len(fks) > 0 {
		return false
	}
	_, cat, err := t.db.catalog(ctx)
	if err != nil {
		return false
	}
	for _, tr := range cat.Triggers[t.db.def.ID] {
		if strings.EqualFold(tr.Table, t.Name()) && strings.EqualFold(tr.Event, "delete") {
			return false
		}
	}
	return true
}

// rowsAffectedIter gives the OK result of the iterator it wraps the
// affected-row count fix returns: a sql.MutableRowIter, so that GMS puts
// its count (the accumulator) between it and the statement's rows.
type rowsAffectedIter struct {
	child gsql.RowIter
	fix   func(counted uint64) uint64
}

var _ gsql.MutableRowIter = (*rowsAffectedIter)(nil)

// Next implements sql.RowIter.
func (i *rowsAffectedIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := i.child.Next(ctx)
	if err != nil || len(row) != 1 {
		return row, err
	}
	if ok, isOK := row[0].(types.OkResult); isOK {
		was := ok.RowsAffected
		ok.RowsAffected = i.fix(ok.RowsAffected)
		// An UPDATE's "Rows matched: m Changed: c" moves with it.
		if info, isInfo := ok.Info.(plan.UpdateInfo); isInfo {
			d := int(ok.RowsAffected) - int(was)
			info.Matched += d
			info.Updated += d
			ok.Info = info
		}
		// ROW_COUNT() is the count too: GMS's accumulator set it
		// from its own.
		ctx.SetLastQueryInfoInt(gsql.RowCount, int64(ok.RowsAffected))
		return gsql.Row{ok}, nil
	}
	return row, nil
}

// Close implements sql.RowIter.
func (i *rowsAffectedIter) Close(ctx *gsql.Context) error { return i.child.Close(ctx) }

// GetChildIter implements sql.MutableRowIter.
func (i *rowsAffectedIter) GetChildIter() gsql.RowIter { return i.child }

// WithChildIter implements sql.MutableRowIter.
func (i *rowsAffectedIter) WithChildIter(child gsql.RowIter) gsql.RowIter {
	return &rowsAffectedIter{child: child, fix: i.fix}
}

// A DELETE of several tables (DELETE t FROM t JOIN o ON ...) deletes a
// row of t once however many rows of o it joins, and MySQL counts the
// rows deleted; GMS deletes it again for every joined row and counts
// the joined rows (16 affected rows for 8 deleted).
//
// countedJoinDelete puts each target table of such a DELETE behind a
// deleter that deletes a row once and counts the rows it deleted, and
// the statement's iterator answers that count.

// joinDeletes counts the rows one DELETE of several tables deleted.
type joinDeletes struct {
	deleted int
}

// countedJoinDelete returns d with its targets counted; false when d has
// no explicit targets or they are counted already.
func countedJoinDelete(d *plan.DeleteFrom) (*plan.DeleteFrom, *joinDeletes, bool) {
	if !d.HasExplicitTargets() {
		return d, nil, false
	}
	c := &joinDeletes{}
	targets := d.GetDeleteTargets()
	out := make([]gsql.Node, len(targets))
	for i, t := range targets {
		if _, done := t.(*onceDeleteTarget); done {
			return d, nil, false
		}
		del, err := plan.GetDeletable(t)
		if err != nil {
			return d, nil, false
		}
		out[i] = &onceDeleteTarget{UnaryNode: plan.UnaryNode{Child: t}, del: del, count: c, seen: map[string]bool{}}
	}
	return d.WithExplicitTargets(out), c, true
}

// onceDeleteTarget is a target of a DELETE of several tables whose
// deleter deletes each row once. GMS finds the table's name and alias
// through it (its child is the target as planned).
type onceDeleteTarget struct {
	plan.UnaryNode
	del   gsql.DeletableTable
	count *joinDeletes
	seen  map[string]bool // the rows deleted, by their values
}

var (
	_ gsql.Node           = (*onceDeleteTarget)(nil)
	_ gsql.DeletableTable = (*onceDeleteTarget)(nil)
)

// Name implements sql.Table.
func (t *onceDeleteTarget) Name() string { return t.del.Name() }

// String implements sql.Node.
func (t *onceDeleteTarget) String() string { return t.Child.String() }

// Schema implements sql.Node.
func (t *onceDeleteTarget) Schema() gsql.Schema { return t.Child.Schema() }

// Collation implements sql.Table.
func (t *onceDeleteTarget) Collation() gsql.CollationID { return t.del.Collation() }

// Partitions implements sql.Table.
func (t *onceDeleteTarget) Partitions(ctx *gsql.Context) (gsql.PartitionIter, error) {
	return t.del.Partitions(ctx)
}

// PartitionRows implements sql.Table.
func (t *onceDeleteTarget) PartitionRows(ctx *gsql.Context, p gsql.Partition) (gsql.RowIter, error) {
	return t.del.PartitionRows(ctx, p)
}

// IsReadOnly implements sql.Node.
func (t *onceDeleteTarget) IsReadOnly() bool { return false }

// WithChildren implements sql.Node.
func (t *onceDeleteTarget) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	ret := *t
	ret.Child = children[0]
	return &ret, nil
}

// Deleter implements sql.DeletableTable. A table without a primary key
// deletes every row equal to the one joined (keylessjoin.go).
func (t *onceDeleteTarget) Deleter(ctx *gsql.Context) gsql.RowDeleter {
	if tbl, ok := t.del.(*Table); ok && tbl.isKeyless() {
		return &onceDeleter{RowDeleter: newKeylessJoinEditor(tbl), t: t}
	}
	return &onceDeleter{RowDeleter: t.del.Deleter(ctx), t: t}
}

// onceDeleter deletes each row once and counts it.
type onceDeleter struct {
	gsql.RowDeleter
	t *onceDeleteTarget
}

// Delete implements sql.RowDeleter.
func (d *onceDeleter) Delete(ctx *gsql.Context, row gsql.Row) error {
	key := rowValuesKey(row)
	if d.t.seen[key] {
		return nil
	}
	if k, ok := d.RowDeleter.(*keylessJoinEditor); ok {
		n, err := k.deleteLike(ctx, row)
		if err != nil {
			return err
		}
		d.t.seen[key] = true
		d.t.count.deleted += n
		return nil
	}
	if err := d.RowDeleter.Delete(ctx, row); err != nil {
		return err
	}
	d.t.seen[key] = true
	d.t.count.deleted++
	return nil
}

// MySQL counts a row that INSERT ... ON DUPLICATE KEY UPDATE changes as
// 2, and one it leaves as it was as 0, telling them apart by the row's
// bytes. GMS compares the old and new rows under the table's schema, so
// under a case-insensitive collation SET s = 'A' over 'a' wrote 'A' but
// counted 0. bytewiseUpsert gives the statement a destination whose
// schema compares strings by their bytes (as withBytewiseChanges does
// for UPDATE); the values it converts and the rows it writes are the
// same.

// bytewiseUpsert returns ii over such a destination; false when ii is no
// INSERT ... ON DUPLICATE KEY UPDATE of a table with a string column
// under another collation than its character set's binary one, or is
// so already. GMS takes the schema from an InsertDestination when there
// is one (it carries the column defaults), else from the table.
func bytewiseUpsert(ii *plan.InsertInto) (*plan.InsertInto, bool) {
	if ii.IsReplace || len(ii.OnDupExprs) == 0 {
		return ii, false
	}
	if id, ok := ii.Destination.(*plan.InsertDestination); ok {
		sch, changed := bytewiseSchema(id.Sch)
		if !changed {
			return ii, false
		}
		dest := *id
		dest.Sch = sch
		ret := *ii
		ret.Destination = &dest
		return &ret, true
	}
	rt, ok := ii.Destination.(*plan.ResolvedTable)
	if !ok {
		return ii, false
	}
	sch, changed := bytewiseSchema(rt.Schema())
	if !changed {
		return ii, false
	}
	ins, err := plan.GetInsertable(rt)
	if err != nil {
		return ii, false
	}
	upd, ok := ins.(gsql.UpdatableTable)
	if !ok {
		return ii, false
	}
	return withDestinationTable(ii, rt, &bytewiseUpsertTable{Table: rt.Table, ins: ins, upd: upd, sch: sch})
}

// bytewiseUpsertTable is a table whose schema compares strings by their
// bytes, writing through the insertable table under its wrappers.
type bytewiseUpsertTable struct {
	gsql.Table
	ins gsql.InsertableTable
	upd gsql.UpdatableTable
	sch gsql.Schema
}

var (
	_ gsql.InsertableTable = (*bytewiseUpsertTable)(nil)
	_ gsql.UpdatableTable  = (*bytewiseUpsertTable)(nil)
	_ gsql.TableWrapper    = (*bytewiseUpsertTable)(nil)
)

// Schema implements sql.Table.
func (t *bytewiseUpsertTable) Schema() gsql.Schema { return t.sch }

// Underlying implements sql.TableWrapper.
func (t *bytewiseUpsertTable) Underlying() gsql.Table { return t.Table }

// Inserter implements sql.InsertableTable.
func (t *bytewiseUpsertTable) Inserter(ctx *gsql.Context) gsql.RowInserter {
	return t.ins.Inserter(ctx)
}

// Updater implements sql.UpdatableTable.
func (t *bytewiseUpsertTable) Updater(ctx *gsql.Context) gsql.RowUpdater { return t.upd.Updater(ctx) }

// rowValuesKey is a key equal for rows of equal values: each value's
// type and text (%#v wrote a DECIMAL's big.Int pointer, different for
// every read of a row; its text is its value at the column's scale).
func rowValuesKey(row gsql.Row) string {
	var b strings.Builder
	for _, v := range row {
		switch v := v.(type) {
		case string:
			fmt.Fprintf(&b, "s%q,", v)
		case []byte:
			fmt.Fprintf(&b, "b%q,", v)
		default:
			fmt.Fprintf(&b, "%T:%v,", v, v)
		}
	}
	return b.String()
}
