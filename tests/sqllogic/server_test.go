package sqllogic_test

import (
	"context"
	"os"
	"testing"

	"github.com/percdb/percdb/tests/sqllogic"
	"github.com/percdb/percdb/tests/sqllogic/slttest"
)

// serverTarget connects to the MySQL-protocol server named by SLT_DSN (e.g.
// "root@tcp(127.0.0.1:3306)/"), or skips the test when it is not set.
func serverTarget(t *testing.T) *sqllogic.ServerTarget {
	t.Helper()
	dsn := os.Getenv("SLT_DSN")
	if dsn == "" {
		t.Skip("SLT_DSN is not set: no MySQL-protocol server to run against")
	}
	target, err := sqllogic.NewServerTarget(context.Background(), dsn, sqllogic.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	return target
}

// TestServerTestdata holds the project's own .test files against a
// reference server: they state MySQL's behaviour, so they must pass there.
func TestServerTestdata(t *testing.T) {
	slttest.RunFiles(t, serverTarget(t), "testdata/*.test", slttest.Options{Jobs: 2})
}

// TestServerRecordTimeout checks that a record that times out fails alone:
// the session reconnects to the same database and the file goes on.
func TestServerRecordTimeout(t *testing.T) {
	slttest.CheckRecordTimeout(t, serverTarget(t))
}
