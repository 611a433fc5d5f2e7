package kv

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestSnapshotChunkEncoding: pairs survive appendPair and eachPair;
// truncated chunks are errors, never a panic.
func TestSnapshotChunkEncoding(t *testing.T) {
	pairs := [][2]string{{"a", "1"}, {"bb", ""}, {"", "ccc"}}
	var chunk []byte
	for _, p := range pairs {
		chunk = appendPair(chunk, []byte(p[0]), []byte(p[1]))
	}
	var got [][2]string
	if err := eachPair(chunk, func(k, v []byte) error {
		got = append(got, [2]string{string(k), string(v)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(pairs) {
		t.Fatalf("got %q, want %q", got, pairs)
	}
	for i := range got {
		if got[i] != pairs[i] {
			t.Fatalf("got %q, want %q", got, pairs)
		}
	}
	for i := 1; i < len(chunk); i++ {
		if i == 4 || i == 8 {
			continue // a whole pair
		}
		if err := eachPair(chunk[:i], func(k, v []byte) error { return nil }); !errors.Is(err, errBadChunk) {
			t.Errorf("truncated to %d of %d bytes: %v", i, len(chunk), err)
		}
	}
}

// TestExportImportRange: the range [k1, k5) of one store, with a
// committed value and a lock, replaces the same range of another store
// (its own value and lock there dropped, its keys outside kept), in
// small chunks; a read of the follower's old locked key is no longer
// blocked, and the imported lock blocks a read as on the leader.
func TestExportImportRange(t *testing.T) {
	ctx := context.Background()
	src, dst := openTestStore(t), openTestStore(t)
	put := func(s *Store, key string, start, commit uint64) {
		t.Helper()
		rc := s.Regions()[0].Ctx()
		pw := &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte(key), Value: []byte(key + "@" + string(rune('0'+start%10)))}},
			Primary: []byte(key), StartTS: start, LockTTL: 3000}
		if _, err := s.Prewrite(ctx, pw); err != nil {
			t.Fatal(err)
		}
		if commit != 0 {
			if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{[]byte(key)}, StartTS: start, CommitTS: commit}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(src, "k2", 10, 11)
	put(src, "k3", 12, 0) // locked
	put(dst, "k1", 21, 22)
	put(dst, "k4", 23, 0) // locked
	put(dst, "k9", 25, 26)
	var chunks [][]byte
	if err := src.ExportRange(ctx, []byte("k1"), []byte("k5"), 8, func(c []byte) error {
		chunks = append(chunks, bytes.Clone(c))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("%d chunks: want several of 8 bytes", len(chunks))
	}
	if err := dst.ImportRange(ctx, []byte("k1"), []byte("k5"), chunks); err != nil {
		t.Fatal(err)
	}
	rc := dst.Regions()[0].Ctx()
	for _, c := range []struct{ key, want string }{{"k1", ""}, {"k2", "k2@0"}, {"k4", ""}, {"k9", "k9@5"}} {
		v, err := dst.Get(ctx, rc, []byte(c.key), 100)
		if err != nil || string(v) != c.want {
			t.Errorf("get %s: %q, %v; want %q", c.key, v, err, c.want)
		}
	}
	if _, err := dst.Get(ctx, rc, []byte("k3"), 100); !errors.As(err, new(*KeyIsLockedError)) {
		t.Errorf("get k3 (locked on the source): %v, want KeyIsLocked", err)
	}
	if dst.locks.has([]byte("k4")) || !dst.locks.has([]byte("k3")) {
		t.Errorf("lock set: k4 %t (want false), k3 %t (want true)", dst.locks.has([]byte("k4")), dst.locks.has([]byte("k3")))
	}
	bad := [][]byte{appendPair(nil, []byte("x"), nil)}
	if err := dst.ImportRange(ctx, []byte("k1"), []byte("k5"), bad); !errors.Is(err, errBadChunk) {
		t.Errorf("a key outside the range: %v", err)
	}
}
