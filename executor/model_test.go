package executor

import (
	"cmp"
	"context"
	"errors"
	"io"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// model is what usersTable should hold: rows by id.
type model map[int64][]any

// conflict returns the name of the unique key row would duplicate in m,
// ignoring the row with id skip, or "".
func (m model) conflict(row []any, skip int64) string {
	if _, ok := m[row[colID].(int64)]; ok && row[colID].(int64) != skip {
		return "PRIMARY"
	}
	for id, r := range m {
		if id != skip && strings.EqualFold(r[colEmail].(string), row[colEmail].(string)) {
			return "email"
		}
	}
	for id, r := range m {
		if id != skip && row[colAge] != nil && r[colName] == row[colName] && r[colAge] == row[colAge] {
			return "name_age"
		}
	}
	return ""
}

func randUser(rng *rand.Rand, id int64) []any {
	names := []string{"ann", "bob", "cat"}
	emails := []string{"a@x", "A@x", "b@x", "c@x", "d@x", "e@x", "F@x", "g@x", "h@x", "i@x", "j@x", "k@x"}
	var age any
	if rng.Intn(4) > 0 {
		age = int32(15 + rng.Intn(10))
	}
	return user(id, names[rng.Intn(len(names))], emails[rng.Intn(len(emails))]+string(rune('a'+rng.Intn(3))), age)
}

// ageOrder sorts rows as the age index does: NULL first, then by age, then
// by handle.
func ageOrder(a, b []any) int {
	an, bn := a[colAge] == nil, b[colAge] == nil
	switch {
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	case !an && !bn:
		if c := cmp.Compare(a[colAge].(int32), b[colAge].(int32)); c != 0 {
			return c
		}
	}
	return cmp.Compare(a[colID].(int64), b[colID].(int64))
}

// TestOperatorsAgainstModel applies random inserts, updates and deletes
// through the operators, over a store split into several regions, and
// checks every read operator against a model after each commit.
func TestOperatorsAgainstModel(t *testing.T) {
	ctx := context.Background()
	tbl := usersTable(t)
	ageVals := func(v int32) []byte { b, _ := tablecodec.EncodeKey(nil, v); return b }
	s := newStore(t,
		tablecodec.RowKey(nil, tbl.ID, tablecodec.IntHandle(20)),
		tablecodec.RowKey(nil, tbl.ID, tablecodec.IntHandle(40)),
		tablecodec.IndexKey(nil, tbl.ID, ixAge, ageVals(20), false, false, tablecodec.IntHandle(0)),
		tablecodec.IndexPrefix(nil, tbl.ID, ixNameAge),
	)
	rng := rand.New(rand.NewSource(1))
	m := model{}
	rounds := 60
	if testing.Short() {
		rounds = 20
	}
	for round := 0; round < rounds; round++ {
		tx := begin(t, s)
		cur := maps.Clone(m)
		for op := 0; op < 1+rng.Intn(6); op++ {
			applyRandomOp(t, ctx, rng, tx, tbl, cur)
		}
		commit(t, tx)
		m = cur
		checkModel(t, ctx, rng, s, tbl, m)
	}
}

func applyRandomOp(t *testing.T, ctx context.Context, rng *rand.Rand, tx *txn.Txn, tbl *Table, cur model) {
	t.Helper()
	ids := slices.Sorted(maps.Keys(cur))
	switch k := rng.Intn(10); {
	case k < 5 || len(ids) == 0: // insert
		row := randUser(rng, int64(rng.Intn(60)))
		want := cur.conflict(row, -1)
		err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(row[colID].(int64)), row)
		checkDup(t, "insert", row, err, want)
		if err == nil {
			cur[row[colID].(int64)] = row
		}
	case k < 8: // update, sometimes of the primary key
		old := cur[ids[rng.Intn(len(ids))]]
		newID := old[colID].(int64)
		if rng.Intn(3) == 0 {
			newID = int64(rng.Intn(60))
		}
		row := randUser(rng, newID)
		want := cur.conflict(row, old[colID].(int64))
		oldH, newH := tablecodec.IntHandle(old[colID].(int64)), tablecodec.IntHandle(newID)
		err := UpdateRecord(ctx, tx, tbl, oldH, newH, old, row)
		checkDup(t, "update", row, err, want)
		if err == nil {
			delete(cur, old[colID].(int64))
			cur[newID] = row
		}
	default: // delete
		old := cur[ids[rng.Intn(len(ids))]]
		if err := RemoveRecord(ctx, tx, tbl, tablecodec.IntHandle(old[colID].(int64)), old); err != nil {
			t.Fatal(err)
		}
		delete(cur, old[colID].(int64))
	}
}

func checkDup(t *testing.T, what string, row []any, err error, want string) {
	t.Helper()
	var dup *DuplicateKeyError
	switch {
	case want == "" && err != nil:
		t.Fatalf("%s %v: %v, want success", what, row, err)
	case want != "" && (!errors.As(err, &dup) || dup.Index != want):
		t.Fatalf("%s %v: %v, want a duplicate on %s", what, row, err, want)
	}
}

func handlesOf(rows [][]any) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r[colID].(int64)
	}
	return out
}

func rowHandles(rows []Row) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.Handle.Int
	}
	return out
}

func checkModel(t *testing.T, ctx context.Context, rng *rand.Rand, s *txn.Store, tbl *Table, m model) {
	t.Helper()
	tx := begin(t, s)
	d := decoder(t, tbl)
	byID := slices.SortedFunc(maps.Values(m), func(a, b []any) int { return cmp.Compare(a[colID].(int64), b[colID].(int64)) })

	// Full scans, both ways.
	for _, reverse := range []bool{false, true} {
		it, err := ScanTable(ctx, tx, tbl, d, tbl.RowRange(), ScanOptions{Reverse: reverse})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(t, it)
		want := slices.Clone(byID)
		if reverse {
			slices.Reverse(want)
		}
		if len(got) != len(want) {
			t.Fatalf("scan (reverse %v) found %d rows, want %d", reverse, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i].Values, want[i]) || got[i].Handle.Int != want[i][colID] {
				t.Fatalf("scan (reverse %v) row %d = %v (handle %v), want %v", reverse, i, got[i].Values, got[i].Handle, want[i])
			}
		}
	}

	// Primary-key ranges.
	for n := 0; n < 5; n++ {
		lo, hi := int64(rng.Intn(70)-5), int64(rng.Intn(70)-5)
		loInc, hiInc, reverse, limit := rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(4)
		r, err := tbl.HandleRange(Bound{[]any{lo}, loInc}, Bound{[]any{hi}, hiInc})
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, row := range byID {
			id := row[colID].(int64)
			if (id > lo || loInc && id == lo) && (id < hi || hiInc && id == hi) {
				want = append(want, id)
			}
		}
		want = trim(want, reverse, limit)
		it, err := ScanTable(ctx, tx, tbl, d, r, ScanOptions{Reverse: reverse, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if got := rowHandles(collect(t, it)); !slices.Equal(got, want) {
			t.Fatalf("id in %d..%d (%v,%v) reverse %v limit %d: %v, want %v", lo, hi, loInc, hiInc, reverse, limit, got, want)
		}
	}

	// The age index, whole and in random ranges, by ScanIndex and by
	// IndexLookup.
	byAge := slices.SortedFunc(maps.Values(m), ageOrder)
	ix := tbl.Index(ixAge)
	for n := 0; n < 8; n++ {
		var lo, hi Bound
		match := func(age any) bool { return true }
		if n > 0 {
			lo = Bound{[]any{int32(14 + rng.Intn(12))}, rng.Intn(2) == 0}
			hi = Bound{[]any{int32(14 + rng.Intn(12))}, rng.Intn(2) == 0}
			if rng.Intn(4) == 0 {
				lo = Bound{} // unbounded: NULLs included
			}
			match = func(age any) bool {
				if age == nil {
					return len(lo.Values) == 0
				}
				a := age.(int32)
				if len(lo.Values) > 0 {
					l := lo.Values[0].(int32)
					if a < l || !lo.Inclusive && a == l {
						return false
					}
				}
				h := hi.Values[0].(int32)
				return a < h || hi.Inclusive && a == h
			}
		}
		var wantRows [][]any
		for _, row := range byAge {
			if match(row[colAge]) {
				wantRows = append(wantRows, row)
			}
		}
		reverse, limit := rng.Intn(2) == 0, rng.Intn(5)
		want := trim(handlesOf(wantRows), reverse, limit)
		r, err := tbl.IndexRange(ix, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		opts := ScanOptions{Reverse: reverse, Limit: limit, BatchSize: 1 + rng.Intn(4)}
		x, err := ScanIndex(ctx, tx, tbl, ix, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for {
			h, _, err := x.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, h.Int)
		}
		x.Close()
		if !slices.Equal(got, want) {
			t.Fatalf("ScanIndex age %+v..%+v reverse %v limit %d: %v, want %v", lo, hi, reverse, limit, got, want)
		}
		it, err := IndexLookup(ctx, tx, tbl, ix, d, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		rows := collect(t, it)
		if !slices.Equal(rowHandles(rows), want) {
			t.Fatalf("IndexLookup age %+v..%+v: %v, want %v", lo, hi, rowHandles(rows), want)
		}
		for _, r := range rows {
			if !reflect.DeepEqual(r.Values, m[r.Handle.Int]) {
				t.Fatalf("IndexLookup row %v, model %v", r.Values, m[r.Handle.Int])
			}
		}
		// The age index's entries hold (age, id): the same rows, read
		// from the entries alone, in the key codec's widest types.
		covered := []int{colAge, colID}
		if !tbl.Covers(ix, covered) || tbl.Covers(ix, []int{colAge, colName}) {
			t.Fatal("Covers: the age index covers age and id, not name")
		}
		it, err = IndexOnly(ctx, tx, tbl, ix, covered, r, opts)
		if err != nil {
			t.Fatal(err)
		}
		only := collect(t, it)
		if !slices.Equal(rowHandles(only), want) {
			t.Fatalf("IndexOnly age %+v..%+v: %v, want %v", lo, hi, rowHandles(only), want)
		}
		for _, r := range only {
			row := m[r.Handle.Int]
			wantVals := []any{nil, row[colID]}
			if a, ok := row[colAge].(int32); ok {
				wantVals[0] = int64(a)
			}
			if !reflect.DeepEqual(r.Values, wantVals) {
				t.Fatalf("IndexOnly row %v, model %v", r.Values, wantVals)
			}
		}
	}

	// Every unique entry finds its row.
	for _, row := range byID {
		r, found, err := UniqueLookup(ctx, tx, tbl, tbl.Index(ixEmail), d, []any{strings.ToUpper(row[colEmail].(string))})
		if err != nil || !found || r.Handle.Int != row[colID] {
			t.Fatalf("email lookup of %v = %v, %v, %v", row, r, found, err)
		}
	}
	// And nothing else is stored: a row key and three entries per row.
	if n := countKeys(t, s, tbl.ID); n != 4*len(m) {
		t.Fatalf("table holds %d keys for %d rows", n, len(m))
	}
}

// trim orders want (ascending) as a scan would yield it and cuts it to
// limit.
func trim(want []int64, reverse bool, limit int) []int64 {
	want = slices.Clone(want)
	if reverse {
		slices.Reverse(want)
	}
	if limit > 0 && len(want) > limit {
		want = want[:limit]
	}
	return want
}
