package txn

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tso"
)

// benchStore opens a Store over a kv store (in memory, or on disk syncing
// every write) with the real oracle and batching client of package tso.
func benchStore(b *testing.B, disk bool, splits ...string) *Store {
	b.Helper()
	ctx := context.Background()
	kopts := kv.Options{InMemory: true, SyncWrites: kv.SyncNone}
	if disk {
		kopts = kv.Options{SyncWrites: kv.SyncAlways}
	}
	ks, err := kv.Open(b.TempDir(), kopts)
	if err != nil {
		b.Fatal(err)
	}
	for _, sk := range splits {
		if _, _, err := ks.SplitRegion(ctx, []byte(sk)); err != nil {
			b.Fatal(err)
		}
	}
	ws, err := tso.OpenFileWindowStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	oracle, err := tso.Open(ctx, ws, tso.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tc := tso.NewBatchClient(oracle, tso.ClientOptions{})
	s := NewStore(kv.NewLocalClient(ks), tc, Options{})
	b.Cleanup(func() {
		_ = s.Close()
		tc.Close()
		oracle.Close()
		_ = ks.Close()
	})
	return s
}

// benchKeys are the keys the benchmarks write: 1000 rows.
func benchKey(i int) []byte { return fmt.Appendf(nil, "row%04d", i%1000) }

func loadRows(b *testing.B, s *Store) {
	b.Helper()
	ctx := context.Background()
	tx, _ := s.Begin(ctx)
	for i := range 1000 {
		_ = tx.Set(benchKey(i), []byte("value-of-a-row-of-about-sixty-bytes-like-a-sysbench-row-pad"))
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPointGet: an autocommit point read (no timestamp), and a point
// read in a transaction (one timestamp), of a row among 1000.
func BenchmarkPointGet(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, false)
	loadRows(b, s)
	b.Run("autocommit", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, ok, err := s.PointGet(ctx, benchKey(i*7)); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("txn", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			tx, _ := s.Begin(ctx)
			if _, ok, err := tx.Get(ctx, benchKey(i*7)); err != nil || !ok {
				b.Fatal(ok, err)
			}
			_ = tx.Commit(ctx)
		}
	})
}

// BenchmarkCommit: Begin + Set of n rows + Commit, in memory and on disk
// with synced writes. One region commits in one phase; "2pc" splits the
// rows over two regions.
func BenchmarkCommit(b *testing.B) {
	for _, disk := range []bool{false, true} {
		media := "mem"
		if disk {
			media = "disk-sync"
		}
		for _, c := range []struct {
			name   string
			keys   int
			splits []string
		}{
			{"1key-1pc", 1, nil},
			{"10keys-1pc", 10, nil},
			{"10keys-2pc", 10, []string{"row0500"}},
		} {
			b.Run(media+"/"+c.name, func(b *testing.B) {
				ctx := context.Background()
				s := benchStore(b, disk, c.splits...)
				loadRows(b, s)
				for i := 0; b.Loop(); i++ {
					tx, _ := s.Begin(ctx)
					for k := range c.keys {
						_ = tx.Set(benchKey(i*13+k*100), []byte("updated-value"))
					}
					if err := tx.Commit(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(media+"/1key-1pc-parallel", func(b *testing.B) {
			ctx := context.Background()
			s := benchStore(b, disk)
			loadRows(b, s)
			// Each goroutine writes its own rows: a goroutine descheduled
			// for long on a loaded machine would otherwise meet a row
			// another one wrapped around to, a real write conflict.
			var workers atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				w := workers.Add(1)
				for i := 0; pb.Next(); i++ {
					tx, _ := s.Begin(ctx)
					_ = tx.Set(fmt.Appendf(nil, "w%d-%s", w, benchKey(i)), []byte("updated-value"))
					if err := tx.Commit(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkPessimisticLockRows locks the 10 rows of a statement in a
// pessimistic transaction one LockKeys per row, as the SQL layer's table
// editor and SELECT ... FOR UPDATE do today (one AcquirePessimisticLock
// each), or all in one LockKeys (one request per region), then gives them
// back: what batching a statement's locks would save.
func BenchmarkPessimisticLockRows(b *testing.B) {
	for _, batched := range []bool{false, true} {
		b.Run(fmt.Sprintf("batched=%v", batched), func(b *testing.B) {
			s := benchStore(b, false)
			ctx := context.Background()
			keys := make([][]byte, 10)
			for i := 0; b.Loop(); i++ {
				tx, err := s.Begin(ctx)
				if err == nil {
					err = tx.SetPessimistic()
				}
				if err != nil {
					b.Fatal(err)
				}
				for j := range keys {
					keys[j] = benchKey(i*10 + j)
				}
				ts, err := tx.SnapshotTS(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if batched {
					err = tx.LockKeys(ctx, ts, keys...)
				}
				for j := 0; !batched && err == nil && j < len(keys); j++ {
					err = tx.LockKeys(ctx, ts, keys[j])
				}
				if err != nil {
					b.Fatal(err)
				}
				_ = tx.Rollback(ctx)
			}
		})
	}
}
