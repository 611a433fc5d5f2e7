package sql_test

import (
	"database/sql"
	"strings"
	"testing"
)

// indexNamesOf returns table's index names and columns as SHOW INDEX
// lists them, one "name(col)" per index column, in SHOW INDEX order.
func indexNamesOf(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.Query("SHOW INDEX FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for _, r := range readRows(rows) {
		out = append(out, r[2]+"("+r[4]+")")
	}
	return strings.Join(out, " ")
}

// TestGeneratedIndexNames: an index the statement leaves unnamed is named
// after its first column, with _2, _3, ... when that is taken, as MySQL
// names it, in CREATE TABLE (a column's UNIQUE and a table's UNIQUE on the
// same column), in an ALTER TABLE of several clauses, and for a column
// made UNIQUE by CHANGE or MODIFY (which Sequelize's sync({alter: true})
// sends for every unique column). Before, the second name collided (1061)
// and CHANGE ... UNIQUE on a column with a unique index failed. An ALTER
// TABLE whose clauses mix an online index build and a change made in its
// own transaction commits once, without the conflict that ran it again.
func TestGeneratedIndexNames(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE gi",
		"CREATE TABLE gi.t (id INT PRIMARY KEY, email VARCHAR(20) UNIQUE, k INT, UNIQUE (email))",
		"INSERT INTO gi.t VALUES (1, 'a', 1), (2, 'b', 2)")
	steps := []struct{ stmt, want string }{
		{"", "PRIMARY(id) email(email) email_2(email)"},
		{"ALTER TABLE gi.t ADD UNIQUE (email)", "PRIMARY(id) email(email) email_2(email) email_3(email)"},
		{"ALTER TABLE gi.t CHANGE email email VARCHAR(30) UNIQUE", "PRIMARY(id) email(email) email_2(email) email_3(email) email_4(email)"},
		{"ALTER TABLE gi.t ADD INDEX (k), ADD INDEX (k)", "PRIMARY(id) email(email) email_2(email) email_3(email) email_4(email) k(k) k_2(k)"},
		{"ALTER TABLE gi.t MODIFY k INT UNIQUE", "PRIMARY(id) email(email) email_2(email) email_3(email) email_4(email) k(k) k_2(k) k_3(k)"},
		{"ALTER TABLE gi.t ADD INDEX (k), DROP INDEX k, ADD INDEX (k)", "PRIMARY(id) email(email) email_2(email) email_3(email) email_4(email) k_2(k) k_3(k) k_4(k) k(k)"},
	}
	for _, s := range steps {
		if s.stmt != "" {
			mustExec(t, db, s.stmt)
		}
		if got := indexNamesOf(t, db, "gi.t"); got != s.want {
			t.Fatalf("after %q: indexes %s\nwant %s", s.stmt, got, s.want)
		}
	}
	checkTableOK(t, db, "gi.t")
	// A name given is kept, and a taken one is still refused.
	if _, err := db.Exec("ALTER TABLE gi.t ADD INDEX k (id)"); mysqlErrNum(err) != 1061 {
		t.Fatalf("ADD INDEX k when k exists: %v, want 1061", err)
	}
	// ADD COLUMN of a column the table has: MySQL's 1060, which GORM's
	// AutoMigrate reads (GMS's was 1105).
	if _, err := db.Exec("ALTER TABLE gi.t ADD COLUMN k INT"); mysqlErrNum(err) != 1060 || !strings.Contains(err.Error(), "Duplicate column name 'k'") {
		t.Fatalf("ADD COLUMN k when k exists: %v, want 1060 Duplicate column name 'k'", err)
	}
	// A change in the statement's transaction, then an index on the same
	// table with a given name: one commit, the index there once.
	mustExec(t, db, "CREATE TABLE gi.u (id INT PRIMARY KEY, k INT, KEY (k))", "INSERT INTO gi.u VALUES (1, 1), (2, 2)",
		"ALTER TABLE gi.u MODIFY k BIGINT, ADD UNIQUE INDEX uk (k)")
	if got := indexNamesOf(t, db, "gi.u"); got != "PRIMARY(id) k(k) uk(k)" {
		t.Fatalf("gi.u's indexes: %s", got)
	}
	checkTableOK(t, db, "gi.u")
}

// TestShowColumnsTypes: SHOW [FULL] COLUMNS and DESCRIBE write a string
// column's Type without its collation and give the column's own collation
// (NULL for other types), as MySQL does; GMS wrote `varchar(255) COLLATE
// utf8mb4_0900_ai_ci` and its own default collation.
func TestShowColumnsTypes(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE sc",
		"CREATE TABLE sc.u (id INT PRIMARY KEY, email VARCHAR(255), kind ENUM('a','b'), c CHAR(3) CHARACTER SET latin1, b VARBINARY(4), t TEXT COLLATE utf8mb4_bin, bl BLOB)")
	want := map[string][2]string{
		"SHOW FULL COLUMNS FROM sc.u":      {"id int NULL|email varchar(255) utf8mb4_0900_ai_ci|kind enum('a','b') utf8mb4_0900_ai_ci|c char(3) latin1_swedish_ci|b varbinary(4) NULL|t text utf8mb4_bin|bl blob NULL", "full"},
		"DESCRIBE sc.u":                    {"id int|email varchar(255)|kind enum('a','b')|c char(3)|b varbinary(4)|t text|bl blob", ""},
		"SHOW COLUMNS FROM sc.u LIKE 'e%'": {"email varchar(255)", ""},
	}
	for stmt, w := range want {
		rows, err := db.Query(stmt)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range readRows(rows) {
			if w[1] == "full" {
				got = append(got, r[0]+" "+r[1]+" "+r[2])
			} else {
				got = append(got, r[0]+" "+r[1])
			}
		}
		rows.Close()
		if g := strings.Join(got, "|"); g != w[0] {
			t.Errorf("%s:\n%s\nwant\n%s", stmt, g, w[0])
		}
	}
}
