package sql_test

import (
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestConcurrentUpsertNeverDuplicate: INSERT ... ON DUPLICATE KEY UPDATE
// and REPLACE from concurrent sessions (autocommit, and in explicit
// transactions), over two keys that others delete and insert, never fail
// with 1062: a row another transaction inserted after the statement's
// snapshot is updated (or replaced), as in MySQL, where the statement
// waits for the inserter and then sees the row. Before, about one
// upsert in 300 failed so (TestChangefeed met it too).
func TestConcurrentUpsertNeverDuplicate(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE DATABASE ur", "CREATE TABLE ur.t (id INT PRIMARY KEY, v INT, n INT DEFAULT 0)")
	const writers, keys, per = 8, 2, 150
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[uint16]int{}
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				k := (w + i) % keys
				var err error
				switch i % 7 {
				case 6:
					// The same in an explicit transaction: its snapshot
					// moves past the insert and the statement runs again.
					var tx *sql.Tx
					if tx, err = db.Begin(); err == nil {
						if _, err = tx.Exec("INSERT INTO ur.t (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE n = n + 1", k, i); err == nil {
							err = tx.Commit()
						} else {
							_ = tx.Rollback()
						}
					}
				case 5:
					_, err = db.Exec("DELETE FROM ur.t WHERE id = ?", k)
				case 4:
					_, err = db.Exec("REPLACE INTO ur.t (id, v) VALUES (?, ?)", k, i)
				default:
					_, err = db.Exec("INSERT INTO ur.t (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v), n = n + 1", k, i)
				}
				var me *mysql.MySQLError
				if errors.As(err, &me) {
					mu.Lock()
					counts[me.Number]++
					if me.Number == 1062 {
						t.Logf("statement kind %d: %v", i%7, err)
					}
					mu.Unlock()
				} else if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if counts[1062] != 0 {
		t.Fatalf("errors by code: %v; want no 1062 from an upsert", counts)
	}
	t.Logf("errors by code: %v", counts)
}
