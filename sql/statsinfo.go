package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL shows an index's cardinality, the estimated number of distinct
// values of its first SEQ_IN_INDEX columns, in
// information_schema.STATISTICS.CARDINALITY and SHOW INDEX's Cardinality;
// GMS v0.20.0 shows 0 in both. percdb shows the distinct counts ANALYZE
// TABLE stored (sql/statistics), and GMS's 0 for a table never analyzed.

// indexCardinality returns the cardinality of the first seq columns of
// index name of t, and false without statistics.
func (p *DatabaseProvider) indexCardinality(ctx *gsql.Context, t *Table, name string, seq int) (int64, bool) {
	ix := p.indexStats(ctx, t, name)
	if ix == nil || seq < 1 || seq > len(ix.NDV) {
		return 0, false
	}
	return int64(ix.NDV[seq-1]), true
}

// showIndexesIter fills the Cardinality of SHOW INDEX's rows (Key_name
// third, Seq_in_index fourth, Cardinality seventh).
type showIndexesIter struct {
	gsql.RowIter
	p *DatabaseProvider
	t *Table
}

// Next implements sql.RowIter.
func (it *showIndexesIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil || len(row) < 7 {
		return row, err
	}
	name, _ := row[2].(string)
	seq, ok := types.CoalesceInt(row[3])
	if !ok {
		return row, nil
	}
	if c, ok := it.p.indexCardinality(ctx, it.t, name, seq); ok {
		row = append(gsql.Row(nil), row...)
		row[6] = c
	}
	return row, nil
}

// buildShowIndexes runs SHOW INDEX with the cardinalities filled in.
func (b *compatBuilder) buildShowIndexes(ctx *gsql.Context, n *plan.ShowIndexes, row gsql.Row) (gsql.RowIter, error) {
	// GMS's own rows (its builder without percdb's override, which
	// would come back here); SHOW INDEX has no child to build.
	it, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	rt, ok := n.Child.(*plan.ResolvedTable)
	if !ok {
		return it, nil
	}
	t := percdbTable(rt.UnderlyingTable())
	if t == nil || t.db == nil {
		return it, nil
	}
	return &showIndexesIter{RowIter: it, p: t.db.provider, t: t}, nil
}

// statisticsTable is information_schema.STATISTICS with CARDINALITY
// filled in.
type statisticsTable struct {
	gsql.Table
	provider *DatabaseProvider
}

var _ gsql.CatalogTable = (*statisticsTable)(nil)

// AssignCatalog implements sql.CatalogTable: GMS's table gets the
// catalog it reads.
func (t *statisticsTable) AssignCatalog(cat gsql.Catalog) gsql.Table {
	if c, ok := t.Table.(gsql.CatalogTable); ok {
		return &statisticsTable{Table: c.AssignCatalog(cat), provider: t.provider}
	}
	return t
}

// PartitionRows implements sql.Table.
func (t *statisticsTable) PartitionRows(ctx *gsql.Context, part gsql.Partition) (gsql.RowIter, error) {
	it, err := t.Table.PartitionRows(ctx, part)
	if err != nil {
		return nil, err
	}
	pos := map[string]int{}
	for i, c := range t.Schema() {
		pos[strings.ToUpper(c.Name)] = i
	}
	return &cardinalityIter{child: it, p: t.provider, pos: pos, tables: map[[2]string]*Table{}}, nil
}

// cardinalityIter fills CARDINALITY in the rows of
// information_schema.STATISTICS.
type cardinalityIter struct {
	child  gsql.RowIter
	p      *DatabaseProvider
	pos    map[string]int
	tables map[[2]string]*Table // by database and name; nil: not percdb's
}

// Next implements sql.RowIter.
func (it *cardinalityIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := it.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	db, _ := row[it.pos["TABLE_SCHEMA"]].(string)
	name, _ := row[it.pos["TABLE_NAME"]].(string)
	index, _ := row[it.pos["INDEX_NAME"]].(string)
	seq, ok := types.CoalesceInt(row[it.pos["SEQ_IN_INDEX"]])
	if !ok {
		return row, nil
	}
	key := [2]string{strings.ToLower(db), strings.ToLower(name)}
	t, seen := it.tables[key]
	if !seen {
		if d, err := it.p.Database(ctx, db); err == nil {
			if tbl, ok, err := d.GetTableInsensitive(ctx, name); err == nil && ok {
				t = percdbTable(tbl)
			}
		}
		it.tables[key] = t
	}
	if t == nil {
		return row, nil
	}
	if c, ok := it.p.indexCardinality(ctx, t, index, seq); ok {
		row = append(gsql.Row(nil), row...)
		row[it.pos["CARDINALITY"]] = c
	}
	return row, nil
}

// Close implements sql.RowIter.
func (it *cardinalityIter) Close(ctx *gsql.Context) error { return it.child.Close(ctx) }

// buildAnalyze runs ANALYZE TABLE, a row per table as MySQL answers:
// Table is db.name, and a table whose analysis fails gets an Error row
// and a status row "Operation failed". GMS v0.20.0's own iterator needs a
// current database even for qualified names (ANALYZE TABLE x.t without
// USE failed with "no database selected"), and names the table without
// its database.
func (b *compatBuilder) buildAnalyze(ctx *gsql.Context, n *plan.AnalyzeTable) (gsql.RowIter, error) {
	var rows []gsql.Row
	for _, t := range n.Tables {
		db := n.Db
		if pt := percdbTable(t); pt != nil {
			db = pt.meta.DBName
		} else if d, ok := t.(gsql.Databaseable); ok && d.Database() != "" {
			db = d.Database()
		}
		name := db + "." + t.Name()
		// OPTIMIZE and REPAIR TABLE run as ANALYZE (maintenance.go).
		op := opAnalyze
		if s, ok := ctx.Session.(*Session); ok && s.maintenanceOp != "" {
			op = s.maintenanceOp
		}
		if mt, ok := t.(missingTable); ok {
			rows = append(rows, missingTableRows(mt, op)...)
			continue
		}
		if pt := percdbTable(t); op != opAnalyze && pt != nil && pt.db != nil {
			before, analyze, err := maintain(ctx, op, pt, name)
			if err != nil {
				rows = append(rows, gsql.Row{name, op, "Error", err.Error()}, gsql.Row{name, op, "status", "Operation failed"})
				continue
			}
			rows = append(rows, before...)
			if !analyze {
				continue
			}
		}
		if err := n.Stats.AnalyzeTable(ctx, t, db); err != nil {
			rows = append(rows, gsql.Row{name, op, "Error", err.Error()},
				gsql.Row{name, op, "status", "Operation failed"})
			continue
		}
		rows = append(rows, gsql.Row{name, op, "status", "OK"})
	}
	return gsql.RowsToRowIter(rows...), nil
}
