package kv

import (
	"context"
	"fmt"
	"testing"
)

// TestCompactRange: after GC deleted old versions (with the GC's own
// compaction off), a read of the write space steps over the tombstones
// and the records they delete; CompactRange through the in-process
// client's Compactor drops them, and every key still reads its newest
// version.
func TestCompactRange(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, GCCompactTombstones: -1, testingNoAutoCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc := s.Regions()[0].Ctx()
	keys := make([][]byte, 200)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%04d", i))
	}
	putVersions(ctx, t, s, rc, keys, 3)
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	deleted := collectAll(ctx, t, s, rc, 100)
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if points := writeSpacePoints(t, s); points != len(keys)+2*deleted {
		t.Fatalf("before compaction a read steps over %d points, want %d", points, len(keys)+2*deleted)
	}
	cp, ok := AsCompactor(Instrument(NewLocalClient(s), nil))
	if !ok {
		t.Fatal("the in-process client is not a Compactor")
	}
	if err := cp.CompactRange(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	if points := writeSpacePoints(t, s); points != len(keys) {
		t.Fatalf("after CompactRange a read steps over %d points, want %d", points, len(keys))
	}
	pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[0], Version: 100})
	if err != nil || len(pairs) != len(keys) || string(pairs[0].Value) != "v3" {
		t.Fatalf("scan after CompactRange: %d pairs, err %v", len(pairs), err)
	}
}
