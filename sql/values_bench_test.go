package sql_test

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkInsertSelectValues measures an INSERT ... SELECT of 1,000 rows
// of integer, DECIMAL and DOUBLE values through GMS's INSERT, whose
// values sql/compat/fit.go checks against their columns' ranges, and the
// DELETE that empties the table again.
//
//	go test ./sql -run '^$' -bench InsertSelectValues -count 10
func BenchmarkInsertSelectValues(b *testing.B) {
	db := openDB(b, startServer(b, true), "")
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	mustExec(b, db, "CREATE DATABASE bv", "USE bv",
		"CREATE TABLE src (a INT PRIMARY KEY, i INT, u INT UNSIGNED, d DECIMAL(10,2), f DOUBLE)",
		"CREATE TABLE dst (a INT PRIMARY KEY, i INT, u INT UNSIGNED, d DECIMAL(10,2), f DOUBLE)")
	for i := 0; i < 1000; i += 100 {
		q := "INSERT INTO src VALUES "
		for j := i; j < i+100; j++ {
			if j > i {
				q += ", "
			}
			q += fmt.Sprintf("(%d, %d, %d, %d.25, %d.5)", j, j*7, j*3, j, j)
		}
		mustExec(b, db, q)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if _, err := db.ExecContext(ctx, "INSERT INTO dst SELECT * FROM src"); err != nil {
			b.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "DELETE FROM dst"); err != nil {
			b.Fatal(err)
		}
	}
}
