package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/sqltest"
)

// TestWritesNotifyObservers: once a watch is recorded, every path that
// writes rows (the fast path's INSERT, UPDATE and DELETE, text and
// prepared; GMS's multi-row and INSERT ... SELECT, REPLACE, ON DUPLICATE
// KEY UPDATE; a trigger's writes) notifies the watched rows it inserts,
// deletes, or updates in a watched column, and nothing else does.
func TestWritesNotifyObservers(t *testing.T) {
	ctx := context.Background()
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.docs (id INT PRIMARY KEY, body TEXT, views INT NOT NULL DEFAULT 0)",
		"CREATE TABLE d.src (id INT PRIMARY KEY, body TEXT)",
		"CREATE TABLE d.feed (id INT PRIMARY KEY, body TEXT)",
		"CREATE TRIGGER d.feed_ai AFTER INSERT ON d.feed FOR EACH ROW INSERT INTO d.docs (id, body) VALUES (NEW.id, NEW.body)",
		"INSERT INTO d.docs (id, body) VALUES (1, 'before the watch')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	p := srv.Percdb()
	for _, c := range []struct {
		table, col string
		code       int
	}{
		{"d.nope", "body", 1146}, {"x.docs", "body", 1049}, {"d.docs", "nope", 1054},
	} {
		var se *mysql.SQLError
		err := p.Watch(ctx, c.table, "hash", []string{c.col})
		if !errors.As(err, &se) || se.Number() != c.code {
			t.Errorf("Watch(%s, %s) = %v, want error %d", c.table, c.col, err, c.code)
		}
	}
	if err := p.Watch(ctx, "d.docs", "hash", []string{"body"}); err != nil {
		t.Fatal(err)
	}
	tableID := docsTableID(t, srv)
	hits := serverStatus(t, db, "Percdb_fastpath_hits")
	seen := map[int64]uint64{}
	// step runs q and returns the docs rows it notified.
	step := func(q string, args ...any) []int64 {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := db.Exec("SELECT COUNT(*) FROM d.docs"); err != nil {
			t.Fatal(err)
		}
		entries, _, err := p.TxnStore().ScanNotify(ctx, nil, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var changed []int64
		for _, e := range entries {
			id, h, err := tablecodec.DecodeRowKey(e.Key, false)
			if err != nil || id != tableID || string(e.Column) != "hash" {
				t.Fatalf("unexpected notification %q/%q (%v)", e.Key, e.Column, err)
			}
			if e.TS > seen[h.Int] {
				changed = append(changed, h.Int)
				seen[h.Int] = e.TS
			}
		}
		return changed
	}
	for _, c := range []struct {
		q    string
		args []any
		want []int64
	}{
		{"SELECT 1", nil, nil}, // the row written before the watch is not notified
		{"INSERT INTO d.docs (id, body) VALUES (2, 'two')", nil, []int64{2}},
		{"INSERT INTO d.docs (id, body) VALUES (?, ?)", []any{3, "three"}, []int64{3}},
		{"UPDATE d.docs SET views = views + 1 WHERE id = 2", nil, nil},
		{"UPDATE d.docs SET views = ? WHERE id = ?", []any{7, 3}, nil},
		{"UPDATE d.docs SET body = 'two!' WHERE id = 2", nil, []int64{2}},
		{"UPDATE d.docs SET body = ? WHERE id = ?", []any{"three!", 3}, []int64{3}},
		{"UPDATE d.docs SET body = body WHERE id = 3", nil, nil},
		{"UPDATE d.docs SET body = CONCAT(body, '?'), views = 0 WHERE id >= 2", nil, []int64{2, 3}},
		{"DELETE FROM d.docs WHERE id = 3", nil, []int64{3}},
		{"INSERT INTO d.docs (id, body) VALUES (4, 'four'), (5, 'five')", nil, []int64{4, 5}},
		{"INSERT INTO d.src VALUES (6, 'six'), (7, 'seven')", nil, nil},
		{"INSERT INTO d.docs (id, body) SELECT id, body FROM d.src", nil, []int64{6, 7}},
		{"REPLACE INTO d.docs (id, body) VALUES (6, 'six again')", nil, []int64{6}},
		{"INSERT INTO d.docs (id, body) VALUES (7, 'x') ON DUPLICATE KEY UPDATE views = views + 1", nil, nil},
		{"INSERT INTO d.docs (id, body) VALUES (7, 'x') ON DUPLICATE KEY UPDATE body = 'seven!'", nil, []int64{7}},
		{"INSERT INTO d.feed VALUES (8, 'from a trigger')", nil, []int64{8}},
		{"DELETE FROM d.docs WHERE id = ?", []any{8}, []int64{8}},
		{"BEGIN", nil, nil},
		{"UPDATE d.docs SET body = 'in a transaction' WHERE id = 4", nil, nil},
		{"COMMIT", nil, []int64{4}},
	} {
		if got := step(c.q, c.args...); !slices.Equal(got, c.want) {
			t.Errorf("%s %v: notified rows %v, want %v", c.q, c.args, got, c.want)
		}
	}
	if serverStatus(t, db, "Percdb_fastpath_hits") == hits {
		t.Error("the fast path ran none of the statements")
	}
	// Unwatched: nothing more is notified.
	if err := p.Unwatch(ctx, "d.docs", "hash"); err != nil {
		t.Fatal(err)
	}
	if got := step("UPDATE d.docs SET body = 'after' WHERE id = 1"); len(got) != 0 {
		t.Errorf("after Unwatch: notified %v", got)
	}
}

// docsTableID returns the table ID of d.docs, from the key of one of its
// rows as the notify space shows it: row 1 is written and notified for a
// probe observer, which is then removed.
func docsTableID(t *testing.T, srv *sqltest.Server) int64 {
	t.Helper()
	ctx := context.Background()
	p := srv.Percdb()
	if err := p.Watch(ctx, "d.docs", "probe", nil); err != nil {
		t.Fatal(err)
	}
	db := srv.Open("")
	if _, err := db.Exec("UPDATE d.docs SET views = views + 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	entries, _, err := p.TxnStore().ScanNotify(ctx, nil, nil, 0)
	if err != nil || len(entries) != 1 {
		t.Fatalf("probe notifications %v, %v", entries, err)
	}
	if err := p.Unwatch(ctx, "d.docs", "probe"); err != nil {
		t.Fatal(err)
	}
	if err := p.TxnStore().ClearNotify(ctx, entries); err != nil {
		t.Fatal(err)
	}
	id, err := tablecodec.DecodeTableID(entries[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestWatchSurvivesRewrite: an ALTER TABLE that rewrites the table keeps
// the watches of the columns it keeps, and drops a watch whose columns
// all went.
func TestWatchSurvivesRewrite(t *testing.T) {
	ctx := context.Background()
	srv, db, exec := startWithABTable(t)
	p := srv.Percdb()
	if err := p.Watch(ctx, "d.t", "on_a", []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Watch(ctx, "d.t", "on_b", []string{"b"}); err != nil {
		t.Fatal(err)
	}
	exec("ALTER TABLE d.t ADD COLUMN c INT, DROP COLUMN b")
	exec("INSERT INTO d.t (id, a, c) VALUES (1, 1, 1)")
	exec("UPDATE d.t SET c = 2 WHERE id = 1")
	exec("UPDATE d.t SET a = 2 WHERE id = 1")
	if cols := notifiedObservers(t, srv); !slices.Equal(cols, []string{"on_a"}) {
		t.Fatalf("notifications for %v, want [on_a]", cols)
	}
	if err := p.Watch(ctx, "d.t", "on_b", []string{"b"}); err == nil {
		t.Fatal("a watch of the dropped column was accepted")
	}
	if err := p.Watch(ctx, "d.t", "all", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := showObservers(t, db), []string{"d t on_a a 1 lag", "d t all  0"}; !slices.Equal(got, want) {
		t.Fatalf("ADMIN SHOW OBSERVERS: %q, want %q", got, want)
	}
}

// startWithABTable starts a server with the table d.t (id INT PRIMARY
// KEY, a INT, b INT) and returns it, a client pool, and a function that
// runs a statement, failing the test on an error.
func startWithABTable(t *testing.T) (*sqltest.Server, *sql.DB, func(q string)) {
	t.Helper()
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE d")
	exec("CREATE TABLE d.t (id INT PRIMARY KEY, a INT, b INT)")
	return srv, db, exec
}

// showObservers returns ADMIN SHOW OBSERVERS's rows, each as its values
// joined by spaces, the lag (a time) as "lag" when it is a number of
// seconds at or above 0 and left out when NULL, which it must be exactly
// when nothing is pending.
func showObservers(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("ADMIN SHOW OBSERVERS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var dbName, table, observer, columns, pending string
		var lag, action, owner, runs, failures, lastErr sql.NullString
		if err := rows.Scan(&dbName, &table, &observer, &columns, &pending, &lag, &action, &owner, &runs, &failures, &lastErr); err != nil {
			t.Fatal(err)
		}
		row := []string{dbName, table, observer, columns, pending}
		if lag.Valid {
			if secs, err := strconv.ParseFloat(lag.String, 64); err != nil || secs < 0 {
				t.Fatalf("%s's lag %q, want seconds", observer, lag.String)
			}
			row = append(row, "lag")
		}
		if lag.Valid != (pending != "0") {
			t.Fatalf("%s: lag %v with %s pending", observer, lag, pending)
		}
		got = append(got, strings.Join(row, " "))
	}
	return got
}

// notifiedObservers returns the observers of the notify entries in the
// store, sorted.
func notifiedObservers(t *testing.T, srv *sqltest.Server) []string {
	t.Helper()
	entries, _, err := srv.Percdb().TxnStore().ScanNotify(context.Background(), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, e := range entries {
		cols = append(cols, string(e.Column))
	}
	slices.Sort(cols)
	return cols
}

// TestAdminWatch: ADMIN WATCH records a watch from any client (every
// column when no list is given), ADMIN SHOW OBSERVERS lists it, writes to
// the watched columns notify and others do not, ADMIN UNWATCH removes it;
// bad statements get MySQL's errors.
func TestAdminWatch(t *testing.T) {
	srv, db, exec := startWithABTable(t)
	exec("ADMIN WATCH d.t (a) FOR OBSERVER on_a")
	if _, err := srv.Open("d").Exec("admin watch `t` for observer 'every'"); err != nil {
		t.Fatal(err)
	}
	if got, want := showObservers(t, db), []string{"d t on_a a 0", "d t every  0"}; !slices.Equal(got, want) {
		t.Fatalf("ADMIN SHOW OBSERVERS: %q, want %q", got, want)
	}
	exec("INSERT INTO d.t VALUES (1, 1, 1)")
	exec("UPDATE d.t SET b = 2 WHERE id = 1")
	if got := notifiedObservers(t, srv); !slices.Equal(got, []string{"every", "on_a"}) {
		t.Fatalf("notified %v, want [every on_a]", got)
	}
	exec("ADMIN UNWATCH d.t FOR OBSERVER every")
	if got, want := showObservers(t, db), []string{"d t on_a a 1 lag"}; !slices.Equal(got, want) {
		t.Fatalf("after ADMIN UNWATCH: %q, want %q", got, want)
	}
	for _, c := range []struct {
		q    string
		code uint16
	}{
		{"ADMIN WATCH d.nope (a) FOR OBSERVER x", 1146},
		{"ADMIN WATCH nope.t FOR OBSERVER x", 1049},
		{"ADMIN WATCH d.t (nope) FOR OBSERVER x", 1054},
		{"ADMIN WATCH d.t (a)", 1064},
		{"ADMIN WATCH d.t () FOR OBSERVER x", 1064},
		{"ADMIN UNWATCH d.t (a) FOR OBSERVER on_a", 1064},
	} {
		_, err := db.Exec(c.q)
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != c.code {
			t.Errorf("%s: %v, want error %d", c.q, err, c.code)
		}
	}
	other := srv.Open("")
	var me *gomysql.MySQLError
	if _, err := other.Exec("ADMIN WATCH t FOR OBSERVER x"); !errors.As(err, &me) || me.Number != 1046 {
		t.Errorf("ADMIN WATCH without a database: %v, want error 1046", err)
	}
}

// TestObserverPrivileges: ADMIN WATCH and UNWATCH need TRIGGER on the
// table (1142 without), CHANGEFEED needs SELECT on the table (1142) and
// the global REPLICATION SLAVE (1227); with the grants both run. The
// checks come before the table is looked up: a refused user cannot tell
// whether a table exists.
func TestObserverPrivileges(t *testing.T) {
	srv, _, exec := startWithABTable(t)
	exec("CREATE USER 'bob'@'%' IDENTIFIED BY 'pw'")
	exec("GRANT SELECT, INSERT ON d.* TO 'bob'@'%'")
	bob := srv.OpenAs("bob", "pw", "d")
	bob.SetMaxOpenConns(1)
	wantCode := func(q string, code uint16) {
		t.Helper()
		rows, err := bob.Query(q)
		if err == nil {
			rows.Close()
		}
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != code {
			t.Fatalf("%s as bob: %v, want error %d", q, err, code)
		}
	}
	wantCode("ADMIN WATCH t (a) FOR OBSERVER x", 1142)
	wantCode("ADMIN WATCH d.nope FOR OBSERVER x", 1142)
	wantCode("ADMIN UNWATCH t FOR OBSERVER x", 1142)
	wantCode("CHANGEFEED FOR t WITH resolved = '10ms'", 1227)
	wantCode("CHANGEFEED FOR mysql.user", 1142)

	exec("GRANT TRIGGER ON d.t TO 'bob'@'%'")
	exec("GRANT REPLICATION SLAVE ON *.* TO 'bob'@'%'")
	if _, err := bob.Exec("ADMIN WATCH t (a) FOR OBSERVER x"); err != nil {
		t.Fatalf("ADMIN WATCH after GRANT TRIGGER: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feed := sqltest.Follow(t, ctx, bob, "CHANGEFEED FOR t WITH resolved = '10ms'")
	if _, ok := <-feed; !ok {
		t.Fatal("CHANGEFEED after the grants sent no row")
	}
	cancel()
	for range feed {
	}
	exec("REVOKE TRIGGER ON d.t FROM 'bob'@'%'")
	wantCode("ADMIN UNWATCH t FOR OBSERVER x", 1142)
}
