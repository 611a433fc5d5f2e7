package kv

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// TestWriteBatchEncoding: every kind of op, the lock key lists and the
// flags survive encode and decode; truncated and trailing bytes are
// errors, never a panic.
func TestWriteBatchEncoding(t *testing.T) {
	for _, wb := range []*writeBatch{
		{},
		{ops: []batchOp{{key: []byte("k"), value: []byte("v")}, {key: []byte("d"), delete: true},
			{key: []byte("a"), rangeEnd: []byte("z"), delete: true}, {key: []byte("e"), value: []byte{}}},
			lockPuts: [][]byte{[]byte("p")}, lockDels: [][]byte{[]byte("q"), []byte("r")}, volatile: true},
		{ops: []batchOp{{key: []byte{}, value: []byte("x")}}, collects: true},
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
