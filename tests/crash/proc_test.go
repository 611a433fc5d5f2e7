package crash

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tests/testproc"
)

// Bounds on waits for the server process. They are generous, for two
// loaded cores: reaching one is a failure of the server (it did not start,
// or did not stop), never a performance assertion.
const (
	startTimeout = 3 * time.Minute
	stopTimeout  = 3 * time.Minute
)

// buildPercdb builds cmd/percdb for the test.
func buildPercdb(t *testing.T) string { return testproc.BuildPercdb(t) }

// serverProc is a percdb server running as a child process.
type serverProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	out  *testproc.Tail
	// exited is closed when the process has been waited for; waitErr is
	// then its exit status.
	exited  chan struct{}
	waitErr error
}

// listening matches the line percdb logs when it serves, for its address.
var listening = regexp.MustCompile(`percdb listening.* addr=(127\.0\.0\.1:[0-9]+)`)

// startServer starts the binary on data directory dir, on a free port of
// 127.0.0.1, and waits until it serves. The process is killed when the
// test ends if it still runs, and dies with the test process.
func startServer(t *testing.T, bin, dir string) *serverProc {
	t.Helper()
	return startServerWith(t, bin, dir, "--reserve-space", "0")
}

// startServerWith is startServer with the server's further flags.
func startServerWith(t *testing.T, bin, dir string, flags ...string) *serverProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--host", "127.0.0.1", "--port", "0", "--data-dir", dir}, flags...)...)
	dieWithParent(cmd)
	p := &serverProc{t: t, cmd: cmd, out: &testproc.Tail{}, exited: make(chan struct{})}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.out.Write([]byte(line + "\n"))
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
		// Drain whatever is left so that the child never blocks on a
		// full pipe (a line over the scanner's limit).
		_, _ = io.Copy(p.out, stderr)
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	killAtCleanup(t, cmd, p.exited)
	select {
	case p.addr = <-ready:
		return p
	case <-p.exited:
		t.Fatalf("percdb exited before serving: %v\n%s", p.waitErr, p.out)
	case <-time.After(startTimeout):
		t.Fatalf("percdb did not log that it listens within %v\n%s", startTimeout, p.out)
	}
	return nil
}

// kill SIGKILLs the server, calls then (which stops the clients, so that
// they do not go on failing to connect), and waits for the server.
func (p *serverProc) kill(then func()) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatalf("kill percdb: %v", err)
	}
	then()
	<-p.exited
	if !killedBySIGKILL(p.waitErr) {
		p.t.Fatalf("percdb ended with %v, not by SIGKILL\n%s", p.waitErr, p.out)
	}
}

// killedBySIGKILL reports whether a process' exit status (cmd.Wait's
// error) says SIGKILL ended it.
func killedBySIGKILL(waitErr error) bool {
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// killAtCleanup kills cmd when the test ends unless it has exited (closed
// exited) by then.
func killAtCleanup(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}) {
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
}

// stop asks the server to shut down (SIGTERM) and checks that it exits
// cleanly.
func (p *serverProc) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("signal percdb: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.t.Fatalf("percdb did not stop within %v of SIGTERM\n%s", stopTimeout, p.out)
	}
	if p.waitErr != nil {
		p.t.Fatalf("percdb stopped with %v\n%s", p.waitErr, p.out)
	}
}

// lockCount is what countLocks found: the locks that block reads, and the
// transactions they belong to.
type lockCount struct {
	locks, txns int
}

// countLocks counts the locks left in the key-value store of data
// directory dir, whose server must not be running. It works on a copy, so
// that the server's own recovery of the directory is what the next start
// exercises.
func countLocks(t *testing.T, dir string) lockCount {
	t.Helper()
	cp := t.TempDir()
	if err := copyDir(filepath.Join(dir, "kv"), cp); err != nil {
		t.Fatalf("copy the kv store: %v", err)
	}
	defer os.RemoveAll(cp)
	store, err := kv.Open(cp, kv.Options{SyncWrites: kv.SyncNone})
	if err != nil {
		t.Fatalf("open a copy of the kv store: %v", err)
	}
	defer store.Close()
	return countStoreLocks(t, store)
}

// copyDir copies the regular files under src into dst.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// envInt returns the integer in environment variable name, or def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", name, s)
	}
	return n
}

// envSeed returns the seed in PERCDB_CRASH_SEED, or a fresh one; the test
// logs it so that a failing run can be replayed (as far as timing allows).
func envSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envSeedName); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", envSeedName, s, err)
		}
	}
	t.Logf("seed %d (set %s to replay)", seed, envSeedName)
	return seed
}

const envSeedName = "PERCDB_CRASH_SEED"

// String makes lockCount print well in logs.
func (c lockCount) String() string {
	return fmt.Sprintf("%d locks of %d transactions", c.locks, c.txns)
}
