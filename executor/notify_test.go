package executor

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// notifications returns the store's notify entries as "handle/observer".
// Reading each row key first settles its transaction: the row key is a
// secondary (index keys sort first), committed in the background, and a
// read rolls it forward, which writes its notify entries.
func notifications(t *testing.T, s *txn.Store, tbl *Table, handles ...int64) []string {
	t.Helper()
	ctx := context.Background()
	for _, h := range handles {
		if _, _, err := s.PointGet(ctx, tablecodec.RowKey(nil, tbl.ID, tablecodec.IntHandle(h))); err != nil {
			t.Fatal(err)
		}
	}
	entries, _, err := s.ScanNotify(ctx, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		_, h, err := tablecodec.DecodeRowKey(e.Key, false)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d/%s@%d", h.Int, e.Column, e.TS))
	}
	return out
}

// TestWritesNotifyWatches: inserts and deletes notify every watch of the
// table, updates the watches of the columns they change; a table without
// watches notifies nothing.
func TestWritesNotifyWatches(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	plain := usersTable(t)
	tbl := usersTable(t)
	tbl.Watches = []Watch{{Observer: "age", Columns: []int{colAge}}, {Observer: "all"}}
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	write := func(fn func(tx *txn.Txn) error) uint64 {
		t.Helper()
		tx := begin(t, s)
		if err := fn(tx); err != nil {
			t.Fatal(err)
		}
		commit(t, tx)
		return tx.CommitTS()
	}
	check := func(want ...string) {
		t.Helper()
		if got := notifications(t, s, tbl, 1, 2, 3); !slices.Equal(got, want) {
			t.Fatalf("notifications %v, want %v", got, want)
		}
	}
	h1, h2 := tablecodec.IntHandle(1), tablecodec.IntHandle(2)
	ann := user(1, "ann", "ann@x.org", int32(30))
	plainRow := user(2, "bob", "bob@x.org", int32(40))
	write(func(tx *txn.Txn) error { return AddRecord(ctx, tx, plain, h2, plainRow) })
	check()

	c1 := write(func(tx *txn.Txn) error { return AddRecord(ctx, tx, tbl, h1, ann) })
	check(fmt.Sprintf("1/age@%d", c1), fmt.Sprintf("1/all@%d", c1))

	ann2 := user(1, "ann", "ANN@x.org", int32(30)) // age unchanged
	c2 := write(func(tx *txn.Txn) error { return UpdateRecord(ctx, tx, tbl, h1, h1, ann, ann2) })
	check(fmt.Sprintf("1/age@%d", c1), fmt.Sprintf("1/all@%d", c2))

	write(func(tx *txn.Txn) error { return UpdateRecord(ctx, tx, tbl, h1, h1, ann2, ann2) })
	check(fmt.Sprintf("1/age@%d", c1), fmt.Sprintf("1/all@%d", c2))

	ann3 := user(1, "ann", "ANN@x.org", nil) // age to NULL
	c3 := write(func(tx *txn.Txn) error { return UpdateRecord(ctx, tx, tbl, h1, h1, ann2, ann3) })
	check(fmt.Sprintf("1/age@%d", c3), fmt.Sprintf("1/all@%d", c3))

	// A primary-key change deletes one row key and adds another.
	h3 := tablecodec.IntHandle(3)
	ann4 := user(3, "ann", "ANN@x.org", nil)
	c4 := write(func(tx *txn.Txn) error { return UpdateRecord(ctx, tx, tbl, h1, h3, ann3, ann4) })
	check(fmt.Sprintf("1/age@%d", c4), fmt.Sprintf("1/all@%d", c4), fmt.Sprintf("3/age@%d", c4), fmt.Sprintf("3/all@%d", c4))

	c5 := write(func(tx *txn.Txn) error { return RemoveRecord(ctx, tx, tbl, h3, ann4) })
	check(fmt.Sprintf("1/age@%d", c4), fmt.Sprintf("1/all@%d", c4), fmt.Sprintf("3/age@%d", c5), fmt.Sprintf("3/all@%d", c5))

	bad := usersTable(t)
	bad.Watches = []Watch{{Observer: "x", Columns: []int{9}}}
	if err := bad.Validate(); err == nil {
		t.Error("a watch of a missing column validated")
	}
	bad.Watches = []Watch{{Observer: "x"}, {Observer: "x"}}
	if err := bad.Validate(); err == nil {
		t.Error("two watches of one observer validated")
	}
}
