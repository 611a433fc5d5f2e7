package compat

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS answers SHOW TABLE STATUS from a node of its own that disagrees
// with its information_schema.TABLES, which percdb fills: Auto_increment,
// Create_time and Update_time are NULL, Row_format is Fixed, a view has
// no row, and the last column is Comments, always NULL (MySQL's is
// Comment, the table's comment or VIEW). GUIs (phpMyAdmin, HeidiSQL,
// Navicat) list tables, comments and AUTO_INCREMENT values with it, and
// mariadb-dump --xml reads it per table. MySQL 8 answers it from
// information_schema.TABLES; tableStatus makes the statement that query
// (MySQL's columns, from TABLES's, in MySQL's order, by name), with its
// LIKE or WHERE over those columns.

// tableStatusColumns are SHOW TABLE STATUS's columns and the columns of
// information_schema.TABLES they show.
var tableStatusColumns = [][2]string{
	{"Name", "TABLE_NAME"}, {"Engine", "ENGINE"}, {"Version", "VERSION"}, {"Row_format", "ROW_FORMAT"},
	{"Rows", "TABLE_ROWS"}, {"Avg_row_length", "AVG_ROW_LENGTH"}, {"Data_length", "DATA_LENGTH"},
	{"Max_data_length", "MAX_DATA_LENGTH"}, {"Index_length", "INDEX_LENGTH"}, {"Data_free", "DATA_FREE"},
	{"Auto_increment", "AUTO_INCREMENT"}, {"Create_time", "CREATE_TIME"}, {"Update_time", "UPDATE_TIME"},
	{"Check_time", "CHECK_TIME"}, {"Collation", "TABLE_COLLATION"}, {"Checksum", "CHECKSUM"},
	{"Create_options", "CREATE_OPTIONS"}, {"Comment", "TABLE_COMMENT"},
}

// tableStatus rewrites SHOW TABLE STATUS as described above; any other
// statement, or one whose query does not parse, is returned as it is.
func tableStatus(stmt ast.Statement) ast.Statement {
	s, ok := stmt.(*ast.Show)
	if !ok || strings.ToLower(s.Type) != ast.TableStatusStr {
		return stmt
	}
	var b strings.Builder
	b.WriteString("SELECT * FROM (SELECT ")
	for i, c := range tableStatusColumns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c[1] + " AS `" + c[0] + "`")
	}
	b.WriteString(" FROM information_schema.TABLES WHERE TABLE_SCHEMA = ")
	if s.Database != "" {
		b.WriteString(quoteString(s.Database))
	} else {
		b.WriteString("DATABASE()")
	}
	b.WriteString(") AS `TABLES`")
	if f := s.Filter; f != nil {
		switch {
		case f.Filter != nil:
			b.WriteString(" WHERE " + ast.String(f.Filter))
		default:
			b.WriteString(" WHERE `Name` LIKE " + quoteString(f.Like))
		}
	}
	b.WriteString(" ORDER BY `Name`")
	sel, err := ast.Parse(b.String())
	if err != nil {
		return stmt
	}
	return sel
}

// quoteString writes s as a quoted SQL string.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
