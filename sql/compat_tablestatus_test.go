package sql_test

import (
	"database/sql"
	"strings"
	"testing"
)

// TestShowTableStatus: SHOW TABLE STATUS has MySQL's columns and answers
// what information_schema.TABLES says (GMS's own answer had NULL
// Auto_increment, a Comments column always NULL and no row for a view),
// with LIKE, WHERE over its columns, and FROM another database.
func TestShowTableStatus(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE tsdb", "CREATE DATABASE other",
		"CREATE TABLE tsdb.ts_a (id INT AUTO_INCREMENT PRIMARY KEY, v INT) AUTO_INCREMENT = 42 COMMENT 'it''s a'",
		"CREATE TABLE tsdb.ts_b (x INT)", "INSERT INTO tsdb.ts_b VALUES (1), (2)",
		"CREATE VIEW tsdb.ts_v AS SELECT x FROM tsdb.ts_b")
	tsdb, other := openDB(t, srv, "tsdb"), openDB(t, srv, "other")
	for _, c := range []struct {
		db      *sql.DB
		q, want string
	}{
		{tsdb, "SHOW TABLE STATUS LIKE 'ts\\_%'", "ts_a InnoDB Dynamic 42 it's a|ts_b InnoDB Dynamic NULL |ts_v NULL NULL NULL VIEW"},
		{tsdb, "SHOW TABLE STATUS WHERE Comment = 'VIEW' OR `Rows` = 2", "ts_b InnoDB Dynamic NULL |ts_v NULL NULL NULL VIEW"},
		{other, "SHOW TABLE STATUS FROM tsdb WHERE Auto_increment > 40", "ts_a InnoDB Dynamic 42 it's a"},
		{other, "SHOW TABLE STATUS", ""},
	} {
		if got := strings.Join(tableStatusRows(t, c.db, c.q), "|"); got != c.want {
			t.Errorf("%s: %q, want %q", c.q, got, c.want)
		}
	}
}

// tableStatusRows returns the Name, Engine, Row_format, Auto_increment
// and Comment of each row of a SHOW TABLE STATUS, after checking that
// its columns are MySQL's.
func tableStatusRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if got, want := strings.Join(cols, ","), "Name,Engine,Version,Row_format,Rows,Avg_row_length,Data_length,Max_data_length,Index_length,Data_free,Auto_increment,Create_time,Update_time,Check_time,Collation,Checksum,Create_options,Comment"; got != want {
		t.Fatalf("%s: columns %s, want %s", q, got, want)
	}
	var out []string
	for _, r := range readRows(rows) {
		out = append(out, strings.Join([]string{r[0], r[1], r[3], r[10], r[17]}, " "))
	}
	return out
}
