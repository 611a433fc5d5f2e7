package kvrpc_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
)

// listingRouter is a fixedRouter that lists stores (kvrpc.StoreLister):
// the served one and any others.
type listingRouter struct {
	fixedRouter
	stores []string
}

func (r listingRouter) StoreAddrs(context.Context) ([]string, error) { return r.stores, nil }

// TestLockWaitInfo: a lock request waiting in a store is listed by
// LockWaitInfo in process and over the wire alike (key, waiter, holder);
// a listed store that cannot be reached is named in the error, which
// comes with the other stores' waits.
func TestLockWaitInfo(t *testing.T) {
	s := openStoreWith(t, kv.Options{LockWaitSlice: time.Hour})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	t.Cleanup(serve(s, lis))
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := gone.Addr().String()
	gone.Close()

	c := kvrpc.NewClient(listingRouter{fixedRouter{s, addr}, []string{addr}}, kvrpc.Options{})
	defer c.Close()
	ctx := context.Background()
	region, err := c.LocateKey(ctx, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	lock := func(ctx context.Context, startTS uint64, wait time.Duration) error {
		return lockKey(ctx, c, region, "k", startTS, wait)
	}
	if err := lock(ctx, 100, 0); err != nil {
		t.Fatal(err)
	}
	if waits, err := c.LockWaitInfo(ctx); err != nil || len(waits) != 0 {
		t.Fatalf("LockWaitInfo with no waiter: %v %v, want none", waits, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- lock(wctx, 200, time.Hour) }()
	defer func() {
		cancel()
		<-done
	}()

	var waits []kv.LockWait
	for len(waits) == 0 {
		if waits, err = c.LockWaitInfo(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	want := kv.LockWait{Key: []byte("k"), Txn: 200, LockTS: 100}
	same := func(ws []kv.LockWait) bool {
		return len(ws) == 1 && bytes.Equal(ws[0].Key, want.Key) && ws[0].Txn == want.Txn && ws[0].LockTS == want.LockTS
	}
	if !same(waits) {
		t.Fatalf("LockWaitInfo over gRPC: %+v, want %+v", waits, want)
	}
	if local, err := kv.NewLocalClient(s).LockWaitInfo(ctx); err != nil || !same(local) {
		t.Fatalf("LockWaitInfo in process: %+v %v, want %+v", local, err, want)
	}
	// The counts: one request waiting, one wait begun.
	counted := func(st kv.LockWaitStats) bool { return st.Waiting == 1 && st.Waits == 1 && st.Deadlocks == 0 }
	if st, err := c.LockWaitCounts(ctx); err != nil || !counted(st) {
		t.Fatalf("LockWaitCounts over gRPC: %+v %v, want 1 waiting, 1 wait", st, err)
	}
	if st, err := kv.NewLocalClient(s).LockWaitCounts(ctx); err != nil || !counted(st) {
		t.Fatalf("LockWaitCounts in process: %+v %v, want 1 waiting, 1 wait", st, err)
	}

	withDead := kvrpc.NewClient(listingRouter{fixedRouter{s, addr}, []string{dead, addr}}, kvrpc.Options{})
	defer withDead.Close()
	waits, err = withDead.LockWaitInfo(ctx)
	if err == nil || !strings.Contains(err.Error(), dead) || !same(waits) {
		t.Fatalf("LockWaitInfo with %s down: %+v %v, want the live store's wait and an error naming %s", dead, waits, err, dead)
	}
	if st, err := withDead.LockWaitCounts(ctx); err == nil || !strings.Contains(err.Error(), dead) || !counted(st) {
		t.Fatalf("LockWaitCounts with %s down: %+v %v, want the live store's counts and an error naming %s", dead, st, err, dead)
	}
}
