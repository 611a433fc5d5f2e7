package sql_test

import (
	"fmt"
	"testing"
)

// TestReplaceCountsEveryDeletedRow: a REPLACE row counts one, plus one
// for each row it deleted to make room (MySQL), not at most two (GMS).
func TestReplaceCountsEveryDeletedRow(t *testing.T) {
	db, exec := compatDB(t)
	exec("CREATE TABLE rp (a INT PRIMARY KEY, u INT, v INT, UNIQUE KEY ku (u), UNIQUE KEY kv (v))")
	exec("INSERT INTO rp VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3)")
	for _, c := range []struct {
		stmt string
		want int64
	}{
		{"REPLACE INTO rp VALUES (1, 2, 3)", 4},            // deletes rows 1, 2 and 3
		{"REPLACE INTO rp VALUES (1, 2, 3)", 2},            // deletes the row it replaces
		{"REPLACE INTO rp VALUES (9, 9, 9)", 1},            // deletes nothing
		{"REPLACE INTO rp VALUES (5, 2, 8), (6, 9, 3)", 4}, // one delete each
	} {
		res, err := db.Exec(c.stmt)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if n, _ := res.RowsAffected(); n != c.want {
			t.Errorf("%s: %d rows affected, want %d", c.stmt, n, c.want)
		}
	}
	if got := queryRows(t, db, "SELECT * FROM rp ORDER BY a"); len(got) != 2 {
		t.Errorf("rows after the REPLACEs: %v, want (5, 2, 8) and (6, 9, 3)", got)
	}
}

// TestJoinDeleteCountsDeletedRows: a DELETE of several tables counts the
// rows it deleted, each once, not the rows of the join.
func TestJoinDeleteCountsDeletedRows(t *testing.T) {
	db, exec := compatDB(t)
	exec("CREATE TABLE j0 (a INT PRIMARY KEY, c INT)")
	exec("CREATE TABLE j1 (a INT PRIMARY KEY, c INT)")
	exec("INSERT INTO j0 VALUES (1, 1), (2, 1), (3, 2), (4, NULL)")
	exec("INSERT INTO j1 VALUES (1, 1), (2, 1), (3, 1), (4, 2)")
	for _, c := range []struct {
		stmt string
		want int64
	}{
		// j0's rows 1 and 2 join three rows of j1 each.
		{"DELETE j0 FROM j0 JOIN j1 ON j0.c = j1.c WHERE j0.a < 4", 3},
		{"DELETE j0, j1 FROM j0 JOIN j1 ON j0.a = j1.c", 0},
		{"DELETE j1 FROM j1 JOIN j0 ON j0.a = j1.a", 1},
	} {
		res, err := db.Exec(c.stmt)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if n, _ := res.RowsAffected(); n != c.want {
			t.Errorf("%s: %d rows affected, want %d", c.stmt, n, c.want)
		}
	}
	if got := queryRows(t, db, "SELECT COUNT(*) FROM j1"); len(got) != 1 || got[0] != "3" {
		t.Errorf("rows of j1 left: %v, want 3", got)
	}
}

// TestUpsertCountsCaseChange: INSERT ... ON DUPLICATE KEY UPDATE that
// changes only the letter case of a case-insensitive string counts 2,
// as MySQL (which compares the row's bytes), and writes the change; one
// that changes nothing counts 0.
func TestUpsertCountsCaseChange(t *testing.T) {
	db, exec := compatDB(t)
	exec("CREATE TABLE uc (a INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_general_ci, n INT)")
	exec("INSERT INTO uc VALUES (1, 'a', 1), (2, 'b', 2)")
	for _, c := range []struct {
		stmt string
		want int64
	}{
		{"INSERT INTO uc VALUES (1, 'x', 0) ON DUPLICATE KEY UPDATE s = 'A'", 2},
		{"INSERT INTO uc VALUES (1, 'x', 0) ON DUPLICATE KEY UPDATE s = 'A'", 0},
		{"INSERT INTO uc VALUES (2, 'x', 0) ON DUPLICATE KEY UPDATE n = 2", 0},
		{"INSERT INTO uc VALUES (2, 'x', 0), (3, 'c', 3) ON DUPLICATE KEY UPDATE s = UPPER(s)", 3},
	} {
		res, err := db.Exec(c.stmt)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if n, _ := res.RowsAffected(); n != c.want {
			t.Errorf("%s: %d rows affected, want %d", c.stmt, n, c.want)
		}
	}
	got := queryRows(t, db, "SELECT CONCAT(a, s) FROM uc ORDER BY a")
	if want := "[1A 2B 3c]"; fmt.Sprint(got) != want {
		t.Errorf("rows after the upserts: %v, want %s", got, want)
	}
}
