package tsorpc_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/tso/internal/tsotest"
	"github.com/percdb/percdb/tso/tsorpc"
)

// serve starts an oracle over store behind a TSO server on 127.0.0.1:0 and
// returns the oracle and the address; cleanup stops both.
func serve(t testing.TB, store tso.WindowStore, opts tso.Options) (*tso.Oracle, string) {
	t.Helper()
	o, err := tso.Open(context.Background(), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	tsorpc.NewServer(o).Register(g)
	served := make(chan error, 1)
	go func() { served <- g.Serve(lis) }()
	t.Cleanup(func() {
		g.Stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return o, lis.Addr().String()
}

func fileStore(t testing.TB) tso.WindowStore {
	t.Helper()
	s, err := tso.OpenFileWindowStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func dial(t testing.TB, addr string) *tsorpc.RemoteSource {
	t.Helper()
	r, err := tsorpc.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// TestEndToEnd runs concurrent callers through a BatchClient over gRPC and
// checks their timestamps against the oracle's own, issued before and
// after.
func TestEndToEnd(t *testing.T) {
	o, addr := serve(t, fileStore(t), tso.Options{})
	c := tso.NewBatchClient(dial(t, addr), tso.ClientOptions{})
	defer c.Close()

	before, err := o.GetTimestamps(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	const callers = 32
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	per := tsotest.Callers(t, callers, rounds, func(ctx context.Context, _ int) (uint64, uint32, error) {
		ts, err := c.GetTimestamp(ctx)
		return ts, 1, err
	})
	after, err := o.GetTimestamps(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	all := tsotest.CheckIssued(t, per)
	if len(all) != callers*rounds {
		t.Fatalf("%d timestamps for %d calls", len(all), callers*rounds)
	}
	if all[0] <= before || all[len(all)-1] >= after {
		t.Fatalf("remote timestamps [%d, %d] not between the oracle's %d and %d", all[0], all[len(all)-1], before, after)
	}
}

func TestBadCountReopensStream(t *testing.T) {
	_, addr := serve(t, fileStore(t), tso.Options{})
	r := dial(t, addr)
	first, err := r.GetTimestamps(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint32{0, tso.MaxCount + 1} {
		if _, err := r.GetTimestamps(context.Background(), n); !errors.Is(err, tso.ErrBadCount) {
			t.Fatalf("count %d: err %v, want ErrBadCount", n, err)
		}
	}
	// The error ended the stream; the next call opens a new one.
	next, err := r.GetTimestamps(context.Background(), tso.MaxCount)
	if err != nil {
		t.Fatal(err)
	}
	if next-tso.MaxCount+1 <= first {
		t.Fatalf("range ending %d after %d", next, first)
	}
}

// hungStore hangs every save while hang is set, until the save's ctx ends,
// telling saving when one starts.
type hungStore struct {
	tso.WindowStore
	hang   atomic.Bool
	saving chan struct{}
}

func (s *hungStore) Save(ctx context.Context, bound uint64) error {
	if !s.hang.Load() {
		return s.WindowStore.Save(ctx, bound)
	}
	select {
	case s.saving <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

type clock struct{ ms atomic.Int64 }

func (c *clock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

func TestCallerContextCancelsCall(t *testing.T) {
	var clk clock
	clk.ms.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	store := &hungStore{WindowStore: fileStore(t), saving: make(chan struct{}, 1)}
	_, addr := serve(t, store, tso.Options{SaveWindow: 10 * time.Millisecond, UpdateInterval: time.Hour, Now: clk.Now})
	r := dial(t, addr)
	if _, err := r.GetTimestamps(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	// Move the clock past the window: the oracle must save, and the
	// disk hangs, so the remote call waits.
	store.hang.Store(true)
	clk.ms.Add(time.Second.Milliseconds())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.GetTimestamps(ctx, 1)
		done <- err
	}()
	<-store.saving
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call: err %v, want context.Canceled", err)
	}
	// The canceled call's stream is gone; the next call opens another.
	store.hang.Store(false)
	if _, err := r.GetTimestamps(context.Background(), 1); err != nil {
		t.Fatalf("call after a canceled one: %v", err)
	}
}

func TestOracleClosedIsUnavailable(t *testing.T) {
	o, addr := serve(t, fileStore(t), tso.Options{})
	r := dial(t, addr)
	o.Close()
	if _, err := r.GetTimestamps(context.Background(), 1); status.Code(err) != codes.Unavailable {
		t.Fatalf("closed oracle: err %v, want code Unavailable", err)
	}
}

func TestDialUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	if r, err := tsorpc.Dial(context.Background(), addr); err == nil {
		r.Close()
		t.Fatalf("Dial(%s) with nobody listening succeeded", addr)
	}
}

func TestRemoteSourceClosed(t *testing.T) {
	_, addr := serve(t, fileStore(t), tso.Options{})
	r := dial(t, addr)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.GetTimestamps(context.Background(), 1); !errors.Is(err, tso.ErrClosed) {
		t.Fatalf("after Close: err %v, want ErrClosed", err)
	}
}

// BenchmarkBatchClientGRPC measures timestamps per second through a
// BatchClient over gRPC on loopback, with 64 concurrent callers.
func BenchmarkBatchClientGRPC(b *testing.B) {
	_, addr := serve(b, fileStore(b), tso.Options{})
	src := &tsotest.CountingSource{Source: dial(b, addr)}
	c := tso.NewBatchClient(src, tso.ClientOptions{})
	defer c.Close()
	tsotest.Bench(b, tsotest.BenchOptions{Callers: 64}, c.GetTimestamp)
	src.ReportBatching(b)
}

// BenchmarkRemoteSourceUnbatched is one caller, one timestamp per round
// trip: the latency of a round trip on loopback.
func BenchmarkRemoteSourceUnbatched(b *testing.B) {
	_, addr := serve(b, fileStore(b), tso.Options{})
	r := dial(b, addr)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.GetTimestamps(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ts/s")
}
