package executor

import (
	"context"
	"strings"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// newStore opens an in-memory kv store split at splits and a txn.Store
// over it, both closed when the test ends.
func newStore(t testing.TB, splits ...[]byte) *txn.Store {
	t.Helper()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	for _, k := range splits {
		if _, _, err := ks.SplitRegion(context.Background(), k); err != nil {
			t.Fatalf("split at %x: %v", k, err)
		}
	}
	s := txn.NewStore(kv.NewLocalClient(ks), txntest.NewClockOracle(0), txn.Options{})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func begin(t testing.TB, s *txn.Store) *txn.Txn {
	t.Helper()
	tx, err := s.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

func commit(t testing.TB, tx *txn.Txn) {
	t.Helper()
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// lowerKey is a case-insensitive collation's sort key, for tests.
func lowerKey(s string) []byte { return []byte(strings.ToLower(s)) }

// Offsets of usersTable's columns.
const (
	colID = iota
	colName
	colEmail
	colAge
)

// Index IDs of usersTable.
const (
	ixEmail   = 1 // unique, case-insensitive
	ixAge     = 2 // non-unique
	ixNameAge = 3 // unique (name, age); age may be NULL
)

// usersTable: id BIGINT PRIMARY KEY, name VARCHAR, email VARCHAR (ci),
// age INT NULL.
func usersTable(t testing.TB) *Table {
	t.Helper()
	tbl := &Table{
		ID:   100,
		Name: "users",
		Columns: []Column{
			{ID: 1}, {ID: 2}, {ID: 3}, {ID: 5},
		},
		HandleKind: HandleInt,
		PrimaryKey: []IndexColumn{{Offset: colID}},
		Indexes: []Index{
			{ID: ixEmail, Name: "email", Unique: true, Columns: []IndexColumn{{Offset: colEmail, CollationKey: lowerKey}}},
			{ID: ixAge, Name: "age", Columns: []IndexColumn{{Offset: colAge}}},
			{ID: ixNameAge, Name: "name_age", Unique: true, Columns: []IndexColumn{{Offset: colName}, {Offset: colAge}}},
		},
	}
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func user(id int64, name, email string, age any) []any {
	return []any{id, name, email, age}
}

func decoder(t testing.TB, tbl *Table) *RowDecoder {
	t.Helper()
	d, err := tbl.NewRowDecoder(nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// addUsers adds rows to tbl in one committed transaction.
func addRows(t testing.TB, s *txn.Store, tbl *Table, rows ...[]any) {
	t.Helper()
	ctx := context.Background()
	tx := begin(t, s)
	for _, r := range rows {
		h, err := tbl.HandleOf(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := AddRecord(ctx, tx, tbl, h, r); err != nil {
			t.Fatal(err)
		}
	}
	commit(t, tx)
}

// countKeys counts every key of table id visible to a new transaction.
func countKeys(t testing.TB, s *txn.Store, id int64) int {
	t.Helper()
	ctx := context.Background()
	tx := begin(t, s)
	start, end := tablecodec.TableRange(id)
	it, err := tx.Iter(ctx, start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ; it.Valid(); n++ {
		if err := it.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return n
}
