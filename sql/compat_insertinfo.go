package sql

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/compat"
)

// MySQL's OK packet for an INSERT or REPLACE of several rows of VALUES,
// or of a SELECT's rows, carries the info "Records: R  Duplicates: D
// Warnings: W" (sql_insert.cc, ER_INSERT_INFO), which the mysql client
// prints and PHP's mysqli_info returns; one row of VALUES carries none.
// R counts the rows the statement read from its source; D the rows that
// met a duplicate: for INSERT IGNORE the rows not inserted (R less the
// rows copied), otherwise the rows REPLACE deleted plus the rows ON
// DUPLICATE KEY UPDATE changed (or found, for a client with
// CLIENT_FOUND_ROWS). GMS sends no info for an INSERT.
//
// insertInfo counts R at the statement's source (countedSource) and the
// updates of an upsert at its destination's updater
// (countingUpsertTable), and insertInfoIter puts the info into the
// statement's OK result; the handler writes the statement's warning
// count into it (updateInfoWarnings).

// insertCounts are the counts of one INSERT or REPLACE.
type insertCounts struct {
	records int // rows read from the source
	touched int // rows an upsert updated, changed or not
	changed int // rows an upsert changed
}

// insertInfo is the info of an INSERT's OK packet, or of a LOAD DATA's
// ("Records: R  Deleted: D  Skipped: S  Warnings: W", sql_load.cc's
// ER_LOAD_INFO: the rows REPLACE deleted, the rows not copied).
type insertInfo struct {
	records, duplicates int
	load                bool
	deleted, skipped    int
}

// String implements fmt.Stringer: MySQL's text, with a warning count the
// handler replaces with the statement's.
func (i insertInfo) String() string {
	if i.load {
		return fmt.Sprintf("Records: %d  Deleted: %d  Skipped: %d  Warnings: 0", i.records, i.deleted, i.skipped)
	}
	return fmt.Sprintf("Records: %d  Duplicates: %d  Warnings: 0", i.records, i.duplicates)
}

// withInsertInfo returns ii counting its records (and an upsert's
// updates) and whether it did; false when ii counts them already or
// MySQL sends no info for it (one row of VALUES).
func withInsertInfo(ii *plan.InsertInto) (*plan.InsertInto, *insertCounts, bool) {
	// The source under FitRows (sql/compat/fit.go), which FitInsert
	// puts on top of it, and finds there on the statement's next build.
	source, fit := ii.Source, (*compat.FitRows)(nil)
	if f, ok := source.(*compat.FitRows); ok {
		source, fit = f.Child, f
	}
	if _, done := source.(*countedSource); done {
		return ii, nil, false
	}
	if compat.SingleRow(source) {
		return ii, nil, false
	}
	counts := &insertCounts{}
	ret := *ii
	if len(ii.OnDupExprs) > 0 {
		rt, ok := destinationTable(ii)
		if !ok {
			return ii, nil, false
		}
		ins, err := plan.GetInsertable(rt)
		if err != nil {
			return ii, nil, false
		}
		upd, ok := ins.(gsql.UpdatableTable)
		if !ok {
			return ii, nil, false
		}
		counted, ok := withDestinationTable(ii, rt, &countingUpsertTable{Table: rt.Table, ins: ins, upd: upd, counts: counts})
		if !ok {
			return ii, nil, false
		}
		ret = *counted
	}
	var counted gsql.Node = &countedSource{UnaryNode: plan.UnaryNode{Child: source}, counts: counts}
	if fit != nil {
		f := *fit
		f.Child = counted
		counted = &f
	}
	ret.Source = counted
	return &ret, counts, true
}

// countedSource is an INSERT's source whose rows are counted as records.
type countedSource struct {
	plan.UnaryNode
	counts *insertCounts
}

var _ gsql.Node = (*countedSource)(nil)

// String implements sql.Node.
func (n *countedSource) String() string { return n.Child.String() }

// IsReadOnly implements sql.Node.
func (n *countedSource) IsReadOnly() bool { return n.Child.IsReadOnly() }

// WithChildren implements sql.Node.
func (n *countedSource) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &countedSource{UnaryNode: plan.UnaryNode{Child: children[0]}, counts: n.counts}, nil
}

// countingRowIter counts the rows of its child as records.
type countingRowIter struct {
	child  gsql.RowIter
	counts *insertCounts
}

// Next implements sql.RowIter.
func (i *countingRowIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := i.child.Next(ctx)
	if err == nil {
		i.counts.records++
	}
	return row, err
}

// Close implements sql.RowIter.
func (i *countingRowIter) Close(ctx *gsql.Context) error { return i.child.Close(ctx) }

// countingUpsertTable is a table whose updater counts an upsert's
// updates.
type countingUpsertTable struct {
	gsql.Table
	ins    gsql.InsertableTable // the insertable table under Table's wrappers
	upd    gsql.UpdatableTable
	counts *insertCounts
}

var (
	_ gsql.InsertableTable = (*countingUpsertTable)(nil)
	_ gsql.UpdatableTable  = (*countingUpsertTable)(nil)
	_ gsql.TableWrapper    = (*countingUpsertTable)(nil)
)

// Underlying implements sql.TableWrapper.
func (t *countingUpsertTable) Underlying() gsql.Table { return t.Table }

// Inserter implements sql.InsertableTable.
func (t *countingUpsertTable) Inserter(ctx *gsql.Context) gsql.RowInserter {
	return t.ins.Inserter(ctx)
}

// Updater implements sql.UpdatableTable.
func (t *countingUpsertTable) Updater(ctx *gsql.Context) gsql.RowUpdater {
	return &countingUpdater{RowUpdater: t.upd.Updater(ctx), counts: t.counts}
}

// countingUpdater is an updater that counts the rows it updates, and
// those it changes by their bytes (as MySQL, and bytewiseUpsert).
type countingUpdater struct {
	gsql.RowUpdater
	counts *insertCounts
}

// Update implements sql.RowUpdater.
func (u *countingUpdater) Update(ctx *gsql.Context, old, new gsql.Row) error {
	if err := u.RowUpdater.Update(ctx, old, new); err != nil {
		return err
	}
	u.counts.touched++
	if rowValuesKey(old) != rowValuesKey(new) {
		u.counts.changed++
	}
	return nil
}

// insertInfoIter gives the OK result of the INSERT it wraps MySQL's
// info; a sql.MutableRowIter, so that GMS puts its count (the
// accumulator) between it and the statement's rows.
type insertInfoIter struct {
	child  gsql.RowIter
	ii     *plan.InsertInto
	counts *insertCounts
	load   bool // a LOAD DATA's
}

var _ gsql.MutableRowIter = (*insertInfoIter)(nil)

// Next implements sql.RowIter.
func (i *insertInfoIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := i.child.Next(ctx)
	if err != nil || len(row) != 1 {
		return row, err
	}
	ok, isOK := row[0].(types.OkResult)
	if !isOK {
		return row, nil
	}
	ok.Info = i.info(ctx, int(ok.RowsAffected))
	return gsql.Row{ok}, nil
}

// info returns MySQL's info of the statement that affected rows: its
// duplicates are records - copied for IGNORE, else deleted + updated
// (sql_insert.cc); a LOAD DATA's skipped rows are records - copied
// (sql_load.cc).
func (i *insertInfoIter) info(ctx *gsql.Context, affected int) insertInfo {
	c := i.counts
	foundRows := ctx.Client().Capabilities&mysql.CapabilityClientFoundRows != 0
	var copied, deleted, updated int
	switch {
	case i.ii.IsReplace:
		copied = c.records
		deleted = affected - copied
	case len(i.ii.OnDupExprs) > 0:
		// An inserted row counts 1, a changed one 2 (a found one 1
		// more with CLIENT_FOUND_ROWS); both are copied.
		updated = c.changed
		copied = affected - c.changed
		if foundRows {
			updated = c.touched
			copied = affected - c.touched
		}
	default:
		copied = affected
	}
	info := insertInfo{records: c.records, duplicates: max(deleted, 0) + updated}
	if i.ii.Ignore {
		info.duplicates = max(c.records-copied, 0)
	}
	if i.load {
		info.load, info.deleted, info.skipped = true, max(deleted, 0), max(c.records-copied, 0)
	}
	return info
}

// Close implements sql.RowIter.
func (i *insertInfoIter) Close(ctx *gsql.Context) error { return i.child.Close(ctx) }

// GetChildIter implements sql.MutableRowIter.
func (i *insertInfoIter) GetChildIter() gsql.RowIter { return i.child }

// WithChildIter implements sql.MutableRowIter.
func (i *insertInfoIter) WithChildIter(child gsql.RowIter) gsql.RowIter {
	return &insertInfoIter{child: child, ii: i.ii, counts: i.counts, load: i.load}
}

// loadsData reports whether ii is a LOAD DATA's: its source (under
// FitRows and GMS's projection) reads the file.
func loadsData(ii *plan.InsertInto) bool {
	found := false
	transform.Inspect(ii.Source, func(n gsql.Node) bool {
		_, isLoad := n.(*plan.LoadData)
		found = found || isLoad
		return !found
	})
	return found
}
