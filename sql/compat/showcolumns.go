package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// SHOW [FULL] COLUMNS and DESCRIBE t as MySQL answers them. GMS writes
// a string column's Type with its collation whenever that is not GMS's
// own default (utf8mb4_0900_bin), so that under MySQL's default,
// utf8mb4_0900_ai_ci, every string column read `varchar(255) COLLATE
// utf8mb4_0900_ai_ci`, and its FULL Collation column gave GMS's default
// instead of the column's collation. ORMs parse Type (Sequelize's
// describeTable, Rails' and Laravel's schema readers): MySQL gives
// `varchar(255)` and the collation in the Collation column, as
// information_schema.COLUMNS' COLUMN_TYPE and COLLATION_NAME do.

// SHOW FULL COLUMNS' Privileges is empty in GMS; MySQL lists the
// privileges the user has on the column, among those a column can have
// (columnPrivileges).

// privilegesColumn is the position of Privileges in SHOW FULL COLUMNS.
const privilegesColumn = 7

// ShowColumns runs GMS's SHOW COLUMNS and corrects its Type, Collation
// and Privileges.
func ShowColumns(ctx *gsql.Context, n *plan.ShowColumns, row gsql.Row) (gsql.RowIter, error) {
	// GMS's own builder: percdb's would come back here.
	rows, err := DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	schema := n.TargetSchema()
	if len(rows) != len(schema) {
		return gsql.RowsToRowIter(rows...), nil // not the shape this knows
	}
	for i, col := range schema {
		r := append(gsql.Row(nil), rows[i]...)
		r[1] = columnTypeText(col.Type)
		if n.Full {
			r[2] = columnCollation(col.Type)
			if len(r) > privilegesColumn {
				r[privilegesColumn] = columnPrivileges(ctx, col.DatabaseSource, col.Source, col.Name)
			}
		}
		rows[i] = r
	}
	return gsql.RowsToRowIter(rows...), nil
}

// columnTypeText is a column's type as MySQL's SHOW COLUMNS and
// information_schema.COLUMNS.COLUMN_TYPE write it: without character set
// and collation.
func columnTypeText(t gsql.Type) string {
	s := t.String()
	if i := strings.Index(s, " CHARACTER SET "); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, " COLLATE "); i >= 0 {
		s = s[:i]
	}
	return s
}

// columnCollation is the collation SHOW FULL COLUMNS gives a column: its
// own for character strings, ENUM and SET; NULL for every other type.
func columnCollation(t gsql.Type) any {
	if !types.IsTextOnly(t) && !types.IsEnum(t) && !types.IsSet(t) {
		return nil
	}
	c, ok := t.(interface{ Collation() gsql.CollationID })
	if !ok {
		return nil
	}
	return c.Collation().Name()
}

// columnPrivileges is the Privileges of SHOW FULL COLUMNS: which of
// SELECT, INSERT, UPDATE and REFERENCES the user holds on column col of
// db.table, granted on everything, the database, the table or the
// column, in MySQL's words and order ("select,insert,update,references").
func columnPrivileges(ctx *gsql.Context, db, table, col string) string {
	ps, _ := ctx.GetPrivilegeSet()
	if ps == nil {
		return ""
	}
	dbs := ps.Database(db)
	tbl := dbs.Table(table)
	column := tbl.Column(col)
	var out []string
	for _, p := range []struct {
		typ  gsql.PrivilegeType
		name string
	}{
		{gsql.PrivilegeType_Select, "select"},
		{gsql.PrivilegeType_Insert, "insert"},
		{gsql.PrivilegeType_Update, "update"},
		{gsql.PrivilegeType_References, "references"},
	} {
		if ps.Has(p.typ) || dbs.Has(p.typ) || tbl.Has(p.typ) || column.Has(p.typ) {
			out = append(out, p.name)
		}
	}
	return strings.Join(out, ",")
}
