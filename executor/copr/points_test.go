package copr_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
)

// TestRunPoints checks that RunPoints gives, for a set of row keys, the
// outputs Run gives over a range of each key in turn, in the store and
// over gRPC: rows missing skipped, a filter, a limit, and a transaction's
// buffered writes (a row inserted and a row deleted) seen.
func TestRunPoints(t *testing.T) {
	ctx := context.Background()
	// Odd ids and 999 have no row; 7 is inserted and 10 deleted by the
	// reading transaction in the buffered case.
	ids := []int64{0, 1, 4, 7, 10, 12, 18, 40, 999}
	all, filter := pairPrograms()
	limit := all
	limit.Limit = 2
	for name, s := range clients(t) {
		t.Run(name, func(t *testing.T) {
			tbl := evenRows(t, s, 110+int64(len(name))) // each store its own table
			keys := make([][]byte, len(ids))
			for i, id := range ids {
				keys[i] = tablecodec.RowKey(nil, tbl.ID, tablecodec.IntHandle(id))
			}
			for _, c := range []struct {
				name     string
				p        copr.Program
				buffered bool
				want     string
			}{
				{"all", all, false, "[[0 0] [4 2] [10 2] [12 0] [18 0] [40 2]] examined 6"},
				{"filter", filter, false, "[[4 2] [10 2] [40 2]] examined 6"},
				{"limit", limit, false, "[[0 0] [4 2]] examined 2"},
				{"buffered", all, true, "[[0 0] [4 2] [7 1] [12 0] [18 0] [40 2]] examined 6"},
			} {
				rd, err := s.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.buffered {
					insertAndDelete(t, rd, tbl, 7, 10)
				}
				out, err := copr.RunPoints(ctx, rd, tbl, keys, &c.p)
				rows, examined := drainRows(t, out, err, 2)
				if got := fmt.Sprint(rows, " examined ", examined); got != c.want {
					t.Errorf("%s: RunPoints: %s, want %s", c.name, got, c.want)
				}
				if c.p.Limit == 0 {
					// Run over each key's range gives the same rows.
					var each [][]any
					for _, id := range ids {
						r, err := tbl.HandleRange(executor.Bound{Values: []any{id}, Inclusive: true}, executor.Bound{Values: []any{id}, Inclusive: true})
						if err != nil {
							t.Fatal(err)
						}
						out, _, err := copr.Run(ctx, rd, tbl, r, &c.p)
						got, _ := drainRows(t, out, err, 2)
						each = append(each, got...)
					}
					if fmt.Sprint(each) != fmt.Sprint(rows) {
						t.Errorf("%s: RunPoints: %v; Run per key: %v", c.name, rows, each)
					}
				}
				_ = rd.Rollback(ctx)
			}
		})
	}
}

// drainRows reads every output of out (started with error err), rows of
// n columns, and returns them and the rows examined.
func drainRows(t *testing.T, out copr.Outputs, err error, n int) ([][]any, int64) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var rows [][]any
	for {
		data, err := out.Next(context.Background())
		if err == io.EOF {
			return rows, out.Examined()
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := copr.DecodeRows(data, n, func(r []any) error { rows = append(rows, r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
}
