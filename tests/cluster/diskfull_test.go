package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/internal/testdisk"
	"github.com/percdb/percdb/tests/testproc"
)

// TestKVNodeDiskFull: issue 22's asks in a cluster. A KV node whose data
// directory fills refuses the writes of its regions, and the SQL node
// gives the client MySQL's clear error, 1021 naming the KV node's data
// directory, without retrying it (how long it took is logged); reads, DELETE and DROP
// TABLE go on, nothing acknowledged is lost, nothing refused is there;
// once space is freed, writes are accepted again without a restart. It
// mounts a 64 MiB tmpfs for the KV node's data, so it needs root (it is
// skipped otherwise).
func TestKVNodeDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	mnt := testdisk.Mount(t, "64m")
	// Another program's file: deleting it is how space comes back.
	other := filepath.Join(mnt, "other-program.dat")
	if err := os.WriteFile(other, make([]byte, 16<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(mnt, "kv1")
	// Later flags win over the harness's: the KV node's data goes on the
	// tmpfs, with a reserve of 6 MiB (the harness gives 0).
	c := startClusterWith(t, testproc.BuildPercdb(t), 1, nil, []string{"--data-dir", dataDir, "--reserve-space", "6MiB"})
	db := openDB(t, c.sql.addr, "", true)
	db.SetMaxOpenConns(2)
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, pad VARCHAR(2100))",
		"CREATE TABLE f.small (id INT PRIMARY KEY)", "INSERT INTO f.small VALUES (1), (2), (3)"} {
		mustExec(t, db, q, c.logs)
	}
	pad := strings.Repeat("x", 2000)
	insert := func(from, n int) error {
		var b strings.Builder
		b.WriteString("INSERT INTO f.t VALUES ")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d, '%s%d')", from+i, pad, from+i)
		}
		_, err := db.ExecContext(ctx, b.String())
		return err
	}
	acked := 0
	var fullErr error
	for acked < 100_000 { // 200 MiB of rows: far more than the disk
		if fullErr = insert(acked, 100); fullErr != nil {
			break
		}
		acked += 100
	}
	if errCode(fullErr) != 1021 || !strings.Contains(fullErr.Error(), dataDir) {
		t.Fatalf("after %d rows: %v; want error 1021 naming %s\n%s", acked, fullErr, dataDir, c.logs())
	}
	t.Logf("the KV node's disk full after %d acknowledged rows: %v", acked, fullErr)
	start := time.Now()
	if err := insert(acked, 1); errCode(err) != 1021 {
		t.Fatalf("a second insert on the full disk: %v, want 1021", err)
	}
	t.Logf("a second insert was refused in %v (loaded machine; logged, not asserted)", time.Since(start))

	// Reads answer: every acknowledged row, none refused.
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s on a full disk: %v\n%s", q, err, c.logs())
		}
		return n
	}
	if n := count("SELECT COUNT(*) FROM f.t"); n != acked {
		t.Fatalf("%d rows after %d acknowledged", n, acked)
	}
	if n := count("SELECT COUNT(*) FROM f.small WHERE id = 2"); n != 1 {
		t.Fatalf("point read on a full disk: %d rows", n)
	}
	// DELETE and DROP TABLE, which free space, are accepted.
	mustExec(t, db, "DELETE FROM f.small WHERE id = 3", c.logs)
	mustExec(t, db, "DROP TABLE f.small", c.logs)

	// Space comes back: writes are accepted again, without a restart.
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "writes accepted once space was freed", func() bool {
		err := insert(acked, 1)
		if err != nil && errCode(err) != 1021 {
			t.Fatalf("insert once space was freed: %v\n%s", err, c.logs())
		}
		return err == nil
	}, c.logs)
	if n := count("SELECT COUNT(*) FROM f.t"); n != acked+1 {
		t.Fatalf("%d rows after %d acknowledged", n, acked+1)
	}
}
