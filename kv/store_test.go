package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
	"github.com/percdb/percdb/tso"
)

// openTestStore opens an in-memory store closed at the end of the test.
func openTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestLocalClientTransaction runs a whole transaction through the Client
// contract: prewrite, a reader blocked by the lock, commit, reads on both
// sides of the commit timestamp.
func TestLocalClientTransaction(t *testing.T) {
	ctx := context.Background()
	c := NewLocalClient(openTestStore(t))
	reg, err := c.LocateKey(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	now := tso.FromTime(time.Now())
	start, commit := now+10, now+20
	resp, err := c.Prewrite(ctx, &PrewriteRequest{
		Region:    reg.Ctx(),
		Mutations: []Mutation{{Op: OpPut, Key: []byte("a"), Value: []byte("1")}, {Op: OpPut, Key: []byte("b"), Value: make([]byte, 300)}},
		Primary:   []byte("a"), StartTS: start, LockTTL: 3000,
	})
	if err != nil || len(resp.Errors) != 0 {
		t.Fatalf("prewrite: %v %v", resp, err)
	}
	var locked *KeyIsLockedError
	if _, err := c.Get(ctx, reg.Ctx(), []byte("a"), start+1); !errors.As(err, &locked) {
		t.Fatalf("get under a lock: got %v, want KeyIsLockedError", err)
	}
	if err := c.Commit(ctx, &CommitRequest{Region: reg.Ctx(), Keys: [][]byte{[]byte("a"), []byte("b")}, StartTS: start, CommitTS: commit}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, reg.Ctx(), []byte("a"), commit); err != nil || string(v) != "1" {
		t.Fatalf("get at commit_ts: %q %v", v, err)
	}
	if v, err := c.Get(ctx, reg.Ctx(), []byte("a"), commit-1); err != nil || v != nil {
		t.Fatalf("get below commit_ts: %q %v", v, err)
	}
	pairs, err := c.Scan(ctx, &ScanRequest{Region: reg.Ctx(), Start: []byte(""), Version: MaxTS})
	if err != nil || len(pairs) != 2 || len(pairs[1].Value) != 300 {
		t.Fatalf("scan: %v %v", pairs, err)
	}
}

// TestBadInput checks that malformed requests are errors naming the
// problem.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.Regions()[0].Ctx()
	for name, err := range map[string]error{
		"unknown op": func() error {
			_, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: []byte("a"), StartTS: 1, Mutations: []Mutation{{Op: Op(99), Key: []byte("a")}}})
			return err
		}(),
		"no primary": func() error {
			_, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, StartTS: 1, Mutations: []Mutation{{Op: OpPut, Key: []byte("a")}}})
			return err
		}(),
		"zero start_ts in rollback": s.BatchRollback(ctx, rc, [][]byte{[]byte("a")}, 0),
		"zero start_ts in cleanup":  s.Cleanup(ctx, rc, []byte("a"), 0, 0),
		"zero start_ts in resolve":  s.ResolveLock(ctx, &ResolveLockRequest{Region: rc}),
		"zero version in scan": func() error {
			_, err := s.Scan(ctx, &ScanRequest{Region: rc})
			return err
		}(),
		"scan end before start": func() error {
			_, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: []byte("b"), End: []byte("a"), Version: 1})
			return err
		}(),
		"zero start_ts in heartbeat": func() error {
			_, err := s.TxnHeartBeat(ctx, rc, []byte("a"), 0, 1)
			return err
		}(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if isContractError(err) {
			t.Errorf("%s: got protocol error %v, want a bad-input error", name, err)
		}
	}
	if _, err := Open("", Options{}); err == nil {
		t.Error("Open with no directory and not in memory: no error")
	}
	if _, err := Open("", Options{InMemory: true, SyncWrites: SyncMode(7)}); err == nil {
		t.Error("Open with an unknown sync mode: no error")
	}
}

// TestCorruptRecord checks that a corrupt record read by a command is an
// error, not a panic.
func TestCorruptRecord(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.Regions()[0].Ctx()
	var wb writeBatch
	// A corrupt lock record, written as putLock writes one (so that the
	// lock set knows of it).
	wb.put(keyspace.LockKey([]byte("a")), []byte{'P', 0x7f})
	wb.lockPuts = append(wb.lockPuts, []byte("a"))
	wb.put(keyspace.WriteKey([]byte("b"), 5), []byte{'?'})
	if err := s.applier.apply(ctx, &wb); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, rc, []byte("a"), 10); !errors.Is(err, txntypes.ErrCorrupt) {
		t.Errorf("get over a corrupt lock: %v", err)
	}
	if _, err := s.Get(ctx, rc, []byte("b"), 10); !errors.Is(err, txntypes.ErrCorrupt) {
		t.Errorf("get over a corrupt write: %v", err)
	}
	if _, err := s.Scan(ctx, &ScanRequest{Region: rc, Version: 10}); !errors.Is(err, txntypes.ErrCorrupt) {
		t.Errorf("scan over corrupt records: %v", err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{[]byte("a")}, StartTS: 1, CommitTS: 2}); !errors.Is(err, txntypes.ErrCorrupt) {
		t.Errorf("commit over a corrupt lock: %v", err)
	}
}

// TestReopen checks that data and region descriptors survive a close and
// reopen, and that max_read_ts does not (the node seeds it).
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	c := NewLocalClient(s)
	rc := s.Regions()[0].Ctx()
	if resp, err := c.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: []byte("a"), StartTS: 10, MaxCommitTS: 100, TryOnePC: true,
		Mutations: []Mutation{{Op: OpPut, Key: []byte("a"), Value: []byte("1")}}}); err != nil || resp.OnePCCommitTS == 0 {
		t.Fatalf("prewrite: %v %v", resp, err)
	}
	if _, err := c.Get(ctx, rc, []byte("a"), 50); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SplitRegion(ctx, []byte("m")); err != nil {
		t.Fatal(err)
	}
	want := s.Regions()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Regions(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("regions after reopen: %v, want %v", got, want)
	}
	right, err := s.LocateKey([]byte("z"))
	if err != nil || right.ID != want[1].ID {
		t.Fatalf("locate z: %v %v", right, err)
	}
	if v, err := s.Get(ctx, want[0].Ctx(), []byte("a"), 50); err != nil || string(v) != "1" {
		t.Fatalf("get after reopen: %q %v", v, err)
	}
	// A new region id is not reused after a restart.
	_, third, err := s.SplitRegion(ctx, []byte("t"))
	if err != nil || third.ID <= want[1].ID {
		t.Fatalf("split after reopen: %v %v", third, err)
	}
}

// TestClosed checks that commands on a closed store fail with ErrClosed.
func TestClosed(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Regions()[0].Ctx()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, rc, []byte("a"), 1); !errors.Is(err, ErrClosed) {
		t.Errorf("get: %v", err)
	}
	if err := s.BatchRollback(ctx, rc, [][]byte{[]byte("a")}, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("rollback: %v", err)
	}
	if _, _, err := s.SplitRegion(ctx, []byte("m")); !errors.Is(err, ErrClosed) {
		t.Errorf("split: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second close: %v", err)
	}
}

func TestRegionInfoEncoding(t *testing.T) {
	r := RegionInfo{ID: 7, Start: []byte("a"), End: nil, Epoch: RegionEpoch{ConfVer: 1, Version: 3}}
	got, err := decodeRegionInfo(encodeRegionInfo(r))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(r) {
		t.Fatalf("round trip of %v: %v, %v", r, got, err)
	}
	enc := encodeRegionInfo(r)
	for name, b := range map[string][]byte{
		"empty":     nil,
		"format":    append([]byte{9}, enc[1:]...),
		"truncated": enc[:len(enc)-1],
		"trailing":  append(append([]byte{}, enc...), 0),
		"zero id":   encodeRegionInfo(RegionInfo{}),
	} {
		if _, err := decodeRegionInfo(b); !errors.Is(err, errBadRegionInfo) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// TestScanAgreesWithGet writes keys with many versions (puts, deletes,
// Lock records, rollbacks; more than a forward scan steps over before it
// seeks) and checks that a scan at every timestamp, either direction,
// returns what Get returns for each key.
func TestScanAgreesWithGet(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.Regions()[0].Ctx()
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}
	ts := uint64(10)
	for round := 0; round < 14; round++ {
		for i, k := range keys {
			if (round+i)%4 == 3 {
				continue // some keys have fewer versions
			}
			m := Mutation{Op: OpPut, Key: k, Value: []byte(fmt.Sprintf("%s%d", k, round))}
			switch (round * (i + 1)) % 5 {
			case 1:
				m = Mutation{Op: OpDelete, Key: k}
			case 2:
				m = Mutation{Op: OpLock, Key: k}
			}
			start := ts
			ts += 2
			resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: []Mutation{m}, Primary: k, StartTS: start, LockTTL: 1000})
			if err != nil || len(resp.Errors) > 0 {
				t.Fatal(resp, err)
			}
			if (round+i)%6 == 5 {
				err = s.BatchRollback(ctx, rc, [][]byte{k}, start)
			} else {
				err = s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{k}, StartTS: start, CommitTS: start + 1})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for at := uint64(1); at <= ts+1; at++ {
		var want []KvPair
		for _, k := range keys {
			v, err := s.Get(ctx, rc, k, at)
			if err != nil {
				t.Fatal(err)
			}
			if v != nil {
				want = append(want, KvPair{Key: k, Value: v})
			}
		}
		for _, reverse := range []bool{false, true} {
			got, err := s.Scan(ctx, &ScanRequest{Region: rc, Version: at, Reverse: reverse})
			if err != nil {
				t.Fatal(err)
			}
			if reverse {
				slices.Reverse(got)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("scan at %d (reverse %v): %v, want %v", at, reverse, got, want)
			}
		}
	}
}
