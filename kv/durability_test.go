package kv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// durabilityDirEnv, when set, makes TestDurability the child process that
// commits into that directory.
const durabilityDirEnv = "PERCDB_KV_DURABILITY_DIR"

// TestDurability commits a transaction in a child process with the default
// SyncWrites, kills the child with SIGKILL as soon as Commit has returned,
// and checks that the reopened store has the value.
func TestDurability(t *testing.T) {
	if dir := os.Getenv(durabilityDirEnv); dir != "" {
		commitAndWait(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDurability$")
	cmd.Env = append(os.Environ(), durabilityDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// The child blocks reading stdin; if this process dies, the pipe
	// closes and the child exits instead of lingering.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, readErr := bufio.NewReader(out).ReadString('\n')
	// Kill whatever happened: the child never exits on its own.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if readErr != nil || line != "committed\n" {
		t.Fatalf("child said %q, %v", line, readErr)
	}

	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := NewLocalClient(s).Get(context.Background(), s.Regions()[0].Ctx(), []byte("k"), MaxTS)
	if err != nil || string(v) != "durable" {
		t.Fatalf("after kill -9: got %q, %v; want \"durable\"", v, err)
	}
}

// commitAndWait is the child: it commits k=durable, says so on stdout, and
// blocks until killed (or its stdin closes).
func commitAndWait(t *testing.T, dir string) {
	ctx := context.Background()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Regions()[0].Ctx()
	resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte("k"), Value: []byte("durable")}}, Primary: []byte("k"), StartTS: 10, LockTTL: 1000})
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("prewrite: %v %v", resp, err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{[]byte("k")}, StartTS: 10, CommitTS: 20}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("committed")
	_, _ = io.Copy(io.Discard, os.Stdin)
	t.Fatal("stdin closed before the parent killed the child")
}
