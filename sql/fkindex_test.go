package sql_test

import (
	"testing"
)

// TestForeignKeyIndexSuperseded: the index added for a foreign key that
// no index served is dropped when a later index starts with the key's
// columns, as InnoDB drops it (percdb kept both); an index that does not
// start with them leaves it, and the key keeps being enforced by the new
// index, which then cannot be dropped (1553). Both ways of building an
// index: in the statement's transaction (a table created there) and
// online (a table with rows).
func TestForeignKeyIndexSuperseded(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE fx",
		"CREATE TABLE fx.p (id INT PRIMARY KEY)", "INSERT INTO fx.p VALUES (1), (2)",
		"CREATE TABLE fx.c (id INT PRIMARY KEY, pid INT, x INT, CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES fx.p (id))",
		"INSERT INTO fx.c VALUES (1, 1, 10), (2, 2, 20)")
	steps := []struct{ stmt, want string }{
		{"", "PRIMARY(id) c_p(pid)"},
		{"CREATE INDEX x_pid ON fx.c (x, pid)", "PRIMARY(id) c_p(pid) x_pid(x) x_pid(pid)"},
		{"CREATE INDEX pid_x ON fx.c (pid, x)", "PRIMARY(id) x_pid(x) x_pid(pid) pid_x(pid) pid_x(x)"},
	}
	for _, s := range steps {
		if s.stmt != "" {
			mustExec(t, db, s.stmt)
		}
		if got := indexNamesOf(t, db, "fx.c"); got != s.want {
			t.Fatalf("after %q: indexes %s\nwant %s", s.stmt, got, s.want)
		}
	}
	checkTableOK(t, db, "fx.c")
	if _, err := db.Exec("INSERT INTO fx.c VALUES (3, 9, 30)"); mysqlErrNum(err) != 1452 {
		t.Fatalf("a child without a parent: %v, want 1452", err)
	}
	if _, err := db.Exec("DROP INDEX pid_x ON fx.c"); mysqlErrNum(err) != 1553 {
		t.Fatalf("dropping the index the key needs: %v, want 1553", err)
	}

	// The later index built in the statement's transaction, after a
	// column change the same ALTER TABLE makes.
	mustExec(t, db, "CREATE TABLE fx.c2 (id INT PRIMARY KEY, pid INT, x INT, FOREIGN KEY (pid) REFERENCES fx.p (id))",
		"INSERT INTO fx.c2 VALUES (1, 1, 1)",
		"ALTER TABLE fx.c2 MODIFY x BIGINT, ADD UNIQUE INDEX u_pid (pid)")
	if got := indexNamesOf(t, db, "fx.c2"); got != "PRIMARY(id) u_pid(pid)" {
		t.Fatalf("fx.c2's indexes: %s", got)
	}
	checkTableOK(t, db, "fx.c2")
}
