package crash

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/percdb/percdb/sql/sqltest"
)

// Environment of the client process TestClientKilledMidCommit starts.
const (
	envClientAddr    = "PERCDB_CRASH_CLIENT_ADDR"
	envClientWorker  = "PERCDB_CRASH_CLIENT_FIRST_WORKER"
	envClientIDBase  = "PERCDB_CRASH_CLIENT_ID_BASE"
	envClientSeqBase = "PERCDB_CRASH_CLIENT_SEQ_BASE"
	envClientSeed    = "PERCDB_CRASH_CLIENT_SEED"
)

// clientLifetime bounds a client process that nobody kills: it stops by
// itself (and its parent then fails).
const clientLifetime = 3 * time.Minute

// TestClientKilledMidCommit starts client processes (this test binary
// again, running TestClientProcess) that run the workload against a
// percdb server in this process and report every transaction on stdout
// before sending its commit and after the answer. Each is SIGKILLed at a
// random moment, PERCDB_CRASH_CLIENT_KILLS times (default 3), with
// commits in flight; the server must stay consistent with what the dead
// client was told (Checker.Check), and a writer pass at the end must
// commit through anything the dead clients left.
func TestClientKilledMidCommit(t *testing.T) {
	kills := envInt(t, envClientKills, 3)
	rng := rand.New(rand.NewPCG(envSeed(t), 1))
	srv := sqltest.Start(t, "")
	cfg := Config{}.withDefaults()
	if err := Setup(context.Background(), openDB(t, srv.Addr(), ""), cfg); err != nil {
		t.Fatal(err)
	}
	h := NewHistory()
	for k := 1; k <= kills; k++ {
		c := startClient(t, srv.Addr(), map[string]string{
			envClientWorker:  strconv.Itoa((k - 1) * workers % cfg.Workers),
			envClientIDBase:  strconv.FormatInt(int64(k)*1e12, 10),
			envClientSeqBase: strconv.FormatInt(int64(k)*1e9, 10),
			envClientSeed:    strconv.FormatUint(rng.Uint64(), 10),
		})
		c.waitRecords(40)
		time.Sleep(time.Duration(rng.Int64N(int64(300 * time.Millisecond))))
		waitInFlight(t, c.inFlight)
		c.kill()
		ch, err := ReadHistory(bytes.NewReader(c.output()))
		if err != nil {
			t.Fatal(err)
		}
		h.Merge(ch)
		rep := check(t, srv.Addr(), cfg, h)
		t.Logf("client %d/%d killed after %s; %s", k, kills, ch.Summary(), rep)
	}
	db := openDB(t, srv.Addr(), cfg.Database)
	writeEverything(t, db, cfg, h, NewIDs(0))
	rep := check(t, srv.Addr(), cfg, h)
	t.Logf("%d client processes killed: %s; final check: %s", kills, h.Summary(), rep)
}

// clientProc is a client process of TestClientKilledMidCommit.
type clientProc struct {
	t   *testing.T
	cmd *exec.Cmd

	mu  sync.Mutex
	out bytes.Buffer

	exited  chan struct{}
	waitErr error
}

// startClient runs TestClientProcess in a new process with env.
func startClient(t *testing.T, addr string, env map[string]string) *clientProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestClientProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envClientAddr+"="+addr)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	dieWithParent(cmd)
	c := &clientProc{t: t, cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout = c
	cmd.Stderr = c
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a client process: %v", err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	killAtCleanup(t, cmd, c.exited)
	return c
}

// Write collects the process' output.
func (c *clientProc) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *clientProc) output() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.out.Bytes())
}

// waitRecords waits until the client has reported n records.
func (c *clientProc) waitRecords(n int) {
	c.t.Helper()
	deadline := time.Now().Add(progressTimeout)
	for bytes.Count(c.output(), []byte(recordPrefix)) < n {
		select {
		case <-c.exited:
			c.t.Fatalf("the client process ended by itself: %v\n%s", c.waitErr, c.output())
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the client process reported fewer than %d records within %v\n%s", n, progressTimeout, c.output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inFlight returns how many commits the client has reported sending
// and not yet reported answered, judging by the end of its output: 1 if
// its last record is a commit being sent, else 0.
func (c *clientProc) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.out.Bytes()
	end := bytes.LastIndexByte(out, '\n')
	if end < 0 {
		return 0
	}
	start := bytes.LastIndexByte(out[:end], '\n') + 1
	if line := out[start:end]; bytes.HasPrefix(line, []byte(recordPrefix)) && bytes.Contains(line, []byte(`"outcome":0`)) {
		return 1
	}
	return 0
}

// kill SIGKILLs the client and waits for it.
func (c *clientProc) kill() {
	c.t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
	if !killedBySIGKILL(c.waitErr) {
		c.t.Fatalf("the client process ended with %v, not by SIGKILL\n%s", c.waitErr, c.output())
	}
}

// TestClientProcess is the client process of TestClientKilledMidCommit:
// it runs the workload with `workers` workers against the server in
// $PERCDB_CRASH_CLIENT_ADDR and reports every transaction on stdout (see
// LineRecorder) until it is killed, or stops after clientLifetime.
func TestClientProcess(t *testing.T) {
	addr := os.Getenv(envClientAddr)
	if addr == "" {
		t.Skip("run by TestClientKilledMidCommit")
	}
	num := func(name string) int64 {
		n, err := strconv.ParseInt(os.Getenv(name), 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	seed, err := strconv.ParseUint(os.Getenv(envClientSeed), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", envClientSeed, err)
	}
	first, idBase, seqBase := int(num(envClientWorker)), num(envClientIDBase), num(envClientSeqBase)
	cfg := Config{}.withDefaults()
	pools := openPools(t, addr, cfg.Database)
	rec := NewLineRecorder(os.Stdout)
	seqs := make([]int64, workers)
	for i := range seqs {
		seqs[i] = seqBase
	}
	stop := runWorkers(t, pools, cfg, rec, NewIDs(idBase), rand.New(rand.NewPCG(seed, 0)), seqs, first)
	time.Sleep(clientLifetime)
	stop()
	fmt.Println("client process: not killed within", clientLifetime)
}
