package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/percdb/percdb/tests/elle"
	"github.com/percdb/percdb/tests/testproc"
)

// Shape of the register workload: a few keys, each its own region, so
// that clients collide on every key and the keys' leaders are spread over
// the KV nodes.
const (
	regKeys    = 5
	regClients = 6
	// regOpTimeout bounds one statement: the client gives up and the
	// driver closes the connection, so that a write in flight during an
	// outage (the SQL node retries for up to 20 s) is one whose outcome
	// the client cannot know, recorded as unknown (a read is dropped).
	// It is shorter than an outage on purpose: such writes may still
	// commit after the client gave up, which porcupine must allow and the
	// history must not contradict. Not an assertion on time.
	regOpTimeout = time.Second
)

// registerLoad runs clients doing autocommit single-key reads, writes and
// compare-and-sets on regKeys rows through a SQL node, recording each
// operation with its call and return times and its outcome.
type registerLoad struct {
	t     *testing.T
	c     *cluster
	db    *sql.DB
	start time.Time

	mu      sync.Mutex
	ops     []regOp
	dropped int // reads that failed, and writes that certainly did not happen
	// lastOKCall is, per key, the latest call time of an operation that
	// completed with a known outcome.
	lastOKCall [regKeys]int64
	errs       map[string]int // error messages by count, for the report

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// now is the time since the run began on the monotonic clock, the time
// axis of the history.
func (l *registerLoad) now() int64 { return int64(time.Since(l.start)) }

// startRegisters creates the registers (all 0), splits them into a region
// each, and starts the clients.
func startRegisters(t *testing.T, c *cluster) *registerLoad {
	t.Helper()
	ctx := context.Background()
	setup := openDB(t, c.sql.addr, "", true)
	stmts := []string{"CREATE DATABASE lin", "CREATE TABLE lin.regs (k INT PRIMARY KEY, v BIGINT NOT NULL)"}
	for k := range regKeys {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO lin.regs VALUES (%d, 0)", k))
	}
	for _, q := range stmts {
		if _, err := setup.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, c.logs())
		}
	}
	var bys []string
	for k := 1; k < regKeys; k++ {
		bys = append(bys, fmt.Sprintf("(%d)", k))
	}
	var total int
	var ratio float64
	if err := setup.QueryRowContext(ctx, "SPLIT TABLE lin.regs BY "+strings.Join(bys, ", ")).Scan(&total, &ratio); err != nil {
		t.Fatalf("split: %v\n%s", err, c.logs())
	}
	l := &registerLoad{t: t, c: c, db: openDB(t, c.sql.addr, "lin", true), start: time.Now(), errs: map[string]int{}}
	var wctx context.Context
	wctx, l.cancel = context.WithCancel(ctx)
	for i := range regClients {
		l.wg.Go(func() { l.client(wctx, i) })
	}
	// A test that fails midway stops its clients before its processes go.
	t.Cleanup(func() {
		l.cancel()
		l.wg.Wait()
	})
	return l
}

// client runs operations until ctx ends: half reads, a quarter blind
// writes, a quarter compare-and-sets from the value the client last saw
// of the key. Every value written is unique, so that a CAS never stores
// the value it matched (MySQL would count no changed row).
func (l *registerLoad) client(ctx context.Context, id int) {
	rng := rand.New(rand.NewPCG(uint64(id), 15))
	var seen [regKeys]int64
	for seq := int64(1); ctx.Err() == nil; seq++ {
		o := regOp{client: id, key: rng.IntN(regKeys), val: int64(id+1)<<32 | seq}
		switch n := rng.IntN(4); {
		case n < 2:
			o.kind = regRead
		case n == 2:
			o.kind = regWrite
		default:
			o.kind, o.old = regCAS, seen[o.key]
		}
		octx, cancel := context.WithTimeout(ctx, regOpTimeout)
		o.call = l.now()
		err := l.run(octx, &o)
		o.ret = l.now()
		cancel()
		if ctx.Err() != nil {
			// The run ended under it. A write or CAS may still have
			// committed, and a read that returned before the end may
			// have seen it, so it is kept with an unknown outcome; a
			// read is dropped (record). Dropping it made a history whose
			// read saw a value nobody wrote (CI, session 41).
			l.record(o, fmt.Errorf("the run ended under the operation: %w", ctx.Err()))
			return
		}
		l.record(o, err)
		if err == nil && (o.kind != regCAS || o.swapped) {
			seen[o.key] = o.val
		}
	}
}

// run executes o and fills in its outcome.
func (l *registerLoad) run(ctx context.Context, o *regOp) error {
	switch o.kind {
	case regRead:
		err := l.db.QueryRowContext(ctx, "SELECT v FROM regs WHERE k = ?", o.key).Scan(&o.val)
		if errors.Is(err, sql.ErrNoRows) {
			o.val = -1 // a value nobody writes: porcupine flags the read
			return nil
		}
		return err
	case regWrite:
		_, err := l.db.ExecContext(ctx, "UPDATE regs SET v = ? WHERE k = ?", o.val, o.key)
		return err
	}
	res, err := l.db.ExecContext(ctx, "UPDATE regs SET v = ? WHERE k = ? AND v = ?", o.val, o.key, o.old)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	o.swapped = n == 1
	return err
}

// record adds o to the history: an operation that failed is dropped if it
// certainly had no effect (a read, or a write refused with a conflict),
// and kept with an unknown outcome otherwise (a broken connection or a
// timeout mid-commit: it may have committed).
func (l *registerLoad) record(o regOp, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.errs[err.Error()]++
		if o.kind == regRead || elle.DefinitelyAborted(err) {
			l.dropped++
			return
		}
		o.unknown, o.errMessage = true, err.Error()
	} else {
		l.lastOKCall[o.key] = max(l.lastOKCall[o.key], o.call)
	}
	l.ops = append(l.ops, o)
}

// len returns the number of operations recorded.
func (l *registerLoad) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ops)
}

// backSince reports whether every key had an operation called at or after
// mark complete with a known outcome, and if so how long after mark the
// last key's first such operation returned: how long the service of the
// keys took to come back.
func (l *registerLoad) backSince(mark int64) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.lastOKCall {
		if c < mark {
			return 0, false
		}
	}
	var first [regKeys]int64
	for _, o := range l.ops {
		if !o.unknown && o.call >= mark && (first[o.key] == 0 || o.ret < first[o.key]) {
			first[o.key] = o.ret
		}
	}
	var back int64
	for _, r := range first {
		back = max(back, r-mark)
	}
	return time.Duration(back), true
}

// summary describes the history so far.
func (l *registerLoad) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var reads, writes, cas, swapped, unknown, unknownSeen int
	// Values are unique: a read returning an unknown write's value shows
	// that the write took effect.
	read := map[int64]bool{}
	for _, o := range l.ops {
		if o.kind == regRead {
			read[o.val] = true
		}
	}
	for _, o := range l.ops {
		if o.unknown && read[o.val] {
			unknownSeen++
		}
		switch {
		case o.unknown:
			unknown++
		case o.kind == regRead:
			reads++
		case o.kind == regWrite:
			writes++
		default:
			cas++
			if o.swapped {
				swapped++
			}
		}
	}
	return fmt.Sprintf("%d operations on %d keys: %d reads, %d writes, %d CAS (%d swapped), %d of unknown outcome (%d of them read later, so they took effect); %d failed without effect; errors %v",
		len(l.ops), regKeys, reads, writes, cas, swapped, unknown, unknownSeen, l.dropped, l.errs)
}

// progress waits until the history holds n more operations.
func (l *registerLoad) progress(n int) {
	l.t.Helper()
	want := l.len() + n
	waitFor(l.t, "register workload progress", func() bool { return l.len() >= want }, func() string { return l.summary() + "\n" + l.c.logs() })
}

// outage takes m down (SIGKILL, or SIGTERM when stop), restarts it after
// pause (or, with a negative pause, once every key was served without it),
// and returns how long after the signal every key was served again.
func (l *registerLoad) outage(m *member, stop bool, pause time.Duration) time.Duration {
	t := l.t
	t.Helper()
	mark := l.now()
	if stop {
		m.stop()
	} else {
		m.kill()
	}
	wait := func(what string) time.Duration {
		var back time.Duration
		waitFor(t, what, func() bool {
			d, ok := l.backSince(mark)
			back = d
			return ok
		}, func() string { return l.summary() + "\n" + l.c.logs() })
		return back
	}
	if pause < 0 {
		back := wait("every key served without " + m.name)
		m.start()
		return back
	}
	time.Sleep(pause)
	m.start()
	return wait("every key served after " + m.name + "'s restart")
}

// regsLeaders returns, by KV node address, how many of the registers'
// regions it leads (as the SQL node's SHOW TABLE ... REGIONS says).
func regsLeaders(db *sql.DB) (map[string]int, error) {
	rows, err := db.Query("SHOW TABLE regs REGIONS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id, version int64
		var start, end, addr string
		if err := rows.Scan(&id, &start, &end, &version, &addr); err != nil {
			return nil, err
		}
		out[addr]++
	}
	return out, rows.Err()
}

// busiest returns the KV node leading the most of the registers' regions.
func (l *registerLoad) busiest(db *sql.DB) *member {
	l.t.Helper()
	leaders, err := regsLeaders(db)
	if err != nil {
		l.t.Fatalf("regions of the registers: %v\n%s", err, l.c.logs())
	}
	var best *member
	for _, m := range l.c.kvs {
		if best == nil || leaders[m.addr] > leaders[best.addr] {
			best = m
		}
	}
	return best
}

// TestRegistersLinearizable: clients do autocommit single-key reads,
// writes and compare-and-sets (UPDATE ... WHERE v = old) on five rows, a
// region each, through the SQL node of a cluster of three KV nodes, while
// pd moves the regions' leaderships (its leader balance, after the
// split), the busiest KV node is SIGKILLed (restarted once every key is
// served without it), another one is stopped with SIGTERM (it hands its
// leaderships over first) and restarted, and a third is SIGKILLed and
// restarted after 0.5 s. porcupine then checks the history against a
// register per key: every operation must take effect at one instant
// between its call and its return, an operation whose outcome the client
// could not know at any instant after its call or never. How long after
// each kill every key was served again is logged, not asserted.
func TestRegistersLinearizable(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	l := startRegisters(t, c)
	admin := openDB(t, c.sql.addr, "lin", true)
	l.progress(200)

	var spread map[string]int
	waitFor(t, "the registers' leaders spread over the three KV nodes", func() bool {
		m, err := regsLeaders(admin)
		spread = m
		return err == nil && len(m) == 3
	}, func() string { return fmt.Sprintf("leaders by node %v; %s\n%s", spread, l.summary(), c.logs()) })
	l.progress(200)

	killed := l.busiest(admin)
	killOut := l.outage(killed, false, -1)
	l.progress(200)
	stopped := l.busiest(admin)
	stopOut := l.outage(stopped, true, 0)
	if !strings.Contains(stopped.log.String(), "raftstore: transferring leadership away") {
		t.Errorf("%s did not transfer its leaderships when stopped\n%s", stopped.name, stopped.log)
	}
	l.progress(200)
	second := l.busiest(admin)
	secondOut := l.outage(second, false, 500*time.Millisecond)
	l.progress(200)

	l.cancel()
	l.wg.Wait()
	ops := l.summary()
	checked := time.Now()
	res, path, err := checkRegisters(l.ops, func() string { return visualizationDir(t) })
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(checked)
	t.Logf("%s; leaders by node after the split %v; every key served again %v after %s (busiest) was SIGKILLed, %v after %s was stopped (SIGTERM, leaderships handed over), %v after %s was SIGKILLed (restarted after 0.5 s); porcupine: %s in %v",
		ops, spread, killOut.Round(time.Millisecond), killed.name, stopOut.Round(time.Millisecond), stopped.name,
		secondOut.Round(time.Millisecond), second.name, res, took.Round(time.Millisecond))
	switch res {
	case porcupine.Illegal:
		t.Fatalf("the history is not linearizable; porcupine's visualization: %s", path)
	case porcupine.Unknown:
		t.Fatalf("porcupine did not decide within %v", linearizabilityTimeout)
	}
	c.stop()
}
