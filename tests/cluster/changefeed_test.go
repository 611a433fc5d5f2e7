package cluster

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/sql/sqltest"
	"github.com/percdb/percdb/tests/testproc"
)

// startSQL starts another SQL node of c, named name.
func (c *cluster) startSQL(t *testing.T, name string) *member {
	t.Helper()
	m := &member{t: t, name: name, bin: c.sql.bin, ready: c.sql.ready,
		args: []string{"sql", "--data-dir", filepath.Join(t.TempDir(), name), "--host", "127.0.0.1", "--port", "0",
			"--status-port", "0", "--pd", c.pd.addr}}
	m.start()
	return m
}

// TestChangefeedInCluster: a CHANGEFEED on one SQL node of a cluster of
// three KV nodes follows the updates that writers on another SQL node
// make, while that node is SIGKILLed in the middle of commits (leaving
// their locks for the feed to settle) and the writers go on through the
// first node. Every update adds one to a row's counter, so a feed that
// sends each committed change exactly once, in commit_ts order per key,
// shows each key's counter going up by one from row to row, ending at
// the table's value. Then the feed's client goes away (its context ends)
// and the SQL node ends the statement; and KILL QUERY ends another feed.
func TestChangefeedInCluster(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	writer := c.startSQL(t, "sql2")
	db := openDB(t, c.sql.addr, "", true)
	wdb := openDB(t, writer.addr, "", true)
	ctx := context.Background()
	const keys = 6
	exec := func(db *sql.DB, q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, c.logs())
		}
	}
	exec(db, "CREATE DATABASE d")
	exec(db, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL, pad LONGTEXT)")
	for k := range keys {
		exec(db, fmt.Sprintf("INSERT INTO d.t (id, v) VALUES (%d, 0)", k))
	}

	fctx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	feed := sqltest.Follow(t, fctx, db, "CHANGEFEED FOR d.t WITH resolved = '100ms'")
	var rows []sqltest.FeedRow
	next := func(what string) sqltest.FeedRow {
		t.Helper()
		select {
		case r, ok := <-feed:
			if !ok {
				t.Fatalf("the feed ended while waiting for %s; rows so far %d\n%s", what, len(rows), c.logs())
			}
			rows = append(rows, r)
			return r
		case <-time.After(progressTimeout):
			t.Fatalf("no feed row within %v while waiting for %s; rows so far %d\n%s", progressTimeout, what, len(rows), c.logs())
			return sqltest.FeedRow{}
		}
	}
	for next("a first resolved row").Key != "" {
	}

	// Writers on the second SQL node, until it is killed: each update
	// writes a row bigger than a one-phase commit takes (16 KiB), so it
	// commits in two phases, locks first, and the kill leaves the locks
	// of the commits in flight.
	var acked atomic.Int64
	update := func(db *sql.DB, stop *atomic.Bool, w int, big bool) {
		for i := 0; !stop.Load(); i++ {
			q := fmt.Sprintf("UPDATE d.t SET v = v + 1, pad = NULL WHERE id = %d", (w+i)%keys)
			if big {
				q = fmt.Sprintf("UPDATE d.t SET v = v + 1, pad = REPEAT(CHAR(97 + v %% 26), 20000) WHERE id = %d", (w+i)%keys)
			}
			if _, err := db.ExecContext(ctx, q); err == nil {
				acked.Add(1)
			}
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() { update(wdb, &stop, w, true) })
	}
	waitFor(t, "updates through sql2", func() bool { return acked.Load() >= 40 }, c.logs)
	writer.kill()
	stop.Store(true)
	wg.Wait()
	// Then small updates through the feed's node, one-phase commits in a
	// steady stream over the feed's range: the feed must keep up while
	// they run, not wait for a moment with none in flight.
	stop.Store(false)
	killedAt := acked.Load()
	for w := range 6 {
		wg.Go(func() { update(db, &stop, w, false) })
	}
	seen := 0
	for seen < 60 {
		if next("changes made while one-phase commits stream").Key != "" {
			seen++
		}
	}
	stop.Store(true)
	wg.Wait()
	exec(db, "INSERT INTO d.t (id, v) VALUES (1000, 0)") // commits above every update
	for next("the marker row").Key != "[1000]" {
	}

	// Each key's changes, in feed order: its counter goes up by one each
	// time, from 1 to the value the table holds.
	got := map[string][]int{}
	var lastTS uint64
	for _, r := range rows {
		if r.CommitTS < lastTS {
			t.Errorf("commit_ts %d after %d: the feed is not in commit_ts order", r.CommitTS, lastTS)
		}
		lastTS = r.CommitTS
		if r.Key == "" || r.Key == "[1000]" {
			continue
		}
		var v struct{ V int }
		if err := json.Unmarshal([]byte(r.Value.String), &v); err != nil {
			t.Fatalf("row %q value %q: %v", r.Key, r.Value.String, err)
		}
		got[r.Key] = append(got[r.Key], v.V)
	}
	changes := 0
	for k := range keys {
		var final int
		if err := db.QueryRowContext(ctx, "SELECT v FROM d.t WHERE id = ?", k).Scan(&final); err != nil {
			t.Fatal(err)
		}
		seq := got[fmt.Sprintf("[%d]", k)]
		for i, v := range seq {
			if v != i+1 {
				t.Fatalf("key %d: the feed's values %v: change %d is %d, want %d (a change missing or sent twice)", k, seq, i, v, i+1)
			}
		}
		if len(seq) != final {
			t.Fatalf("key %d: the feed sent %d changes, the table's counter is %d", k, len(seq), final)
		}
		changes += final
	}
	if changes < int(acked.Load()) {
		t.Fatalf("%d changes committed, %d acknowledged", changes, acked.Load())
	}

	// The client goes away: the SQL node ends the statement.
	stopFeed()
	for range feed {
	}
	running := func() bool {
		n, err := feedsRunning(ctx, db)
		return err == nil && n == 0
	}
	waitFor(t, "the feed's statement to end after its client left", running, c.logs)

	// KILL QUERY ends a feed's result set.
	sqltest.KillQueryEndsFeed(t, ctx, db, "CHANGEFEED FOR d.t WITH resolved = '100ms'")
	var name, resolved string
	if err := db.QueryRowContext(ctx, "SHOW STATUS LIKE 'Percdb_locks_resolved_gone'").Scan(&name, &resolved); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d changes of %d keys followed; %d updates acknowledged, sql2 killed after %d; locks the feed's node found gone (rolled back or forward): %s",
		changes, keys, acked.Load(), killedAt, resolved)
	c.stop()
}

var changefeedStmt = regexp.MustCompile(`(?i)^\s*changefeed\b`)

// feedsRunning counts the CHANGEFEED statements the SQL node runs.
func feedsRunning(ctx context.Context, db *sql.DB) (int, error) {
	rows, err := db.QueryContext(ctx, "SHOW FULL PROCESSLIST")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		for i, col := range cols {
			if strings.EqualFold(col, "Info") && changefeedStmt.MatchString(vals[i].String) {
				n++
			}
		}
	}
	return n, rows.Err()
}
