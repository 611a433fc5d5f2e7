package sql_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	percsql "github.com/percdb/percdb/sql"
)

// TestSlowLogRotation rotates the slow query log as logrotate does (the
// file renamed, then mariadb-admin flush-logs, FLUSH LOGS): entries
// after it go to a new file at the configured path, not to the renamed
// one.
func TestSlowLogRotation(t *testing.T) {
	srv, admin, logPath := slowLogServer(t)
	mustExec(t, admin, "SET GLOBAL long_query_time = 0")
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "SELECT 'before rotation'")
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "FLUSH LOGS", "SELECT 'after rotation'")
	old, err := os.ReadFile(logPath + ".1")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("no new slow log after rotation: %v", err)
	}
	if !strings.Contains(string(old), "before rotation") || strings.Contains(string(old), "after rotation") {
		t.Errorf("rotated file:\n%s", old)
	}
	if !strings.Contains(string(cur), "after rotation") || !strings.HasPrefix(string(cur), "/") {
		t.Errorf("new file (with its header):\n%s", cur)
	}
}

// slowLogServer starts a server writing its slow query log to a file of
// the test, and returns it with a connection (a pool of one) and the
// file's path.
func slowLogServer(t *testing.T) (*percsql.Server, *sql.DB, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "slow.log")
	srv := startServerConfig(t, percsql.Config{SlowQueryLog: logPath})
	admin := openDB(t, srv, "")
	admin.SetMaxOpenConns(1)
	t.Cleanup(func() {
		// The variables are the process's (package slowlog): leave them as
		// other tests expect them.
		_, _ = admin.Exec("SET GLOBAL slow_query_log = OFF")
		_, _ = admin.Exec("SET GLOBAL long_query_time = 10")
	})
	return srv, admin, logPath
}
