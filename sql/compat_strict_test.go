package sql_test

import (
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestStrictComparisonsInWrites: under a strict sql_mode, an UPDATE or
// DELETE that compares a number with a string that is not a number
// fails with 1292 and changes nothing, as in MySQL (GMS compared the
// string as 0); a SELECT only warns, and a comparison that no row
// reaches, or with a numeric string, runs.
func TestStrictComparisonsInWrites(t *testing.T) {
	db, exec := compatDB(t)
	exec("SET SESSION sql_mode = 'STRICT_TRANS_TABLES'")
	exec("CREATE TABLE sc (a INT PRIMARY KEY, b INT, s VARCHAR(10))")
	exec("INSERT INTO sc VALUES (1, 0, 'x'), (2, NULL, '1')")
	for _, q := range []string{
		"UPDATE sc SET b = 9 WHERE b = 'abc'",
		"UPDATE sc SET b = 9 WHERE b = '1x'",
		"DELETE FROM sc WHERE b < 'abc'",
		"UPDATE sc SET b = 9 WHERE s = 1",
		"UPDATE sc SET b = 9 WHERE b IN ('abc', 1)",
		"DELETE FROM sc WHERE b IN ('abc', 1, 2, 3)",
	} {
		_, err := db.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1292 {
			t.Errorf("%s: %v, want error 1292", q, err)
		}
	}
	for _, q := range []string{
		"UPDATE sc SET b = 9 WHERE a = 3 AND b = 'abc'",
		"UPDATE sc SET b = 5 WHERE b = ' 0 '",
		"UPDATE sc SET b = b WHERE s = '1'",
		"SELECT * FROM sc WHERE b = 'abc'",
	} {
		exec(q)
	}
	if got := queryRows(t, db, "SELECT a, b FROM sc ORDER BY a"); len(got) != 2 || got[0] != "1 5" || got[1] != "2 NULL" {
		t.Errorf("rows %v, want [1 5] [2 NULL]", got)
	}
	// Not strict: the string compares as 0, as in MySQL (with a warning).
	exec("SET SESSION sql_mode = ''")
	exec("UPDATE sc SET b = 7 WHERE b = 'abc'")
	if got := queryRows(t, db, "SELECT b FROM sc WHERE a = 1"); len(got) != 1 || got[0] != "5" {
		t.Errorf("b of row 1: %v, want 5", got)
	}
}
