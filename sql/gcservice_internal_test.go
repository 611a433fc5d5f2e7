package sql

import (
	"context"
	dbsql "database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/sql/safepoint"
)

// feedUntil reads CHANGEFEED q until stop says so for a row (key, value,
// commit_ts; key "" for a resolved row), then ends the feed; it returns
// the error the feed ended with, if it ended by itself.
func feedUntil(t *testing.T, db *dbsql.DB, q string, stop func(key, value string, ts uint64) bool) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	// Closing the rows would read the endless result set to its end:
	// the context's end cuts the connection instead.
	defer func() { cancel(); _ = rows.Close() }()
	for rows.Next() {
		var table string
		var key, value dbsql.NullString
		var ts uint64
		if err := rows.Scan(&table, &key, &value, &ts); err != nil {
			t.Fatal(err)
		}
		if stop(key.String, value.String, ts) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t.Fatalf("%s ended before it was stopped", q)
	return nil
}

// TestChangefeedHoldsGC: a change feed's position holds the GC safe point
// back after the feed's client went away, so that the feed resumed from
// its last resolved timestamp gets every change since, although GC ran
// with a life time of 0; once the entry expires GC passes it, and a
// cursor below the safe point fails with error 9006 instead of skipping
// collected changes.
func TestChangefeedHoldsGC(t *testing.T) {
	ctx := context.Background()
	srv, db := openInternal(t, t.TempDir(), "")
	p := srv.provider
	execAll(t, db, "CREATE DATABASE g", "CREATE TABLE g.t (id INT PRIMARY KEY, v INT)", "INSERT INTO g.t VALUES (1, 0)")
	var resolved uint64
	if err := feedUntil(t, db, "CHANGEFEED FOR g.t WITH resolved = '10ms'", func(key, _ string, ts uint64) bool {
		resolved = ts
		return key == ""
	}); err != nil {
		t.Fatal(err)
	}
	const updates = 10
	for i := 1; i <= updates; i++ {
		execAll(t, db, fmt.Sprintf("UPDATE g.t SET v = %d", i))
	}
	p.gc.settings.lifeTime.Store(0)
	sp, err := p.runGC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp == 0 || sp > resolved {
		t.Fatalf("GC safe point %d with a feed resolved at %d: want at or below it", sp, resolved)
	}
	var got []string
	if err := feedUntil(t, db, "CHANGEFEED FOR g.t WITH cursor = "+strconv.FormatUint(resolved, 10), func(key, value string, _ uint64) bool {
		got = append(got, value)
		return len(got) == updates
	}); err != nil {
		t.Fatalf("resume after GC: %v", err)
	}
	for i, v := range got {
		if !strings.Contains(v, fmt.Sprintf(`"v":%d`, i+1)) {
			t.Fatalf("resumed feed's change %d: %s, want v = %d (all: %v)", i+1, v, i+1, got)
		}
	}

	// The entries expire: GC passes them and forgets them.
	live, err := safepoint.Source{Store: p.store}.ServiceSafePoints(ctx, time.Now())
	if err != nil || len(live) != 2 {
		t.Fatalf("service safe points %v, %v; want the two feeds'", live, err)
	}
	// SQL lists them, the first at the first feed's position or below.
	rows, err := db.Query("SELECT SERVICE_ID, WHAT, SAFE_POINT, EXPIRED, EXPIRES > NOW() FROM information_schema.PERCDB_SERVICE_SAFE_POINTS ORDER BY SAFE_POINT")
	if err != nil {
		t.Fatal(err)
	}
	var listed int
	for rows.Next() {
		var id, what string
		var ts uint64
		var expired, future bool
		if err := rows.Scan(&id, &what, &ts, &expired, &future); err != nil {
			t.Fatal(err)
		}
		if listed == 0 && ts > resolved || expired || !future || !strings.Contains(what, "g.t") {
			t.Errorf("PERCDB_SERVICE_SAFE_POINTS row %s %q %d expired=%v expires in the future=%v", id, what, ts, expired, future)
		}
		listed++
	}
	if err := rows.Err(); err != nil || listed != 2 {
		t.Fatalf("PERCDB_SERVICE_SAFE_POINTS: %d rows, %v; want 2", listed, err)
	}
	for _, s := range live {
		if err := safepoint.Set(ctx, p.store, s.ID, s.TS, -time.Second, "test"); err != nil {
			t.Fatal(err)
		}
	}
	execAll(t, db, "UPDATE g.t SET v = 100")
	if sp, err = p.runGC(ctx); err != nil {
		t.Fatal(err)
	}
	if sp <= resolved {
		t.Fatalf("GC safe point %d after the entries expired, want above %d", sp, resolved)
	}
	if live, err := (safepoint.Source{Store: p.store}).ServiceSafePoints(ctx, time.Now().Add(-time.Hour)); err != nil || len(live) != 0 {
		t.Fatalf("expired entries left: %v, %v", live, err)
	}
	err = feedUntil(t, db, "CHANGEFEED FOR g.t WITH gc_ttl = '0s', cursor = "+strconv.FormatUint(resolved, 10), func(string, string, uint64) bool { return true })
	if mysqlErrNum(err) != 9006 || !strings.Contains(err.Error(), "older than the GC safe point") {
		t.Fatalf("a cursor below the safe point: %v, want error 9006", err)
	}
}
