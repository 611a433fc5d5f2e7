package kvrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
)

// fixedRouter routes every key to one store's region map and address.
type fixedRouter struct {
	s    *kv.Store
	addr string
}

func (r fixedRouter) LocateKey(_ context.Context, key []byte) (kv.RegionInfo, error) {
	info, err := r.s.LocateKey(key)
	info.Addr = r.addr
	return info, err
}
func (r fixedRouter) InvalidateRegion(uint64)          {}
func (r fixedRouter) RegionAddr(uint64) (string, bool) { return r.addr, true }

func openStore(t *testing.T) *kv.Store {
	t.Helper()
	return openStoreWith(t, kv.Options{})
}

// openStoreWith opens an in-memory store with opts.
func openStoreWith(t *testing.T, opts kv.Options) *kv.Store {
	t.Helper()
	opts.InMemory, opts.SyncWrites = true, kv.SyncNone
	s, err := kv.Open("", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// serve serves s on lis until the returned stop is called.
func serve(s *kv.Store, lis net.Listener) (stop func()) {
	srv := grpc.NewServer()
	kvrpc.NewServer(s).Register(srv)
	go func() { _ = srv.Serve(lis) }()
	return srv.Stop
}

// servedClient serves an in-memory store over gRPC for the test's
// duration and returns a client of it and the region of key.
func servedClient(t *testing.T, key []byte) (*kvrpc.Client, kv.RegionInfo) {
	t.Helper()
	return servedClientOf(t, openStore(t), key)
}

// servedClientOf is servedClient over the store s.
func servedClientOf(t *testing.T, s *kv.Store, key []byte) (*kvrpc.Client, kv.RegionInfo) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(serve(s, lis))
	c := kvrpc.NewClient(fixedRouter{s, lis.Addr().String()}, kvrpc.Options{})
	t.Cleanup(func() { c.Close() })
	region, err := c.LocateKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return c, region
}

// TestStoreRestart: a command sent while its store is down is retried
// until the store is back, and answered then; past the client's deadline
// it fails with *kv.StoreUnavailableError instead of waiting on.
func TestStoreRestart(t *testing.T) {
	s := openStore(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	stop := serve(s, lis)
	ctx := context.Background()
	c := kvrpc.NewClient(fixedRouter{s, addr}, kvrpc.Options{UnavailableTimeout: time.Hour})
	defer c.Close()
	region, err := c.LocateKey(ctx, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, region.Ctx(), []byte("k"), 10); err != nil {
		t.Fatal(err)
	}
	stop()

	// Down: a client with a short deadline gives up with the typed error.
	short := kvrpc.NewClient(fixedRouter{s, addr}, kvrpc.Options{UnavailableTimeout: 50 * time.Millisecond})
	defer short.Close()
	_, err = short.Get(ctx, region.Ctx(), []byte("k"), 10)
	var su *kv.StoreUnavailableError
	if !errors.As(err, &su) || su.Addr != addr || su.Undetermined {
		t.Fatalf("Get on a stopped store: %v, want a determined *kv.StoreUnavailableError", err)
	}

	// A patient client's call waits for the restart.
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, region.Ctx(), []byte("k"), 10)
		done <- err
	}()
	lis2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer serve(s, lis2)()
	if err := <-done; err != nil {
		t.Fatalf("Get across a restart: %v", err)
	}
}

// lockKey takes a pessimistic lock on key for the transaction startTS,
// waiting up to wait for another's lock.
func lockKey(ctx context.Context, c kv.Client, region kv.RegionInfo, key string, startTS uint64, wait time.Duration) error {
	_, err := c.AcquirePessimisticLock(ctx, &kv.AcquirePessimisticLockRequest{
		Region: region.Ctx(), Keys: []kv.PessimisticKey{{Key: []byte(key)}}, Primary: []byte(key),
		StartTS: startTS, ForUpdateTS: startTS, LockTTL: 60_000, WaitTimeout: wait,
	})
	return err
}

// TestLockWaitHonoursContext: a pessimistic lock request waiting for
// another transaction's lock over the wire ends when its caller's context
// does, with the context's error.
func TestLockWaitHonoursContext(t *testing.T) {
	c, region := servedClient(t, []byte("k"))
	ctx := context.Background()
	lock := func(ctx context.Context, startTS uint64, wait time.Duration) error {
		return lockKey(ctx, c, region, "k", startTS, wait)
	}
	if err := lock(ctx, 100, 0); err != nil {
		t.Fatal(err)
	}
	// Without a wait the holder's lock is reported at once.
	var locked *kv.KeyIsLockedError
	if err := lock(ctx, 200, 0); !errors.As(err, &locked) || locked.Lock.StartTS != 100 {
		t.Fatalf("second locker: %v, want *kv.KeyIsLockedError of txn 100", err)
	}
	// With a long wait, cancelling the caller ends the call.
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- lock(wctx, 300, time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", err)
	}
}

// TestOnePCBrokenInFlight: a one-phase commit whose call breaks in flight
// is settled by its primary, not failed and not blindly sent again:
// applied before the break, it reports its commit; not applied, it is
// sent again and commits. The break is reported as grpc reports a stream
// whose connection closed under it (a "connection error", like a failed
// dial, but the request was sent) and as a bare transport error.
func TestOnePCBrokenInFlight(t *testing.T) {
	for _, tc := range []struct {
		applied bool
		msg     string
	}{
		{true, "error reading from server: EOF"},
		{false, "error reading from server: EOF"},
		{true, `connection error: desc = "error reading from server: EOF"`},
		{false, `connection error: desc = "error reading from server: EOF"`},
	} {
		applied := tc.applied
		t.Run(fmt.Sprintf("applied=%v/%s", applied, tc.msg), func(t *testing.T) {
			s := openStore(t)
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var broken atomic.Bool
			srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				if info.FullMethod != "/percdb.kv.KV/Prewrite" || !broken.CompareAndSwap(false, true) {
					return h(ctx, req)
				}
				if applied {
					if _, err := h(ctx, req); err != nil {
						return nil, err
					}
				}
				return nil, status.Error(codes.Unavailable, tc.msg)
			}))
			kvrpc.NewServer(s).Register(srv)
			go func() { _ = srv.Serve(lis) }()
			defer srv.Stop()
			c := kvrpc.NewClient(fixedRouter{s, lis.Addr().String()}, kvrpc.Options{})
			defer c.Close()
			ctx := context.Background()
			region, err := c.LocateKey(ctx, []byte("k"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Prewrite(ctx, &kv.PrewriteRequest{
				Region: region.Ctx(), Mutations: []kv.Mutation{{Op: kv.OpPut, Key: []byte("k"), Value: []byte("v")}},
				Primary: []byte("k"), StartTS: 100, LockTTL: 3000, TryOnePC: true, MaxCommitTS: 1000,
			})
			if err != nil || len(resp.Errors) != 0 || resp.OnePCCommitTS == 0 {
				t.Fatalf("prewrite: %+v %v, want a one-phase commit", resp, err)
			}
			if !broken.Load() {
				t.Fatal("the call was never broken")
			}
			v, err := c.Get(ctx, region.Ctx(), []byte("k"), resp.OnePCCommitTS)
			if err != nil || string(v) != "v" {
				t.Fatalf("read at the commit: %q %v", v, err)
			}
		})
	}
}

// TestValidateReadsOverGRPC: every change ValidateReads finds comes back
// through the client, in the store's order, with its commit_ts; none is
// an empty answer.
func TestValidateReadsOverGRPC(t *testing.T) {
	c, region := servedClient(t, []byte("a"))
	ctx := context.Background()
	var muts []kv.Mutation
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	for _, k := range keys {
		muts = append(muts, kv.Mutation{Op: kv.OpPut, Key: k, Value: []byte("v")})
	}
	resp, err := c.Prewrite(ctx, &kv.PrewriteRequest{Region: region.Ctx(), Mutations: muts, Primary: keys[0], StartTS: 10, LockTTL: 3000})
	if err != nil || len(resp.Errors) != 0 {
		t.Fatalf("prewrite: %v %v", err, resp)
	}
	if err := c.Commit(ctx, &kv.CommitRequest{Region: region.Ctx(), Keys: keys, StartTS: 10, CommitTS: 11}); err != nil {
		t.Fatal(err)
	}
	validate := func(from uint64) *kv.ValidateReadsResponse {
		t.Helper()
		resp, err := c.ValidateReads(ctx, &kv.ValidateReadsRequest{
			Region: region.Ctx(), Keys: [][]byte{[]byte("c"), []byte("z")},
			Ranges: []kv.KeyRange{{Start: []byte("a"), End: []byte("c")}}, From: from, To: 20,
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	got := validate(5)
	want := []kv.KeyChange{{Key: []byte("c"), CommitTS: 11}, {Key: []byte("a"), CommitTS: 11}, {Key: []byte("b"), CommitTS: 11}}
	if fmt.Sprint(got.Changes) != fmt.Sprint(want) || got.More {
		t.Fatalf("changes in (5, 20]: %v (more %v), want %v", got.Changes, got.More, want)
	}
	if got := validate(11); len(got.Changes) != 0 || got.More {
		t.Fatalf("changes in (11, 20]: %v (more %v), want none", got.Changes, got.More)
	}
}

// TestScanNotifyScannersOverGRPC: a scanner's name, its page's resume
// key, the entries left to another scanner and the trailing flag cross
// gRPC both ways, and ClearNotify ends a claim.
func TestScanNotifyScannersOverGRPC(t *testing.T) {
	c, region := servedClientOf(t, openStoreWith(t, kv.Options{ScannerLease: time.Hour}), []byte("a"))
	ctx := context.Background()
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	var muts []kv.Mutation
	for _, k := range keys {
		muts = append(muts, kv.Mutation{Op: kv.OpPut, Key: k, Value: []byte("v"), Notify: [][]byte{[]byte("obs")}})
	}
	if resp, err := c.Prewrite(ctx, &kv.PrewriteRequest{Region: region.Ctx(), Mutations: muts, Primary: keys[0], StartTS: 10, LockTTL: 3000}); err != nil || len(resp.Errors) != 0 {
		t.Fatalf("prewrite: %v %v", err, resp)
	}
	if err := c.Commit(ctx, &kv.CommitRequest{Region: region.Ctx(), Keys: keys, StartTS: 10, CommitTS: 11}); err != nil {
		t.Fatal(err)
	}
	page := func(scanner uint64, limit int, columns ...string) *kv.ScanNotifyResponse {
		t.Helper()
		req := &kv.ScanNotifyRequest{Region: region.Ctx(), Limit: limit, Scanner: scanner}
		for _, c := range columns {
			req.Columns = append(req.Columns, []byte(c))
		}
		resp, err := c.ScanNotify(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	show := func(r *kv.ScanNotifyResponse) string {
		var ks []string
		for _, e := range r.Entries {
			ks = append(ks, string(e.Key))
		}
		return fmt.Sprintf("%v resume %q skipped %d trailing %v", ks, r.Resume, r.Skipped, r.Trailing)
	}
	for _, step := range []struct {
		scanner uint64
		limit   int
		columns []string
		want    string
	}{
		{3, 2, []string{"other"}, `[] resume "b\x00" skipped 0 trailing false`}, // another observer's scanner: hands out and claims nothing
		{1, 2, nil, `[a b] resume "b\x00" skipped 0 trailing true`},             // scanner 3 reads next at b\x00
		{2, 0, []string{"obs"}, `[c] resume "" skipped 2 trailing true`},        // scanners 1 and 3 read next at b\x00
		{0, 0, nil, `[a b c] resume "" skipped 0 trailing false`},
	} {
		if got := show(page(step.scanner, step.limit, step.columns...)); got != step.want {
			t.Fatalf("scanner %d, limit %d: %s, want %s", step.scanner, step.limit, got, step.want)
		}
	}
	if err := c.ClearNotify(ctx, region.Ctx(), []kv.NotifyEntry{{Key: []byte("a"), Column: []byte("obs"), TS: 10}}); err != nil {
		t.Fatal(err)
	}
	// The entry stays (a newer commit set it: 11 > 10), but its claim ended.
	if got, want := show(page(2, 0)), `[a c] resume "" skipped 1 trailing true`; got != want {
		t.Fatalf("after ClearNotify of a: %s, want %s", got, want)
	}
}
