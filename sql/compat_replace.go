package sql

import (
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
// iterator adds those GMS did not count to its OK result. It is built by
// percdb's row-iterator builder (compat_exec.go).

// replaceDeletes counts, for one REPLACE statement, the deletes GMS's
// count misses.
type replaceDeletes struct {
	pending int // deletes since the last insert
	missed  int // deletes beyond the first of each inserted row
}

// countedReplace returns ii with its destination's replacer counting
// deletes, and the counter; false when ii is no REPLACE of a table or is
// counted already.
func countedReplace(ii *plan.InsertInto) (*plan.InsertInto, *replaceDeletes, bool) {
	if !ii.IsReplace {
		return ii, nil, false
	}
	// The destination is the table, or an InsertDestination over it.
	var id *plan.InsertDestination
	dest := ii.Destination
	if d, ok := dest.(*plan.InsertDestination); ok {
		id, dest = d, d.Child
	}
	rt, ok := dest.(*plan.ResolvedTable)
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
	counted, err := rt.WithTable(&countingReplaceTable{Table: rt.Table, ins: ins, rep: rep, count: c})
	if err != nil {
		return ii, nil, false
	}
	dest = counted
	if id != nil {
		if dest, err = id.WithChildren(counted); err != nil {
			return ii, nil, false
		}
	}
	ret := *ii
	ret.Destination = dest
	return &ret, c, true
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
	return &countingReplacer{RowReplacer: t.rep.Replacer(ctx), count: t.count}
}

// countingReplacer is a replacer that counts deletes.
type countingReplacer struct {
	gsql.RowReplacer
	count *replaceDeletes
}

// Insert implements sql.RowReplacer.
func (r *countingReplacer) Insert(ctx *gsql.Context, row gsql.Row) error {
	if err := r.RowReplacer.Insert(ctx, row); err != nil {
		return err
	}
	if r.count.pending > 1 {
		r.count.missed += r.count.pending - 1
	}
	r.count.pending = 0
	return nil
}

// Delete implements sql.RowReplacer.
func (r *countingReplacer) Delete(ctx *gsql.Context, row gsql.Row) error {
	if err := r.RowReplacer.Delete(ctx, row); err != nil {
		return err
	}
	r.count.pending++
	return nil
}

// replaceCountIter adds the deletes GMS missed to the OK result of the
// iterator it wraps. It is a sql.MutableRowIter, so that GMS puts its
// count (the accumulator) between it and the REPLACE's rows.
type replaceCountIter struct {
	child gsql.RowIter
	count *replaceDeletes
}

var _ gsql.MutableRowIter = (*replaceCountIter)(nil)

// Next implements sql.RowIter.
func (i *replaceCountIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := i.child.Next(ctx)
	if err != nil || len(row) != 1 {
		return row, err
	}
	if ok, isOK := row[0].(types.OkResult); isOK {
		ok.RowsAffected += uint64(i.count.missed)
		return gsql.Row{ok}, nil
	}
	return row, nil
}

// Close implements sql.RowIter.
func (i *replaceCountIter) Close(ctx *gsql.Context) error { return i.child.Close(ctx) }

// GetChildIter implements sql.MutableRowIter.
func (i *replaceCountIter) GetChildIter() gsql.RowIter { return i.child }

// WithChildIter implements sql.MutableRowIter.
func (i *replaceCountIter) WithChildIter(child gsql.RowIter) gsql.RowIter {
	return &replaceCountIter{child: child, count: i.count}
}
