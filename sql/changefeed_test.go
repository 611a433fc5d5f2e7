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
	feed := sqltest.Follow(t, ctx, db, "CHANGEFEED FOR d.t WITH resolved = '50ms'")
	// A first resolved row says the feed runs.
	var rows []sqltest.FeedRow
	for r := range feed {
		rows = append(rows, r)
		if r.Key == "" {
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
		if r.Key == "[1000]" {
			marker = r.CommitTS
		}
		if r.Key == "" && marker != 0 && r.CommitTS >= marker {
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
		if r.Key != "" {
			midResolved = r.CommitTS
			break
		}
	}
	for _, r := range rows {
		if r.Key == "" {
			if r.CommitTS <= resolved {
				t.Errorf("resolved %d after resolved %d", r.CommitTS, resolved)
			}
			resolved = r.CommitTS
			continue
		}
		if r.CommitTS <= resolved {
			t.Errorf("change of %s at %d after resolved %d", r.Key, r.CommitTS, resolved)
		}
		vs := perKey[r.Key]
		if len(vs) > 0 && vs[len(vs)-1].ts >= r.CommitTS {
			t.Errorf("key %s: change at %d after one at %d", r.Key, r.CommitTS, vs[len(vs)-1].ts)
		}
		perKey[r.Key] = append(vs, version{r.CommitTS, r.Value})
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
	resumed := sqltest.Follow(t, ctx2, db, "CHANGEFEED FOR d.t WITH cursor = "+strconv.FormatUint(midResolved, 10)+", resolved = '50ms'")
	var again []sqltest.FeedRow
	for r := range resumed {
		if r.Key == "" {
			if r.CommitTS >= resolved {
				break
			}
			continue
		}
		again = append(again, r)
	}
	cancel2()
	var want []sqltest.FeedRow
	for _, r := range rows {
		if r.Key != "" && r.CommitTS > midResolved {
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

func countResolved(rows []sqltest.FeedRow) int {
	n := 0
	for _, r := range rows {
		if r.Key == "" {
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
// bad option, or of a table named without a database when none is
// selected, fails with MySQL's errors.
func TestChangefeedErrors(t *testing.T) {
	db := startWithTable(t)
	for q, code := range map[string]uint16{
		"CHANGEFEED FOR d.nope":                    1146,
		"CHANGEFEED FOR nope.t":                    1049,
		"CHANGEFEED FOR d.t WITH cursor = 'x'":     1210,
		"CHANGEFEED FOR d.t WITH resolved = '-1s'": 1210,
		"CHANGEFEED FOR d.t WITH color = 1":        1210,
		"CHANGEFEED d.t":                           1064,
		"CHANGEFEED FOR t":                         1046, // the pool's connections have no database
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
	sqltest.KillQueryEndsFeed(t, context.Background(), startWithTable(t), "CHANGEFEED FOR d.t WITH resolved = '10ms'")
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
