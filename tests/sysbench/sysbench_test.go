// Package sysbench runs sysbench's OLTP workloads against an in-process
// percdb and fails if any of them fails. sysbench drives the server the
// way it drives MySQL: server-side prepared statements for everything
// (BEGIN and COMMIT included), CREATE TABLE ... /*! ENGINE = innodb */,
// multi-row INSERT, CREATE INDEX on a loaded table, and retries of errors
// 1213 (write conflict), 1020 and 1205.
//
// The test is skipped where sysbench is not installed (Debian: apt-get
// install sysbench). It logs each workload's throughput; those figures are
// indicative only, from a short run on whatever else the machine is doing.
// Longer runs for measurement:
//
//	PERCDB_SYSBENCH_TIME=20 PERCDB_SYSBENCH_THREADS=4 PERCDB_SYSBENCH_TABLE_SIZE=10000 \
//	    go test ./tests/sysbench -run Sysbench -v -count=1
package sysbench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/sql/sqltest"
)

func TestMain(m *testing.M) {
	logrus.SetLevel(logrus.ErrorLevel)
	os.Exit(m.Run())
}

// workloads are the OLTP scripts every release must run cleanly.
var workloads = []string{
	"oltp_point_select",
	"oltp_read_only",
	"oltp_read_write",
	"oltp_insert",
	"oltp_update_index",
	"oltp_delete",
}

// envInt reads a positive integer setting, or returns def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

var (
	queriesLine = regexp.MustCompile(`queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)`)
	ignoredLine = regexp.MustCompile(`ignored errors:\s+(\d+)`)
	p95Line     = regexp.MustCompile(`95th percentile:\s+([\d.]+)`)
	txnsLine    = regexp.MustCompile(`transactions:\s+\d+\s+\(([\d.]+) per sec\.\)`)
)

func TestSysbench(t *testing.T) {
	bin, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("sysbench not installed (Debian: apt-get install sysbench)")
	}
	seconds := envInt(t, "PERCDB_SYSBENCH_TIME", 2)
	threads := envInt(t, "PERCDB_SYSBENCH_THREADS", 2)
	size := envInt(t, "PERCDB_SYSBENCH_TABLE_SIZE", 1000)
	if testing.Short() {
		seconds = 1
	}

	s := sqltest.Start(t, "")
	if _, err := s.Open("").Exec("CREATE DATABASE sbtest"); err != nil {
		t.Fatal(err)
	}
	// PERCDB_TEST_TXN_MODE=pessimistic runs the workloads in pessimistic
	// mode: sysbench's sessions take the global default.
	if mode := os.Getenv("PERCDB_TEST_TXN_MODE"); mode != "" {
		if _, err := s.Open("").Exec("SET GLOBAL percdb_txn_mode = ?", mode); err != nil {
			t.Fatal(err)
		}
	}
	host, port := s.HostPort()
	common := []string{
		"--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=root", "--mysql-db=sbtest",
		"--tables=1", fmt.Sprintf("--table-size=%d", size), "--db-ps-mode=auto",
	}
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(args, common...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("sysbench %v: %v\n%s", args, err, out.String())
		}
		if bytes.Contains(out.Bytes(), []byte("FATAL")) {
			t.Fatalf("sysbench %v failed:\n%s", args, out.String())
		}
		return out.String()
	}
	for _, w := range workloads {
		t.Run(w, func(t *testing.T) {
			run(t, w, "prepare")
			defer run(t, w, "cleanup")
			out := run(t, w, "run", fmt.Sprintf("--time=%d", seconds), fmt.Sprintf("--threads=%d", threads))
			q := queriesLine.FindStringSubmatch(out)
			if q == nil {
				t.Fatalf("no query count in output:\n%s", out)
			}
			if q[1] == "0" {
				t.Fatalf("no query completed:\n%s", out)
			}
			ignored, p95 := "?", "?"
			if m := ignoredLine.FindStringSubmatch(out); m != nil {
				ignored = m[1]
			}
			if m := p95Line.FindStringSubmatch(out); m != nil {
				p95 = m[1]
			}
			tps := "?"
			if m := txnsLine.FindStringSubmatch(out); m != nil {
				tps = m[1]
			}
			t.Logf("%s: %s transactions/s, %s queries/s, p95 %s ms, %s retried conflicts (%d threads, %d s, %d rows; indicative)",
				w, tps, q[2], p95, ignored, threads, seconds, size)
			// How pessimistic statements that met a newer commit fared
			// (counted since the server started).
			var moved, refused, past string
			for name, dst := range map[string]*string{"Percdb_snapshot_moves": &moved, "Percdb_snapshot_moves_refused": &refused,
				"Percdb_snapshot_moves_past_changes": &past} {
				var n string
				if err := s.Open("").QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(&n, dst); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s: pessimistic snapshot moves so far: %s moved (%s past changes to columns not read), %s refused", w, moved, past, refused)
		})
	}
}
