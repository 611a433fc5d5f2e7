package kv

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// TestSplitCheckAndWithin: SplitCheck measures a range's records and
// finds the key at half of them; a GC, ScanLock or ResolveLock confined
// Within part of the store's region touches only that part (a KV node's
// raft region over a store that is one region).
func TestSplitCheckAndWithin(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.regions.all()[0].Ctx()
	put := func(key string, ts uint64, onePC bool) {
		t.Helper()
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: []byte(key), StartTS: ts, LockTTL: 3000,
			Mutations: []Mutation{{Op: OpPut, Key: []byte(key), Value: bytes.Repeat([]byte("v"), 300)}}, TryOnePC: onePC, MaxCommitTS: MaxTS})
		if err != nil || len(resp.Errors) > 0 {
			t.Fatalf("write %s: %v %v", key, err, resp)
		}
	}
	for i := range 100 {
		put(fmt.Sprintf("k%03d", i), 10, true)
		put(fmt.Sprintf("k%03d", i), 20, true)
	}
	size, middle, err := s.SplitCheck(ctx, []byte("k000"), []byte("k100"))
	if err != nil {
		t.Fatal(err)
	}
	if size < 100*2*300 || string(middle) != "k050" {
		t.Fatalf("split check of k000..k100: %d bytes, middle %q; want at least %d bytes and k050", size, middle, 100*2*300)
	}
	if size2, _, err := s.SplitCheck(ctx, []byte("k050"), nil); err != nil || size2 >= size || size2 == 0 {
		t.Fatalf("split check of k050..: %d bytes (%v), want part of %d", size2, err, size)
	}
	if _, m, err := s.SplitCheck(ctx, []byte("k007"), []byte("k008")); err != nil || m != nil {
		t.Fatalf("split check of one key: middle %q (%v), want none", m, err)
	}

	// GC within [k020, k030): only those keys lose their old version.
	within := &KeyRange{Start: []byte("k020"), End: []byte("k030")}
	resp, err := s.GC(ctx, &GCRequest{Region: rc, SafePoint: 30, Within: within})
	if err != nil {
		t.Fatal(err)
	}
	if resp.VersionsDeleted != 10 || resp.KeysScanned != 10 || resp.Next != nil {
		t.Fatalf("GC within k020..k030: %+v, want 10 keys scanned, 10 versions deleted", resp)
	}
	// Locks of one transaction on both sides of the range: ScanLock and
	// ResolveLock within it see only its own.
	for _, k := range []string{"k010", "k025", "k040"} {
		put(k, 40, false)
	}
	locks, err := s.ScanLock(ctx, &ScanLockRequest{Region: rc, MaxTS: 50, Within: within})
	if err != nil || len(locks.Locks) != 1 || string(locks.Locks[0].Key) != "k025" {
		t.Fatalf("ScanLock within k020..k030: %+v (%v), want the lock on k025", locks, err)
	}
	if err := s.ResolveLock(ctx, &ResolveLockRequest{Region: rc, StartTS: 40, Within: within}); err != nil {
		t.Fatal(err)
	}
	locks, err = s.ScanLock(ctx, &ScanLockRequest{Region: rc, MaxTS: 50})
	if err != nil || len(locks.Locks) != 2 || string(locks.Locks[0].Key) != "k010" || string(locks.Locks[1].Key) != "k040" {
		t.Fatalf("locks left after ResolveLock within k020..k030: %+v (%v), want k010 and k040", locks, err)
	}
}
