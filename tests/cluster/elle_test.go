package cluster

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/elle"
	"github.com/percdb/percdb/tests/testproc"
)

// elleProgress is the io.Writer of elle.WorkloadOptions.Progress: it keeps
// the number of transactions the latest progress line reports.
type elleProgress struct {
	mu   sync.Mutex
	txns int
}

var elleProgressLine = regexp.MustCompile(`([0-9]+) transactions:`)

func (p *elleProgress) Write(b []byte) (int, error) {
	if g := elleProgressLine.FindSubmatch(b); g != nil {
		n, err := strconv.Atoi(string(g[1]))
		if err == nil {
			p.mu.Lock()
			p.txns = n
			p.mu.Unlock()
		}
	}
	return len(b), nil
}

func (p *elleProgress) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.txns
}

// TestElleUnderKills runs the Elle list-append workload (tests/elle: 4
// clients, transactions of reads and appends on 8 active keys, autocommit
// single reads) against the SQL node of a cluster of three KV nodes while
// the KV node leading the region is SIGKILLed (restarted once a prober
// reads without it), then the next leader's (restarted after 0.5 s), then
// pd (restarted after 0.5 s). Elle's checker then finds no anomaly that
// strong snapshot isolation forbids (real-time edges included: a
// transaction sees every one that committed before it began). How long
// after each kill the prober read again is logged, not asserted.
func TestElleUnderKills(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	if _, err := openDB(t, c.sql.addr, "", true).Exec("CREATE DATABASE elle"); err != nil {
		t.Fatalf("create database: %v\n%s", err, c.logs())
	}
	const clients = 4
	db := openDB(t, c.sql.addr, "elle", true)
	db.SetMaxOpenConns(clients)
	db.SetMaxIdleConns(clients)
	prog := &elleProgress{}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		h      []elle.Txn
		runErr error
		wg     sync.WaitGroup
	)
	// A test that fails midway stops the workload before its processes go.
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Go(func() {
		h, runErr = elle.Run(ctx, db, elle.WorkloadOptions{Clients: clients, Progress: prog, ProgressEvery: 100 * time.Millisecond})
	})
	// The prober counts the lists' rows: one integer, always at least 0.
	p := startQueryProber(t, openDB(t, c.sql.addr, "elle", true), "SELECT COUNT(k) >= 0 FROM elle_append", 1)
	progress := func(n int) {
		t.Helper()
		want := prog.count() + n
		waitFor(t, "elle progress", func() bool { return prog.count() >= want }, func() string {
			return fmt.Sprintf("%d transactions; prober's last error %v\n%s", prog.count(), p.err(), c.logs())
		})
	}
	why := func() string { return fmt.Sprintf("prober's last error %v\n%s", p.err(), c.logs()) }
	progress(100)
	first := c.leader(t)
	leaderOut := killFor(t, first, p, -1, why)
	progress(100)
	second := c.leader(t)
	nextOut := killFor(t, second, p, 500*time.Millisecond, why)
	progress(100)
	pdOut := killFor(t, c.pd, p, 500*time.Millisecond, why)
	progress(100)

	cancel()
	wg.Wait()
	p.stop()
	if runErr != nil {
		t.Fatalf("elle: %v\n%s", runErr, c.logs())
	}
	if len(p.bad) > 0 {
		t.Errorf("the prober read %v, want 1", p.bad)
	}
	res, err := elle.Check(h, elle.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	if err := res.WriteReport(&report); err != nil {
		t.Fatal(err)
	}
	// The counts come before the first blank line, the examples after.
	counts, _, _ := strings.Cut(report.String(), "\n\n")
	t.Logf("reads back %v after the leader's kv node (%s) was SIGKILLed (restarted after that), %v after the next leader's (%s, restarted after 0.5 s), %v after pd's (restarted after 0.5 s); %d prober reads failed; elle:\n%s",
		leaderOut.Round(time.Millisecond), first.name, nextOut.Round(time.Millisecond), second.name, pdOut.Round(time.Millisecond), p.failed(), counts)
	if !res.Valid() {
		t.Fatalf("%d anomalies forbidden under strong snapshot isolation:\n%s", res.Forbidden(), report.String())
	}
	if res.OK == 0 {
		t.Fatal("no transaction committed")
	}
	c.stop()
}
