package observe

import (
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
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// Environment of TestKilledProcessChild.
const (
	envKillDir   = "PERCDB_OBSERVE_KILL9_DIR"
	envKillFloor = "PERCDB_OBSERVE_KILL9_FLOOR"
)

// TestKilledProcessRerun: a process whose observer run is killed (SIGKILL)
// after the run's transaction prewrote its writes and acknowledgement
// leaves the notification and the run's locks; after a restart the next
// Runner resolves the dead run's locks and runs the observer again, and
// one run commits.
func TestKilledProcessRerun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ks, err := kv.Open(dir, kv.Options{ReserveSpace: -1})
	if err != nil {
		t.Fatal(err)
	}
	oracle := txntest.NewClockOracle(0)
	s := txn.NewStore(kv.NewLocalClient(ks), oracle, txn.Options{})
	e := &env{kv: ks, oracle: oracle, s: s}
	e.write(t, 7, "doc", "count")
	floor, _ := oracle.GetTimestamp(ctx)
	e.close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledProcessChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envKillDir+"="+dir, envKillFloor+"="+strconv.FormatUint(floor, 10))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child did not die: %v\n%s", err, out)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, not SIGKILL\n%s", err, out)
	}
	var startTS uint64
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "prewrote "); ok {
			startTS, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	if startTS == 0 {
		t.Fatalf("the child's run did not prewrite:\n%s", out)
	}

	ks, err = kv.Open(dir, kv.Options{ReserveSpace: -1})
	if err != nil {
		t.Fatal(err)
	}
	oracle = txntest.NewClockOracle(startTS)
	now, _ := oracle.GetTimestamp(ctx)
	ks.UpdateMaxReadTS(now)
	e = &env{kv: ks, oracle: oracle, s: txn.NewStore(kv.NewLocalClient(ks), oracle, txn.Options{})}
	defer e.close()
	if p := e.pending(t, "count"); p != 1 {
		t.Fatalf("%d notifications after the kill, want 1", p)
	}
	var c counter
	r := newRunner(t, e.s, Options{})
	if err := r.Register(ctx, Observer{Name: "count", Run: c.run}); err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	waitUntil(t, "the notification to clear", func() bool { return e.pending(t, "count") == 0 })
	stop()
	if got := e.committedRuns(t, 7); got != 1 {
		t.Errorf("%d committed runs after the restart, want 1", got)
	}
}

// TestKilledProcessChild is the process TestKilledProcessRerun kills: it
// runs the observer, whose commit kills the process once prewritten.
func TestKilledProcessChild(t *testing.T) {
	dir := os.Getenv(envKillDir)
	if dir == "" {
		t.Skip("run by TestKilledProcessRerun")
	}
	floor, err := strconv.ParseUint(os.Getenv(envKillFloor), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := kv.Open(dir, kv.Options{ReserveSpace: -1})
	if err != nil {
		t.Fatal(err)
	}
	hooks := &txn.CommitHooks{AfterPrewrite: func(startTS uint64) error {
		fmt.Printf("prewrote %d\n", startTS)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}}
	s := txn.NewStore(kv.NewLocalClient(ks), txntest.NewClockOracle(floor), txn.Options{LockTTL: 300 * time.Millisecond, Hooks: hooks, EnableOnePC: new(false)})
	var c counter
	r := New(s, Options{})
	if err := r.Register(context.Background(), Observer{Name: "count", Run: c.run}); err != nil {
		t.Fatal(err)
	}
	_ = r.Run(context.Background())
	t.Fatal("the runner returned: the hook did not kill the process")
}
