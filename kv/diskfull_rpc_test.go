package kv_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc/kvrpctest"
)

// TestDiskFullOverGRPC: a store that refuses a write because its storage
// holds writes on a full disk, or because a compaction can never fit,
// says which over gRPC as it does in process: the SQL node of a cluster
// gives the client the same clear error as the embedded one (sql maps
// Stalled and CannotCompact to their own messages). Reads go on.
func TestDiskFullOverGRPC(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cannotCompact bool
	}{{"stalled", false}, {"cannot compact", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := kv.Open(t.TempDir(), kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: 1 << 20,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c := kvrpctest.Loopback(t, s)
			reg, err := c.LocateKey(ctx, []byte("a"))
			if err != nil {
				t.Fatal(err)
			}
			prewrite := func(key string, ts uint64) error {
				_, err := c.Prewrite(ctx, &kv.PrewriteRequest{Region: reg.Ctx(), Mutations: []kv.Mutation{{Op: kv.OpPut, Key: []byte(key), Value: []byte("v")}},
					Primary: []byte(key), StartTS: ts, LockTTL: 3000, TxnSize: 1, AllowWhenDiskFull: true})
				return err
			}
			if err := prewrite("a", 10); err != nil {
				t.Fatal(err)
			}
			if err := c.Commit(ctx, &kv.CommitRequest{Region: reg.Ctx(), Keys: [][]byte{[]byte("a")}, StartTS: 10, CommitTS: 11}); err != nil {
				t.Fatal(err)
			}

			kv.StallOnFullDisk(s, tc.cannotCompact)
			err = prewrite("b", 20)
			var full *kv.DiskFullError
			if !errors.As(err, &full) {
				t.Fatalf("a prewrite while the storage holds writes: %v (%T); want *kv.DiskFullError", err, err)
			}
			if !full.Stalled || full.CannotCompact != tc.cannotCompact {
				t.Fatalf("over gRPC: %+v; want Stalled, CannotCompact %v", full, tc.cannotCompact)
			}
			if v, err := c.Get(ctx, reg.Ctx(), []byte("a"), 12); err != nil || string(v) != "v" {
				t.Fatalf("a read while the storage holds writes: %q, %v", v, err)
			}
		})
	}
}
