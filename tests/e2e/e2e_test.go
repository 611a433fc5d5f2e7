package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestDDL covers the catalog statements and their answers.
func TestDDL(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	mustExec(t, db,
		"CREATE DATABASE d1",
		"CREATE DATABASE IF NOT EXISTS d1",
		"CREATE TABLE d1.t1 (id INT PRIMARY KEY, name VARCHAR(30) NOT NULL DEFAULT 'x', n INT)",
		"CREATE TABLE d1.t2 (a INT, b TEXT)",
		"CREATE VIEW d1.v1 AS SELECT id, name FROM d1.t1",
	)
	_, err := db.Exec("CREATE DATABASE d1")
	wantError(t, err, 1007, "")
	_, err = db.Exec("CREATE TABLE d1.t1 (x INT)")
	wantError(t, err, 1050, "")
	_, err = db.Exec("SELECT * FROM d1.nope")
	wantError(t, err, 1146, "")
	_, err = db.Exec("USE nope")
	wantError(t, err, 1049, "")

	if got := queryRows(t, db, "SHOW TABLES FROM d1"); !reflect.DeepEqual(got, [][]string{{"t1"}, {"t2"}, {"v1"}}) {
		t.Fatalf("SHOW TABLES = %v", got)
	}
	mustExec(t, db, "INSERT INTO d1.t1 (id) VALUES (1)")
	if got := queryRows(t, s.Open("d1"), "SELECT * FROM v1"); !reflect.DeepEqual(got, [][]string{{"1", "x"}}) {
		t.Fatalf("view = %v", got)
	}
	mustExec(t, db,
		"ALTER TABLE d1.t1 ADD COLUMN extra INT DEFAULT 7",
		"ALTER TABLE d1.t1 ADD INDEX idx_n (n)",
	)
	// GMS resolves RENAME TABLE in the current database only.
	mustExec(t, s.Open("d1"), "RENAME TABLE t2 TO t3", "DROP VIEW v1")
	if got := queryRows(t, db, "SELECT id, name, n, extra FROM d1.t1"); !reflect.DeepEqual(got, [][]string{{"1", "x", "NULL", "7"}}) {
		t.Fatalf("after ADD COLUMN = %v", got)
	}
	mustExec(t, db, "ALTER TABLE d1.t1 DROP COLUMN extra", "ALTER TABLE d1.t1 DROP INDEX idx_n")
	if got := queryRows(t, db, "SELECT * FROM d1.t1"); !reflect.DeepEqual(got, [][]string{{"1", "x", "NULL"}}) {
		t.Fatalf("after DROP COLUMN = %v", got)
	}
	if got := queryRows(t, db, "SHOW TABLES FROM d1"); !reflect.DeepEqual(got, [][]string{{"t1"}, {"t3"}}) {
		t.Fatalf("SHOW TABLES after rename = %v", got)
	}
	mustExec(t, db, "DROP TABLE d1.t3", "DROP DATABASE d1")
	if got := queryRows(t, db, "SHOW DATABASES LIKE 'd1'"); len(got) != 0 {
		t.Fatalf("database still listed: %v", got)
	}
	// A dropped table's name is free again, and it starts empty.
	mustExec(t, db, "CREATE DATABASE d1", "CREATE TABLE d1.t1 (id INT PRIMARY KEY)")
	if got := queryRows(t, db, "SELECT COUNT(*) FROM d1.t1"); got[0][0] != "0" {
		t.Fatalf("recreated table has %s rows", got[0][0])
	}
}

// TestMySQLDefaults checks what percdb answers like MySQL 8 where GMS's
// defaults differ.
func TestMySQLDefaults(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	// The connection's collation is the one the driver asks for in its
	// handshake (go-sql-driver: utf8mb4_general_ci); the server's, for
	// new databases and tables, is MySQL 8's.
	got := queryRows(t, db, "SELECT 'a' = 'A', @@version, VERSION(), @@version_comment, @@collation_connection, @@collation_server")
	want := []string{"1", "8.0.36-percdb", "8.0.36-percdb", "percdb: MySQL-compatible SQL on Percolator transactions", "utf8mb4_general_ci", "utf8mb4_0900_ai_ci"}
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("got %v, want %v", got[0], want)
	}
	mustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (s VARCHAR(10) PRIMARY KEY)", "INSERT INTO d.t VALUES ('abc')")
	if got := queryRows(t, db, "SELECT s FROM d.t WHERE s = 'ABC'"); len(got) != 1 {
		t.Fatalf("case-insensitive primary key lookup = %v", got)
	}
	_, err := db.Exec("INSERT INTO d.t VALUES ('ABC')")
	wantError(t, err, 1062, "23000")
}

// indexedTable is the table of the DML tests: a primary key, a unique
// index, a non-unique index and a two-column index.
const indexedTable = `CREATE TABLE t (
	id INT PRIMARY KEY,
	k INT,
	c VARCHAR(20),
	u INT,
	UNIQUE KEY uc (c),
	KEY kk (k),
	KEY kc (k, c)
)`

// checkIndexes verifies that every index of the test table holds exactly
// the table's rows: each row is found through each index by its values,
// and a scan of each whole index returns each row once.
func checkIndexes(t *testing.T, db *sql.DB) [][]string {
	t.Helper()
	rows := queryRows(t, db, "SELECT id, k, c, u FROM t ORDER BY id")
	withK, withC := 0, 0
	for _, r := range rows {
		id := r[0]
		if r[1] != "NULL" {
			withK++
			got := queryRows(t, db, "SELECT id FROM t WHERE k = ?", r[1])
			if !containsRow(got, id) {
				t.Fatalf("row %v not found through index kk: %v", r, got)
			}
		}
		if r[2] != "NULL" {
			withC++
			got := queryRows(t, db, "SELECT id FROM t WHERE c = ?", r[2])
			if !reflect.DeepEqual(got, [][]string{{id}}) {
				t.Fatalf("row %v through unique index uc: %v", r, got)
			}
		}
		if r[1] != "NULL" && r[2] != "NULL" {
			got := queryRows(t, db, "SELECT id FROM t WHERE k = ? AND c = ?", r[1], r[2])
			if !reflect.DeepEqual(got, [][]string{{id}}) {
				t.Fatalf("row %v through index kc: %v", r, got)
			}
		}
		got := queryRows(t, db, "SELECT k, c, u FROM t WHERE id = ?", id)
		if !reflect.DeepEqual(got, [][]string{r[1:]}) {
			t.Fatalf("row %v through the primary key: %v", r, got)
		}
	}
	// A stale or duplicate index entry would return its row twice.
	for _, q := range []struct {
		where string
		want  int
		index string
	}{
		{"k > -1000000000", withK, "[t.k]"},
		{"c >= ''", withC, "[t.c]"},
		{"id > -1000000000", len(rows), "[t.id]"},
	} {
		sel := "SELECT id FROM t WHERE " + q.where
		plan := strings.Join(flatten(queryRows(t, db, "EXPLAIN PLAN "+sel)), "\n")
		if !strings.Contains(plan, "index: "+q.index) {
			t.Fatalf("%s does not read through index %s:\n%s", sel, q.index, plan)
		}
		got := queryRows(t, db, sel)
		if len(got) != q.want {
			t.Fatalf("%s returned %d rows, want %d (index %s out of step): %v", sel, len(got), q.want, q.index, got)
		}
	}
	return rows
}

func containsRow(rows [][]string, id string) bool {
	for _, r := range rows {
		if r[0] == id {
			return true
		}
	}
	return false
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, strings.Join(r, " "))
	}
	return out
}

// TestDMLKeepsIndexes runs every kind of write and checks every index
// after each.
func TestDMLKeepsIndexes(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, indexedTable)
	steps := []string{
		"INSERT INTO t VALUES (1, 10, 'a', 0), (2, 20, 'b', 0), (3, 10, 'c', 0), (4, NULL, NULL, 0), (5, NULL, NULL, 0)",
		"UPDATE t SET k = 30 WHERE id = 1",
		"UPDATE t SET c = 'z' WHERE id = 2",
		"UPDATE t SET id = 10 WHERE id = 3",
		"UPDATE t SET k = k + 1",
		"DELETE FROM t WHERE id = 4",
		"REPLACE INTO t VALUES (10, 99, 'r', 1)",
		"REPLACE INTO t VALUES (11, 5, 'a', 1)",
		"INSERT INTO t VALUES (2, 0, 'q', 0) ON DUPLICATE KEY UPDATE u = u + 5, k = 77",
		"INSERT INTO t VALUES (12, 0, 'z', 0) ON DUPLICATE KEY UPDATE c = 'zz'",
		"INSERT IGNORE INTO t VALUES (13, 1, 'zz', 0), (14, 1, 'y', 0)",
		"DELETE FROM t WHERE k > 90",
	}
	for _, q := range steps {
		mustExec(t, db, q)
		checkIndexes(t, db)
	}
	got := checkIndexes(t, db)
	want := [][]string{
		{"11", "5", "a", "1"}, // REPLACE took 'a' from row 1
		{"14", "1", "y", "0"}, // INSERT IGNORE skipped 13 ('zz' was taken)
		{"2", "77", "zz", "5"},
		{"5", "NULL", "NULL", "0"},
	}
	sort.Slice(got, func(i, j int) bool { return got[i][0] < got[j][0] })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows = %v, want %v", got, want)
	}
	if got := queryRows(t, db, "SELECT k, c, u FROM t WHERE id = 2"); !reflect.DeepEqual(got, [][]string{{"77", "zz", "5"}}) {
		t.Fatalf("row 2 after ON DUPLICATE KEY UPDATE = %v", got)
	}
	mustExec(t, db, "TRUNCATE TABLE t")
	if rows := checkIndexes(t, db); len(rows) != 0 {
		t.Fatalf("rows after TRUNCATE: %v", rows)
	}
}

func sameSet(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return reflect.DeepEqual(a, b)
}

// TestRandomDMLKeepsIndexes runs random writes, text and prepared, and
// checks the indexes at the end.
func TestRandomDMLKeepsIndexes(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, indexedTable)
	rng := rand.New(rand.NewSource(1))
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := 0; i < n; i++ {
		id, k := rng.Intn(40), rng.Intn(8)
		c := fmt.Sprintf("c%d", rng.Intn(40))
		var err error
		switch rng.Intn(5) {
		case 0:
			_, err = db.Exec("INSERT INTO t VALUES (?, ?, ?, 0)", id, k, c)
		case 1:
			_, err = db.Exec(fmt.Sprintf("UPDATE t SET k = %d, c = '%s' WHERE id = %d", k, c, id))
		case 2:
			_, err = db.Exec("DELETE FROM t WHERE id = ?", id)
		case 3:
			_, err = db.Exec("REPLACE INTO t VALUES (?, ?, ?, 1)", id, k, c)
		case 4:
			_, err = db.Exec("UPDATE t SET id = ? WHERE k = ?", id, k)
		}
		if code, _ := mysqlErrorCode(err); err != nil && code != 1062 {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	checkIndexes(t, db)
}

// TestTextAndPrepared checks that text and prepared statements agree.
func TestTextAndPrepared(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, "CREATE TABLE p (id BIGINT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(40), f DOUBLE, d DECIMAL(10,2), ts DATETIME)")
	stmt, err := db.Prepare("INSERT INTO p (s, f, d, ts) VALUES (?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for i := 0; i < 5; i++ {
		res, err := stmt.Exec(fmt.Sprintf("s%d", i), float64(i)/2, fmt.Sprintf("%d.25", i), "2024-01-02 03:04:05")
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := res.LastInsertId(); id != int64(i+1) {
			t.Fatalf("LastInsertId = %d, want %d", id, i+1)
		}
	}
	text := queryRows(t, db, "SELECT id, s, f, d, ts FROM p WHERE id >= 2 AND id <= 4 ORDER BY id")
	prep := queryRows(t, db, "SELECT id, s, f, d, ts FROM p WHERE id >= ? AND id <= ? ORDER BY id", 2, 4)
	if !reflect.DeepEqual(text, prep) || len(text) != 3 {
		t.Fatalf("text %v != prepared %v", text, prep)
	}
	if text[0][1] != "s1" || text[0][3] != "1.25" || text[0][4] != "2024-01-02 03:04:05" {
		t.Fatalf("row = %v", text[0])
	}
}

// TestSnapshotIsolation shows with two connections, in both transaction
// modes, that uncommitted writes are invisible, that a transaction reads
// one snapshot, that a write over a row changed since the writer read it
// fails with 1213, and that of two concurrent writers of a row the second
// fails with 1213 (optimistic) or waits and applies after the first
// (pessimistic).
func TestSnapshotIsolation(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, "CREATE TABLE acct (id INT PRIMARY KEY, bal INT)")
	ctx := context.Background()
	for _, mode := range []string{"optimistic", "pessimistic"} {
		t.Run(mode, func(t *testing.T) {
			mustExec(t, db, "DELETE FROM acct WHERE id > 0", "INSERT INTO acct VALUES (1, 100), (2, 100)")
			c1, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c1.Close()
			c2, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			begin := "BEGIN " + mode

			mustExec(t, c1, begin, "UPDATE acct SET bal = 50 WHERE id = 1")
			if got := queryRows(t, c2, "SELECT bal FROM acct WHERE id = 1"); got[0][0] != "100" {
				t.Fatalf("uncommitted write visible: %v", got)
			}
			mustExec(t, c2, begin)
			if got := queryRows(t, c2, "SELECT bal FROM acct WHERE id = 2"); got[0][0] != "100" {
				t.Fatalf("bal = %v", got)
			}
			mustExec(t, c1, "COMMIT")
			// c2's snapshot was taken at its first read: still 100.
			if got := queryRows(t, c2, "SELECT bal FROM acct WHERE id = 1"); got[0][0] != "100" {
				t.Fatalf("snapshot moved: %v", got)
			}
			// c2 read the row c1 changed: its write over it is a lost
			// update, refused at COMMIT (optimistic) or at once
			// (pessimistic: its snapshot may not move past the change).
			_, err = c2.ExecContext(ctx, "UPDATE acct SET bal = bal - 10 WHERE id = 1")
			if mode == "optimistic" {
				if err != nil {
					t.Fatal(err)
				}
				_, err = c2.ExecContext(ctx, "COMMIT")
			}
			wantError(t, err, 1213, "40001")
			// The failed transaction is over: the next statement starts afresh.
			if got := queryRows(t, c2, "SELECT bal FROM acct WHERE id = 1"); got[0][0] != "50" {
				t.Fatalf("bal after conflict = %v", got)
			}

			// Writers of the same row, interleaved by hand.
			mustExec(t, c1, begin)
			mustExec(t, c2, begin)
			mustExec(t, c1, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
			if mode == "optimistic" {
				// First committer wins.
				mustExec(t, c2, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
				mustExec(t, c2, "COMMIT")
				_, err = c1.ExecContext(ctx, "COMMIT")
				wantError(t, err, 1213, "40001")
				if got := queryRows(t, db, "SELECT bal FROM acct WHERE id = 2"); got[0][0] != "101" {
					t.Fatalf("lost update or double apply: %v", got)
				}
				return
			}
			// The second writer waits for the first's lock, then applies
			// its update over the first's commit: both count.
			done := make(chan error, 1)
			go func() {
				_, err := c2.ExecContext(ctx, "UPDATE acct SET bal = bal + 1 WHERE id = 2")
				done <- err
			}()
			mustExec(t, c1, "COMMIT")
			if err := <-done; err != nil {
				t.Fatalf("the waiting update: %v", err)
			}
			mustExec(t, c2, "COMMIT")
			if got := queryRows(t, db, "SELECT bal FROM acct WHERE id = 2"); got[0][0] != "102" {
				t.Fatalf("lost update or double apply: %v", got)
			}
		})
	}
}

// TestSelectForUpdate shows that SELECT ... FOR UPDATE takes part in
// conflicts: in optimistic mode a row read for update and changed by
// another transaction makes the reader's commit fail; in pessimistic mode
// (the default) the row is locked, and the other transaction's write
// waits for the reader's commit.
func TestSelectForUpdate(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, "CREATE TABLE q (id INT PRIMARY KEY, v INT)", "INSERT INTO q VALUES (1, 1), (2, 2)")
	ctx := context.Background()
	c1, _ := db.Conn(ctx)
	defer c1.Close()
	mustExec(t, c1, "BEGIN OPTIMISTIC")
	if got := queryRows(t, c1, "SELECT v FROM q WHERE id = 1 FOR UPDATE"); got[0][0] != "1" {
		t.Fatalf("v = %v", got)
	}
	mustExec(t, db, "UPDATE q SET v = 10 WHERE id = 1")
	mustExec(t, c1, "UPDATE q SET v = 20 WHERE id = 2")
	_, err := c1.ExecContext(ctx, "COMMIT")
	wantError(t, err, 1213, "40001")

	// Pessimistic: the other writer waits and applies after the commit.
	mustExec(t, c1, "BEGIN PESSIMISTIC")
	if got := queryRows(t, c1, "SELECT v FROM q WHERE id = 1 FOR UPDATE"); got[0][0] != "10" {
		t.Fatalf("v = %v", got)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "UPDATE q SET v = v * 100 WHERE id = 1")
		done <- err
	}()
	mustExec(t, c1, "UPDATE q SET v = 11 WHERE id = 1", "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("the waiting update: %v", err)
	}
	if got := queryRows(t, db, "SELECT v FROM q WHERE id = 1"); got[0][0] != "1100" {
		t.Fatalf("v = %v, want 1100 (the waiting update after the locker's)", got)
	}

	// Without FOR UPDATE the same history commits in both modes (write
	// skew is allowed under snapshot isolation).
	for _, mode := range []string{"OPTIMISTIC", "PESSIMISTIC"} {
		mustExec(t, c1, "BEGIN "+mode)
		queryRows(t, c1, "SELECT v FROM q WHERE id = 1")
		mustExec(t, db, "UPDATE q SET v = 11 WHERE id = 1")
		mustExec(t, c1, "UPDATE q SET v = 21 WHERE id = 2", "COMMIT")
	}
}

// TestFailedStatementUndoesOnlyItself: in an explicit transaction a
// failing statement leaves the transaction's earlier writes alone.
func TestFailedStatementUndoesOnlyItself(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, indexedTable)
	ctx := context.Background()
	c, _ := db.Conn(ctx)
	defer c.Close()
	mustExec(t, c, "BEGIN", "INSERT INTO t VALUES (1, 1, 'a', 0)")
	_, err := c.ExecContext(ctx, "INSERT INTO t VALUES (2, 2, 'b', 0), (3, 3, 'a', 0)")
	wantError(t, err, 1062, "23000")
	if !strings.Contains(err.Error(), "Duplicate entry 'a' for key 't.uc'") {
		t.Fatalf("message = %q", err)
	}
	_, err = c.ExecContext(ctx, "UPDATE t SET id = 1 WHERE id = 1 OR id = 2")
	mustExec(t, c, "INSERT INTO t VALUES (4, 4, 'd', 0)", "COMMIT")
	if got := queryRows(t, db, "SELECT id FROM t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"4"}}) {
		t.Fatalf("rows = %v, want 1 and 4 only", got)
	}
	checkIndexes(t, db)

	// In autocommit mode the failed statement leaves nothing either.
	_, err = db.Exec("INSERT INTO t VALUES (5, 5, 'e', 0), (6, 6, 'd', 0)")
	wantError(t, err, 1062, "23000")
	_, err = db.Exec("INSERT INTO t VALUES (1, 0, 'x', 0)")
	wantError(t, err, 1062, "23000")
	if !strings.Contains(err.Error(), "Duplicate entry '1' for key 't.PRIMARY'") {
		t.Fatalf("message = %q", err)
	}
	if got := queryRows(t, db, "SELECT id FROM t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"4"}}) {
		t.Fatalf("rows = %v, want 1 and 4 only", got)
	}
	checkIndexes(t, db)
}

// TestRestart: committed data, the catalog and AUTO_INCREMENT survive a
// stop and start on the same data directory; uncommitted data does not.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, indexedTable,
		"CREATE TABLE a (id INT PRIMARY KEY AUTO_INCREMENT, v INT)",
		"CREATE TABLE nopk (x INT, y VARCHAR(5))",
		"INSERT INTO t VALUES (1, 1, 'a', 0), (2, 2, 'b', 0)",
		"INSERT INTO a (v) VALUES (1), (2)",
		"INSERT INTO nopk VALUES (1, 'x'), (1, 'x'), (2, 'y')",
	)
	c, _ := db.Conn(context.Background())
	mustExec(t, c, "BEGIN", "INSERT INTO t VALUES (3, 3, 'c', 0)")
	c.Close()
	db.Close()
	s.Stop()

	s = startServer(t, dir)
	db = s.Open("d")
	rows := checkIndexes(t, db)
	if len(rows) != 2 {
		t.Fatalf("rows after restart: %v", rows)
	}
	mustExec(t, db, "INSERT INTO a (v) VALUES (3)", "DELETE FROM nopk WHERE y = 'y'", "UPDATE nopk SET x = 5 LIMIT 1")
	got := queryRows(t, db, "SELECT id, v FROM a ORDER BY id")
	if len(got) != 3 || got[2][1] != "3" {
		t.Fatalf("a = %v", got)
	}
	for i := 1; i < len(got); i++ {
		if atoi(t, got[i][0]) <= atoi(t, got[i-1][0]) {
			t.Fatalf("AUTO_INCREMENT went back: %v", got)
		}
	}
	if got := queryRows(t, db, "SELECT x, y FROM nopk ORDER BY x"); !reflect.DeepEqual(got, [][]string{{"1", "x"}, {"5", "x"}}) {
		t.Fatalf("nopk = %v", got)
	}
}

// TestSavepoints: ROLLBACK TO SAVEPOINT undoes what came after the
// savepoint and keeps what came before.
func TestSavepoints(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, indexedTable)
	c, _ := db.Conn(context.Background())
	defer c.Close()
	mustExec(t, c, "BEGIN", "INSERT INTO t VALUES (1, 1, 'a', 0)", "SAVEPOINT one",
		"INSERT INTO t VALUES (2, 2, 'b', 0)", "SAVEPOINT two",
		"UPDATE t SET k = 10 WHERE id = 1", "ROLLBACK TO SAVEPOINT one",
		"INSERT INTO t VALUES (3, 3, 'b', 0)", "RELEASE SAVEPOINT one", "COMMIT")
	if got := queryRows(t, db, "SELECT id, k, c FROM t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1", "1", "a"}, {"3", "3", "b"}}) {
		t.Fatalf("rows = %v", got)
	}
	checkIndexes(t, db)
	_, err := db.Exec("ROLLBACK TO SAVEPOINT nope")
	if err == nil {
		t.Fatal("ROLLBACK TO an unknown savepoint succeeded")
	}
}

// TestCheckConstraints: CHECK constraints are kept and enforced.
func TestCheckConstraints(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, "CREATE TABLE c (a INT, b INT, CONSTRAINT pos CHECK (a > 0))", "INSERT INTO c VALUES (1, 1)")
	_, err := db.Exec("INSERT INTO c VALUES (-1, 1)")
	wantError(t, err, 3819, "")
	mustExec(t, db, "ALTER TABLE c ADD CONSTRAINT small CHECK (b < 10)")
	_, err = db.Exec("UPDATE c SET b = 20")
	wantError(t, err, 3819, "")
	mustExec(t, db, "ALTER TABLE c DROP CONSTRAINT pos", "INSERT INTO c VALUES (-1, 1)")
	if got := queryRows(t, db, "SELECT COUNT(*) FROM c"); got[0][0] != "2" {
		t.Fatalf("count = %v", got)
	}
}

// TestIndexRangesMatchScan compares every kind of predicate on an indexed
// table with the same predicate on a copy without indexes: a lookup
// through any index (widened ranges, NULLs, conversions, IN lists,
// prefixes of composite indexes) must return exactly the scan's rows.
func TestIndexRangesMatchScan(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	const cols = "(id INT, a INT, b VARCHAR(10), c DOUBLE, d BIGINT UNSIGNED"
	mustExec(t, db,
		"CREATE TABLE idx "+cols+", PRIMARY KEY (id), KEY ka (a), UNIQUE KEY ub (b), KEY kab (a, b), KEY kc (c), KEY kd (d))",
		"CREATE TABLE plain "+cols+")",
		"CREATE TABLE cpk (b VARCHAR(10), a INT, v INT, PRIMARY KEY (b, a))",
		"CREATE TABLE cplain (b VARCHAR(10), a INT, v INT)",
	)
	rng := rand.New(rand.NewSource(3))
	letters := []string{"a", "A", "b", "B", "ab", "Ab", "abc", "z", "é", "e", ""}
	for i := 0; i < 120; i++ {
		a := fmt.Sprint(rng.Intn(10) - 3)
		if rng.Intn(8) == 0 {
			a = "NULL"
		}
		b := "NULL"
		if rng.Intn(6) != 0 {
			b = fmt.Sprintf("'%s%d'", letters[rng.Intn(len(letters))], i)
		}
		c := fmt.Sprintf("%d.%d", rng.Intn(7)-3, rng.Intn(10))
		d := fmt.Sprint(uint64(rng.Intn(5)) * 4611686018427387904)
		vals := fmt.Sprintf("(%d, %s, %s, %s, %s)", i, a, b, c, d)
		mustExec(t, db, "INSERT INTO idx VALUES "+vals, "INSERT INTO plain VALUES "+vals)
		cb := fmt.Sprintf("'%s'", letters[rng.Intn(len(letters))])
		cvals := fmt.Sprintf("(%s, %d, %d)", cb, rng.Intn(5), i)
		_, err := db.Exec("INSERT INTO cpk VALUES " + cvals)
		if err == nil {
			mustExec(t, db, "INSERT INTO cplain VALUES "+cvals)
		} else if code, _ := mysqlErrorCode(err); code != 1062 {
			t.Fatal(err)
		}
	}
	preds := []string{
		"id = 5", "id = 5.5", "id = '7'", "id > 100", "id < -1", "id BETWEEN 10 AND 20", "id > 10.5 AND id <= 30.2",
		"id IN (1, 3, 5, 200)", "id >= 118", "id <> 3", "id IS NULL",
		"a = 2", "a > 2", "a >= 2.5", "a < -1.5", "a IS NULL", "a IS NOT NULL", "a IN (0, 1, NULL)", "a BETWEEN -1 AND 1",
		"a = 2 AND b > 'b'", "a = 1 AND b IS NULL", "a > 0 AND b < 'b'", "a IS NULL AND b IS NOT NULL",
		"b = 'a1'", "b = 'A1'", "b > 'b'", "b < 'B'", "b LIKE 'a%'", "b IS NULL", "b IN ('a3', 'B5', 'zz')", "b >= 'e' AND b < 'f'",
		"c > 0", "c = 1.5", "c BETWEEN -1 AND 1", "c < -2.5",
		"d = 0", "d > 4611686018427387904", "d >= 9223372036854775808", "d < 18446744073709551615", "d = -1",
		"id > 5 OR a = 3", "(a = 1 OR a = 2) AND id < 60", "id = 3 OR id = 3",
	}
	for _, p := range preds {
		got := queryRows(t, db, "SELECT id, a, b, c, d FROM idx WHERE "+p+" ORDER BY id")
		want := queryRows(t, db, "SELECT id, a, b, c, d FROM plain WHERE "+p+" ORDER BY id")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("WHERE %s: indexed %v, scan %v", p, got, want)
		}
	}
	for _, p := range []string{"b = 'a'", "b = 'A'", "b > 'a'", "b = 'ab' AND a = 2", "b = 'ab' AND a > 1", "a = 3", "b < 'b' AND a <= 2", "b IN ('a', 'z') AND a IN (1, 4)"} {
		got := queryRows(t, db, "SELECT b, a, v FROM cpk WHERE "+p+" ORDER BY v")
		want := queryRows(t, db, "SELECT b, a, v FROM cplain WHERE "+p+" ORDER BY v")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("clustered WHERE %s: indexed %v, scan %v", p, got, want)
		}
	}
}

// TestAlterTable: CREATE INDEX backfills, a unique index over duplicates
// fails and leaves nothing, column and primary-key changes rewrite rows
// and keep every index in step.
func TestAlterTable(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, k INT, c VARCHAR(20), u INT)",
		"INSERT INTO t (k, c, u) VALUES (1, 'a', 0), (2, 'b', 0), (1, 'c', 0), (NULL, NULL, 0)")
	mustExec(t, db, "CREATE INDEX kk ON t (k)", "ALTER TABLE t ADD UNIQUE KEY uc (c), ADD KEY kc (k, c)")
	checkIndexes(t, db)
	_, err := db.Exec("CREATE UNIQUE INDEX uk ON t (k)")
	wantError(t, err, 1062, "23000")
	for _, r := range queryRows(t, db, "SHOW INDEX FROM t") {
		if r[2] == "uk" {
			t.Fatalf("failed CREATE UNIQUE INDEX left an index: %v", r)
		}
	}
	mustExec(t, db,
		"ALTER TABLE t MODIFY COLUMN u BIGINT NOT NULL DEFAULT 5",
		"ALTER TABLE t CHANGE COLUMN u w BIGINT",
		"ALTER TABLE t ADD COLUMN z VARCHAR(5) NOT NULL DEFAULT 'zz' AFTER id",
	)
	got := queryRows(t, db, "SELECT id, z, k, c, w FROM t ORDER BY id")
	want := [][]string{{"1", "zz", "1", "a", "0"}, {"2", "zz", "2", "b", "0"}, {"3", "zz", "1", "c", "0"}, {"4", "zz", "NULL", "NULL", "0"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after ALTERs: %v, want %v", got, want)
	}
	mustExec(t, db, "ALTER TABLE t CHANGE COLUMN w u BIGINT", "ALTER TABLE t DROP COLUMN z")
	checkIndexes(t, db)
	mustExec(t, db, "INSERT INTO t (k, c, u) VALUES (7, 'g', 1)")
	if got := queryRows(t, db, "SELECT id FROM t WHERE c = 'g'"); len(got) != 1 || atoi(t, got[0][0]) <= 4 {
		t.Fatalf("AUTO_INCREMENT after rewrite went back: %v", got)
	}
	// Primary key changes rewrite the table too.
	mustExec(t, db, "ALTER TABLE t MODIFY id INT NOT NULL", "ALTER TABLE t DROP PRIMARY KEY", "ALTER TABLE t ADD PRIMARY KEY (id)")
	checkIndexes(t, db)
	if got := queryRows(t, db, "SELECT COUNT(*) FROM t"); got[0][0] != "5" {
		t.Fatalf("rows after primary key changes: %v", got)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// TestPreparedPointSelect covers the fast path of prepared primary-key
// point selects: same answers as GMS's path (text protocol), inside and
// outside transactions, across schema changes and for parameters it does
// not take.
func TestPreparedPointSelect(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, "CREATE TABLE p (id INT PRIMARY KEY, c CHAR(20), n INT, f DOUBLE, ts DATETIME)",
		"INSERT INTO p VALUES (1, 'one', 10, 1.5, '2024-01-01 00:00:00'), (2, 'two', NULL, NULL, NULL), (-3, 'minus', 0, -2, '1999-12-31 23:59:59')")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	queries := []string{"SELECT c FROM p WHERE id = ?", "SELECT * FROM p WHERE id = ?", "SELECT n, c, id FROM p WHERE ? = id", "SELECT ts, f FROM d.p WHERE id = ?"}
	for _, q := range queries {
		stmt, err := c.PrepareContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []any{1, 2, -3, 4, int64(1) << 40, "2", 1.0, nil} {
			got := queryRows(t, stmt2querier{stmt}, "", id)
			text := strings.Replace(q, "?", sqlLiteral(id), 1)
			want := queryRows(t, c, text)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s with %v: prepared %v, text %v", q, id, got, want)
			}
		}
		stmt.Close()
	}

	stmt, err := c.PrepareContext(ctx, "SELECT c FROM p WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	// Inside a transaction: its own writes, and its snapshot.
	mustExec(t, c, "BEGIN", "UPDATE p SET c = 'uno' WHERE id = 1")
	mustExec(t, db, "UPDATE p SET c = 'dos' WHERE id = 2")
	if got := queryRows(t, stmt2querier{stmt}, "", 1); !reflect.DeepEqual(got, [][]string{{"uno"}}) {
		t.Fatalf("own write: %v", got)
	}
	if got := queryRows(t, stmt2querier{stmt}, "", 2); !reflect.DeepEqual(got, [][]string{{"two"}}) {
		t.Fatalf("snapshot: %v", got)
	}
	mustExec(t, c, "ROLLBACK")
	if got := queryRows(t, stmt2querier{stmt}, "", 2); !reflect.DeepEqual(got, [][]string{{"dos"}}) {
		t.Fatalf("after rollback: %v", got)
	}
	// A schema change after the prepare: the answer follows the new schema.
	mustExec(t, db, "ALTER TABLE p MODIFY c VARCHAR(40)", "UPDATE p SET c = 'a longer value than before' WHERE id = 1")
	if got := queryRows(t, stmt2querier{stmt}, "", 1); !reflect.DeepEqual(got, [][]string{{"a longer value than before"}}) {
		t.Fatalf("after ALTER: %v", got)
	}
	mustExec(t, db, "DROP TABLE p")
	if _, err := stmt.QueryContext(ctx, 1); err == nil {
		t.Fatal("point select of a dropped table succeeded")
	}
}

// stmt2querier runs a prepared statement as a querier (the query text is
// ignored).
type stmt2querier struct{ s *sql.Stmt }

func (q stmt2querier) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return q.s.QueryContext(ctx, args...)
}

func sqlLiteral(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + v + "'"
	default:
		return fmt.Sprint(v)
	}
}

// TestConcurrentDDL: DDL statements of different sessions on unrelated
// tables all succeed, as in MySQL, although each writes the schema
// version (percdb runs a DDL that lost that conflict again).
func TestConcurrentDDL(t *testing.T) {
	s := startServer(t, "")
	const workers, rounds = 4, 8
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			db := s.Open("")
			db.SetMaxOpenConns(1)
			dbName := fmt.Sprintf("w%d", w)
			stmts := []string{"CREATE DATABASE " + dbName}
			for r := 0; r < rounds; r++ {
				tbl := fmt.Sprintf("%s.t%d", dbName, r)
				stmts = append(stmts,
					"CREATE TABLE "+tbl+" (id INT PRIMARY KEY, v INT)",
					"INSERT INTO "+tbl+" VALUES (1, 1), (2, 2)",
					"CREATE INDEX kv ON "+tbl+" (v)",
					"ALTER TABLE "+tbl+" ADD COLUMN w INT",
				)
				if r%2 == 0 {
					stmts = append(stmts, "DROP TABLE "+tbl)
				}
			}
			for _, q := range stmts {
				if _, err := db.Exec(q); err != nil {
					errs <- fmt.Errorf("worker %d: %s: %w", w, q, err)
					return
				}
			}
			errs <- nil
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	db := s.Open("")
	for w := 0; w < workers; w++ {
		got := queryRows(t, db, fmt.Sprintf("SHOW TABLES FROM w%d", w))
		if len(got) != rounds/2 {
			t.Fatalf("database w%d has tables %v, want %d", w, got, rounds/2)
		}
	}
}

// TestIndexOrder: GMS drops ORDER BY when an index provides the order, so
// reads through an index must return rows in its order, ascending or
// descending, NULLs first ascending, strings by collation, prefix indexes
// included.
func TestIndexOrder(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db,
		"CREATE TABLE o (id INT PRIMARY KEY, a INT, s VARCHAR(20), KEY ka (a), KEY ks (s), KEY kp (s(2)))",
		"CREATE TABLE op (id INT PRIMARY KEY, s VARCHAR(20), KEY kp (s(2)))",
	)
	rng := rand.New(rand.NewSource(5))
	words := []string{"apple", "Apricot", "apex", "b", "B", "banana", "ab", "Ab", "zz", "é", "e", "E"}
	for i := 0; i < 80; i++ {
		a := fmt.Sprint(rng.Intn(20) - 5)
		if rng.Intn(7) == 0 {
			a = "NULL"
		}
		w := fmt.Sprintf("'%s'", words[rng.Intn(len(words))])
		if rng.Intn(9) == 0 {
			w = "NULL"
		}
		mustExec(t, db, fmt.Sprintf("INSERT INTO o VALUES (%d, %s, %s)", i, a, w), fmt.Sprintf("INSERT INTO op VALUES (%d, %s)", i, w))
	}
	for _, q := range []struct {
		sql  string
		desc bool
		num  bool
	}{
		{"SELECT id, a FROM o ORDER BY a", false, true},
		{"SELECT id, a FROM o ORDER BY a DESC", true, true},
		{"SELECT id, a FROM o WHERE a > 3 ORDER BY a DESC", true, true},
		{"SELECT id, a FROM o WHERE a IN (1, 7, -2) OR a IS NULL ORDER BY a DESC", true, true},
		{"SELECT id, a FROM o WHERE a BETWEEN 0 AND 10 ORDER BY a", false, true},
		{"SELECT id, s FROM o ORDER BY s", false, false},
		{"SELECT id, s FROM o ORDER BY s DESC", true, false},
		{"SELECT id, s FROM o WHERE s > 'a' ORDER BY s DESC", true, false},
		{"SELECT id, s FROM op ORDER BY s", false, false},
		{"SELECT id, s FROM op WHERE s >= 'ap' ORDER BY s DESC", true, false},
		{"SELECT id, id FROM o ORDER BY id DESC", true, true},
		{"SELECT id, id FROM o WHERE id < 30 OR id > 70 ORDER BY id DESC", true, true},
	} {
		got := queryRows(t, db, q.sql)
		unordered := queryRows(t, db, q.sql[:strings.Index(q.sql, " ORDER BY")])
		if !sameSet(flatten(got), flatten(unordered)) {
			t.Fatalf("%s returned other rows than without ORDER BY: %v vs %v", q.sql, got, unordered)
		}
		// NULLs first ascending, last descending; the other values in
		// order as the server compares them (the column's collation).
		for k := 1; k < len(got); k++ {
			prev, cur := got[k-1][1], got[k][1]
			if prev == "NULL" || cur == "NULL" {
				if (prev == "NULL") != (cur == "NULL") && (cur == "NULL") != q.desc {
					t.Fatalf("%s: NULL out of place at row %d: %v", q.sql, k, got)
				}
				continue
			}
			op := "<="
			if q.desc {
				op = ">="
			}
			var a, b any = prev, cur
			if q.num {
				a, b = atoi(t, prev), atoi(t, cur)
			}
			if ok := queryRows(t, db, "SELECT ? "+op+" ?", a, b); ok[0][0] != "1" {
				t.Fatalf("%s: rows %d and %d out of order (%q then %q): %v", q.sql, k-1, k, prev, cur, got)
			}
		}
	}
}

// TestRepeatedReadsInOneStatement: the rows of a range read are reused
// within a statement that writes nothing (nested-loop joins read the inner
// table once per outer row), never across statements or in one that
// writes.
func TestRepeatedReadsInOneStatement(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db, "CREATE TABLE a (x INT, y INT)", "CREATE TABLE b (x INT, y INT, KEY kx (x))")
	for i := 0; i < 20; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO a VALUES (%d, %d)", i%5, i), fmt.Sprintf("INSERT INTO b VALUES (%d, %d)", i%7, i))
	}
	join := "SELECT a.y, b.y FROM a, b WHERE a.x = b.x ORDER BY a.y, b.y"
	want := queryRows(t, db, "SELECT a.y, b.y FROM a JOIN b ON a.x + 0 = b.x + 0 ORDER BY a.y, b.y")
	if got := queryRows(t, db, join); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Fatalf("join = %v, want %v", got, want)
	}
	c, _ := db.Conn(context.Background())
	defer c.Close()
	mustExec(t, c, "BEGIN")
	before := queryRows(t, c, "SELECT COUNT(*) FROM a, b")
	mustExec(t, c, "INSERT INTO b VALUES (1, 100)")
	after := queryRows(t, c, "SELECT COUNT(*) FROM a, b")
	if atoi(t, after[0][0]) != atoi(t, before[0][0])+20 {
		t.Fatalf("cross join count %v then %v after one more row in b", before, after)
	}
	// A statement that writes reads what it reads afresh.
	mustExec(t, c, "INSERT INTO b SELECT x, y + 1000 FROM b WHERE y < 3")
	if got := queryRows(t, c, "SELECT COUNT(*) FROM b"); got[0][0] != "24" {
		t.Fatalf("rows in b = %v, want 24", got)
	}
	mustExec(t, c, "COMMIT")
}

// TestGeneratedColumnsRestart: generated columns (STORED and VIRTUAL,
// one indexed) keep their expressions across a restart, and rows written
// after it are computed and found through the index.
func TestGeneratedColumnsRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	mustExec(t, s.Open(""), "CREATE DATABASE d")
	db := s.Open("d")
	mustExec(t, db,
		"CREATE TABLE g (id INT PRIMARY KEY, a INT, b INT AS (a * 2) STORED, c INT AS (a + 1) VIRTUAL, KEY kc (c))",
		"INSERT INTO g (id, a) VALUES (1, 5)")
	db.Close()
	s.Stop()

	s = startServer(t, dir)
	db = s.Open("d")
	mustExec(t, db, "INSERT INTO g (id, a) VALUES (2, 7)", "UPDATE g SET a = 10 WHERE id = 1")
	if got := queryRows(t, db, "SELECT id, a, b, c FROM g ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1", "10", "20", "11"}, {"2", "7", "14", "8"}}) {
		t.Fatalf("rows after restart: %v", got)
	}
	if got := queryRows(t, db, "SELECT id FROM g WHERE c = 8"); !reflect.DeepEqual(got, [][]string{{"2"}}) {
		t.Fatalf("lookup by the virtual column's index: %v", got)
	}
	got := queryRows(t, db, "SHOW CREATE TABLE g")
	if want := "`b` int GENERATED ALWAYS AS ((`a` * 2)) STORED"; len(got) != 1 || !strings.Contains(got[0][1], want) || !strings.Contains(got[0][1], "KEY `kc` (`c`)") {
		t.Fatalf("SHOW CREATE TABLE: %v", got)
	}
}
