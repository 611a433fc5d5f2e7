package tablecodec

import (
	"bytes"
	"errors"
	"math/rand"
	"sort"
	"testing"
)

func TestRowKeyRoundTrip(t *testing.T) {
	for _, h := range []int64{-1 << 63, -1, 0, 1, 1<<63 - 1} {
		k := RowKey(nil, 42, IntHandle(h))
		if !IsRowKey(k) || IsIndexKey(k) {
			t.Fatalf("RowKey %x not recognised as a row key", k)
		}
		tid, got, err := DecodeRowKey(k, false)
		if err != nil || tid != 42 || !got.Equal(IntHandle(h)) {
			t.Fatalf("DecodeRowKey(%x) = %d, %v, %v; want 42, %d", k, tid, got, err, h)
		}
	}
	pk, _ := EncodeKey(nil, "alice", int64(7))
	k := RowKey(nil, -3, CommonHandle(pk))
	tid, got, err := DecodeRowKey(k, true)
	if err != nil || tid != -3 || !got.Equal(CommonHandle(pk)) {
		t.Fatalf("DecodeRowKey(common) = %d, %v, %v", tid, got, err)
	}
	if got.String() != `("alice", 7)` {
		t.Errorf("common handle String() = %q", got.String())
	}
	if _, _, err := DecodeRowKey(k, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("common row key decoded as int handle: %v", err)
	}
}

// TestRowKeysSortByHandle: a table's rows are scanned in handle order.
func TestRowKeysSortByHandle(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	hs := make([]int64, 500)
	for i := range hs {
		hs[i] = rng.Int63() - rng.Int63()
	}
	keys := make([][]byte, len(hs))
	for i, h := range hs {
		keys[i] = RowKey(nil, 5, IntHandle(h))
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
	for i, k := range keys {
		_, h, err := DecodeRowKey(k, false)
		if err != nil || h.Int != hs[i] {
			t.Fatalf("key %d holds handle %d, want %d (%v)", i, h.Int, hs[i], err)
		}
	}
	start, end := RecordRange(5)
	for _, k := range keys {
		if bytes.Compare(k, start) < 0 || bytes.Compare(k, end) >= 0 {
			t.Fatalf("row key %x outside RecordRange [%x, %x)", k, start, end)
		}
	}
	if ik := IndexKey(nil, 5, 1, nil, false, false, IntHandle(0)); bytes.Compare(ik, start) >= 0 && bytes.Compare(ik, end) < 0 {
		t.Fatalf("index key %x inside RecordRange", ik)
	}
}

func TestIndexKeyHandle(t *testing.T) {
	common, _ := EncodeKey(nil, "pk", uint64(9))
	for _, tc := range []struct {
		name            string
		unique, hasNull bool
		h               Handle
		handleInKey     bool
	}{
		{"non-unique int", false, false, IntHandle(-7), true},
		{"non-unique common", false, false, CommonHandle(common), true},
		{"unique int", true, false, IntHandle(12), false},
		{"unique common", true, false, CommonHandle(common), false},
		{"unique with NULL int", true, true, IntHandle(3), true},
		{"unique with NULL common", true, true, CommonHandle(common), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vals []byte
			if tc.hasNull {
				vals, _ = EncodeKey(nil, nil, "x")
			} else {
				vals, _ = EncodeKey(nil, int64(1), "x")
			}
			k := IndexKey(nil, 10, 2, vals, tc.unique, tc.hasNull, tc.h)
			v := IndexValue(nil, tc.unique, tc.hasNull, tc.h)
			if !IsIndexKey(k) || IsRowKey(k) {
				t.Fatalf("IndexKey %x not recognised", k)
			}
			tid, iid, rest, err := DecodeIndexKey(k)
			if err != nil || tid != 10 || iid != 2 {
				t.Fatalf("DecodeIndexKey = %d, %d, %v", tid, iid, err)
			}
			head, tail, err := CutIndexValues(rest, 2)
			if err != nil || !bytes.Equal(head, vals) || (len(tail) > 0) != tc.handleInKey {
				t.Fatalf("CutIndexValues = %x, %x, %v; values %x, handle in key %v", head, tail, err, vals, tc.handleInKey)
			}
			got, err := DecodeIndexHandle(k, v, 2, !tc.h.IsInt())
			if err != nil || !got.Equal(tc.h) {
				t.Fatalf("DecodeIndexHandle = %v, %v; want %v", got, err, tc.h)
			}
		})
	}
}

// TestUniqueKeysCollide: two rows with equal non-NULL values map to one
// unique index key; with a NULL they do not.
func TestUniqueKeysCollide(t *testing.T) {
	vals, _ := EncodeKey(nil, "v")
	a := IndexKey(nil, 1, 1, vals, true, false, IntHandle(1))
	b := IndexKey(nil, 1, 1, vals, true, false, IntHandle(2))
	if !bytes.Equal(a, b) {
		t.Fatalf("unique keys differ: %x, %x", a, b)
	}
	null, _ := EncodeKey(nil, nil)
	a = IndexKey(nil, 1, 1, null, true, true, IntHandle(1))
	b = IndexKey(nil, 1, 1, null, true, true, IntHandle(2))
	if bytes.Equal(a, b) {
		t.Fatalf("unique keys with NULL collide: %x", a)
	}
}

func TestPrefixNext(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte{1, 2, 3}, []byte{1, 2, 4}},
		{[]byte{1, 2, 0xFF}, []byte{1, 3}},
		{[]byte{1, 0xFF, 0xFF}, []byte{2}},
		{[]byte{0xFF, 0xFF}, nil},
		{nil, nil},
	} {
		in := bytes.Clone(tc.in)
		if got := PrefixNext(in); !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("PrefixNext(%x) = %x, want %x", tc.in, got, tc.want)
		}
		if !bytes.Equal(in, tc.in) {
			t.Errorf("PrefixNext modified its input")
		}
	}
}

// TestBoundsMatchBruteForce builds a two-column index, turns random bounds
// on the first column (and equality plus bounds on the second) into key
// ranges, and checks that exactly the matching entries fall inside.
func TestBoundsMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	type entry struct {
		a   any // nil or int64
		b   string
		key []byte
	}
	var entries []entry
	for i := 0; i < 300; i++ {
		var a any
		if rng.Intn(6) > 0 {
			a = int64(rng.Intn(10) - 5)
		}
		b := string(rune('a' + rng.Intn(5)))
		vals, err := EncodeKey(nil, a, b)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, entry{a, b, IndexKey(nil, 1, 1, vals, false, false, IntHandle(int64(i)))})
	}
	prefix := IndexPrefix(nil, 1, 1)
	enc := func(vals ...any) []byte {
		k, err := EncodeKey(bytes.Clone(prefix), vals...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	inRange := func(k, start, end []byte) bool {
		return bytes.Compare(k, start) >= 0 && (end == nil || bytes.Compare(k, end) < 0)
	}
	for n := 0; n < 500; n++ {
		lo, hi := int64(rng.Intn(12)-6), int64(rng.Intn(12)-6)
		loInc, hiInc := rng.Intn(2) == 0, rng.Intn(2) == 0
		// a in (lo, hi) with the chosen inclusivity; a NULL never matches.
		start := LowerBound(enc(lo), loInc)
		end := UpperBound(enc(hi), hiInc)
		// a = lo AND b >(=) "c"
		bInc := rng.Intn(2) == 0
		start2, end2 := LowerBound(enc(lo, "c"), bInc), UpperBound(enc(lo), true)
		for _, e := range entries {
			a, isInt := e.a.(int64)
			want := isInt && (a > lo || (loInc && a == lo)) && (a < hi || (hiInc && a == hi))
			if got := inRange(e.key, start, end); got != want {
				t.Fatalf("a=%v in range lo=%d(%v) hi=%d(%v): got %v want %v", e.a, lo, loInc, hi, hiInc, got, want)
			}
			want2 := isInt && a == lo && (e.b > "c" || (bInc && e.b == "c"))
			if got := inRange(e.key, start2, end2); got != want2 {
				t.Fatalf("(a,b)=(%v,%s) a=%d b>(=%v)c: got %v want %v", e.a, e.b, lo, bInc, got, want2)
			}
		}
	}
	// IS NULL: the range of the NULL prefix holds exactly the NULL entries.
	s, e := PrefixRange(enc(nil))
	for _, en := range entries {
		if got := inRange(en.key, s, e); got != (en.a == nil) {
			t.Fatalf("a=%v in IS NULL range: %v", en.a, got)
		}
	}
}

func TestDecodeKeysCorruptTable(t *testing.T) {
	for _, k := range [][]byte{nil, []byte("x"), []byte("t\x80"), append(RecordPrefix(nil, 1), 1, 2)} {
		if _, _, err := DecodeRowKey(k, false); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeRowKey(%x) = %v", k, err)
		}
		if _, _, _, err := DecodeIndexKey(k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeIndexKey(%x) = %v", k, err)
		}
	}
	vals, _ := EncodeKey(nil, int64(1))
	k := IndexKey(nil, 1, 1, vals, true, false, IntHandle(1))
	if _, err := DecodeIndexHandle(k, []byte{1, 2}, 1, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DecodeIndexHandle with a 2-byte value = %v", err)
	}
	if _, err := DecodeIndexHandle(k, nil, 2, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DecodeIndexHandle with too many columns = %v", err)
	}
}

// TestAckKeyRoundTrip: an ack key names its row and observer, stays
// under the table prefix and outside the row and index ranges.
func TestAckKeyRoundTrip(t *testing.T) {
	pk, _ := EncodeKey(nil, "alice", int64(7))
	for _, rowKey := range [][]byte{RowKey(nil, 42, IntHandle(-5)), RowKey(nil, 3, CommonHandle(pk))} {
		for _, obs := range []string{"", "hash", "a long observer name\x00\xff"} {
			k, err := AckKey(nil, rowKey, obs)
			if err != nil {
				t.Fatal(err)
			}
			if IsRowKey(k) || IsIndexKey(k) {
				t.Fatalf("ack key %x taken for a row or index key", k)
			}
			start, end := TableRange(mustTableID(t, rowKey))
			if bytes.Compare(k, start) < 0 || bytes.Compare(k, end) >= 0 {
				t.Fatalf("ack key %x outside its table's range", k)
			}
			if !bytes.HasPrefix(k, AckPrefix(nil, mustTableID(t, rowKey))) {
				t.Fatalf("ack key %x outside its table's ack prefix", k)
			}
			gotRow, gotObs, err := DecodeAckKey(k)
			if err != nil || !bytes.Equal(gotRow, rowKey) || gotObs != obs {
				t.Fatalf("DecodeAckKey(%x) = %x, %q, %v; want %x, %q", k, gotRow, gotObs, err, rowKey, obs)
			}
		}
	}
	if _, err := AckKey(nil, IndexPrefix(nil, 1, 2), "x"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ack key of an index key: %v", err)
	}
	for _, bad := range [][]byte{RowKey(nil, 1, IntHandle(1)), {'t'}, append(append(TablePrefix(nil, 1), '_', 'a'), EncodeBytes(nil, []byte("x"))...)} {
		if _, _, err := DecodeAckKey(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeAckKey(%x): %v", bad, err)
		}
	}
}

func mustTableID(t *testing.T, key []byte) int64 {
	t.Helper()
	id, err := DecodeTableID(key)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
