package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/tests/testproc"
)

// Bounds on waits for a process: generous, for two loaded cores; reaching
// one is a failure of the process (it did not start or stop), never a
// performance assertion.
const (
	startTimeout = 3 * time.Minute
	stopTimeout  = 3 * time.Minute
)

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		if handedOut.take(addr) {
			return addr
		}
	}
}

// handedOut is the addresses freeAddr returned in this test binary, so
// that it never returns one twice: a port closed after it was picked is
// free to the kernel's next pick, and two addresses of one member once
// came out the same (pd's listener and its status port: "bind: address
// already in use", TestDeadlockAcrossStores in a CI rehearsal).
var handedOut = addrSet{taken: map[string]bool{}}

// addrSet is a set of addresses safe for concurrent use.
type addrSet struct {
	mu    sync.Mutex
	taken map[string]bool
}

// take adds addr and reports whether it was not in the set.
func (s *addrSet) take(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken[addr] {
		return false
	}
	s.taken[addr] = true
	return true
}

// port returns the port of host:port addr.
func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// member is one process of the cluster: its command line, and while it
// runs, the process.
type member struct {
	t     *testing.T
	name  string
	bin   string
	args  []string
	ready *regexp.Regexp // the log line that says it serves
	// addr is the address the ready line names (group 1), if any.
	addr string
	// status is the member's status port (host:port), for pd and the
	// KV nodes.
	status string
	log    *testproc.Tail

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// start starts the member and waits until it logs its ready line. The
// process is killed when the test ends if it still runs, and dies with
// the test process.
func (m *member) start() {
	m.t.Helper()
	if m.log == nil {
		m.log = &testproc.Tail{}
	}
	if m.cmd != nil && m.status != "" {
		// A restart: while the member was down, its status port (picked
		// free from the ephemeral range) may have become a client
		// connection's local port, and a status port that cannot listen
		// fails the start. Take a free one again.
		for i, a := range m.args {
			if a == "--status-port" && i+1 < len(m.args) && m.args[i+1] != "0" {
				m.status = freeAddr(m.t)
				m.args[i+1] = port(m.t, m.status)
			}
		}
	}
	cmd := exec.Command(m.bin, m.args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	logTo := m.logWriter()
	cmd.Stdout = logTo
	if err := cmd.Start(); err != nil {
		m.t.Fatalf("start %s: %v", m.name, err)
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	exited := m.exited
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			_, _ = logTo.Write([]byte(line + "\n"))
			if g := m.ready.FindStringSubmatch(line); g != nil {
				addr := ""
				if len(g) > 1 {
					addr = g[1]
				}
				select {
				case ready <- addr:
				default:
				}
			}
		}
		_, _ = io.Copy(logTo, stderr)
		m.waitErr = cmd.Wait()
		close(exited)
	}()
	m.t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case addr := <-ready:
		if addr != "" {
			m.addr = addr
		}
	case <-exited:
		m.t.Fatalf("%s exited before serving: %v\n%s", m.name, m.waitErr, m.log)
	case <-time.After(startTimeout):
		m.t.Fatalf("%s did not log that it serves within %v\n%s", m.name, startTimeout, m.log)
	}
}

// envLogDir names a directory that receives every member's whole log
// (TestName-member.log, appended across restarts), for reading a failure
// whose tail (m.log keeps 64 KiB) does not go back far enough.
const envLogDir = "PERCDB_TEST_LOGDIR"

// logWriter returns where the member's output goes: its tail, and with
// envLogDir set, a file there too, closed when the test ends.
func (m *member) logWriter() io.Writer {
	dir := os.Getenv(envLogDir)
	if dir == "" {
		return m.log
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(m.t.Name()) + "-" + m.name + ".log"
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		m.t.Fatalf("%s: %v", envLogDir, err)
	}
	m.t.Cleanup(func() { _ = f.Close() })
	return io.MultiWriter(m.log, f)
}

// kill SIGKILLs the member and waits for it.
func (m *member) kill() {
	m.t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		m.t.Fatalf("kill %s: %v", m.name, err)
	}
	<-m.exited
	var ee *exec.ExitError
	if !errors.As(m.waitErr, &ee) {
		m.t.Fatalf("%s ended with %v, not by SIGKILL\n%s", m.name, m.waitErr, m.log)
	}
}

// stop asks the member to shut down (SIGTERM) and checks that it exits
// cleanly.
func (m *member) stop() {
	m.t.Helper()
	select {
	case <-m.exited:
		// It ended before it was asked to: say how, with its log, rather
		// than only that the signal found no process.
		m.t.Fatalf("%s exited before it was stopped: %v\n%s", m.name, m.waitErr, m.log)
	default:
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		m.t.Fatalf("signal %s: %v\n%s", m.name, err, m.log)
	}
	select {
	case <-m.exited:
	case <-time.After(stopTimeout):
		_ = m.cmd.Process.Kill()
		<-m.exited
		m.t.Fatalf("%s did not stop within %v of SIGTERM\n%s", m.name, stopTimeout, m.log)
	}
	if m.waitErr != nil {
		m.t.Fatalf("%s stopped with %v\n%s", m.name, m.waitErr, m.log)
	}
}

// cluster is a pd, KV nodes and a SQL node, each a process of the binary
// on 127.0.0.1.
type cluster struct {
	pd  *member
	kvs []*member
	sql *member
}

// startCluster starts pd, then kvs KV nodes one after the other (each
// region gets a replica on min(3, kvs) of them, placed once that many
// registered), then a SQL node given sqlArgs.
func startCluster(t *testing.T, bin string, kvs int, sqlArgs ...string) *cluster {
	t.Helper()
	return startClusterWith(t, bin, kvs, nil, nil, sqlArgs...)
}

// kvCapacity is the disk space each KV node of a test cluster reports as
// its capacity (a test's --capacity, given later, wins).
const kvCapacity = "4GiB"

// startClusterWith is startCluster with pdArgs given to pd and kvArgs to
// each KV node.
func startClusterWith(t *testing.T, bin string, kvs int, pdArgs, kvArgs []string, sqlArgs ...string) *cluster {
	t.Helper()
	dir := t.TempDir()
	pdAddr, pdStatus := freeAddr(t), freeAddr(t)
	c := &cluster{pd: &member{t: t, name: "pd", bin: bin, ready: regexp.MustCompile(`pd is the leader`), addr: pdAddr, status: pdStatus,
		args: []string{"pd", "--data-dir", filepath.Join(dir, "pd"), "--addr", pdAddr, "--replicas", strconv.Itoa(min(3, kvs)),
			"--peer-url", "http://" + freeAddr(t), "--client-url", "http://" + freeAddr(t), "--status-port", port(t, pdStatus),
			// The shared test machine's disk is often more than pd's
			// default 80% full, which would count every store low on
			// space; a test of that sets its own ratio or capacity.
			"--low-space-ratio", "0.99"}}}
	// Each KV node reports a capacity of its own (kvCapacity) rather than
	// the file system the test's nodes share: its free share, 4-7% on this
	// machine and moving with the rest of the suite, crossed pd's
	// balance margin (6% with the ratio above) and stopped
	// TestLowSpaceStoreIsEmptied's refill. Free space is then the
	// capacity less the node's data, unless the disk holds less.
	c.pd.args = append(c.pd.args, pdArgs...)
	c.pd.start()
	for i := 1; i <= kvs; i++ {
		addr, status := freeAddr(t), freeAddr(t)
		m := &member{t: t, name: fmt.Sprintf("kv%d", i), bin: bin, ready: regexp.MustCompile(`kv node serving`), addr: addr, status: status,
			args: append([]string{"kv", "--data-dir", filepath.Join(dir, fmt.Sprintf("kv%d", i)), "--addr", addr, "--pd", pdAddr, "--reserve-space", "0",
				"--status-port", port(t, status), "--capacity", kvCapacity}, kvArgs...)}
		m.start()
		c.kvs = append(c.kvs, m)
	}
	c.sql = &member{t: t, name: "sql", bin: bin, ready: regexp.MustCompile(`percdb listening.* addr=(127\.0\.0\.1:[0-9]+)`),
		args: append([]string{"sql", "--data-dir", filepath.Join(dir, "sql"), "--host", "127.0.0.1", "--port", "0",
			"--status-port", "0", "--pd", pdAddr, "--pd-status", pdStatus}, sqlArgs...)}
	c.sql.start()
	return c
}

// leader returns the KV node pd routes the first region to (its raft
// leader, as last reported to pd).
func (c *cluster) leader(t *testing.T) *member {
	t.Helper()
	pdc, err := pd.NewClient([]string{c.pd.addr}, pd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pdc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := pdc.GetRegion(ctx, nil)
	if err != nil {
		t.Fatalf("locate the first region: %v\n%s", err, c.logs())
	}
	for _, m := range c.kvs {
		if m.addr == r.Addr {
			return m
		}
	}
	t.Fatalf("pd routes the first region to %s, which is no kv node of the cluster", r.Addr)
	return nil
}

// other returns the first KV node that is not m.
func (c *cluster) other(m *member) *member {
	for _, k := range c.kvs {
		if k != m {
			return k
		}
	}
	return nil
}

// logs returns every member's log tail, for a failure.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, m := range append([]*member{c.pd, c.sql}, c.kvs...) {
		fmt.Fprintf(&b, "--- %s ---\n%s\n", m.name, m.log)
	}
	return b.String()
}

// stop stops the SQL node, the KV nodes and pd, each by SIGTERM.
func (c *cluster) stop() {
	c.sql.stop()
	for _, m := range c.kvs {
		m.stop()
	}
	c.pd.stop()
}
