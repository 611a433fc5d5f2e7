package sql

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// Generated columns (`AS (expr) [VIRTUAL | STORED]`) are GMS's: its
// planner computes STORED and VIRTUAL values on INSERT, UPDATE, REPLACE
// and ON DUPLICATE KEY UPDATE and refuses a value written to one (error
// 3105, errors.go); it reads VIRTUAL ones through a projection over the
// table (plan.VirtualColumnTable). percdb keeps a generated column's
// expression and kind in the catalog (ColumnDef.Generated, .Virtual) and
// stores the computed value of every column in the row, VIRTUAL ones
// included, so that an index on a VIRTUAL column is an ordinary index of
// the row's value. ALTER TABLE ADD COLUMN of a generated column goes
// through the table copy, which computes it for the existing rows.
//
// GMS's SHOW CREATE TABLE finds a table's indexes only on a table that
// offers them itself, which the VirtualColumnTable around a table with
// VIRTUAL columns does not: the indexes were missing from its output.
// withGeneratedTableIndexes gives it the underlying table's.

// withGeneratedTableIndexes returns n with the indexes and primary key
// schema of the table under its VirtualColumnTable, when GMS found none
// there.
func withGeneratedTableIndexes(ctx *gsql.Context, n *plan.ShowCreateTable) (*plan.ShowCreateTable, bool) {
	if n.IsView || len(n.Indexes) > 0 {
		return nil, false
	}
	rt, ok := n.Child.(*plan.ResolvedTable)
	if !ok {
		return nil, false
	}
	// Under GMS's wrappers (its process list's, the virtual columns'):
	// percdb's table, with its indexes.
	var t *Table
	virtual := false
	for tab := rt.Table; t == nil; {
		switch w := tab.(type) {
		case *Table:
			t = w
		case *plan.VirtualColumnTable:
			virtual, tab = true, w.Underlying()
		case gsql.TableWrapper:
			tab = w.Underlying()
		default:
			return nil, false
		}
	}
	if !virtual {
		return nil, false
	}
	idxs, err := t.GetIndexes(ctx)
	if err != nil || len(idxs) == 0 {
		return nil, false
	}
	out := *n
	out.Indexes = idxs
	out.PrimaryKeySchema = t.PrimaryKeySchema()
	return &out, true
}

// hasGenerated reports whether the table has a generated column; writes
// to it leave the fast path, which does not compute them, for GMS.
func (d *TableDef) hasGenerated() bool {
	for i := range d.Columns {
		if d.Columns[i].Generated != "" {
			return true
		}
	}
	return false
}

// GMS's INSERT … ON DUPLICATE KEY UPDATE does not compute generated
// columns again for the row it updates (its UPDATE does): a STORED column
// kept the value of the row before, and so did the stored value of a
// VIRTUAL one (and its index entries). withGeneratedOnDup adds to the
// statement's update expressions one per generated column, as GMS's
// UPDATE has, evaluated after the others over the updated row.

// withGeneratedOnDup returns n with an update expression for each
// generated column of its table, when it has ON DUPLICATE KEY UPDATE
// expressions that do not set them yet.
func withGeneratedOnDup(n *plan.InsertInto) (*plan.InsertInto, bool, error) {
	if len(n.OnDupExprs) == 0 || n.Destination == nil {
		return nil, false, nil
	}
	sch := n.Destination.Schema()
	set := map[string]bool{}
	for _, e := range n.OnDupExprs {
		if sf, ok := e.(*expression.SetField); ok {
			if gf, ok := sf.LeftChild.(*expression.GetField); ok {
				set[strings.ToLower(gf.Name())] = true
			}
		}
	}
	var add []gsql.Expression
	for i, col := range sch {
		if col.Generated == nil || set[strings.ToLower(col.Name)] {
			continue
		}
		if !col.Generated.Resolved() {
			return nil, false, fmt.Errorf("generated column %s: expression not resolved for ON DUPLICATE KEY UPDATE", col.Name)
		}
		gf := expression.NewGetFieldWithTable(i, 0, col.Type, col.DatabaseSource, col.Source, col.Name, col.Nullable)
		add = append(add, expression.NewSetField(gf, col.Generated))
	}
	if len(add) == 0 {
		return nil, false, nil
	}
	out := *n
	out.OnDupExprs = append(append([]gsql.Expression(nil), n.OnDupExprs...), add...)
	return &out, true, nil
}
