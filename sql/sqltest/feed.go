package sqltest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// FeedRow is one row of a change feed (CHANGEFEED): Key is "" for a
// resolved row.
type FeedRow struct {
	Key      string
	Value    sql.NullString
	CommitTS uint64
}

// Follow runs the change feed q on db and reads it in the background
// until ctx ends or its result set does; the rows arrive on the returned
// channel, which is closed at the end.
func Follow(t testing.TB, ctx context.Context, db *sql.DB, q string) <-chan FeedRow {
	t.Helper()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out := make(chan FeedRow, 4096)
	go func() {
		defer close(out)
		defer rows.Close()
		for rows.Next() {
			var table string
			var key sql.NullString
			var r FeedRow
			if err := rows.Scan(&table, &key, &r.Value, &r.CommitTS); err != nil {
				return
			}
			r.Key = key.String
			out <- r
		}
	}()
	return out
}

// KillQueryEndsFeed runs the change feed q (one with resolved rows, so
// that a first row comes) on a connection of db, kills it with KILL QUERY
// from another, and checks that its result set ends cleanly and that the
// connection serves again.
func KillQueryEndsFeed(t testing.TB, ctx context.Context, db *sql.DB, q string) {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if !rows.Next() {
		t.Fatalf("%s: no first row: %v", q, rows.Err())
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		t.Fatalf("%s after KILL QUERY: %v", q, err)
	}
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the connection after KILL QUERY: %v", err)
	}
}
