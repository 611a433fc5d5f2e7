package pd_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/tso"
)

// TestSilentPDIsUnreachable: a pd that takes connections and never
// answers (a partition that drops packets, a hung process) makes a
// request fail with *kv.RouterUnavailableError, which the SQL layer
// reports as 9001 "PD server timeout", also when the caller's deadline
// (the oracle's batch client gives each call 3 s) passes before the
// client's Timeout: it used to be a bare "context deadline exceeded",
// error 1105 to the client.
func TestSilentPDIsUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	}()
	c, err := pd.NewClient([]string{l.Addr().String()}, pd.ClientOptions{Timeout: time.Minute, AttemptTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var ru *kv.RouterUnavailableError
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if _, err := c.GetTimestamps(ctx, 1); !errors.As(err, &ru) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timestamps from a silent pd past the caller's deadline: %v, want *kv.RouterUnavailableError wrapping the deadline", err)
	}
	oracle := tso.NewBatchClient(c, tso.ClientOptions{Timeout: 300 * time.Millisecond})
	defer oracle.Close()
	if _, err := oracle.GetTimestamp(context.Background()); !errors.As(err, &ru) {
		t.Fatalf("timestamp through the batch client from a silent pd: %v, want *kv.RouterUnavailableError", err)
	}
	// A caller that gives up (KILL, the client gone) is not told pd is
	// unreachable.
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, ccancel)
	if _, err := c.GetTimestamps(cctx, 1); errors.As(err, &ru) || !errors.Is(err, context.Canceled) {
		t.Fatalf("timestamps from a silent pd, the caller cancelled: %v, want context.Canceled", err)
	}
}

// TestDownPDIsUnreachable: a pd that is down (its port refuses
// connections, as while it restarts) makes a request fail with
// *kv.RouterUnavailableError (9001) when the caller's deadline passes
// first, also when it passes while the client backs off between rounds
// of the members, where a refused connection leaves it most of the time:
// that gave a bare "context deadline exceeded", error 1105 to the client.
func TestDownPDIsUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	c, err := pd.NewClient([]string{addr}, pd.ClientOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ru *kv.RouterUnavailableError
	for _, d := range []time.Duration{300 * time.Millisecond, 700 * time.Millisecond, 1500 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		_, err := c.GetTimestamps(ctx, 1)
		cancel()
		if !errors.As(err, &ru) {
			t.Fatalf("timestamps from a pd that is down, past a caller's deadline of %v: %v, want *kv.RouterUnavailableError", d, err)
		}
	}
}
