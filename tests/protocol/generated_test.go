package protocol

import (
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// TestGeneratedColumnWrite checks MySQL's error for a value written to a
// generated column, by INSERT and by UPDATE: 3105 with MySQL's message.
// (MariaDB answers 1906, its own code; it is not run there.)
func TestGeneratedColumnWrite(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		if s.Flavor == testserver.MariaDB {
			t.Skip("MariaDB answers its own error 1906")
		}
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE gw (id INT PRIMARY KEY, a INT, b INT AS (a * 2) STORED)", want: []uint16{ac}},
			{sql: "INSERT INTO gw (id, a) VALUES (1, 1)", want: []uint16{ac}},
		})
		for _, q := range []string{"INSERT INTO gw (id, a, b) VALUES (2, 1, 5)", "UPDATE gw SET b = 5 WHERE id = 1"} {
			_, err := c.QueryAll(q)
			var se *wirefuzz.ServerError
			const want = "The value specified for generated column 'b' in table 'gw' is not allowed."
			if !errors.As(err, &se) || se.Code != 3105 || se.Message != want {
				t.Errorf("%s: %v, want error 3105 %q", q, err, want)
			}
		}
	})
}

// TestGeneratedColumnDefault checks DEFAULT as the value of a generated
// column, which MySQL accepts: in an INSERT without a column list (GMS
// refused any such INSERT into a table with generated columns) and in
// an UPDATE (GMS refused it with 3105), and that SHOW CREATE TABLE says
// VIRTUAL of a VIRTUAL column, as MySQL does (GMS wrote nothing).
func TestGeneratedColumnDefault(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		for _, q := range []string{
			"CREATE TABLE gd (a INT PRIMARY KEY, b INT, v INT AS (a + b) VIRTUAL, s INT AS (a * b) STORED, KEY kv (v))",
			"INSERT INTO gd VALUES (1, 2, DEFAULT, DEFAULT), (2, 3, DEFAULT, DEFAULT)",
			"INSERT INTO gd (a, b, v) VALUES (3, 4, DEFAULT)",
			"UPDATE gd SET v = DEFAULT, b = 7 WHERE a = 1",
			"UPDATE gd SET s = DEFAULT WHERE a = 2",
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var got []string
		rows, err := db.Query("SELECT a, b, v, s FROM gd ORDER BY a")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var a, b, v, s int
			if err := rows.Scan(&a, &b, &v, &s); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %d %d %d", a, b, v, s))
		}
		rows.Close()
		if want := "1 7 8 7|2 3 5 6|3 4 7 12"; strings.Join(got, "|") != want {
			t.Errorf("rows %s, want %s", strings.Join(got, "|"), want)
		}
		// A value other than DEFAULT is still refused.
		if _, err := db.Exec("INSERT INTO gd VALUES (4, 1, 5, DEFAULT)"); err == nil {
			t.Error("INSERT of a value into a generated column succeeded")
		}
		var name, create string
		if err := db.QueryRow("SHOW CREATE TABLE gd").Scan(&name, &create); err != nil {
			t.Fatal(err)
		}
		for _, re := range []string{"`v` int(\\(11\\))? GENERATED ALWAYS AS \\(+`a` \\+ `b`\\)+ VIRTUAL", "`s` int(\\(11\\))? GENERATED ALWAYS AS \\(+`a` \\* `b`\\)+ STORED", "KEY `kv` \\(`v`\\)"} {
			if !regexp.MustCompile(re).MatchString(create) {
				t.Errorf("SHOW CREATE TABLE does not match %s:\n%s", re, create)
			}
		}
	})
}

// TestGeneratedColumnValueIgnored loads rows as a dump file writes them,
// with a value for every column, generated ones included, in the
// non-strict sql_mode dump files set: the values of generated columns
// are ignored (the columns computed) with warning 1906 for each, as
// MariaDB does, so that mariadb-dump's files load; in strict mode such a
// value is still an error (MySQL's 3105 on percdb).
func TestGeneratedColumnValueIgnored(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db := openOne(t, s, "")
		mustExec(t, db,
			"CREATE TABLE gi (a INT PRIMARY KEY, b INT, v INT AS (a + b) VIRTUAL, s VARCHAR(20) AS (CONCAT(a, '!')) STORED, KEY kv (v))",
			"SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'")
		ignored := func(col string) string {
			return "Warning|1906|The value specified for generated column '" + col + "' in table 'gi' has been ignored"
		}
		for _, c := range []struct{ stmt, warnings string }{
			{"INSERT INTO gi VALUES (1, 2, 99, 'x'), (2, 3, DEFAULT, 'y')", ignored("v") + "\n" + ignored("s") + "\n" + ignored("s")},
			{"INSERT INTO gi (a, v, b) VALUES (3, 0, 4)", ignored("v")},
			{"REPLACE INTO gi VALUES (2, 30, 1, DEFAULT)", ignored("v")},
			{"INSERT INTO gi (a, b) VALUES (4, 1)", ""},
		} {
			mustExec(t, db, c.stmt)
			if got := rowsOf(t, db, "SHOW WARNINGS"); got != c.warnings {
				t.Errorf("%s: warnings %q, want %q", c.stmt, got, c.warnings)
			}
		}
		if got, want := rowsOf(t, db, "SELECT a, b, v, s FROM gi ORDER BY a"), "1|2|3|1!\n2|30|32|2!\n3|4|7|3!\n4|1|5|4!"; got != want {
			t.Errorf("rows %q, want %q", got, want)
		}
		if got, want := rowsOf(t, db, "SELECT a FROM gi WHERE v = 32"), "2"; got != want {
			t.Errorf("through index kv: %s, want %s", got, want)
		}
		mustExec(t, db, "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'")
		if _, err := db.Exec("INSERT INTO gi VALUES (5, 1, 6, '5!')"); err == nil {
			t.Error("strict mode: a value for a generated column was accepted")
		}
	})
}

// TestGeneratedTableComment: SHOW CREATE TABLE of a table with a VIRTUAL
// column keeps the table's comment (GMS's VirtualColumnTable has none, so
// it was left out, and dumps lost it).
func TestGeneratedTableComment(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db := openOne(t, s, "")
		mustExec(t, db, "CREATE TABLE gc (a INT, v INT AS (a + 1) VIRTUAL) COMMENT 'it''s generated'")
		var name, create string
		if err := db.QueryRow("SHOW CREATE TABLE gc").Scan(&name, &create); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(create, " COMMENT='it''s generated'") {
			t.Errorf("SHOW CREATE TABLE lost the table's comment:\n%s", create)
		}
	})
}

// TestGeneratedShowIndex: SHOW INDEX of a table with a VIRTUAL column
// lists its indexes, the one on the VIRTUAL column too (GMS listed none).
func TestGeneratedShowIndex(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db := openOne(t, s, "")
		mustExec(t, db, "CREATE TABLE gx (id INT PRIMARY KEY, a INT, v INT AS (a + 1) VIRTUAL, UNIQUE KEY ua (a), KEY kv (v, id))")
		rows, err := db.Query("SHOW INDEX FROM gx")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range strings.Split(scanRows(t, rows), "\n") {
			if f := strings.Split(r, "|"); len(f) >= 5 {
				got = append(got, strings.Join(f[1:5], " ")) // Non_unique Key_name Seq_in_index Column_name
			}
		}
		if want := "0 PRIMARY 1 id|0 ua 1 a|1 kv 1 v|1 kv 2 id"; strings.Join(got, "|") != want {
			t.Errorf("SHOW INDEX: %s, want %s", strings.Join(got, "|"), want)
		}
	})
}
