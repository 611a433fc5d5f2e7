package inprocess

import (
	"context"
	"os"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/tests/sqllogic/slttest"
)

func TestMain(m *testing.M) {
	// go-mysql-server logs every connection and failed query through
	// logrus' standard logger.
	logrus.SetLevel(logrus.ErrorLevel)
	os.Exit(m.Run())
}

// start starts percdb in process and stops it when the test ends.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	srv, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

// TestTestdata runs the project's own .test files (tests/sqllogic/testdata)
// against percdb started in process: the SQL coverage of `go test ./...`.
// Records percdb does not pass yet are listed, with the reason, in
// ../known_failures.txt; the test fails when one of them starts passing, so
// that the list only shrinks.
func TestTestdata(t *testing.T) {
	slttest.RunFiles(t, start(t, Options{}), "../testdata/*.test", slttest.Options{KnownFailures: "../known_failures.txt"})
}

// TestRecordTimeout checks that a record that times out fails alone on the
// in-process server too, whose connections are pipes: the runner's KILL
// QUERY stops the statement (GMS's check for a closed TCP client does not
// run on them), and the file goes on on a new connection.
func TestRecordTimeout(t *testing.T) {
	slttest.CheckRecordTimeout(t, start(t, Options{}))
}

// TestOnDisk checks that the store-on-disk variant serves and that Close
// removes the store.
func TestOnDisk(t *testing.T) {
	dir := t.TempDir()
	srv, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := srv.Open(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Exec(ctx, "CREATE TABLE t1(a INTEGER PRIMARY KEY)"); err != nil {
		t.Error(err)
	}
	if err := sess.Close(ctx); err != nil {
		t.Error(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Fatalf("store directory not removed: %v %v", left, err)
	}
}
