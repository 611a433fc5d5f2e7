package sql_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/sql/sqltest"
)

// feedRow is one row of a change feed.
type feedRow struct {
	key      string // "" for a resolved row
	value    sql.NullString
	commitTS uint64
}

// follow reads a change feed in the background until ctx ends; rows
// arrive on the returned channel, which is closed at the end.
func follow(t *testing.T, ctx context.Context, db *sql.DB, q string) <-chan feedRow {
	t.Helper()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out := make(chan feedRow, 1024)
	go func() {
		defer close(out)
		defer rows.Close()
		for rows.Next() {
			var table string
			var key sql.NullString
			var r feedRow
			if err := rows.Scan(&table, &key, &r.value, &r.commitTS); err != nil {
				return
			}
			r.key = key.String
			out <- r
		}
	}()
	return out
}

// TestChangefeed: concurrent writers' changes all appear once, per key in
// commit_ts order, the last one matching the table; resolved timestamps
// are never followed by an older change; a feed resumed from a cursor,
// after a server restart, sends exactly the changes after it.
func TestChangefeed(t *testing.T) {
	dir := t.TempDir()
	srv := sqltest.Start(t, dir)
	db := srv.Open("")
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO d.t VALUES (100, 'before the feed')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feed := follow(t, ctx, db, "CHANGEFEED FOR d.t WITH resolved = '50ms'")
	// A first resolved row says the feed runs.
	var rows []feedRow
	for r := range feed {
		rows = append(rows, r)
		if r.key == "" {
			break
		}
	}

	const writers, keys, perWriter = 3, 8, 40
	var mu sync.Mutex
	writes := map[int]int{} // key -> committed changes
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				k := (w*7 + i) % keys
				var res sql.Result
				var err error
				if i%5 == 4 {
					res, err = db.Exec("DELETE FROM d.t WHERE id = ?", k)
				} else {
					res, err = db.Exec("INSERT INTO d.t VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)", k, fmt.Sprintf("w%d-%d", w, i))
				}
				var me *mysql.MySQLError
				if errors.As(err, &me) && me.Number == 1213 {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if n, _ := res.RowsAffected(); n > 0 {
					mu.Lock()
					writes[k]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	// A marker written after every writer returned commits above all of
	// their commits: read up to a resolved timestamp at or above it.
	if _, err := db.Exec("INSERT INTO d.t VALUES (1000, 'marker')"); err != nil {
		t.Fatal(err)
	}
	var marker uint64
	for r := range feed {
		rows = append(rows, r)
		if r.key == "[1000]" {
			marker = r.commitTS
		}
		if r.key == "" && marker != 0 && r.commitTS >= marker {
			break
		}
	}
	cancel()
	if marker == 0 {
		t.Fatal("the feed ended before the marker")
	}

	type version struct {
		ts    uint64
		value sql.NullString
	}
	perKey := map[string][]version{}
	var resolved uint64
	// The resumed feed starts after the commit of a change in the middle
	// (each statement is a transaction of its own, so no other change
	// shares its commit_ts).
	var midResolved uint64
	for _, r := range rows[len(rows)/2:] {
		if r.key != "" {
			midResolved = r.commitTS
			break
		}
	}
	for _, r := range rows {
		if r.key == "" {
			if r.commitTS <= resolved {
				t.Errorf("resolved %d after resolved %d", r.commitTS, resolved)
			}
			resolved = r.commitTS
			continue
		}
		if r.commitTS <= resolved {
			t.Errorf("change of %s at %d after resolved %d", r.key, r.commitTS, resolved)
		}
		vs := perKey[r.key]
		if len(vs) > 0 && vs[len(vs)-1].ts >= r.commitTS {
			t.Errorf("key %s: change at %d after one at %d", r.key, r.commitTS, vs[len(vs)-1].ts)
		}
		perKey[r.key] = append(vs, version{r.commitTS, r.value})
	}
	if _, ok := perKey["[100]"]; ok {
		t.Error("the row written before the feed started was sent")
	}
	for k := range keys {
		key := fmt.Sprintf("[%d]", k)
		if got := len(perKey[key]); got != writes[k] {
			t.Errorf("key %s: %d changes sent, %d committed", key, got, writes[k])
		}
		var want sql.NullString
		if err := db.QueryRow("SELECT JSON_OBJECT('id', id, 'v', v) FROM d.t WHERE id = ?", k).Scan(&want); err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		vs := perKey[key]
		if len(vs) == 0 {
			continue
		}
		last := vs[len(vs)-1].value
		if last.Valid != want.Valid || (want.Valid && !sameJSON(t, last.String, want.String)) {
			t.Errorf("key %s: last change %v, row now %v", key, last, want)
		}
	}

	// Resume after a restart from a timestamp in the middle.
	srv.Stop()
	srv = sqltest.Start(t, dir)
	db = srv.Open("")
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	resumed := follow(t, ctx2, db, "CHANGEFEED FOR d.t WITH cursor = "+strconv.FormatUint(midResolved, 10)+", resolved = '50ms'")
	var again []feedRow
	for r := range resumed {
		if r.key == "" {
			if r.commitTS >= resolved {
				break
			}
			continue
		}
		again = append(again, r)
	}
	cancel2()
	var want []feedRow
	for _, r := range rows {
		if r.key != "" && r.commitTS > midResolved {
			want = append(want, r)
		}
	}
	t.Logf("%d feed rows, %d changes of %d keys; resumed from %d: %d changes", len(rows), len(rows)-countResolved(rows), len(perKey), midResolved, len(again))
	if len(again) != len(want) {
		t.Fatalf("resumed feed sent %d changes, want %d", len(again), len(want))
	}
	for i := range want {
		if again[i] != want[i] {
			t.Fatalf("resumed feed's change %d: %+v, want %+v", i, again[i], want[i])
		}
	}
}

func countResolved(rows []feedRow) int {
	n := 0
	for _, r := range rows {
		if r.key == "" {
			n++
		}
	}
	return n
}

func sameJSON(t *testing.T, a, b string) bool {
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// TestChangefeedErrors: a feed of a table that does not exist, or with a
// bad option, fails with MySQL's errors.
func TestChangefeedErrors(t *testing.T) {
	db := startWithTable(t)
	for q, code := range map[string]uint16{
		"CHANGEFEED FOR d.nope":                    1146,
		"CHANGEFEED FOR nope.t":                    1049,
		"CHANGEFEED FOR d.t WITH cursor = 'x'":     1210,
		"CHANGEFEED FOR d.t WITH resolved = '-1s'": 1210,
		"CHANGEFEED FOR d.t WITH color = 1":        1210,
		"CHANGEFEED d.t":                           1064,
	} {
		_, err := db.Query(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != code {
			t.Errorf("%s: %v, want error %d", q, err, code)
		}
	}
}

// TestChangefeedKill: KILL QUERY ends a feed's result set, and the
// connection goes on serving.
func TestChangefeedKill(t *testing.T) {
	db := startWithTable(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, "CHANGEFEED FOR d.t WITH resolved = '10ms'")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() { // a resolved row: the feed runs
		t.Fatalf("no first row: %v", rows.Err())
	}
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	var one int
	if err := conn.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the connection after KILL QUERY: %v", err)
	}
}

// startWithTable starts a server with the table d.t (id INT PRIMARY KEY)
// and returns a client pool.
func startWithTable(t *testing.T) *sql.DB {
	t.Helper()
	db := sqltest.Start(t, "").Open("")
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}
