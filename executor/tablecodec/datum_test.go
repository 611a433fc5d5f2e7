package tablecodec

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// checkOrder encodes every value, sorts the encodings and checks that the
// order is the values' order under less (equal values must encode equally).
func checkOrder[T any](t *testing.T, vals []T, cmp func(a, b T) int) {
	t.Helper()
	type enc struct {
		key []byte
		val T
	}
	encs := make([]enc, len(vals))
	for i, v := range vals {
		k, err := EncodeKey(nil, v)
		if err != nil {
			t.Fatalf("EncodeKey(%v): %v", v, err)
		}
		encs[i] = enc{k, v}
	}
	sort.Slice(encs, func(i, j int) bool { return bytes.Compare(encs[i].key, encs[j].key) < 0 })
	for i := 1; i < len(encs); i++ {
		a, b := encs[i-1], encs[i]
		byKey := bytes.Compare(a.key, b.key)
		byVal := cmp(a.val, b.val)
		if byKey != byVal {
			t.Fatalf("order mismatch: %v vs %v compare %d by value, %d by key (%x vs %x)", a.val, b.val, byVal, byKey, a.key, b.key)
		}
	}
}

func cmpOrdered[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestKeyOrderInts(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64}
	for i := 0; i < 2000; i++ {
		vals = append(vals, rng.Int63()-rng.Int63(), int64(rng.Intn(100)-50))
	}
	checkOrder(t, vals, cmpOrdered[int64])

	uvals := []uint64{0, 1, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64}
	for i := 0; i < 2000; i++ {
		uvals = append(uvals, rng.Uint64(), uint64(rng.Intn(100)))
	}
	checkOrder(t, uvals, cmpOrdered[uint64])
}

func TestKeyOrderFloats(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	vals := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, math.Copysign(0, -1), 0,
		math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1)}
	for i := 0; i < 2000; i++ {
		vals = append(vals, rng.NormFloat64()*math.Pow(10, float64(rng.Intn(40)-20)))
	}
	checkOrder(t, vals, cmpOrdered[float64])
	if _, err := EncodeKey(nil, math.NaN()); err == nil {
		t.Fatal("EncodeKey(NaN) succeeded")
	}
}

func TestKeyOrderBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	vals := [][]byte{{}, {0}, {0, 0}, {0xFF}, []byte("ab"), []byte("ab\x00"), []byte("abcdefgh"), []byte("abcdefgh\x00"), []byte("abcdefghi")}
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.Intn(20))
		for j := range b {
			b[j] = byte(rng.Intn(4)) * 0x55 // few distinct bytes: many shared prefixes
		}
		vals = append(vals, b)
	}
	checkOrder(t, vals, bytes.Compare)
}

func randDecimal(rng *rand.Rand) decimal.Decimal {
	digits := rng.Intn(40) + 1
	coef := new(big.Int)
	for i := 0; i < digits; i++ {
		coef.Mul(coef, big.NewInt(10))
		coef.Add(coef, big.NewInt(int64(rng.Intn(10))))
	}
	if rng.Intn(2) == 0 {
		coef.Neg(coef)
	}
	return decimal.NewFromBigInt(coef, int32(rng.Intn(50)-25))
}

func TestKeyOrderDecimals(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	vals := []decimal.Decimal{
		decimal.Zero, decimal.New(0, 5), decimal.New(1, 0), decimal.New(10, -1), decimal.New(-1, 0),
		decimal.RequireFromString("1.5"), decimal.RequireFromString("1.50"), decimal.RequireFromString("1.05"),
		decimal.RequireFromString("-0.001"), decimal.RequireFromString("99999999999999999999999.9999"),
		decimal.RequireFromString("-99999999999999999999999.9999"), decimal.RequireFromString("0.1"),
		decimal.RequireFromString("0.12"), decimal.RequireFromString("0.123"), decimal.RequireFromString("-0.12"),
		decimal.RequireFromString("-0.123"), decimal.RequireFromString("100"), decimal.RequireFromString("101"),
	}
	for i := 0; i < 3000; i++ {
		vals = append(vals, randDecimal(rng))
	}
	checkOrder(t, vals, func(a, b decimal.Decimal) int { return a.Cmp(b) })
}

func TestKeyOrderTimes(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	vals := []time.Time{{}, time.Unix(0, 0), time.Unix(-1, 999999999), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)}
	for i := 0; i < 2000; i++ {
		vals = append(vals, time.Unix(rng.Int63n(1<<36)-1<<35, rng.Int63n(1e9)).UTC())
	}
	checkOrder(t, vals, func(a, b time.Time) int { return a.Compare(b) })

	spans := []types.Timespan{-1, 0, 1, math.MinInt64, math.MaxInt64}
	for i := 0; i < 500; i++ {
		spans = append(spans, types.Timespan(rng.Int63()-rng.Int63()))
	}
	checkOrder(t, spans, func(a, b types.Timespan) int { return a.Compare(b) })
}

// TestKeyOrderTuples checks that concatenated encodings sort like tuples,
// NULL first, which is what composite indexes rely on.
func TestKeyOrderTuples(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	type tuple struct {
		s []byte // nil is NULL
		i int64
	}
	var vals []tuple
	for n := 0; n < 2000; n++ {
		var s []byte
		if rng.Intn(5) > 0 {
			s = make([]byte, rng.Intn(10))
			for j := range s {
				s[j] = byte('a' + rng.Intn(2))
			}
		}
		vals = append(vals, tuple{s, int64(rng.Intn(7) - 3)})
	}
	type enc struct {
		key []byte
		t   tuple
	}
	var encs []enc
	for _, v := range vals {
		var sv any
		if v.s != nil {
			sv = v.s
		}
		k, err := EncodeKey(nil, sv, v.i)
		if err != nil {
			t.Fatal(err)
		}
		encs = append(encs, enc{k, v})
	}
	cmp := func(a, b tuple) int {
		switch {
		case a.s == nil && b.s != nil:
			return -1
		case a.s != nil && b.s == nil:
			return 1
		}
		if c := bytes.Compare(a.s, b.s); c != 0 {
			return c
		}
		return cmpOrdered(a.i, b.i)
	}
	sort.Slice(encs, func(i, j int) bool { return bytes.Compare(encs[i].key, encs[j].key) < 0 })
	for i := 1; i < len(encs); i++ {
		if got, want := bytes.Compare(encs[i-1].key, encs[i].key), cmp(encs[i-1].t, encs[i].t); got != want {
			t.Fatalf("tuples %v and %v: key order %d, value order %d", encs[i-1].t, encs[i].t, got, want)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	d := decimal.RequireFromString("-123.4500")
	vals := []any{nil, int64(-5), int8(3), uint16(7), uint64(math.MaxUint64), 2.5, float32(1.5),
		"héllo", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, []byte{}, d, decimal.Zero, types.Timespan(-3600000000),
		time.Date(2024, 2, 29, 12, 0, 0, 123456000, time.UTC)}
	want := []any{nil, int64(-5), int64(3), uint64(7), uint64(math.MaxUint64), 2.5, 1.5,
		[]byte("héllo"), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, []byte{}, d, decimal.Zero, types.Timespan(-3600000000),
		time.Date(2024, 2, 29, 12, 0, 0, 123456000, time.UTC)}
	k, err := EncodeKey(nil, vals...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeKeys(k)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("decoded %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if wd, ok := want[i].(decimal.Decimal); ok {
			if gd, ok := got[i].(decimal.Decimal); !ok || !gd.Equal(wd) {
				t.Errorf("value %d: got %v, want %v", i, got[i], want[i])
			}
			continue
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("value %d: got %#v, want %#v", i, got[i], want[i])
		}
	}
	// SkipKey walks the same boundaries.
	rest := k
	for i := range want {
		if rest, err = SkipKey(rest); err != nil {
			t.Fatalf("SkipKey value %d: %v", i, err)
		}
	}
	if len(rest) != 0 {
		t.Fatalf("SkipKey left %d bytes", len(rest))
	}
}

func TestDecimalRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		d := randDecimal(rng)
		k, err := EncodeKey(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		rest, v, err := DecodeKey(k)
		if err != nil || len(rest) != 0 {
			t.Fatalf("DecodeKey(%v): rest %x, err %v", d, rest, err)
		}
		if !v.(decimal.Decimal).Equal(d) {
			t.Fatalf("decimal %v decoded as %v", d, v)
		}
	}
}

func TestEncodeKeyRejects(t *testing.T) {
	for _, v := range []any{struct{}{}, types.JSONDocument{Val: 1}, []int{1}, true} {
		if _, err := EncodeKey(nil, v); err == nil {
			t.Errorf("EncodeKey(%T) succeeded", v)
		}
	}
}

func TestDecodeKeyCorrupt(t *testing.T) {
	good, _ := EncodeKey(nil, "abcdefghij", int64(1), decimal.RequireFromString("1.25"))
	cases := map[string][]byte{
		"empty":           {},
		"unknown flag":    {0x7F},
		"short int":       {flagInt, 1, 2},
		"short bytes":     {flagBytes, 'a', 'b'},
		"bad marker":      {flagBytes, 0, 0, 0, 0, 0, 0, 0, 0, 0x10},
		"bad padding":     {flagBytes, 'a', 1, 0, 0, 0, 0, 0, 0, 0xF8},
		"decimal sign":    {flagDecimal, 0x09},
		"decimal digits":  append([]byte{flagDecimal, decPositive}, make([]byte, 8)...),
		"decimal pair":    append(append([]byte{flagDecimal, decPositive}, make([]byte, 8)...), 200, 0),
		"decimal lead 0":  append(append([]byte{flagDecimal, decPositive}, make([]byte, 8)...), 1+5, 0),
		"decimal trail 0": append(append([]byte{flagDecimal, decPositive}, make([]byte, 8)...), 1+12, 1, 0),
		"time nanos":      {flagTime, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF},
		"truncated":       good[:len(good)-1],
	}
	for name, b := range cases {
		if _, err := DecodeKeys(b); !errors.Is(err, ErrCorrupt) && !(len(b) == 0 && err == nil) {
			t.Errorf("%s: DecodeKeys(%x) = %v, want ErrCorrupt", name, b, err)
		}
	}
	if _, _, err := DecodeKey(nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DecodeKey(nil) = %v", err)
	}
}

// TestAppendKeyInts: the typed appenders encode as EncodeKey does.
func TestAppendKeyInts(t *testing.T) {
	for _, v := range []int64{math.MinInt64, -1, 0, 255, 256, math.MaxInt64} {
		want, _ := EncodeKey(nil, v)
		if got := AppendKeyInt(nil, v); !bytes.Equal(got, want) {
			t.Errorf("AppendKeyInt(%d) = %x, want %x", v, got, want)
		}
		want, _ = EncodeKey(nil, uint64(v))
		if got := AppendKeyUint(nil, uint64(v)); !bytes.Equal(got, want) {
			t.Errorf("AppendKeyUint(%d) = %x, want %x", uint64(v), got, want)
		}
	}
	if want, _ := EncodeKey(nil, nil); !bytes.Equal(AppendKeyNull(nil), want) {
		t.Errorf("AppendKeyNull = %x, want %x", AppendKeyNull(nil), want)
	}
}
