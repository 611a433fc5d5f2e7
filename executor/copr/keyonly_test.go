package copr_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc/kvrpctest"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// clients returns a transaction store over an in-memory store with the
// coprocessor, in process and over gRPC.
func clients(t *testing.T) map[string]*txn.Store {
	t.Helper()
	out, _ := clientsOf(t)
	return out
}

// clientsOf is clients with the store they share (a test splits its
// regions).
func clientsOf(t *testing.T) (map[string]*txn.Store, *kv.Store) {
	t.Helper()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone, Coprocessor: copr.Evaluator{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	oracle := txntest.NewClockOracle(0)
	out := map[string]*txn.Store{
		"local":  txn.NewStore(kv.NewLocalClient(ks), oracle, txn.Options{}),
		"remote": txn.NewStore(kvrpctest.Loopback(t, ks), oracle, txn.Options{}),
	}
	for _, s := range out {
		t.Cleanup(func() { _ = s.Close() })
	}
	return out, ks
}

// count runs COUNT(*), a program that reads no column, over r through
// tx and returns the count and whether it ran in process.
func count(t *testing.T, tx *txn.Txn, tbl *executor.Table, r executor.KeyRange) (int64, bool) {
	t.Helper()
	ctx := context.Background()
	p := &copr.Program{Aggregate: true, Aggs: []copr.Agg{{Func: copr.AggCountStar}}}
	out, local, err := copr.Run(ctx, tx, tbl, r, p)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	m := copr.NewMerger(p, nil)
	for {
		data, err := out.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(data); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := m.Each(func(_, aggs []any) error { n = aggs[0].(int64); return nil }); err != nil {
		t.Fatal(err)
	}
	return n, local
}

// TestCountKeysOnly counts rows with a program that reads no column, as
// COUNT(*) of a whole table is pushed down: over the rows (values past the
// short-value limit among them, which a key-only walk does not read) and
// over a secondary index's entries (NULLs included), in the store and
// over gRPC, after deletes, and in a transaction whose own writes the
// store cannot see (evaluated in process). Each count must be the rows'.
func TestCountKeysOnly(t *testing.T) {
	ctx := context.Background()
	tbl := indexedTable(t, 90, "c", 3)
	ix := &tbl.Indexes[0]
	for name, s := range clients(t) {
		t.Run(name, func(t *testing.T) {
			tbl := *tbl
			tbl.ID += int64(len(name)) // each store its own table
			rows := func(tx *txn.Txn) executor.KeyRange { return tbl.RowRange() }
			entries := func(tx *txn.Txn) executor.KeyRange {
				r, err := tbl.IndexRange(ix, executor.Bound{}, executor.Bound{})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			write := func(fn func(tx *txn.Txn)) {
				tx, err := s.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				fn(tx)
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			row := func(i int64) []any {
				var k any = i % 7
				if i%5 == 0 {
					k = nil
				}
				return []any{i, k, strings.Repeat("p", int(i%3)*200)} // some past 255 bytes
			}
			const n = 3000
			write(func(tx *txn.Txn) {
				for i := int64(1); i <= n; i++ {
					if err := executor.AddRecord(ctx, tx, &tbl, tablecodec.IntHandle(i), row(i)); err != nil {
						t.Fatal(err)
					}
				}
			})
			write(func(tx *txn.Txn) {
				for i := int64(1); i <= n; i += 10 {
					if err := executor.RemoveRecord(ctx, tx, &tbl, tablecodec.IntHandle(i), row(i)); err != nil {
						t.Fatal(err)
					}
				}
			})
			want := int64(n - n/10)
			tx, err := s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			for what, r := range map[string]func(*txn.Txn) executor.KeyRange{"rows": rows, "index entries": entries} {
				if got, local := count(t, tx, &tbl, r(tx)); got != want || local {
					t.Errorf("%s: count %d (in process %v), want %d in the store", what, got, local, want)
				}
			}
			// The transaction's own writes: one row added, one removed.
			if err := executor.AddRecord(ctx, tx, &tbl, tablecodec.IntHandle(n+1), row(n+1)); err != nil {
				t.Fatal(err)
			}
			if err := executor.RemoveRecord(ctx, tx, &tbl, tablecodec.IntHandle(2), row(2)); err != nil {
				t.Fatal(err)
			}
			for what, r := range map[string]func(*txn.Txn) executor.KeyRange{"rows": rows, "index entries": entries} {
				if got, local := count(t, tx, &tbl, r(tx)); got != want || !local {
					t.Errorf("%s with the transaction's writes: count %d (in process %v), want %d in process", what, got, local, want)
				}
			}
		})
	}
}
