package sql_test

import "testing"

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
