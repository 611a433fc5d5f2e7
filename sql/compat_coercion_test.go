package sql_test

import "testing"

// TestUpdateConcatUnderConnectionCollation runs an UPDATE whose SET is a
// string function of a column, from a connection whose collation
// (go-sql-driver's utf8mb4_general_ci) differs from the column's. The
// collation rewrite of such an expression wrapped it again on every pass
// of the execution builder, which runs the rewrite until the plan stops
// changing, and the server died of a stack overflow (tests/elle's
// list-append workload sends exactly this statement).
func TestUpdateConcatUnderConnectionCollation(t *testing.T) {
	db, mustExec := compatDB(t)
	mustExec("CREATE TABLE l (k INT PRIMARY KEY, v TEXT)")
	mustExec("INSERT INTO l VALUES (1, 'a'), (2, 'B')")
	// Prepared (the driver's default with arguments) and as text.
	if _, err := db.Exec("UPDATE l SET v = CONCAT(v, ',', ?) WHERE k = ?", "x", 1); err != nil {
		t.Fatalf("prepared UPDATE: %v", err)
	}
	mustExec("UPDATE l SET v = CONCAT(v, ',', 'y') WHERE k = 1")
	mustExec("UPDATE l SET v = LOWER(CONCAT(v, ',', 'Z')) WHERE k = 2")
	mustExec("DELETE FROM l WHERE CONCAT(v, '') = 'nothing'")
	rows, err := db.Query("SELECT k, v FROM l ORDER BY k")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var k int
		var v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if want := []string{"a,x,y", "b,z"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("rows: got %q, want %q", got, want)
	}
}
