package sql_test

import (
	"database/sql"
	"strings"
	"testing"
)

// TestViewsWithoutCurrentDatabase: a view named with its database is read
// with no current database, or another one, as in MySQL (GMS failed with
// 1105 "no database selected" for any view then), while a table named
// without one still fails with 1046, also after a view in the same
// statement; information_schema.VIEWS and COLUMNS list every view whatever
// the current database (GMS left out a view whose statement names a table
// without its database unless that was the current one).
func TestViewsWithoutCurrentDatabase(t *testing.T) {
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE vd", "CREATE DATABASE other",
		"CREATE TABLE vd.t (id INT PRIMARY KEY, a INT)", "INSERT INTO vd.t VALUES (1, 10), (2, 20)",
		"CREATE TABLE other.t (id INT PRIMARY KEY, b VARCHAR(5))", "INSERT INTO other.t VALUES (7, 'x')")
	vd := openDB(t, srv, "vd")
	mustExec(t, vd, "CREATE VIEW v AS SELECT id, a FROM t",
		"CREATE VIEW one AS SELECT 1 AS n",
		"CREATE VIEW vv AS SELECT id FROM v WHERE a > 10",
		"CREATE VIEW agg AS SELECT COUNT(*) AS c FROM t")

	for _, conn := range []struct{ name, db string }{{"no database", ""}, {"other database", "other"}} {
		t.Run(conn.name, func(t *testing.T) {
			db := openDB(t, srv, conn.db)
			db.SetMaxOpenConns(1)
			for q, want := range map[string]string{
				"SELECT * FROM vd.v ORDER BY id": "1 10|2 20",
				"SELECT * FROM vd.one":           "1",
				"SELECT * FROM vd.vv":            "2",
				"SELECT c FROM vd.agg":           "2",
				"SELECT v.a, t.id FROM vd.v JOIN vd.t ON t.id = v.id ORDER BY 1": "10 1|20 2",
				"SELECT o.n, v.id FROM vd.one o, vd.v v ORDER BY 2":              "1 1|1 2",
				"SELECT (SELECT MAX(a) FROM vd.v) + 1":                           "21",
			} {
				if got := strings.Join(queryRows(t, db, q), "|"); got != want {
					t.Errorf("%s: %s, want %s", q, got, want)
				}
			}
			if conn.db == "" {
				// Unqualified names still need a current database, also
				// after a view bound in the same statement.
				for _, q := range []string{"SELECT * FROM t", "SELECT * FROM vd.one, t", "SELECT * FROM vd.v, v", "SELECT * FROM vd.one JOIN one"} {
					if _, err := db.Exec(q); mysqlErrNum(err) != 1046 {
						t.Errorf("%s: %v, want 1046", q, err)
					}
				}
				if got := strings.Join(queryRows(t, db, "SELECT DATABASE(), (SELECT n FROM vd.one)"), "|"); got != "NULL 1" {
					t.Errorf("DATABASE() after a view: %s", got)
				}
			} else if got := strings.Join(queryRows(t, db, "SELECT DATABASE(), b FROM t, vd.one"), "|"); got != "other x" {
				t.Errorf("the current database's t beside a view: %s", got)
			}
			if got := strings.Join(queryRows(t, db, "SELECT TABLE_NAME, IS_UPDATABLE FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'vd' AND TABLE_NAME <> 'one' ORDER BY 1"), "|"); got != "agg NO|v YES|vv YES" {
				t.Errorf("information_schema.VIEWS: %s", got)
			}
			if got := strings.Join(queryRows(t, db, "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'vd' AND TABLE_NAME <> 't' ORDER BY 1, ORDINAL_POSITION"), "|"); got != "agg c bigint|one n tinyint|v id int|v a int|vv id int" {
				t.Errorf("information_schema.COLUMNS of views: %s", got)
			}
		})
	}
}

// TestRenameTableQualified: RENAME TABLE renames in the database its
// names carry, with no current database or another one (GMS renamed in the
// current database whatever the names said: 1046 with none, and another
// database's table of the same name otherwise), views too; a rename from
// one database to another moves the table (it failed with 1235), by a
// prepared statement too, but not a table with triggers (1435, as
// MySQL).
func TestRenameTableQualified(t *testing.T) {
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE rd", "CREATE DATABASE other",
		"CREATE TABLE rd.t (id INT PRIMARY KEY)", "INSERT INTO rd.t VALUES (1)",
		"CREATE TABLE rd.u (id INT PRIMARY KEY)", "INSERT INTO rd.u VALUES (3)",
		"CREATE TABLE other.u (id INT PRIMARY KEY)", "INSERT INTO other.u VALUES (2)")
	mustExec(t, openDB(t, srv, "rd"), "CREATE VIEW v AS SELECT id FROM t")

	none := openDB(t, srv, "")
	none.SetMaxOpenConns(1)
	mustExec(t, none, "RENAME TABLE rd.v TO rd.v2")
	if got := strings.Join(queryRows(t, none, "SELECT id FROM rd.v2"), "|"); got != "1" {
		t.Errorf("the renamed view: %s", got)
	}
	if _, err := none.Exec("SELECT * FROM rd.v"); mysqlErrNum(err) != 1146 {
		t.Errorf("the view's old name: %v, want 1146", err)
	}
	if _, err := none.Exec("RENAME TABLE t TO t2"); mysqlErrNum(err) != 1046 {
		t.Errorf("RENAME TABLE without a database: %v, want 1046", err)
	}

	other := openDB(t, srv, "other")
	other.SetMaxOpenConns(1)
	mustExec(t, other, "RENAME TABLE rd.u TO rd.u2, rd.v2 TO rd.v3")
	for q, want := range map[string]string{
		"SELECT id FROM rd.u2": "3",
		"SELECT id FROM u":     "2",
		"SELECT id FROM rd.v3": "1",
		"SHOW TABLES FROM rd":  "t|u2|v3",
		"SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'rd'": "v3",
	} {
		if got := strings.Join(queryRows(t, other, q), "|"); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}

	// To another database, and back by a prepared statement, run twice.
	mustExec(t, other, "RENAME TABLE rd.u2 TO other.u9, other.u TO rd.u")
	for q, want := range map[string]string{
		"SELECT id FROM u9":   "3",
		"SELECT id FROM rd.u": "2",
		"SHOW TABLES FROM rd": "t|u|v3",
		"SHOW TABLES":         "u9",
		"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('rd', 'other') AND TABLE_NAME LIKE 'u%' ORDER BY 1, 2": "other u9|rd u",
	} {
		if got := strings.Join(queryRows(t, other, q), "|"); got != want {
			t.Errorf("after RENAME TABLE between databases, %s: %s, want %s", q, got, want)
		}
	}
	there, err := other.Prepare("RENAME TABLE u9 TO rd.u9")
	if err != nil {
		t.Fatal(err)
	}
	back, err := other.Prepare("RENAME TABLE rd.u9 TO u9")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		for _, st := range []*sql.Stmt{there, back} {
			if _, err := st.Exec(); err != nil {
				t.Fatalf("prepared RENAME TABLE between databases, round %d: %v", i, err)
			}
		}
	}
	if got := strings.Join(queryRows(t, other, "SELECT id FROM u9"), "|"); got != "3" {
		t.Errorf("after the prepared renames: %s", got)
	}
	// The same text as a prepared statement, sent as a text query: GMS
	// plans it from the prepared statement's parse.
	mustExec(t, other, "RENAME TABLE u9 TO rd.u9")
	if got := strings.Join(queryRows(t, other, "SHOW TABLES FROM rd"), "|"); got != "t|u|u9|v3" {
		t.Errorf("after a text RENAME TABLE with a prepared statement's text: %s", got)
	}
	mustExec(t, other, "RENAME TABLE rd.u9 TO u9")
	// A table with triggers stays in its database, as in MySQL.
	mustExec(t, other, "CREATE TRIGGER u9_ins BEFORE INSERT ON u9 FOR EACH ROW SET NEW.id = NEW.id + 1")
	if _, err := other.Exec("RENAME TABLE u9 TO rd.u9"); mysqlErrNum(err) != 1435 {
		t.Errorf("RENAME TABLE of a table with a trigger to another database: %v, want 1435", err)
	}
}

// TestAlterTableRenameQualified: ALTER TABLE db.t RENAME [TO] renames
// in the database the names say (GMS planned it in the current one: 1046
// with none), an unqualified new name is in the current database, as in
// MySQL, and a clause after the rename changes the renamed table (GMS ran
// the clauses in order, and the later one found no table).
func TestAlterTableRenameQualified(t *testing.T) {
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE ad", "CREATE DATABASE ae",
		"CREATE TABLE ad.t (id INT PRIMARY KEY)", "INSERT INTO ad.t VALUES (1)")
	none := openDB(t, srv, "")
	none.SetMaxOpenConns(1)
	mustExec(t, none, "ALTER TABLE ad.t RENAME TO ad.t2")
	inAE := openDB(t, srv, "ae")
	inAE.SetMaxOpenConns(1)
	mustExec(t, inAE, "ALTER TABLE ad.t2 RENAME TO ad.t3, ADD COLUMN v INT NOT NULL DEFAULT 7")
	mustExec(t, inAE, "ALTER TABLE ad.t3 ADD COLUMN w INT NOT NULL DEFAULT 8, RENAME t4")
	for q, want := range map[string]string{
		"SHOW TABLES FROM ad": "",
		"SHOW TABLES":         "t4",
		"SELECT * FROM t4":    "1 7 8",
	} {
		if got := strings.Join(queryRows(t, inAE, q), "|"); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
}
