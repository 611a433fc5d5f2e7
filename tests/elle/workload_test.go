package elle_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/elle"
	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestListAppend runs a short list-append workload against the server of
// testserver.ForTest and checks the history: percdb must show no anomaly
// snapshot isolation forbids. Against MariaDB (InnoDB REPEATABLE READ) the
// anomalies found are logged, not asserted: UPDATE reads the latest version
// there, so lost updates (G-single) and internal inconsistencies are
// expected.
func TestListAppend(t *testing.T) {
	runListAppend(t, "elle_short", sql.LevelDefault)
}

// TestListAppendReadCommitted runs the workload with every transaction at
// READ COMMITTED and checks the history for that level: read skew and
// lost updates through earlier reads (G-single) and non-repeatable reads
// are allowed, as in MySQL; G0, G1a, G1b, G1c, a read missing the
// transaction's own appends, and incompatible orders are not. percdb
// runs it in pessimistic mode (an optimistic transaction is snapshot
// isolation at every level, which passes too). Against MariaDB the
// anomalies are asserted as well: InnoDB's READ COMMITTED is this level.
func TestListAppendReadCommitted(t *testing.T) {
	runListAppend(t, "elle_rc", sql.LevelReadCommitted)
}

// runListAppend runs a short list-append workload on table at level and
// checks it (READ COMMITTED for LevelReadCommitted, else snapshot
// isolation).
func runListAppend(t *testing.T, table string, level sql.IsolationLevel) {
	rc := level == sql.LevelReadCommitted
	srv := testserver.ForTest(t)
	db, err := sql.Open("mysql", srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	opts := elle.WorkloadOptions{Clients: 4, Txns: 800, Table: table, Isolation: level}
	if testing.Short() {
		opts.Txns = 200
	}
	db.SetMaxOpenConns(opts.Clients)
	db.SetMaxIdleConns(opts.Clients)
	// Each seed generates other transactions, so other interleavings meet:
	// the anomaly of a defect that shows in one run of twenty (a fractured
	// read after a snapshot move, a2f1a89) has three chances a run.
	seeds := uint64(3)
	if testing.Short() {
		seeds = 1
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			opts := opts
			opts.Seed = seed
			checkListAppend(t, srv, db, opts, rc)
		})
	}
}

// checkListAppend runs one list-append workload on db and checks its
// history (READ COMMITTED when rc, else snapshot isolation).
func checkListAppend(t *testing.T, srv *testserver.Server, db *sql.DB, opts elle.WorkloadOptions, rc bool) {
	// A bound on the whole run, so that a hung server fails the test with
	// a history instead of hitting go test's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, err := elle.Run(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := elle.Check(h, elle.CheckOptions{ReadCommitted: rc})
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	if err := res.WriteReport(&report); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s run:\n%s", srv.Flavor, report.String())
	// The errors by MySQL error number, for the log.
	errs := make(map[string]int)
	for _, txn := range h {
		if txn.Err != "" {
			e := txn.Err
			if i := strings.Index(e, "Error "); i >= 0 {
				e = e[i:min(len(e), i+10)]
			}
			errs[e]++
		}
	}
	t.Logf("errors: %v", errs)
	if res.Txns != opts.Txns {
		t.Errorf("history has %d transactions, ran %d", res.Txns, opts.Txns)
	}
	if res.OK == 0 {
		t.Fatalf("no transaction committed; first error: %s", firstError(h))
	}
	if srv.Flavor == testserver.MariaDB && !rc {
		return
	}
	if !res.Valid() {
		t.Errorf("%d anomalies forbidden", res.Forbidden())
	}
	// Read-only transactions read one snapshot and write nothing: percdb
	// must never fail them.
	for _, txn := range h {
		readOnly := true
		for _, m := range txn.Ops {
			readOnly = readOnly && m.Kind == elle.Read
		}
		if readOnly && txn.Status != elle.OK {
			t.Errorf("read-only transaction did not commit: %s", txn)
		}
	}
}

func firstError(h []elle.Txn) string {
	for _, t := range h {
		if t.Err != "" {
			return t.Err
		}
	}
	return "(none)"
}
