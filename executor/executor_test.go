package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
)

func TestAddAndRead(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := usersTable(t)
	d := decoder(t, tbl)
	rows := [][]any{
		user(1, "ann", "Ann@x.org", int32(30)),
		user(2, "bob", "bob@x.org", nil),
		user(3, "cat", "cat@x.org", int32(30)),
	}
	addRows(t, s, tbl, rows...)

	tx := begin(t, s)
	for _, r := range rows {
		got, found, err := GetRow(ctx, tx, tbl, d, tablecodec.IntHandle(r[colID].(int64)))
		if err != nil || !found || !reflect.DeepEqual(got, r) {
			t.Fatalf("GetRow(%d) = %v, %v, %v; want %v", r[colID], got, found, err, r)
		}
	}
	if _, found, err := GetRow(ctx, tx, tbl, d, tablecodec.IntHandle(9)); found || err != nil {
		t.Fatalf("GetRow of a missing row: found %v, err %v", found, err)
	}

	// Autocommit point reads without a timestamp see the same.
	got, found, err := GetRow(ctx, LatestReader{s}, tbl, d, tablecodec.IntHandle(2))
	if err != nil || !found || !reflect.DeepEqual(got, rows[1]) {
		t.Fatalf("GetRow via LatestReader = %v, %v, %v", got, found, err)
	}

	// Batch: missing handles are skipped, order and repeats kept.
	hs := []tablecodec.Handle{tablecodec.IntHandle(3), tablecodec.IntHandle(7), tablecodec.IntHandle(1), tablecodec.IntHandle(3)}
	batch, err := BatchGetRows(ctx, tx, tbl, d, hs)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range batch {
		ids = append(ids, r.Handle.Int)
		if r.Values[colID] != r.Handle.Int {
			t.Fatalf("row %v returned for handle %d", r.Values, r.Handle.Int)
		}
	}
	if !reflect.DeepEqual(ids, []int64{3, 1, 3}) {
		t.Fatalf("BatchGetRows handles = %v, want [3 1 3]", ids)
	}

	// Unique lookup goes through the collation: 'ANN@X.ORG' finds 'Ann@x.org'.
	email := tbl.Index(ixEmail)
	r, found, err := UniqueLookup(ctx, tx, tbl, email, d, []any{"ANN@X.ORG"})
	if err != nil || !found || !reflect.DeepEqual(r.Values, rows[0]) {
		t.Fatalf("UniqueLookup(ANN@X.ORG) = %v, %v, %v", r, found, err)
	}
	if _, found, err := UniqueLookup(ctx, tx, tbl, email, d, []any{"nobody"}); found || err != nil {
		t.Fatalf("UniqueLookup(nobody): found %v, err %v", found, err)
	}
	nameAge := tbl.Index(ixNameAge)
	if _, found, err := UniqueLookup(ctx, tx, tbl, nameAge, d, []any{"bob", nil}); found || err != nil {
		t.Fatalf("UniqueLookup with NULL must match nothing: found %v, err %v", found, err)
	}
	if _, _, err := UniqueLookup(ctx, tx, tbl, tbl.Index(ixAge), d, []any{int32(30)}); err == nil {
		t.Fatal("UniqueLookup on a non-unique index succeeded")
	}

	// A projection decodes only the columns asked, in the order asked.
	pd, err := tbl.NewRowDecoder([]int{colAge, colName})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err = GetRow(ctx, tx, tbl, pd, tablecodec.IntHandle(1))
	if err != nil || !reflect.DeepEqual(got, []any{int32(30), "ann"}) {
		t.Fatalf("projected GetRow = %v, %v", got, err)
	}
	if _, err := tbl.NewRowDecoder([]int{4}); err == nil {
		t.Fatal("NewRowDecoder accepted offset 4 of 4 columns")
	}
}

func TestDuplicateKeys(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := usersTable(t)
	addRows(t, s, tbl, user(1, "ann", "ann@x.org", int32(30)), user(2, "bob", "bob@x.org", nil))

	for _, tc := range []struct {
		name   string
		row    []any
		msg    string
		handle int64
	}{
		{"primary", user(1, "zed", "zed@x.org", nil), "Duplicate entry '1' for key 'users.PRIMARY'", 1},
		{"unique ci", user(5, "zed", "ANN@x.org", nil), "Duplicate entry 'ANN@x.org' for key 'users.email'", 1},
		{"composite", user(6, "ann", "new@x.org", int32(30)), "Duplicate entry 'ann-30' for key 'users.name_age'", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := begin(t, s)
			h, _ := tbl.HandleOf(tc.row)
			err := AddRecord(ctx, tx, tbl, h, tc.row)
			var dup *DuplicateKeyError
			if !errors.As(err, &dup) || err.Error() != tc.msg {
				t.Fatalf("AddRecord = %v, want %q", err, tc.msg)
			}
			if !dup.HandleKnown || dup.Handle.Int != tc.handle {
				t.Fatalf("duplicate names handle %v (known %v), want %d", dup.Handle, dup.HandleKnown, tc.handle)
			}
			if tx.Len() != 0 {
				t.Fatalf("a refused insert buffered %d writes", tx.Len())
			}
		})
	}

	// NULLs do not collide: (bob, NULL) may repeat.
	addRows(t, s, tbl, user(3, "bob", "bob2@x.org", nil))

	// A duplicate of a row written earlier in the same transaction.
	tx := begin(t, s)
	r := user(10, "dan", "dan@x.org", int32(1))
	if err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(10), r); err != nil {
		t.Fatal(err)
	}
	err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(11), user(11, "eve", "DAN@x.org", nil))
	if want := "Duplicate entry 'DAN@x.org' for key 'users.email'"; err == nil || err.Error() != want {
		t.Fatalf("in-transaction duplicate: %v, want %q", err, want)
	}
	commit(t, tx)
	if n := countKeys(t, s, tbl.ID); n != 4*4 {
		t.Fatalf("table holds %d keys, want 16 (4 rows, 3 index entries each)", n)
	}
}

// TestConcurrentDuplicate: two transactions insert the same unique email
// without seeing each other; only one commits.
func TestConcurrentDuplicate(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := usersTable(t)
	t1, t2 := begin(t, s), begin(t, s)
	for i, tx := range []*txn.Txn{t1, t2} {
		id := int64(i + 1)
		if _, err := tx.StartTS(ctx); err != nil {
			t.Fatal(err)
		}
		if err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(id), user(id, fmt.Sprint("n", id), "same@x.org", nil)); err != nil {
			t.Fatalf("statement-time check of txn %d: %v", id, err)
		}
	}
	commit(t, t1)
	err := t2.Commit(ctx)
	if _, isDup := DuplicateFromCommit(err, func(int64) *Table { return tbl }); !errors.Is(err, txn.ErrWriteConflict) && !isDup {
		t.Fatalf("second commit = %v, want a write conflict or a duplicate", err)
	}
	// The retry meets the duplicate at statement time.
	tx := begin(t, s)
	err = AddRecord(ctx, tx, tbl, tablecodec.IntHandle(2), user(2, "n2", "same@x.org", nil))
	var dup *DuplicateKeyError
	if !errors.As(err, &dup) || dup.Index != "email" || dup.Handle.Int != 1 {
		t.Fatalf("retry = %v, want a duplicate of row 1 on email", err)
	}
}

func TestDuplicateFromCommit(t *testing.T) {
	tbl := usersTable(t)
	byID := func(id int64) *Table {
		if id == tbl.ID {
			return tbl
		}
		return nil
	}
	rowKey := tablecodec.RowKey(nil, tbl.ID, tablecodec.IntHandle(42))
	vals, _ := tablecodec.EncodeKey(nil, "bob", int64(7))
	ixKey := tablecodec.IndexKey(nil, tbl.ID, ixNameAge, vals, true, false, tablecodec.Handle{})
	for key, want := range map[string]string{
		string(rowKey): "Duplicate entry '42' for key 'users.PRIMARY'",
		string(ixKey):  "Duplicate entry 'bob-7' for key 'users.name_age'",
	} {
		err := fmt.Errorf("commit txn 5: %w: %w", txn.ErrAlreadyExists, &kv.AlreadyExistsError{Key: []byte(key)})
		dup, ok := DuplicateFromCommit(err, byID)
		if !ok || dup.Error() != want {
			t.Errorf("DuplicateFromCommit(%x) = %v, %v; want %q", key, dup, ok, want)
		}
	}
	other := tablecodec.RowKey(nil, 5, tablecodec.IntHandle(1))
	if _, ok := DuplicateFromCommit(&kv.AlreadyExistsError{Key: other}, byID); ok {
		t.Error("DuplicateFromCommit attributed a key of an unknown table")
	}
	if _, ok := DuplicateFromCommit(errors.New("boom"), byID); ok {
		t.Error("DuplicateFromCommit accepted an unrelated error")
	}
}

func TestUpdateRecord(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := usersTable(t)
	d := decoder(t, tbl)
	ann, bob := user(1, "ann", "ann@x.org", int32(30)), user(2, "bob", "bob@x.org", int32(40))
	addRows(t, s, tbl, ann, bob)
	h1 := tablecodec.IntHandle(1)

	// A change of an unindexed value rewrites the row alone... there is
	// none in users, so change the case of the email: the ci key is equal.
	tx := begin(t, s)
	ann2 := user(1, "ann", "ANN@x.org", int32(30))
	if err := UpdateRecord(ctx, tx, tbl, h1, h1, ann, ann2); err != nil {
		t.Fatal(err)
	}
	if tx.Len() != 1 {
		t.Fatalf("update with unchanged index keys buffered %d writes, want 1 (the row)", tx.Len())
	}
	commit(t, tx)

	// A move to a taken unique value fails and writes nothing.
	tx = begin(t, s)
	err := UpdateRecord(ctx, tx, tbl, h1, h1, ann2, user(1, "ann", "Bob@x.org", int32(30)))
	var dup *DuplicateKeyError
	if !errors.As(err, &dup) || dup.Index != "email" || dup.Handle.Int != 2 || tx.Len() != 0 {
		t.Fatalf("UpdateRecord to a taken email = %v (buffered %d)", err, tx.Len())
	}
	// Changing age moves the age and name_age entries, not email's.
	ann3 := user(1, "ann", "ANN@x.org", int32(31))
	if err := UpdateRecord(ctx, tx, tbl, h1, h1, ann2, ann3); err != nil {
		t.Fatal(err)
	}
	if tx.Len() != 5 { // row, 2 deletes, 2 writes
		t.Fatalf("update of age buffered %d writes, want 5", tx.Len())
	}
	commit(t, tx)
	tx = begin(t, s)
	if r, found, err := UniqueLookup(ctx, tx, tbl, tbl.Index(ixNameAge), d, []any{"ann", int32(31)}); err != nil || !found || r.Handle.Int != 1 {
		t.Fatalf("lookup of the new name_age = %v, %v, %v", r, found, err)
	}
	if _, found, err := UniqueLookup(ctx, tx, tbl, tbl.Index(ixNameAge), d, []any{"ann", int32(30)}); err != nil || found {
		t.Fatalf("the old name_age entry survived: %v, %v", found, err)
	}

	// Changing the primary key moves the row; the new key is checked.
	h2, h7 := tablecodec.IntHandle(2), tablecodec.IntHandle(7)
	if err := UpdateRecord(ctx, tx, tbl, h2, h1, bob, user(1, "bob", "bob@x.org", int32(40))); err == nil || !strings.Contains(err.Error(), "users.PRIMARY") {
		t.Fatalf("moving row 2 onto row 1 = %v, want a PRIMARY duplicate", err)
	}
	bob7 := user(7, "bob", "bob@x.org", int32(40))
	if err := UpdateRecord(ctx, tx, tbl, h2, h7, bob, bob7); err != nil {
		t.Fatal(err)
	}
	commit(t, tx)
	tx = begin(t, s)
	if _, found, _ := GetRow(ctx, tx, tbl, d, h2); found {
		t.Fatal("row 2 still there after its key changed")
	}
	if r, found, err := UniqueLookup(ctx, tx, tbl, tbl.Index(ixEmail), d, []any{"bob@x.org"}); err != nil || !found || !reflect.DeepEqual(r.Values, bob7) {
		t.Fatalf("email lookup after the move = %v, %v, %v", r, found, err)
	}
	if n := countKeys(t, s, tbl.ID); n != 2*4 {
		t.Fatalf("table holds %d keys, want 8", n)
	}
}

func TestRemoveRecord(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := usersTable(t)
	rows := [][]any{user(1, "ann", "ann@x.org", int32(30)), user(2, "bob", "bob@x.org", nil)}
	addRows(t, s, tbl, rows...)
	tx := begin(t, s)
	for _, r := range rows {
		if err := RemoveRecord(ctx, tx, tbl, tablecodec.IntHandle(r[colID].(int64)), r); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, tx)
	if n := countKeys(t, s, tbl.ID); n != 0 {
		t.Fatalf("%d keys left after removing every row", n)
	}
	// The freed unique values can be taken again.
	addRows(t, s, tbl, user(3, "ann", "ann@x.org", int32(30)))
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := usersTable(t)
	tx := begin(t, s)
	if err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(1), []any{int64(1)}); err == nil {
		t.Error("AddRecord accepted a short row")
	}
	if err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(1), user(1, "a", "a", struct{}{})); err == nil {
		t.Error("AddRecord accepted a value of an unknown type")
	}
	if _, err := tbl.HandleOf(user(-1, "a", "a", nil)[:3]); err == nil {
		t.Error("HandleOf accepted a short row")
	}
	if _, err := tbl.HandleOf([]any{"x", "a", "a", nil}); err == nil {
		t.Error("HandleOf accepted a string int handle")
	}
	if _, err := tbl.HandleOf([]any{uint64(1 << 63), "a", "a", nil}); err == nil {
		t.Error("HandleOf accepted an unsigned value above int64")
	}
	for name, bad := range map[string]Table{
		"repeated column":  {Name: "t", Columns: []Column{{ID: 1}, {ID: 1}}},
		"bad pk offset":    {Name: "t", Columns: []Column{{ID: 1}}, HandleKind: HandleInt, PrimaryKey: []IndexColumn{{Offset: 3}}},
		"two int pk":       {Name: "t", Columns: []Column{{ID: 1}, {ID: 2}}, HandleKind: HandleInt, PrimaryKey: []IndexColumn{{Offset: 0}, {Offset: 1}}},
		"empty index":      {Name: "t", Columns: []Column{{ID: 1}}, Indexes: []Index{{ID: 1, Name: "i"}}},
		"repeated index":   {Name: "t", Columns: []Column{{ID: 1}}, Indexes: []Index{{ID: 1, Columns: []IndexColumn{{}}}, {ID: 1, Columns: []IndexColumn{{}}}}},
		"unknown handle":   {Name: "t", HandleKind: 9},
		"negative prefix":  {Name: "t", Columns: []Column{{ID: 1}}, Indexes: []Index{{ID: 1, Columns: []IndexColumn{{PrefixLen: -1}}}}},
		"negative colID":   {Name: "t", Columns: []Column{{ID: -4}}},
		"common pk absent": {Name: "t", Columns: []Column{{ID: 1}}, HandleKind: HandleCommon},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, bad)
		}
	}
}

// TestSchemaChange: rows written before ADD COLUMN read the column's origin
// default; a dropped column's bytes are skipped.
func TestSchemaChange(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	v1 := &Table{ID: 7, Name: "t", Columns: []Column{{ID: 1}, {ID: 2}, {ID: 3}}, HandleKind: HandleInt, PrimaryKey: []IndexColumn{{Offset: 0}}}
	if err := v1.Validate(); err != nil {
		t.Fatal(err)
	}
	addRows(t, s, v1, []any{int64(1), "two", 3.0})
	// DROP COLUMN 2, ADD COLUMN 4 DEFAULT 'd'.
	v2 := &Table{ID: 7, Name: "t", Columns: []Column{{ID: 1}, {ID: 3}, {ID: 4, OriginDefault: "d"}}, HandleKind: HandleInt, PrimaryKey: []IndexColumn{{Offset: 0}}}
	if err := v2.Validate(); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, s)
	got, found, err := GetRow(ctx, tx, v2, decoder(t, v2), tablecodec.IntHandle(1))
	if err != nil || !found || !reflect.DeepEqual(got, []any{int64(1), 3.0, "d"}) {
		t.Fatalf("old row under the new schema = %v, %v, %v", got, found, err)
	}
}

// TestPrefixIndex: an index on the first 2 characters of a column.
func TestPrefixIndex(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := &Table{ID: 8, Name: "p", Columns: []Column{{ID: 1}, {ID: 2}}, HandleKind: HandleInt, PrimaryKey: []IndexColumn{{Offset: 0}},
		Indexes: []Index{{ID: 1, Name: "u", Unique: true, Columns: []IndexColumn{{Offset: 1, PrefixLen: 2}}}}}
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	addRows(t, s, tbl, []any{int64(1), "ébc"})
	tx := begin(t, s)
	err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(2), []any{int64(2), "ébz"})
	if want := "Duplicate entry 'éb' for key 'p.u'"; err == nil || err.Error() != want {
		t.Fatalf("prefix duplicate = %v, want %q", err, want)
	}
	if err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(2), []any{int64(2), "éc"}); err != nil {
		t.Fatal(err)
	}
}

// collect drains a RowIterator into handles.
func collect(t testing.TB, it RowIterator) []Row {
	t.Helper()
	defer it.Close()
	var rows []Row
	for {
		r, err := it.Next(context.Background())
		if err == io.EOF {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
}

// TestIndexOnlyCommonHandle reads a clustered table's primary-key values
// out of its index entries' handles, and refuses columns an entry keeps
// no exact copy of.
func TestIndexOnlyCommonHandle(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tbl := &Table{
		ID: 200, Name: "c",
		Columns:    []Column{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}},
		HandleKind: HandleCommon,
		PrimaryKey: []IndexColumn{{Offset: 0}, {Offset: 1}},
		Indexes: []Index{
			{ID: 1, Name: "k", Columns: []IndexColumn{{Offset: 2}}},
			{ID: 2, Name: "ci", Columns: []IndexColumn{{Offset: 3, CollationKey: lowerKey}}},
		},
	}
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	addRows(t, s, tbl,
		[]any{int64(2), "b", int64(7), "X"},
		[]any{int64(1), "a", int64(7), "y"},
		[]any{int64(-3), "z", nil, "Z"},
	)
	k, ci := tbl.Index(1), tbl.Index(2)
	if !tbl.Covers(k, []int{2, 1, 0}) || tbl.Covers(k, []int{3}) || tbl.Covers(ci, []int{3}) {
		t.Fatal("Covers: k covers the key's columns and its own, not d; ci keeps sort keys")
	}
	tx := begin(t, s)
	defer tx.Rollback(ctx)
	whole := func(ix *Index) KeyRange {
		r, err := tbl.IndexRange(ix, Bound{}, Bound{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	it, err := IndexOnly(ctx, tx, tbl, k, []int{2, 1, 0}, whole(k), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for _, r := range collect(t, it) {
		got = append(got, r.Values)
	}
	want := [][]any{{nil, []byte("z"), int64(-3)}, {int64(7), []byte("a"), int64(1)}, {int64(7), []byte("b"), int64(2)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("IndexOnly rows %v, want %v", got, want)
	}
	if _, err := IndexOnly(ctx, tx, tbl, ci, []int{3}, whole(ci), ScanOptions{}); err == nil {
		t.Fatal("IndexOnly over sort keys: no error")
	}
}
