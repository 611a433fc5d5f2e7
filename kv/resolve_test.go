package kv

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/percdb/percdb/kv/internal/txntypes"
)

// prewriteMany prewrites keys key(0..n-1) for transaction startTS, whose
// primary is key(0), in requests of at most 1,000 mutations.
func prewriteMany(t testing.TB, s *Store, startTS uint64, n int, key func(int) string) {
	t.Helper()
	ctx := context.Background()
	reg, err := s.LocateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < n; lo += 1000 {
		var muts []Mutation
		for i := lo; i < min(n, lo+1000); i++ {
			muts = append(muts, Mutation{Op: OpPut, Key: []byte(key(i)), Value: []byte("v")})
		}
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: reg.Ctx(), Mutations: muts, Primary: []byte(key(0)), StartTS: startTS, LockTTL: 3000, TxnSize: uint64(n)})
		if err != nil || len(resp.Errors) > 0 {
			t.Fatalf("prewrite: %v %v", err, resp)
		}
	}
}

// countLocks counts the locks of the store and those of txn startTS.
func countLocks(t testing.TB, s *Store, startTS uint64) (all, of int) {
	t.Helper()
	r := newMVCCReader(s.db)
	defer r.close()
	err := r.locks(nil, nil, false, func(_ []byte, l *txntypes.Lock) bool {
		all++
		if l.StartTS == startTS {
			of++
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return all, of
}

// TestResolveLockWholeRegion: ResolveLock without keys resolves every lock
// of its transaction in the region, over many batches, and no other
// transaction's; a scan meeting them reports at most MaxLocksPerResponse.
func TestResolveLockWholeRegion(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	const n = 5*resolveBatchKeys + 7
	prewriteMany(t, s, 100, n, func(i int) string { return fmt.Sprintf("k%06d", 2*i) })
	prewriteMany(t, s, 200, n/3, func(i int) string { return fmt.Sprintf("k%06d", 6*i+1) })
	reg, _ := s.LocateKey(nil)

	_, err := s.Scan(ctx, &ScanRequest{Region: reg.Ctx(), Version: 300, Limit: 10 * n})
	var locked *KeyIsLockedError
	if !errors.As(err, &locked) || len(locked.Locks()) != MaxLocksPerResponse {
		t.Fatalf("scan over %d locks: %v", n, err)
	}

	if err := s.ResolveLock(ctx, &ResolveLockRequest{Region: reg.Ctx(), StartTS: 100, CommitTS: 150}); err != nil {
		t.Fatal(err)
	}
	if all, of := countLocks(t, s, 100); of != 0 || all != n/3 {
		t.Fatalf("after resolving txn 100: %d locks, %d of txn 100; want %d, 0", all, of, n/3)
	}
	pairs, err := s.Scan(ctx, &ScanRequest{Region: reg.Ctx(), Version: 300, BypassLocks: []uint64{200}})
	if err != nil || len(pairs) != n {
		t.Fatalf("scan bypassing txn 200: %d pairs, %v; want %d", len(pairs), err, n)
	}

	// A cancelled context stops the resolution before its first batch.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.ResolveLock(cancelled, &ResolveLockRequest{Region: reg.Ctx(), StartTS: 200}); !errors.Is(err, context.Canceled) {
		t.Fatalf("resolve with a cancelled context: %v", err)
	}
	if _, of := countLocks(t, s, 200); of != n/3 {
		t.Fatalf("a cancelled resolve left %d of %d locks", of, n/3)
	}
	if err := s.ResolveLock(ctx, &ResolveLockRequest{Region: reg.Ctx(), StartTS: 200}); err != nil {
		t.Fatal(err)
	}
	if all, _ := countLocks(t, s, 200); all != 0 {
		t.Fatalf("%d locks left", all)
	}
	pairs, err = s.Scan(ctx, &ScanRequest{Region: reg.Ctx(), Version: 300})
	if err != nil || len(pairs) != n {
		t.Fatalf("final scan: %d pairs, %v; want %d (txn 200 rolled back)", len(pairs), err, n)
	}
}
