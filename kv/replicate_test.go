package kv

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestWriteBatchEncoding: every kind of op, the lock key lists with the
// locks' kinds and the flags survive encode and decode; truncated and
// trailing bytes are errors, never a panic.
func TestWriteBatchEncoding(t *testing.T) {
	for _, wb := range []*writeBatch{
		{},
		{ops: []batchOp{{key: []byte("k"), value: []byte("v")}, {key: []byte("d"), delete: true},
			{key: []byte("a"), rangeEnd: []byte("z"), delete: true}, {key: []byte("e"), value: []byte{}}},
			lockPuts: [][]byte{[]byte("p")}, lockQuiet: []bool{false}, lockDels: [][]byte{[]byte("q"), []byte("r")}, volatile: true},
		{ops: []batchOp{{key: []byte{}, value: []byte("x")}}, collects: true},
		{lockPuts: [][]byte{[]byte("p"), []byte("q"), []byte("r")}, lockQuiet: []bool{true, false, true}},
	} {
		enc := wb.encode()
		got, err := decodeWriteBatch(enc)
		if err != nil {
			t.Fatalf("decode %x: %v", enc, err)
		}
		if len(wb.ops) == 0 {
			got.ops = nil
		}
		if !reflect.DeepEqual(got, wb) {
			t.Errorf("round trip: got %+v, want %+v", got, wb)
		}
		for i := range enc {
			if _, err := decodeWriteBatch(enc[:i]); !errors.Is(err, errCorruptBatch) {
				t.Errorf("truncated to %d of %d bytes: %v", i, len(enc), err)
			}
		}
		if _, err := decodeWriteBatch(append(enc, 0)); !errors.Is(err, errCorruptBatch) {
			t.Errorf("trailing byte: %v", err)
		}
	}
}

// TestWriteBatchVersions: a version 1 batch (no lock kinds: an older
// binary's, still in a raft log) decodes with every lock counted as one
// that may block; a batch without kinds encodes as locks that may block;
// an unknown version is refused, naming it.
func TestWriteBatchVersions(t *testing.T) {
	// version 1, no flags, one put op k=v, lock puts [p], lock dels [q].
	v1 := []byte{1, 0, 1, opPut, 1, 'k', 1, 'v', 1, 1, 'p', 1, 1, 'q'}
	wb, err := decodeWriteBatch(v1)
	if err != nil {
		t.Fatal(err)
	}
	want := &writeBatch{ops: []batchOp{{key: []byte("k"), value: []byte("v")}}, lockPuts: [][]byte{[]byte("p")}, lockDels: [][]byte{[]byte("q")}}
	if !reflect.DeepEqual(wb, want) {
		t.Fatalf("version 1: got %+v, want %+v", wb, want)
	}
	s := newLockSet()
	s.beforeApply(wb)
	if _, none := s.probeBlocking(); none {
		t.Fatal("a version 1 batch's lock does not count as blocking")
	}
	got, err := decodeWriteBatch((&writeBatch{lockPuts: [][]byte{[]byte("p")}}).encode())
	if err != nil || !reflect.DeepEqual(got.lockQuiet, []bool{false}) {
		t.Fatalf("a batch without kinds: quiet %v, %v", got.lockQuiet, err)
	}
	bad := append([]byte(nil), v1...)
	bad[0] = 3
	if _, err := decodeWriteBatch(bad); !errors.Is(err, errCorruptBatch) || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("version 3: %v", err)
	}
	bad = (&writeBatch{lockPuts: [][]byte{[]byte("p")}, lockQuiet: []bool{true}}).encode()
	bad[4] = 7 // version, flags, nops, nputs, then the quiet byte
	if _, err := decodeWriteBatch(bad); !errors.Is(err, errCorruptBatch) || !strings.Contains(err.Error(), "lock kind byte 7") {
		t.Fatalf("a lock kind byte of 7: %v", err)
	}
}

// recordingReplicator applies each batch to a list of stores, as a raft
// group applies it on every replica.
type recordingReplicator struct{ stores []*Store }

func (r *recordingReplicator) Replicate(ctx context.Context, batch []byte) error {
	for _, s := range r.stores {
		if err := s.ApplyReplicated(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

// TestReplicatedCommands: a transaction run on one store with a
// replicator in its context writes nothing there itself; applied through
// the replicator on two stores, both read the same committed value, and a
// lock written and resolved through it leaves no lock in either lock set.
func TestReplicatedCommands(t *testing.T) {
	leader, follower := openTestStore(t), openTestStore(t)
	rep := &recordingReplicator{}
	ctx := WithReplicator(context.Background(), rep)
	rc := leader.Regions()[0].Ctx()
	pw := &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte("k"), Value: []byte("v")}},
		Primary: []byte("k"), StartTS: 10, LockTTL: 3000}
	// Not applied anywhere: the replicator has no stores yet.
	if _, err := leader.Prewrite(ctx, pw); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.Get(context.Background(), rc, []byte("k"), 20); err != nil {
		t.Fatalf("the store applied the batch itself: %v", err)
	}
	rep.stores = []*Store{leader, follower}
	if _, err := leader.Prewrite(ctx, pw); err != nil {
		t.Fatal(err)
	}
	if err := leader.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{[]byte("k")}, StartTS: 10, CommitTS: 11}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"leader": leader, "follower": follower} {
		v, err := s.Get(context.Background(), s.Regions()[0].Ctx(), []byte("k"), 20)
		if err != nil || string(v) != "v" {
			t.Errorf("%s: get = %q, %v", name, v, err)
		}
		if s.locks.has([]byte("k")) {
			t.Errorf("%s: the lock set still holds the committed key", name)
		}
	}
}

// TestReplicatedLockKinds: a pessimistic lock taken through a replicator
// is in every replica's lock set as a lock that never blocks a read, so
// that a follower (a leader to be) keeps range reads on the fast path as
// the leader does; prewritten, it blocks on every replica.
func TestReplicatedLockKinds(t *testing.T) {
	leader, follower := openTestStore(t), openTestStore(t)
	ctx := WithReplicator(context.Background(), &recordingReplicator{stores: []*Store{leader, follower}})
	rc := leader.Regions()[0].Ctx()
	k := []byte("k")
	if _, err := leader.AcquirePessimisticLock(ctx, &AcquirePessimisticLockRequest{Region: rc, Keys: []PessimisticKey{{Key: k}},
		Primary: k, StartTS: 10, ForUpdateTS: 10, LockTTL: 3000}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"leader": leader, "follower": follower} {
		if !s.locks.has(k) {
			t.Fatalf("%s: the pessimistic lock is not in the lock set", name)
		}
		if _, none := s.locks.probeBlocking(); !none {
			t.Errorf("%s: a pessimistic lock counts as blocking range reads", name)
		}
	}
	if _, err := leader.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: k, Value: []byte("v"), Pessimistic: true}},
		Primary: k, StartTS: 10, ForUpdateTS: 10, LockTTL: 3000}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"leader": leader, "follower": follower} {
		if _, none := s.locks.probeBlocking(); none {
			t.Errorf("%s: a prewritten lock does not count as blocking range reads", name)
		}
	}
}
