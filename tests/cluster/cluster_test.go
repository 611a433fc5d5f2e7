package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/crash"
	"github.com/percdb/percdb/tests/testproc"
)

func TestMain(m *testing.M) {
	// go-sql-driver logs every connection a kill breaks; the tests report
	// what matters themselves.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	os.Exit(m.Run())
}

// Bounds of the waits of the workload and the checks: reaching one fails
// the test as a hang, not as slowness.
const (
	progressTimeout = 3 * time.Minute
	checkTimeout    = 5 * time.Minute
)

// workers is the number of concurrent bank clients.
const workers = 4

func openDB(t *testing.T, addr, database string, interpolate bool) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", crash.DSN(addr, database, interpolate))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// waitFor polls cond until it holds, failing the test past progressTimeout
// with the explanation why() gives.
func waitFor(t *testing.T, what string, cond func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(progressTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v\n%s", what, progressTimeout, why())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// prober reads the bank's sum in a loop through its own connection pool
// and records when reads succeed, so that a test can measure how long
// service was out after a kill (reported, never asserted) and checks the
// sum on every successful read.
type prober struct {
	t    *testing.T
	db   *sql.DB
	want int64

	mu      sync.Mutex
	lastOK  time.Time
	bad     []int64
	lastErr error
	// failures counts the reads that failed.
	failures int
	// mark and firstOK: the first successful read after mark.
	mark, firstOK time.Time

	stop func()
}

func startProber(t *testing.T, db *sql.DB, want int64) *prober {
	return startQueryProber(t, db, "SELECT SUM(bal) FROM accounts", want)
}

// startQueryProber is startProber for another workload: query returns one
// integer, which must be want.
func startQueryProber(t *testing.T, db *sql.DB, query string, want int64) *prober {
	p := &prober{t: t, db: db, want: want}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			qctx, qcancel := context.WithTimeout(ctx, time.Minute)
			var sum int64
			err := db.QueryRowContext(qctx, query).Scan(&sum)
			qcancel()
			p.mu.Lock()
			if err == nil {
				p.lastOK = time.Now()
				if p.firstOK.IsZero() && !p.mark.IsZero() {
					p.firstOK = p.lastOK
				}
				if sum != p.want {
					p.bad = append(p.bad, sum)
				}
			} else if ctx.Err() == nil {
				p.lastErr = err
				p.failures++
			}
			p.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	})
	p.stop = func() {
		cancel()
		wg.Wait()
	}
	return p
}

// err returns the last error the prober met.
func (p *prober) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// failed returns how many reads failed so far.
func (p *prober) failed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures
}

// setMark starts timing from now: firstOK will be the first successful
// read after it.
func (p *prober) setMark() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mark, p.firstOK = time.Now(), time.Time{}
	return p.mark
}

// firstOKAfterMark returns how long after the mark a read first
// succeeded, false if none has yet.
func (p *prober) firstOKAfterMark() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstOK.IsZero() {
		return 0, false
	}
	return p.firstOK.Sub(p.mark), true
}

// okSince reports whether a read succeeded after t0.
func (p *prober) okSince(t0 time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastOK.After(t0)
}

// outage kills m with SIGKILL while a commit is in flight, restarts it
// after pause, and returns how long after the kill the prober first read
// the bank (a read may succeed before the restart when m's loss does not
// stop it). A negative pause restarts m only once the prober read again
// without it (a region leader's loss: the other replicas elect a leader).
func outage(t *testing.T, c *cluster, m *member, h *crash.History, p *prober, pause time.Duration) time.Duration {
	t.Helper()
	why := func() string { return fmt.Sprintf("%s; prober's last error %v\n%s", h.Summary(), p.err(), c.logs()) }
	waitFor(t, "a commit in flight", func() bool { return h.InFlight() > 0 }, why)
	return killFor(t, m, p, pause, why)
}

// killFor SIGKILLs m, restarts it after pause (negative: once the prober
// read without it), and returns how long after the kill the prober read
// again; why explains a wait that runs out.
func killFor(t *testing.T, m *member, p *prober, pause time.Duration, why func() string) time.Duration {
	t.Helper()
	m.kill()
	p.setMark()
	if pause < 0 {
		back := p.waitBack(t, "service without "+m.name, why)
		m.start()
		return back
	}
	time.Sleep(pause)
	m.start()
	return p.waitBack(t, "service after "+m.name+"'s restart", why)
}

// waitBack waits until the prober read after its mark and returns how
// long after the mark that was.
func (p *prober) waitBack(t *testing.T, what string, why func() string) time.Duration {
	t.Helper()
	var back time.Duration
	waitFor(t, what, func() bool {
		d, ok := p.firstOKAfterMark()
		back = d
		return ok
	}, why)
	return back
}

// TestBankSurvivesKills runs the crash suite's workload (bank transfers,
// items with long values, orders big enough to commit in two phases) over
// the MySQL protocol against a SQL node of a cluster of pd and three KV
// nodes, each a process, the region replicated on all three through raft,
// and SIGKILLs: the KV node leading the region (restarted once the other
// two serve without it), then the next leader (so the restarted node,
// which must have caught up from the raft log, is half of the quorum),
// restarted after 0.5 s, then pd. Throughout, a prober reads the bank's
// sum. Then the crash suite's Checker compares the data with what the
// clients were told: nothing acknowledged is lost, nothing failed is
// there, the sum holds, indexes agree. The time from each kill to the
// first successful read is logged (not asserted).
func TestBankSurvivesKills(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	b := startBank(t, c)
	h, p := b.h, b.p

	first := c.leader(t)
	leaderOut := outage(t, c, first, h, p, -1)
	b.progress(h.Len() + 30)
	second := c.leader(t)
	if second == first {
		t.Fatalf("pd still routes to %s, killed", first.name)
	}
	nextOut := outage(t, c, second, h, p, 500*time.Millisecond)
	b.progress(h.Len() + 30)
	pdOut := outage(t, c, c.pd, h, p, 500*time.Millisecond)
	b.progress(h.Len() + 30)

	rep := b.finish()
	t.Logf("%s; reads back %v after the leader's kv node (%s) was killed (restarted after that), %v after the next leader's (%s, restarted after 0.5 s), %v after pd's; last prober error: %v; check: %s",
		h.Summary(), leaderOut.Round(time.Millisecond), first.name, nextOut.Round(time.Millisecond), second.name, pdOut.Round(time.Millisecond), p.err(), rep)
	c.stop()
}

// TestFollowerCatchesUpBySnapshot: with the raft log truncated after 8
// applied entries (--raft-log-compact 8; past a lagging follower at 32),
// a follower's KV node is SIGKILLed under the bank workload and kept
// down while the workload commits well over 32 entries, so the leader
// truncates its log past it; restarted, it logs that it installed a
// snapshot; then the leader's node is killed, so that the restarted node
// is half of the quorum (the workload goes on only if it caught up).
// Nothing acknowledged is lost, the sum holds.
func TestFollowerCatchesUpBySnapshot(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startClusterWith(t, bin, 3, nil, []string{"--raft-log-compact", "8"})
	b := startBank(t, c)
	h, p := b.h, b.p
	leader := c.leader(t)
	follower := c.other(leader)
	follower.kill()
	// Each committed transaction is at least two raft entries.
	b.progress(h.Len() + 100)
	follower.start()
	waitFor(t, follower.name+" installs a snapshot", func() bool {
		return strings.Contains(follower.log.String(), "raftstore: snapshot installed")
	}, c.logs)
	b.progress(h.Len() + 10)
	out := outage(t, c, leader, h, p, -1)
	b.progress(h.Len() + 30)
	rep := b.finish()
	t.Logf("%s; reads back %v after the leader's kv node (%s) was killed, %s having caught up by snapshot; check: %s",
		h.Summary(), out.Round(time.Millisecond), leader.name, follower.name, rep)
	c.stop()
}

// bankLoad is the crash suite's workload (bank transfers, items with
// long values, orders big enough to commit in two phases) run by workers
// over the MySQL protocol against a cluster's SQL node, with a prober
// reading the bank's sum throughout.
type bankLoad struct {
	t      *testing.T
	c      *cluster
	cfg    crash.Config
	h      *crash.History
	p      *prober
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startBank sets the bank up on c, starts the workers and the prober, and
// returns once both made progress.
func startBank(t *testing.T, c *cluster) *bankLoad {
	t.Helper()
	ctx := context.Background()
	b := &bankLoad{t: t, c: c, cfg: crash.Config{Database: "bank"}, h: crash.NewHistory()}
	if err := crash.Setup(ctx, openDB(t, c.sql.addr, "", true), b.cfg); err != nil {
		t.Fatalf("setup: %v\n%s", err, c.logs())
	}
	const accounts, initial = 10, 1000 // crash.Config's defaults
	b.p = startProber(t, openDB(t, c.sql.addr, b.cfg.Database, true), accounts*initial)
	ids := crash.NewIDs(0)
	pools := []*sql.DB{openDB(t, c.sql.addr, b.cfg.Database, true), openDB(t, c.sql.addr, b.cfg.Database, false)}
	var wctx context.Context
	wctx, b.cancel = context.WithCancel(ctx)
	for i := range workers {
		w := &crash.Worker{ID: i, DB: pools[i%2], Cfg: b.cfg, IDs: ids, Rand: rand.New(rand.NewPCG(uint64(i), 7)), Rec: b.h}
		b.wg.Go(func() { w.Run(wctx) })
	}
	b.progress(30)
	started := time.Now()
	waitFor(t, "the prober's first read", func() bool { return b.p.okSince(started) }, func() string { return fmt.Sprint(b.p.err()) })
	return b
}

// progress waits until the history holds n operations.
func (b *bankLoad) progress(n int) {
	b.t.Helper()
	waitFor(b.t, "workload progress", func() bool { return b.h.Len() >= n }, func() string {
		return fmt.Sprintf("%s; prober's last error %v\n%s", b.h.Summary(), b.p.err(), b.c.logs())
	})
}

// finish stops the workers and the prober, and checks the data against
// what the clients were told: nothing acknowledged is lost, nothing
// failed is there, the sum holds, indexes agree. It returns the check's
// report.
func (b *bankLoad) finish() string {
	t := b.t
	t.Helper()
	b.cancel()
	b.wg.Wait()
	b.p.stop()
	if len(b.p.bad) > 0 {
		t.Errorf("the prober read sums %v, want %d", b.p.bad, b.p.want)
	}
	cctx, ccancel := context.WithTimeout(context.Background(), checkTimeout)
	defer ccancel()
	rep, err := (&crash.Checker{DB: openDB(t, b.c.sql.addr, b.cfg.Database, true), Cfg: b.cfg}).Check(cctx, b.h)
	if err != nil {
		t.Fatalf("check: %v\n%s", err, b.c.logs())
	}
	if !rep.OK() {
		t.Fatalf("after %s: %s\n%s", b.h.Summary(), rep, b.c.logs())
	}
	return rep.String()
}

// TestUnreachableNodesGiveClearErrors: with a KV node or pd down longer
// than the SQL node's retry deadlines, statements fail with MySQL errors
// 9002 and 9001 (TiDB's "TiKV server timeout", "PD server timeout")
// instead of hanging, and work again, with the data, once the node is
// back.
func TestUnreachableNodesGiveClearErrors(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 1, "--kv-timeout", "1s", "--pd-timeout", "1s")
	db := openDB(t, c.sql.addr, "", true)
	db.SetMaxIdleConns(0) // a fresh connection per statement: nothing cached in a session
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "INSERT INTO d.t VALUES (1, 10), (2, 20)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	wantCode := func(code uint16, what string, err error) {
		t.Helper()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != code {
			t.Fatalf("%s: %v, want MySQL error %d\n%s", what, err, code, c.logs())
		}
		t.Logf("%s: %v", what, err)
	}
	sum := func() (int64, error) {
		var s int64
		err := db.QueryRowContext(ctx, "SELECT SUM(v) FROM d.t").Scan(&s)
		return s, err
	}

	c.kvs[0].kill()
	_, err := db.ExecContext(ctx, "INSERT INTO d.t VALUES (3, 30)")
	wantCode(9002, "insert with the kv node down", err)
	_, err = sum()
	wantCode(9002, "read with the kv node down", err)
	c.kvs[0].start()
	if s, err := sum(); err != nil || s != 30 {
		t.Fatalf("sum after the kv node's restart: %d %v, want 30", s, err)
	}

	c.pd.kill()
	_, err = db.ExecContext(ctx, "INSERT INTO d.t VALUES (3, 30)")
	wantCode(9001, "insert with pd down", err)
	c.pd.start()
	if _, err := db.ExecContext(ctx, "INSERT INTO d.t VALUES (3, 30)"); err != nil {
		t.Fatalf("insert after pd's restart: %v", err)
	}
	if s, err := sum(); err != nil || s != 60 {
		t.Fatalf("sum: %d %v, want 60", s, err)
	}
}

// TestQuorumLossGivesRegionUnavailable: with two of the region's three
// KV nodes SIGKILLed, statements fail with MySQL error 9005 (TiDB's
// "Region is unavailable"), well before the SQL node's 15 s retry
// deadline (pd routes to the live replica once the leader's store stops
// heartbeating, and that replica, leaderless for two election timeouts
// without hearing from a quorum, answers that the region is unavailable);
// with one of them back, the region has a quorum again, reads succeed
// once the two elected a leader, and the data is there. The time from the
// kills to the error is logged, not asserted.
func TestQuorumLossGivesRegionUnavailable(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	db := openDB(t, c.sql.addr, "", true)
	db.SetMaxIdleConns(0)
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "INSERT INTO d.t VALUES (1, 10), (2, 20)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	leader := c.leader(t)
	other := c.other(leader)
	leader.kill()
	other.kill()
	killed := time.Now()
	var sum int64
	err := db.QueryRowContext(ctx, "SELECT SUM(v) FROM d.t").Scan(&sum)
	took := time.Since(killed)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 9005 {
		t.Fatalf("read with two of three kv nodes down: %v, want MySQL error 9005\n%s", err, c.logs())
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO d.t VALUES (3, 30)"); !errors.As(err, &me) || me.Number != 9005 {
		t.Fatalf("insert with two of three kv nodes down: %v, want MySQL error 9005", err)
	}
	other.start()
	// Until the two elect a leader (an election timeout or two), the
	// region may still answer that it is unavailable.
	var lastErr error
	waitFor(t, "reads with a quorum back", func() bool {
		lastErr = db.QueryRowContext(ctx, "SELECT SUM(v) FROM d.t").Scan(&sum)
		return lastErr == nil
	}, func() string { return fmt.Sprintf("%v\n%s", lastErr, c.logs()) })
	if sum != 30 {
		t.Fatalf("sum with a quorum back: %d, want 30", sum)
	}
	t.Logf("error %d %q %v after the kills", me.Number, me.Message, took.Round(time.Millisecond))
	leader.start()
	c.stop()
}

// TestStoppedLeaderHandsOver: the leader's KV node stopped with SIGTERM
// under the bank workload hands its leadership to an up-to-date follower
// (raft's leader transfer) before it exits, so the region has a new
// leader without waiting out an election timeout; restarted, it rejoins.
// Nothing acknowledged is lost. The time from the signal to the first
// read after the node exited is logged, not asserted.
func TestStoppedLeaderHandsOver(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	b := startBank(t, c)
	h, p := b.h, b.p
	leader := c.leader(t)
	waitFor(t, "a commit in flight", func() bool { return h.InFlight() > 0 }, c.logs)
	leader.stop()
	p.setMark()
	back := p.waitBack(t, "service after "+leader.name+" stopped", c.logs)
	if !strings.Contains(leader.log.String(), "raftstore: transferring leadership away") {
		t.Errorf("%s did not transfer its leadership\n%s", leader.name, leader.log)
	}
	b.progress(h.Len() + 30)
	leader.start()
	b.progress(h.Len() + 30)
	rep := b.finish()
	t.Logf("%s; reads back %v after %s (the leader's kv node) exited on SIGTERM; check: %s", h.Summary(), back.Round(time.Millisecond), leader.name, rep)
	c.stop()
}
