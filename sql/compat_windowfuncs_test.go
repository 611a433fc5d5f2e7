package sql_test

import (
	"testing"
)

// TestWindowAndIntervalErrors checks MySQL's errors for window and
// INTERVAL syntax percdb takes (sql/compat/syntax.go,
// sql/compat/windowfuncs.go, sql/compat/rangeframes.go), and NTH_VALUE with a
// parameter n in a prepared statement.
func TestWindowAndIntervalErrors(t *testing.T) {
	db, exec := compatDB(t)
	exec("CREATE TABLE we (id INT PRIMARY KEY, a INT, b INT, v INT)")
	exec("INSERT INTO we VALUES (1, 1, 1, 10), (2, 1, 2, 20)")
	for _, c := range []struct {
		q    string
		code uint16
	}{
		{"SELECT NTH_VALUE(v, 2) FROM LAST OVER (ORDER BY id) FROM we", 1235},
		{"SELECT FIRST_VALUE(v) IGNORE NULLS OVER (ORDER BY id) FROM we", 1235},
		{"SELECT NTH_VALUE(v, 0) OVER (ORDER BY id) FROM we", 1210},
		{"SELECT NTH_VALUE(v, id) OVER (ORDER BY id) FROM we", 1210},
		{"SELECT SUM(v) OVER (ORDER BY a, b RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM we", 3587},
		{"SELECT SUM(v) OVER (RANGE BETWEEN CURRENT ROW AND 1 FOLLOWING) FROM we", 3587},
		{"SELECT UTC_TIME(7)", 1426},
	} {
		_, err := db.Exec(c.q)
		if got := mysqlErrNum(err); got != c.code {
			t.Errorf("%s: %v, want error %d", c.q, err, c.code)
		}
	}
	// A syntax error stays one.
	if _, err := db.Exec("SELECT DATE_ADD(id, INTERVAL 1 HOUR_MINUTE FROM we"); mysqlErrNum(err) != 1064 {
		t.Errorf("broken INTERVAL: %v, want error 1064", err)
	}
	// Prepared (the driver prepares a statement with arguments). A
	// compound INTERVAL unit still fails to prepare: vitess's connection
	// parses COM_STMT_PREPARE with its own grammar before any handler
	// (docs/compatibility.md).
	var n int
	if err := db.QueryRow("SELECT NTH_VALUE(v, ?) OVER (ORDER BY id) FROM we WHERE id = 2", 1).Scan(&n); err != nil || n != 20 {
		t.Errorf("prepared NTH_VALUE: %d %v, want 20", n, err)
	}
}
