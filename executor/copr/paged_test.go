package copr

import (
	"context"
	"io"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// TestRunPaged reads the rows of a selective filter (1 row in 50 passes)
// as a reader that stops early does: the first outputs of RunPaged come
// after a few pages' rows are examined, where Run's first page examines
// the whole table; and read to the end both give the same rows, in the
// store and in process (a transaction with buffered writes in the
// range).
func TestRunPaged(t *testing.T) {
	ctx := context.Background()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone, Coprocessor: Evaluator{}})
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	s := txn.NewStore(kv.NewLocalClient(ks), txntest.NewClockOracle(0), txn.Options{})
	defer s.Close()
	tbl := &executor.Table{
		ID: 100, Name: "t",
		Columns:    []executor.Column{{ID: 1}, {ID: 2}},
		HandleKind: executor.HandleInt,
		PrimaryKey: []executor.IndexColumn{{Offset: 0}},
	}
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	const rows = 20000
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < rows; i++ {
		r := []any{i, i % 50}
		h, err := tbl.HandleOf(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := executor.AddRecord(ctx, tx, tbl, h, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// q = 7: rows 7, 57, 107, ...
	p := &Program{Columns: []int64{1, 2}, Filter: []Expr{cmp(OpEQ, CmpSigned, col(1), sconst(7))}, Output: []int{0}}
	firstOutput := func(out Outputs, err error) (rows int, examined int64) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		data, err := out.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := DecodeRows(data, 1, func([]any) error { rows++; return nil }); err != nil {
			t.Fatal(err)
		}
		return rows, out.Examined()
	}
	all := func(out Outputs, err error) (ids []int64) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		for {
			data, err := out.Next(ctx)
			if err == io.EOF {
				return ids
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := DecodeRows(data, 1, func(r []any) error { ids = append(ids, r[0].(int64)); return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, local := range []bool{false, true} {
		rd, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if local {
			// A buffered write past the table's rows: the program runs
			// in process over the transaction's iterator.
			r := []any{int64(rows + 1), int64(0)}
			h, _ := tbl.HandleOf(r)
			if err := executor.AddRecord(ctx, rd, tbl, h, r); err != nil {
				t.Fatal(err)
			}
		}
		run := func() (Outputs, error) {
			out, _, err := Run(ctx, rd, tbl, tbl.RowRange(), p)
			return out, err
		}
		paged := func() (Outputs, error) { return RunPaged(ctx, rd, tbl, tbl.RowRange(), p, 16) }
		n, examined := firstOutput(paged())
		if n != 16 || examined > 16*50 {
			t.Errorf("local %v: RunPaged's first output: %d rows, %d examined; want 16 rows, at most %d examined", local, n, examined, 16*50)
		}
		if n, examined := firstOutput(run()); n != rows/50 || examined < rows {
			t.Errorf("local %v: Run's first output: %d rows, %d examined; want %d, %d", local, n, examined, rows/50, rows)
		}
		want, got := all(run()), all(paged())
		if len(want) != rows/50 || len(got) != len(want) {
			t.Fatalf("local %v: Run gave %d rows, RunPaged %d; want %d", local, len(want), len(got), rows/50)
		}
		for i := range want {
			if got[i] != want[i] || want[i] != int64(i*50+7) {
				t.Fatalf("local %v: row %d: Run %d, RunPaged %d, want %d", local, i, want[i], got[i], i*50+7)
			}
		}
		_ = rd.Rollback(ctx)
	}
}
