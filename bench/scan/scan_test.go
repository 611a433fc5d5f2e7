package scan

import (
	"context"
	"testing"
	"time"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestQueries loads a small table on an in-process percdb and runs every
// query, checking the answers that the data determines.
func TestQueries(t *testing.T) {
	srv := sqltest.Start(t, "")
	ctx := context.Background()
	if _, err := srv.Open("").Exec("CREATE DATABASE scan"); err != nil {
		t.Fatal(err)
	}
	db := srv.Open("scan")
	const n = 2000
	if err := CreateTable(ctx, db, "t"); err != nil {
		t.Fatal(err)
	}
	if err := Load(ctx, db, "t", n, 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := Load(ctx, db, "t", 15, 1, 1); err == nil {
		t.Error("loaded 15 rows, not a multiple of 10")
	}
	var rows, groups, maxID int
	if err := db.QueryRow("SELECT count(*), count(DISTINCT w), max(id) FROM t").Scan(&rows, &groups, &maxID); err != nil {
		t.Fatal(err)
	}
	if rows != n || groups != Groups || maxID != n/Groups {
		t.Fatalf("table has %d rows, %d groups, ids up to %d; want %d, %d, %d", rows, groups, maxID, n, Groups, n/Groups)
	}
	want := map[string]int{
		"ORDER BY q DESC, id LIMIT 10": 10,
		"GROUP BY q % 10":              10,
		"(w, id) IN 3 pairs":           2, // (1,5) and (1,77); id 9000 is past 200
	}
	for _, q := range TableQueries() {
		tm := Time(ctx, db, q, "t", 2, time.Hour)
		if tm.Err != "" || tm.OverLimit || len(tm.Times) != 2 || tm.Digest == "" {
			t.Errorf("%s: %+v", q.Name, tm)
			continue
		}
		if w, ok := want[q.Name]; ok && tm.Rows != w {
			t.Errorf("%s: %d rows, want %d", q.Name, tm.Rows, w)
		}
	}
}
