package sql

import (
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/tablemeta"
)

// FLOAT(M,D) and DOUBLE(M,D), whose M and D GMS drops (FLOAT(7,4) is its
// FLOAT): percdb keeps them in the column's stored type and gives the
// table's schema GMS's FLOAT or DOUBLE (tablemeta/floattype.go). Here:
//
//   - floatScaleColumns gives such a column of a CREATE TABLE or ALTER
//     TABLE percdb's type (through the column type's ResolvedType, which GMS's
//     planner takes as it is), which the catalog stores as float(M,D);
//   - writes round a value to D decimals and refuse one beyond M digits
//     with MySQL's 1264 (strict sql_mode; otherwise the largest value and
//     a warning), in the table editors, through which the fast path writes
//     too (roundScaled);
//   - SHOW CREATE TABLE, SHOW COLUMNS and information_schema.COLUMNS say
//     float(M,D) (COLUMN_TYPE, and NUMERIC_PRECISION M, NUMERIC_SCALE D),
//     and the column definitions sent to clients D decimals and length M.

// columnTypes gives the columns of a CREATE TABLE or ALTER TABLE that GMS
// would type wrongly percdb's types before GMS's planner reads them: the
// TIME(n) columns (compat.TimePrecisions) and the FLOAT(M,D) and
// DOUBLE(M,D) columns (floatScaleColumns).
func columnTypes(stmt ast.Statement) {
	compat.TimePrecisions(stmt)
	for _, spec := range compat.TableSpecs(stmt) {
		floatScaleColumns(spec)
	}
}

// floatScaleColumns gives the FLOAT(M,D) and DOUBLE(M,D) columns of
// spec, of a CREATE TABLE or ALTER TABLE, their type before GMS's planner
// reads it (columnTypes).
func floatScaleColumns(spec *ast.TableSpec) {
	if spec == nil {
		return
	}
	for _, c := range spec.Columns {
		ct := &c.Type
		if ct.ResolvedType != nil || ct.Length == nil || ct.Scale == nil || bool(ct.Unsigned) {
			continue
		}
		var double bool
		switch strings.ToLower(ct.Type) {
		case "float":
		case "double", "real", "double precision":
			double = true
		default:
			continue
		}
		m, err1 := strconv.Atoi(string(ct.Length.Val))
		d, err2 := strconv.Atoi(string(ct.Scale.Val))
		if err1 != nil || err2 != nil {
			continue
		}
		if typ, err := tablemeta.NewScaledFloatType(double, m, d); err == nil {
			ct.ResolvedType = typ
		}
	}
}

// MySQL's error for a value beyond a column's range:
// ER_WARN_DATA_OUT_OF_RANGE.
const (
	codeOutOfRange  = 1264
	stateOutOfRange = "22003"
)

// roundScaled rounds the values of m's FLOAT(M,D) and DOUBLE(M,D) columns
// in row, the rowNum-th row of the statement, to D decimals. A value
// beyond the column's range fails with 1264 under a strict sql_mode, and
// becomes the largest value with a warning otherwise, as in MySQL.
func roundScaled(ctx *gsql.Context, m *tablemeta.Table, row gsql.Row, rowNum int) error {
	for ord, s := range m.Scales {
		if ord >= len(row) || row[ord] == nil {
			continue
		}
		v, ok := s.Round(row[ord])
		if ok {
			row[ord] = v
			continue
		}
		name := m.Schema.Schema[ord].Name
		mode := gsql.LoadSqlMode(ctx)
		if mode.ModeEnabled("STRICT_TRANS_TABLES") || mode.ModeEnabled("STRICT_ALL_TABLES") {
			return mysql.NewSQLError(codeOutOfRange, stateOutOfRange, "Out of range value for column '%s' at row %d", name, rowNum)
		}
		ctx.Warn(codeOutOfRange, "Out of range value for column '%s' at row %d", name, rowNum)
		limit := s.Max()
		if f, isFloat := floatOf(row[ord]); isFloat && f < 0 {
			limit = -limit
		}
		if _, single := row[ord].(float32); single {
			row[ord] = float32(limit)
		} else {
			row[ord] = limit
		}
	}
	return nil
}

// floatOf returns v as a float64 when it is a float32 or float64.
func floatOf(v any) (float64, bool) {
	switch x := v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// scaledColumns returns the FLOAT(M,D) and DOUBLE(M,D) columns of tab, a
// table of percdb's under GMS's wrappers, by lower-case name; nil for any
// other table or one without such columns.
func scaledColumns(tab gsql.Table) map[string]tablemeta.FloatScale {
	for tab != nil {
		switch w := tab.(type) {
		case *Table:
			if len(w.meta.Scales) == 0 {
				return nil
			}
			out := make(map[string]tablemeta.FloatScale, len(w.meta.Scales))
			for ord, s := range w.meta.Scales {
				out[strings.ToLower(w.meta.Schema.Schema[ord].Name)] = s
			}
			return out
		case *IndexedTable:
			tab = w.Table
		case *plan.VirtualColumnTable:
			tab = w.Underlying()
		case gsql.TableWrapper:
			tab = w.Underlying()
		default:
			return nil
		}
	}
	return nil
}

// scaleDecimals returns the D of tab's FLOAT(M,D) and DOUBLE(M,D)
// columns by lower-case name, for compat.FixedDecimals; nil for a table
// without any.
func scaleDecimals(tab gsql.Table) map[string]int {
	scales := scaledColumns(tab)
	if scales == nil {
		return nil
	}
	out := make(map[string]int, len(scales))
	for name, s := range scales {
		out[name] = s.D
	}
	return out
}

// resolvedScales returns the scaled columns of the table a SHOW node
// reads (its child, a resolved table).
func resolvedScales(child gsql.Node) map[string]tablemeta.FloatScale {
	rt, ok := child.(*plan.ResolvedTable)
	if !ok {
		return nil
	}
	return scaledColumns(rt.Table)
}

// floatScaleCreate returns a CREATE TABLE statement as GMS writes it with
// float(M,D) and double(M,D) for the columns of scales.
func floatScaleCreate(stmt string, scales map[string]tablemeta.FloatScale) string {
	lines := strings.Split(stmt, "\n")
	for i, l := range lines {
		rest, ok := strings.CutPrefix(l, "  `")
		if !ok {
			continue
		}
		end := strings.Index(rest, "` ")
		if end < 0 {
			continue
		}
		s, ok := scales[strings.ToLower(strings.ReplaceAll(rest[:end], "``", "`"))]
		if !ok {
			continue
		}
		typ := rest[end+2:]
		base := "float"
		if s.Double {
			base = "double"
		}
		if !strings.HasPrefix(typ, base) || len(typ) > len(base) && typ[len(base)] != ' ' && typ[len(base)] != ',' {
			continue
		}
		lines[i] = l[:3+end+2] + s.String() + typ[len(base):]
	}
	return strings.Join(lines, "\n")
}

// floatScaleShowColumns gives the rows of SHOW COLUMNS (one per column of
// schema, its Type second) the type float(M,D) of scaled columns.
func floatScaleShowColumns(child gsql.Node, schema gsql.Schema, rows []gsql.Row) {
	scales := resolvedScales(child)
	if scales == nil {
		return
	}
	for i, col := range schema {
		if s, ok := scales[strings.ToLower(col.Name)]; ok && i < len(rows) && len(rows[i]) > 1 {
			rows[i][1] = s.String()
		}
	}
}

// floatScaleShowColumnsIter is SHOW COLUMNS' rows from iter (what
// compat.ShowColumns answers) with the FLOAT(M,D) and DOUBLE(M,D)
// columns' types (floatScaleShowColumns).
func floatScaleShowColumnsIter(ctx *gsql.Context, n *plan.ShowColumns, iter gsql.RowIter) (gsql.RowIter, error) {
	if resolvedScales(n.Child) == nil {
		return iter, nil
	}
	rows, err := gsql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	floatScaleShowColumns(n.Child, n.TargetSchema(), rows)
	return gsql.RowsToRowIter(rows...), nil
}

// floatScaleField gives the column definition f of a FLOAT(M,D) or
// DOUBLE(M,D) column of a table in cat (found by the table and column
// the definition names) MySQL's length M and D decimals.
func floatScaleField(cat *catalog.Catalog, f *querypb.Field) {
	if f.OrgTable == "" || f.Database == "" || (f.Type != sqltypes.Float32 && f.Type != sqltypes.Float64) {
		return
	}
	d, ok := cat.Database(f.Database)
	if !ok {
		return
	}
	t, ok := cat.Table(d.ID, f.OrgTable)
	if !ok {
		return
	}
	cd, _, ok := t.ColumnByName(f.OrgName)
	if !ok {
		return
	}
	if s, ok := tablemeta.ParseFloatScale(cd.Type); ok {
		f.ColumnLength = uint32(s.M)
		f.Decimals = uint32(s.D)
	}
}

// keptScale returns the stored type of a column after ALTER TABLE: made,
// the text of its type in the new schema, unless that is the FLOAT or
// DOUBLE a FLOAT(M,D) or DOUBLE(M,D) column, stored, has in a table's
// schema (the ALTER TABLE did not name the column, or renamed it).
func keptScale(stored, made string) string {
	if s, ok := tablemeta.ParseFloatScale(stored); ok && made == s.Base().String() {
		return stored
	}
	return made
}
