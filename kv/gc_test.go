package kv

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

var _ GCClient = localClient{}

// execGC runs the garbage collector's script commands (see TestDataDriven);
// ok is false for any other command.
func (h *scriptRunner) execGC(ctx context.Context, t *testing.T, d *datadriven.TestData) (out string, err error, ok bool) {
	switch d.Cmd {
	case "gc":
		req := &GCRequest{SafePoint: tsArg(t, d, "safe_point"), Start: []byte(optStrArg(t, d, "start"))}
		d.MaybeScanArgs(t, "limit", &req.Limit)
		req.Region = h.region(t, d, req.Start)
		var b strings.Builder
		var total GCResponse
		for batches := 1; ; batches++ {
			resp, err := h.s.GC(ctx, req)
			if err != nil {
				return b.String(), err, true
			}
			if !d.HasArg("all") {
				return fmtGC(resp), nil, true
			}
			total.Skipped = resp.Skipped
			total.KeysScanned += resp.KeysScanned
			total.VersionsDeleted += resp.VersionsDeleted
			total.BytesDeleted += resp.BytesDeleted
			if resp.Next == nil {
				return fmt.Sprintf("%d batches: %s", batches, fmtGC(&total)), nil, true
			}
			req.Start = resp.Next
		}
	case "scan_lock":
		req := &ScanLockRequest{MaxTS: tsArg(t, d, "max_ts"), Start: []byte(optStrArg(t, d, "start"))}
		d.MaybeScanArgs(t, "limit", &req.Limit)
		req.Region = h.region(t, d, req.Start)
		resp, err := h.s.ScanLock(ctx, req)
		if err != nil {
			return "", err, true
		}
		var b strings.Builder
		for _, l := range resp.Locks {
			fmt.Fprintf(&b, "%q: txn %s primary %q\n", l.Key, fmtTS(l.StartTS), l.Primary)
		}
		if resp.Next != nil {
			fmt.Fprintf(&b, "next %q\n", resp.Next)
		}
		return b.String(), nil, true
	case "destroy_range":
		_, err := h.s.UnsafeDestroyRange(ctx, []byte(strArg(t, d, "start")), []byte(optStrArg(t, d, "end")))
		return "", err, true
	case "gc_safe_point":
		return fmtTS(h.s.GCSafePoint()) + "\n", nil, true
	}
	return "", nil, false
}

func fmtGC(r *GCResponse) string {
	if r.Skipped {
		return "skipped (quiet)\n"
	}
	s := fmt.Sprintf("scanned %d keys, deleted %d versions, %d bytes", r.KeysScanned, r.VersionsDeleted, r.BytesDeleted)
	if r.Next != nil {
		s += fmt.Sprintf(", next %q", r.Next)
	}
	return s + "\n"
}

// TestGCCutsInsideAKey: a key with more garbage than one batch deletes is
// collected over several batches, each resuming at the key.
func TestGCCutsInsideAKey(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	key := []byte("k")
	const versions = maxGCBatchDeletes + 100
	for i := uint64(1); i <= versions; i++ {
		start := 2 * i
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: s.regions.all()[0].Ctx(), Primary: key, StartTS: start, LockTTL: 3000,
			Mutations: []Mutation{{Op: OpPut, Key: key, Value: []byte(fmt.Sprint(i))}}, TryOnePC: true, MaxCommitTS: MaxTS})
		if err != nil || len(resp.Errors) > 0 || resp.OnePCCommitTS == 0 {
			t.Fatalf("write version %d: %v %v", i, err, resp)
		}
	}
	sp := uint64(2*versions + 10)
	req := &GCRequest{Region: s.regions.all()[0].Ctx(), SafePoint: sp}
	var batches, deleted uint64
	for {
		resp, err := s.GC(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		batches++
		deleted += resp.VersionsDeleted
		if resp.Next == nil {
			break
		}
		if string(resp.Next) != "k" {
			t.Fatalf("batch %d resumes at %q, want k", batches, resp.Next)
		}
		req.Start = resp.Next
	}
	if batches != 2 || deleted != versions-1 {
		t.Fatalf("%d batches deleted %d versions, want 2 batches and %d", batches, deleted, versions-1)
	}
	v, err := s.Get(ctx, req.Region, key, sp)
	if err != nil || string(v) != fmt.Sprint(versions) {
		t.Fatalf("after GC: %q, %v; want the newest version", v, err)
	}
}

// TestGCCutsInsideADeletedKey: a deleted key with more garbage than one
// batch deletes stays deleted. Its Delete goes in the batch with the
// last of its older records: had it gone in the first, the next batch,
// resuming at the key, would have kept the newest Put below it as the
// key's value (it did: a Get at the safe point read "101").
func TestGCCutsInsideADeletedKey(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	key := []byte("k")
	const versions = maxGCBatchDeletes + 100
	rc := s.regions.all()[0].Ctx()
	for i := uint64(1); i <= versions; i++ {
		op := Mutation{Op: OpPut, Key: key, Value: []byte(fmt.Sprint(i))}
		if i == versions {
			op = Mutation{Op: OpDelete, Key: key}
		}
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: key, StartTS: 2 * i, LockTTL: 3000,
			Mutations: []Mutation{op}, TryOnePC: true, MaxCommitTS: MaxTS})
		if err != nil || len(resp.Errors) > 0 || resp.OnePCCommitTS == 0 {
			t.Fatalf("write version %d: %v %v", i, err, resp)
		}
	}
	sp := uint64(2*versions + 10)
	if deleted := collectAll(ctx, t, s, rc, sp); deleted != versions {
		t.Fatalf("GC deleted %d versions, want all %d", deleted, versions)
	}
	v, err := s.Get(ctx, rc, key, sp+5)
	if err != nil || v != nil {
		t.Fatalf("after GC: %q, %v; want the key deleted", v, err)
	}
	pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: key, Version: sp + 5})
	if err != nil || len(pairs) != 0 {
		t.Fatalf("after GC: scan %d pairs, %v; want none", len(pairs), err)
	}
}
