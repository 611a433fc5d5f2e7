package crash

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"testing"
	"time"
)

// envLargeRows is the row count of TestServerKillLargeTxn's transaction
// (default 20,000; the case is 200,000).
const envLargeRows = "PERCDB_CRASH_LARGE_ROWS"

// largeTxnLockTTL is how long after its server dies a transaction's locks
// may still be alive: the server's lock TTL (txn.Options.LockTTL's default,
// 3 s), from the last heartbeat, with a margin.
const largeTxnLockTTL = 4 * time.Second

// TestServerKillLargeTxn SIGKILLs the percdb process at three points of
// one large transaction (BEGIN, INSERTs of 2,000 rows each into a table
// with a secondary index, COMMIT), restarts it on the same directory and
// reads the table through its rows and through the index:
//
//   - statements: half the INSERTs were sent, COMMIT was not: no row;
//   - committed: the process dies as soon as COMMIT answered OK, its
//     secondary locks still being committed in the background: all rows;
//   - commit: the process dies a quarter of the time that COMMIT
//     took, while it prewrites the transaction's keys: all rows or none,
//     as the commit point was or was not reached (the client could not
//     know), the same through both paths.
//
// The locks each kill left are counted (on a copy of the store), and the
// time the first reads after the restart took is logged (go test -v):
// the first while the dead transaction's locks may still be alive (it
// reads past them), the second once their TTL has passed (it resolves
// them all). Nothing is asserted of the times.
func TestServerKillLargeTxn(t *testing.T) {
	rows := 20_000
	if s := os.Getenv(envLargeRows); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive integer", envLargeRows, s)
		}
		rows = n
	}
	bin := buildPercdb(t)
	// commitTook is how long the committed case's COMMIT took: the commit
	// case kills a quarter of that time into its COMMIT, while it prewrites.
	// (A guess when the committed case did not run.)
	commitTook := time.Duration(rows) * 25 * time.Microsecond
	for _, point := range []string{"committed", "commit", "statements"} {
		t.Run(point, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			srv := startServer(t, bin, dir)
			db := openDB(t, srv.addr, "")
			for _, q := range []string{
				"CREATE DATABASE k",
				"CREATE TABLE k.t (id INT PRIMARY KEY, v VARCHAR(100), KEY (v))",
				"INSERT INTO k.t VALUES (-1, 'committed before')",
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			stmts := append([]string{"BEGIN"}, LargeTxnInserts("k.t", rows)...)
			if point == "statements" {
				stmts = stmts[:len(stmts)/2]
			}
			for _, q := range stmts {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%.60s...: %v", q, err)
				}
			}
			// want: the rows the table may hold after the restart.
			want := map[int]bool{1: true}
			switch point {
			case "commit":
				want[rows+1] = true
				done := make(chan error, 1)
				go func() {
					_, err := conn.ExecContext(ctx, "COMMIT")
					done <- err
				}()
				time.Sleep(commitTook / 4)
				select {
				case err := <-done:
					t.Logf("COMMIT answered before the kill (%v): the kill hit after the commit", err)
				default:
				}
			case "committed":
				began := time.Now()
				if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
					t.Fatalf("COMMIT: %v", err)
				}
				commitTook = time.Since(began)
				want = map[int]bool{rows + 1: true}
			}
			srv.kill(func() {
				_ = conn.Close()
				_ = db.Close()
			})
			killed := time.Now()
			left := countLocks(t, dir)

			srv = startServer(t, bin, dir)
			db = openDB(t, srv.addr, "")
			restarted := time.Now()
			first := countBoth(t, db, want)
			firstTook := time.Since(restarted)
			time.Sleep(time.Until(killed.Add(largeTxnLockTTL)))
			began := time.Now()
			second := countBoth(t, db, want)
			secondTook := time.Since(began)
			if first != second {
				t.Fatalf("the table held %d rows, then %d", first, second)
			}
			srv.stop()
			end := countLocks(t, dir)
			if end.locks != 0 {
				t.Fatalf("%v left after reading the whole table and index", end)
			}
			t.Logf("%d rows, killed at %s: %v left; after the restart %d rows, read in %v, then in %v once the locks' TTL had passed",
				rows, point, left, second, firstTook.Round(time.Millisecond), secondTook.Round(time.Millisecond))
		})
	}
}

// countBoth counts k.t's rows through the table and through its index on
// v, fails the test unless both agree and the count is one of want, and
// returns it.
func countBoth(t *testing.T, db *sql.DB, want map[int]bool) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	var rows, viaIndex int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM k.t").Scan(&rows); err != nil {
		t.Fatalf("count rows: %v", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT count(v) FROM k.t WHERE v >= 'a'").Scan(&viaIndex); err != nil {
		t.Fatalf("count through the index: %v", err)
	}
	if !want[rows] || viaIndex != rows {
		t.Fatalf("the table holds %d rows, %d through the index; want the same, one of %v", rows, viaIndex, want)
	}
	return rows
}
