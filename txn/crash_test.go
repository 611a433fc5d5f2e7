package txn

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn/txntest"
)

// crashTTL is the lock TTL of the transactions the crash tests abandon:
// short, since the tests wait for it to run out.
const crashTTL = 300 * time.Millisecond

// abandonedCommit commits pairs through a Store whose hooks make the
// client "die" at one point of the protocol, and returns the start_ts of
// the abandoned transaction.
func abandonedCommit(t *testing.T, e *testEnv, hooks *CommitHooks, pairs ...string) uint64 {
	t.Helper()
	ctx := context.Background()
	dying := e.newStore(t, Options{LockTTL: crashTTL, Hooks: hooks, EnableOnePC: new(false)})
	tx, _ := dying.Begin(ctx)
	for i := 0; i < len(pairs); i += 2 {
		_ = tx.Set([]byte(pairs[i]), []byte(pairs[i+1]))
	}
	if err := tx.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatalf("abandoned commit returned %v", err)
	}
	ts, _ := tx.StartTS(ctx)
	return ts
}

// waitExpired sleeps until a lock of the transaction startTS with crashTTL
// has expired by the oracle's clock (the oracle follows the wall clock).
func waitExpired(startTS uint64) {
	deadline := tso.Time(startTS).Add(crashTTL + 20*time.Millisecond)
	time.Sleep(time.Until(deadline))
}

// lockedBy reports whether the store holds a lock of transaction startTS
// on key, reading it at kv.MaxTS without resolving anything. (Locks of
// other transactions, such as the secondaries of a setup commit still
// being committed in the background, do not count.)
func lockedBy(t testing.TB, e *testEnv, key string, startTS uint64) bool {
	t.Helper()
	l := lockOn(t, e, key)
	return l != nil && l.StartTS == startTS
}

// lockOn returns the lock on key that blocks a read at kv.MaxTS, or nil,
// resolving nothing.
func lockOn(t testing.TB, e *testEnv, key string) *kv.LockInfo {
	t.Helper()
	ctx := context.Background()
	reg, err := e.client.LocateKey(ctx, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.client.Get(ctx, reg.Ctx(), []byte(key), kv.MaxTS)
	var locked *kv.KeyIsLockedError
	if errors.As(err, &locked) {
		return &locked.Lock
	}
	if err != nil {
		t.Fatal(err)
	}
	return nil
}

// lateCommit tries to commit the primary of an abandoned transaction, as
// its client would if it came back: it must fail once the transaction was
// rolled back.
func lateCommit(t *testing.T, e *testEnv, key string, startTS uint64) error {
	t.Helper()
	ctx := context.Background()
	reg, _ := e.client.LocateKey(ctx, []byte(key))
	commitTS, _ := e.oracle.GetTimestamp(ctx)
	return e.client.Commit(ctx, &kv.CommitRequest{Region: reg.Ctx(), Keys: [][]byte{[]byte(key)}, StartTS: startTS, CommitTS: commitTS})
}

func TestCrashAfterPrimaryPrewriteRollsBack(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	mustCommit(t, e.s, "a", "a0", "z", "z0", "b", "b0")
	startTS := abandonedCommit(t, e, &CommitHooks{
		AfterPrimaryPrewrite: func(uint64) error { return errAbandon },
	}, "a", "a1", "z", "z1")
	if !lockedBy(t, e, "a", startTS) || lockedBy(t, e, "z", startTS) {
		t.Fatal("want the primary a locked and the secondary z not prewritten")
	}
	// While the lock lives, readers see the previous commit without waiting.
	if v := pointGet(t, e.s, "a"); v != "a0" {
		t.Fatalf("point get a = %q", v)
	}
	r, _ := e.s.Begin(ctx)
	if v, _, _ := r.Get(ctx, []byte("a")); string(v) != "a0" {
		t.Fatalf("snapshot get a = %q", v)
	}

	waitExpired(startTS)
	// A writer meets the expired lock and rolls it back.
	mustCommit(t, e.s, "a", "a2")
	if err := lateCommit(t, e, "a", startTS); !isAborted(err) {
		t.Fatalf("late commit of the rolled back primary: %v", err)
	}
	if a, z, b := pointGet(t, e.s, "a"), pointGet(t, e.s, "z"), pointGet(t, e.s, "b"); a != "a2" || z != "z0" || b != "b0" {
		t.Fatalf("a=%q z=%q b=%q", a, z, b)
	}
}

func TestCrashAfterPrewriteRollsBack(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	mustCommit(t, e.s, "a", "a0", "z", "z0")
	startTS := abandonedCommit(t, e, &CommitHooks{
		AfterPrewrite: func(uint64) error { return errAbandon },
	}, "a", "a1", "z", "z1")
	if !lockedBy(t, e, "a", startTS) || !lockedBy(t, e, "z", startTS) {
		t.Fatal("want both keys locked")
	}
	if v := pointGet(t, e.s, "z"); v != "z0" {
		t.Fatalf("point get of the locked secondary = %q", v)
	}

	waitExpired(startTS)
	// A reader of the secondary asks the primary, finds it expired, and
	// rolls back both.
	r, _ := e.s.Begin(ctx)
	if got := readAll(t, r, "a", "", false); strings.Join(got, " ") != "a=a0 z=z0" {
		t.Fatalf("scan after expiry = %v", got)
	}
	if lockedBy(t, e, "a", startTS) || lockedBy(t, e, "z", startTS) {
		t.Fatal("locks left after the reader resolved them")
	}
	if err := lateCommit(t, e, "a", startTS); !isAborted(err) {
		t.Fatalf("late commit of the rolled back primary: %v", err)
	}
	mustCommit(t, e.s, "a", "a2", "z", "z2")
	if a, z := pointGet(t, e.s, "a"), pointGet(t, e.s, "z"); a != "a2" || z != "z2" {
		t.Fatalf("a=%q z=%q", a, z)
	}
}

func TestCrashAfterPrimaryCommitRollsForward(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	mustCommit(t, e.s, "a", "a0", "z", "z0", "y", "y0")
	startTS := abandonedCommit(t, e, &CommitHooks{
		AfterPrimaryCommit: func(uint64, uint64) error { return errAbandon },
	}, "a", "a1", "y", "y1", "z", "z1")
	if lockedBy(t, e, "a", startTS) || !lockedBy(t, e, "y", startTS) || !lockedBy(t, e, "z", startTS) {
		t.Fatal("want the primary committed and the secondaries locked")
	}
	// No TTL to wait for: the primary is committed, so readers roll the
	// secondaries forward at once, whichever way they read.
	if v := pointGet(t, e.s, "z"); v != "z1" {
		t.Fatalf("point get z = %q", v)
	}
	r, _ := e.s.Begin(ctx)
	if v, _, _ := r.Get(ctx, []byte("y")); string(v) != "y1" {
		t.Fatalf("snapshot get y = %q", v)
	}
	if lockedBy(t, e, "y", startTS) || lockedBy(t, e, "z", startTS) {
		t.Fatal("secondary locks left after readers met them")
	}
	r, _ = e.s.Begin(ctx)
	if got := readAll(t, r, "a", "", true); strings.Join(got, " ") != "a=a1 y=y1 z=z1" {
		t.Fatalf("scan = %v", got)
	}
}

// isAborted reports whether a commit failed because its transaction was
// rolled back.
func isAborted(err error) bool {
	var ta *kv.TxnAbortedError
	return errors.As(err, &ta)
}

// Environment of the child process of TestKill9MidCommit.
const (
	envKillDir   = "PERCDB_TXN_KILL9_DIR"
	envKillMode  = "PERCDB_TXN_KILL9_MODE"
	envKillFloor = "PERCDB_TXN_KILL9_FLOOR"
)

// TestKill9MidCommit kills a process in the middle of a commit to an
// on-disk store that syncs every write, reopens the store, and checks
// that the transaction is rolled forward (killed after its primary
// committed) or back (killed after prewrite). The stores keep no disk
// reserve: with the default (2% of the file system, up to 2 GiB, a
// ballast file each) the test failed with 1021 whenever the machine's
// shared disk had less than twice that free.
func TestKill9MidCommit(t *testing.T) {
	for _, mode := range []string{"after-primary-commit", "after-prewrite"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			oracle := txntest.NewClockOracle(0)
			ks, err := kv.Open(dir, kv.Options{ReserveSpace: -1})
			if err != nil {
				t.Fatal(err)
			}
			e := newEnvOn(t, ks, oracle, Options{}, "m")
			mustCommit(t, e.s, "a", "a0", "z", "z0")
			floor, _ := oracle.GetTimestamp(ctx)
			_ = e.s.Close()
			if err := ks.Close(); err != nil {
				t.Fatal(err)
			}

			cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.v")
			cmd.Env = append(os.Environ(), envKillDir+"="+dir, envKillMode+"="+mode, envKillFloor+"="+strconv.FormatUint(floor, 10))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("child did not die: %v\n%s", err, out)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child ended with %v, not SIGKILL\n%s", err, out)
			}
			startTS, lastTS := parseChild(t, out)

			ks, err = kv.Open(dir, kv.Options{ReserveSpace: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer ks.Close()
			// The restarted node learns a fresh timestamp before serving
			// 1PC commits (kv.Store.UpdateMaxReadTS).
			oracle = txntest.NewClockOracle(lastTS)
			now, _ := oracle.GetTimestamp(ctx)
			ks.UpdateMaxReadTS(now)
			e = newEnvOn(t, ks, oracle, Options{})

			if mode == "after-primary-commit" {
				if lockedBy(t, e, "a", startTS) || !lockedBy(t, e, "z", startTS) {
					t.Fatal("want the primary committed and the secondary locked at the crash")
				}
				if a, z := pointGet(t, e.s, "a"), pointGet(t, e.s, "z"); a != "a1" || z != "z1" {
					t.Fatalf("after restart a=%q z=%q, want the commit rolled forward", a, z)
				}
				return
			}
			if !lockedBy(t, e, "a", startTS) || !lockedBy(t, e, "z", startTS) {
				t.Fatal("the prewrite did not survive the crash")
			}
			waitExpired(startTS)
			r, _ := e.s.Begin(ctx)
			if got := readAll(t, r, "a", "", false); strings.Join(got, " ") != "a=a0 z=z0" {
				t.Fatalf("after restart %v, want the prewrite rolled back", got)
			}
			if err := lateCommit(t, e, "a", startTS); !isAborted(err) {
				t.Fatalf("late commit of the rolled back primary: %v", err)
			}
		})
	}
}

// parseChild reads the child's "ts <start> <last>" line.
func parseChild(t *testing.T, out []byte) (startTS, lastTS uint64) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "ts %d %d", &startTS, &lastTS); err == nil {
			return startTS, lastTS
		}
	}
	t.Fatalf("child printed no timestamps:\n%s", out)
	return 0, 0
}

// TestKill9Child is the process TestKill9MidCommit kills: it commits to
// the store in $PERCDB_TXN_KILL9_DIR and SIGKILLs itself at the point
// $PERCDB_TXN_KILL9_MODE names, after printing its timestamps.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv(envKillDir)
	if dir == "" {
		t.Skip("run by TestKill9MidCommit")
	}
	floor, err := strconv.ParseUint(os.Getenv(envKillFloor), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	die := func(startTS, lastTS uint64) error {
		fmt.Printf("ts %d %d\n", startTS, lastTS)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	hooks := &CommitHooks{}
	switch mode := os.Getenv(envKillMode); mode {
	case "after-primary-commit":
		hooks.AfterPrimaryCommit = die
	case "after-prewrite":
		hooks.AfterPrewrite = func(startTS uint64) error { return die(startTS, startTS) }
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	ks, err := kv.Open(dir, kv.Options{ReserveSpace: -1})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, ks, txntest.NewClockOracle(floor), Options{LockTTL: crashTTL, Hooks: hooks, EnableOnePC: new(false)})
	mustCommit(t, e.s, "a", "a1", "z", "z1")
	t.Fatal("the commit returned: the hook did not kill the process")
}
