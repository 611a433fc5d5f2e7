package sql_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/sql/sqltest"
)

// observerRows returns ADMIN SHOW OBSERVERS's rows by observer name, each
// column by its name ("NULL" for NULL).
func observerRows(t *testing.T, db *sql.DB) map[string]map[string]string {
	t.Helper()
	rows, err := db.Query("ADMIN SHOW OBSERVERS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, vals := range readRows(rows) {
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i]
		}
		out[row["OBSERVER"]] = row
	}
	return out
}

// waitObservers polls ADMIN SHOW OBSERVERS until cond holds; it fails the
// test after a minute, which no correct run comes near (a hang detector,
// not a timing assertion).
func waitObservers(t *testing.T, db *sql.DB, what string, cond func(map[string]map[string]string) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		rows := observerRows(t, db)
		if cond(rows) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s: %v", what, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// queryStrings returns the rows of q, each as its values joined by
// spaces (NULL for NULL), sorted.
func queryStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	out := collectRows(t, q, rows, err)
	slices.Sort(out)
	return out
}

// dedupActions are the paper's document example as built-in actions: a
// document's content hash kept in hash_docs, and from it one canonical
// document (the smallest id) per distinct content.
var dedupActions = []string{
	"CREATE DATABASE web",
	"CREATE TABLE web.documents (id INT PRIMARY KEY, body TEXT)",
	"CREATE TABLE web.hash_docs (hash CHAR(64) NOT NULL, doc_id INT NOT NULL, PRIMARY KEY (hash, doc_id), KEY by_doc (doc_id))",
	"CREATE TABLE web.canonical (hash CHAR(64) PRIMARY KEY, doc_id INT NOT NULL, copies INT NOT NULL)",
	`ADMIN WATCH web.documents (body) FOR OBSERVER hasher DO BEGIN
		DELETE FROM hash_docs WHERE doc_id = NEW.id;
		INSERT INTO hash_docs (hash, doc_id) SELECT SHA2(body, 256), id FROM documents WHERE id = NEW.id;
	END`,
	`ADMIN WATCH web.hash_docs FOR OBSERVER canon DO BEGIN
		DELETE FROM canonical WHERE hash = NEW.hash;
		INSERT INTO canonical (hash, doc_id, copies)
			SELECT hash, MIN(doc_id), COUNT(*) FROM hash_docs WHERE hash = NEW.hash GROUP BY hash;
	END`,
}

// writeDocuments runs writers clients, each making ops random changes to
// documents 1..docs: inserts and updates (bodies from a few contents, so
// that documents share them) and deletes. Conflicts are retried.
func writeDocuments(t *testing.T, srv *sqltest.Server, writers, ops, docs int, seed uint64) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range writers {
		db := srv.Open("web")
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for range ops {
				id := 1 + rng.IntN(docs)
				q, args := "INSERT INTO documents VALUES (?, ?) ON DUPLICATE KEY UPDATE body = VALUES(body)", []any{id, fmt.Sprintf("content %d", rng.IntN(6))}
				if rng.IntN(5) == 0 {
					q, args = "DELETE FROM documents WHERE id = ?", []any{id}
				}
				for {
					_, err := db.Exec(q, args...)
					var me *gomysql.MySQLError
					if err == nil || !errors.As(err, &me) || me.Number != 1213 {
						if err != nil {
							t.Errorf("%s %v: %v", q, args, err)
						}
						break
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestObserverActionsDedup: the paper's worked example in SQL alone. Two
// watches with built-in actions (documents -> hash_docs -> canonical, the
// second chained on the first's writes) run on the node while four
// clients insert, update and delete documents; the server restarts in
// the middle, with notifications still waiting; afterwards both derived
// tables equal their recomputation from scratch, and ADMIN SHOW
// OBSERVERS shows the actions, their owner and their runs.
func TestObserverActionsDedup(t *testing.T) {
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	for _, q := range dedupActions {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	writeDocuments(t, srv, 4, 40, 30, 1)
	srv.Stop()

	srv = sqltest.Start(t, srv.Dir)
	db = srv.Open("web")
	rows := observerRows(t, db)
	t.Logf("notifications waiting after the restart: hasher %s, canon %s", rows["hasher"]["PENDING"], rows["canon"]["PENDING"])
	writeDocuments(t, srv, 4, 40, 30, 2)
	settled := 0
	waitObservers(t, db, "both observers to run every notification", func(rows map[string]map[string]string) bool {
		if rows["hasher"]["PENDING"] == "0" && rows["canon"]["PENDING"] == "0" {
			settled++
		} else {
			settled = 0
		}
		return settled >= 2
	})
	if got, want := queryStrings(t, db, "SELECT hash, doc_id FROM hash_docs"),
		queryStrings(t, db, "SELECT SHA2(body, 256), id FROM documents"); !slices.Equal(got, want) {
		t.Errorf("hash_docs:\n %q\nwant %q", got, want)
	}
	if got, want := queryStrings(t, db, "SELECT hash, doc_id, copies FROM canonical"),
		queryStrings(t, db, "SELECT SHA2(body, 256), MIN(id), COUNT(*) FROM documents GROUP BY SHA2(body, 256)"); !slices.Equal(got, want) {
		t.Errorf("canonical:\n %q\nwant %q", got, want)
	}
	rows = observerRows(t, db)
	for _, name := range []string{"hasher", "canon"} {
		r := rows[name]
		if r["OWNER"] != "'root'@'localhost'" || !strings.HasPrefix(r["ACTION"], "BEGIN") {
			t.Errorf("%s: owner %q, action %q", name, r["OWNER"], r["ACTION"])
		}
		if n, err := strconv.Atoi(r["RUNS"]); err != nil || n == 0 {
			t.Errorf("%s: %q runs since the restart", name, r["RUNS"])
		}
	}
	t.Logf("after the restart: hasher %s runs (%s failed), canon %s runs (%s failed)",
		rows["hasher"]["RUNS"], rows["hasher"]["FAILURES"], rows["canon"]["RUNS"], rows["canon"]["FAILURES"])
}

// TestObserverActionOwner: an action runs with the privileges of the
// account that made the watch. Without the right to write its target
// its runs fail, visibly (FAILURES, LAST_ERROR), and are retried (with
// backoff) until a GRANT lets one commit. Bad actions get MySQL's
// errors when the watch is made.
func TestObserverActionOwner(t *testing.T) {
	srv, db, exec := startWithABTable(t)
	exec("CREATE TABLE d.copies (id INT PRIMARY KEY, a INT)")
	exec("CREATE USER 'obs'@'%' IDENTIFIED BY 'pw'")
	exec("GRANT SELECT ON d.* TO 'obs'@'%'")
	exec("GRANT TRIGGER ON d.t TO 'obs'@'%'")
	obs := srv.OpenAs("obs", "pw", "d")
	if _, err := obs.Exec("ADMIN WATCH t (a) FOR OBSERVER copier DO REPLACE INTO copies VALUES (NEW.id, NEW.a)"); err != nil {
		t.Fatal(err)
	}
	exec("INSERT INTO d.t VALUES (1, 10, 0)")
	waitObservers(t, db, "a denied run", func(rows map[string]map[string]string) bool {
		r := rows["copier"]
		return r["FAILURES"] != "0" && r["FAILURES"] != "NULL" && r["FAILURES"] != ""
	})
	r := observerRows(t, db)["copier"]
	if !strings.Contains(r["LAST_ERROR"], "denied") || r["OWNER"] != "'obs'@'%'" || r["RUNS"] != "0" || r["PENDING"] != "1" {
		t.Fatalf("a run without the INSERT privilege: %v", r)
	}
	if got := queryStrings(t, db, "SELECT id, a FROM d.copies"); len(got) != 0 {
		t.Fatalf("a denied run wrote %q", got)
	}
	exec("GRANT INSERT, DELETE ON d.copies TO 'obs'@'%'")
	waitObservers(t, db, "the run after the grant", func(rows map[string]map[string]string) bool {
		return rows["copier"]["PENDING"] == "0"
	})
	if got := queryStrings(t, db, "SELECT id, a FROM d.copies"); !slices.Equal(got, []string{"1 10"}) {
		t.Fatalf("after the grant d.copies holds %q, want [1 10]", got)
	}
	exec("UPDATE d.t SET a = 11 WHERE id = 1")
	exec("DELETE FROM d.t WHERE id = 1")
	waitObservers(t, db, "the update and the delete", func(rows map[string]map[string]string) bool {
		return rows["copier"]["PENDING"] == "0"
	})
	// The delete's run saw NEW.id (the deleted row's key) and NULL in a.
	if got := queryStrings(t, db, "SELECT id, a FROM d.copies"); !slices.Equal(got, []string{"1 NULL"}) {
		t.Fatalf("after the update and the delete d.copies holds %q, want [1 NULL]", got)
	}

	for _, c := range []struct {
		q    string
		code uint16
	}{
		{"ADMIN WATCH d.t FOR OBSERVER x DO SELECT NEW.a", 1235},
		{"ADMIN WATCH d.t FOR OBSERVER x DO INSERT INTO d.copies VALUES (NEW.nope, 1)", 1054},
		{"ADMIN WATCH d.t FOR OBSERVER x DO INSERT INTO", 1064},
		{"ADMIN WATCH d.t FOR OBSERVER x DO DELETE FROM d.copies; DELETE FROM d.t", 1064},
		{"ADMIN WATCH d.copies FOR OBSERVER copier", 1210},
		{"ADMIN UNWATCH d.t FOR OBSERVER copier DO DELETE FROM d.copies", 1064},
	} {
		_, err := db.Exec(c.q)
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != c.code {
			t.Errorf("%s: %v, want error %d", c.q, err, c.code)
		}
	}
}
