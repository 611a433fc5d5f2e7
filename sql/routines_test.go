package sql_test

import (
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestStoredProcedures: CREATE, CALL and DROP PROCEDURE with MySQL's
// errors and notes; a CALL's writes belong to the caller's transaction;
// procedures survive a restart and go with their database.
func TestStoredProcedures(t *testing.T) {
	dir := t.TempDir()
	s := sqltest.Start(t, dir)
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d", "CREATE TABLE t (id INT PRIMARY KEY, k INT)",
		"CREATE PROCEDURE p(IN a INT, OUT n INT) BEGIN INSERT INTO t VALUES (a, a * 2); SELECT count(*) INTO n FROM t; END",
		"CREATE PROCEDURE q() SELECT id, k FROM t ORDER BY id")
	c.fails("CREATE PROCEDURE p() BEGIN END", 1304, "PROCEDURE p already exists")
	c.exec("CALL p(1, @n)")
	c.want("SELECT @n", "1")
	c.want("CALL q()", "1 2")
	c.exec("BEGIN", "CALL p(2, @n)", "ROLLBACK")
	c.want("CALL q()", "1 2")
	c.want("SELECT routine_name, routine_type FROM information_schema.routines WHERE routine_schema = 'd' ORDER BY routine_name",
		"p PROCEDURE", "q PROCEDURE")

	c.fails("DROP PROCEDURE nope", 1305, `stored procedure "nope" does not exist`)
	c.exec("DROP PROCEDURE IF EXISTS nope")
	c.want("SHOW WARNINGS", "Note 1305 PROCEDURE d.nope does not exist")
	c.exec("DROP PROCEDURE q")
	c.fails("CALL q()", 1305, `stored procedure "q" does not exist`)
	c.c.Close()
	s.Stop()

	s = sqltest.Start(t, dir)
	c = connect(t, s, "d")
	c.exec("CALL p(3, @n)")
	c.want("SELECT @n", "2")
	c.want("SELECT routine_name FROM information_schema.routines WHERE routine_schema = 'd'", "p")
	c.exec("DROP DATABASE d", "CREATE DATABASE d", "USE d")
	c.want("SELECT routine_name FROM information_schema.routines WHERE routine_schema = 'd'")
	c.exec("CREATE PROCEDURE p() BEGIN END", "CALL p()")
}
