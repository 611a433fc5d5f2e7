// Package testproc holds what the tests that run percdb as child
// processes share (tests/crash, tests/cluster): building the binary, and
// keeping the tail of a process' output to explain a failure.
package testproc

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// BuildPercdb builds cmd/percdb into a directory of the test and returns
// the binary's path.
func BuildPercdb(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "percdb")
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/percdb/percdb/cmd/percdb")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/percdb: %v\n%s", err, out)
	}
	return bin
}

// Tail keeps the last 64 KiB written to it: enough of a process' log to
// explain a failure. The zero value is ready. Safe for concurrent use.
type Tail struct {
	mu  sync.Mutex
	buf []byte
}

// tailSize is how much a Tail keeps.
const tailSize = 64 << 10

// Write implements io.Writer.
func (b *Tail) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailSize {
		b.buf = append([]byte{}, b.buf[len(b.buf)-tailSize:]...)
	}
	return len(p), nil
}

// String returns what is kept.
func (b *Tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
