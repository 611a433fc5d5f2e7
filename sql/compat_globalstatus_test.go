package sql_test

import (
	"slices"
	"testing"
)

// TestGlobalStatus: SHOW GLOBAL STATUS shows percdb's node counters, as
// SHOW STATUS does (monitoring reads the global form), not GMS's
// constant zeros under InnoDB's names.
func TestGlobalStatus(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE DATABASE gs", "CREATE TABLE gs.t (id INT PRIMARY KEY)", "INSERT INTO gs.t VALUES (1)")
	names := func(q string) []string {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n, v string
			if err := rows.Scan(&n, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	session, global := names("SHOW STATUS LIKE 'Percdb_%'"), names("SHOW GLOBAL STATUS LIKE 'Percdb_%'")
	if len(session) == 0 || !slices.Equal(session, global) {
		t.Fatalf("SHOW GLOBAL STATUS's percdb counters %q, want SHOW STATUS's %q", global, session)
	}
	value := func(q string) (v uint64) {
		t.Helper()
		var n string
		if err := db.QueryRow(q).Scan(&n, &v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	if g, s := value("SHOW GLOBAL STATUS LIKE 'Percdb_transactions_committed'"), value("SHOW STATUS LIKE 'Percdb_transactions_committed'"); g == 0 || g > s {
		t.Errorf("Percdb_transactions_committed: global %d, session %d (read after it), want the same counter", g, s)
	}
}
