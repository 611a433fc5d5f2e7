package txn

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/percdb/percdb/kv"
)

// TestScanRanges checks Txn.ScanRanges against an iterator per range:
// across the region boundary at "m" (a range crossing it, with and
// without a limit that its first region's part does not reach), through
// a dead transaction's locks (resolved and read past), with the
// transaction's own writes in a range (merged), and empty ranges.
func TestScanRanges(t *testing.T) {
	ctx := context.Background()
	reader := coprReader(t, []string{"a", "1", "b", "2", "c", "3", "e", "4", "l", "5", "n", "6", "p", "7", "r", "8", "s", "9"}, "d", "o")
	kr := func(start, end string) kv.KeyRange { return kv.KeyRange{Start: []byte(start), End: []byte(end)} }
	ranges := []kv.KeyRange{kr("b", "b\x00"), kr("bb", "bc"), kr("c", "f"), kr("g", "g"), kr("k", "o"), kr("o\x00", "p\x00"), kr("q", "")}
	for _, limit := range []int{0, 1, 2, 3} {
		got, err := reader.ScanRanges(ctx, ranges, limit)
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if want := iterRanges(t, reader, ranges, limit); fmtRanges(got) != want {
			t.Fatalf("limit %d: got %s, want %s", limit, fmtRanges(got), want)
		}
	}
	if got, err := reader.ScanRanges(ctx, ranges, 0); err != nil || fmtRanges(got) != "[b=2] [] [c=3 e=4] [] [l=5 n=6] [p=7] [r=8 s=9]" {
		t.Fatalf("got %s, %v", fmtRanges(got), err)
	}
	if string(ranges[4].Start) != "k" {
		t.Fatalf("the caller's ranges were changed: %q", ranges)
	}
	// The transaction's own writes: a put and a delete in a range.
	if err := reader.Set([]byte("lz"), []byte("w")); err != nil {
		t.Fatal(err)
	}
	if err := reader.Delete([]byte("n")); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 2} {
		got, err := reader.ScanRanges(ctx, ranges, limit)
		if err != nil {
			t.Fatal(err)
		}
		if want := iterRanges(t, reader, ranges, limit); fmtRanges(got) != want {
			t.Fatalf("with writes, limit %d: got %s, want %s", limit, fmtRanges(got), want)
		}
	}
	if _, err := reader.ScanRanges(ctx, []kv.KeyRange{kr("a", "c"), kr("b", "d")}, 0); err == nil {
		t.Fatal("overlapping ranges were read")
	}
	if _, err := reader.ScanRanges(ctx, []kv.KeyRange{kr("a", "c")}, -1); err == nil {
		t.Fatal("a negative limit was taken")
	}
}

// TestScanRangesRandom compares ScanRanges with an iterator per range
// over random ranges and limits of a store split in several regions,
// with dead transactions' locks among the keys: ranges that cross
// region ends, end at one, or lie between two keys.
func TestScanRangesRandom(t *testing.T) {
	ctx := context.Background()
	var kvs, dead []string
	for i := range 200 {
		k := fmt.Sprintf("k%03d", i)
		switch i % 17 {
		case 0:
			dead = append(dead, k)
		case 5:
			// No key.
		default:
			kvs = append(kvs, k, fmt.Sprint(i))
		}
	}
	reader := coprReaderSplit(t, []string{"k050", "k051", "k120"}, kvs, dead...)
	r := rand.New(rand.NewSource(1))
	for round := range 200 {
		var bounds []int
		for range 2 * (1 + r.Intn(12)) {
			bounds = append(bounds, r.Intn(210))
		}
		slices.Sort(bounds)
		var ranges []kv.KeyRange
		for j := 0; j+1 < len(bounds); j += 2 {
			end := []byte(fmt.Sprintf("k%03d", bounds[j+1]))
			if j+2 == len(bounds) && r.Intn(4) == 0 {
				end = nil
			}
			ranges = append(ranges, kv.KeyRange{Start: []byte(fmt.Sprintf("k%03d", bounds[j])), End: end})
		}
		limit := r.Intn(4) * r.Intn(20)
		got, err := reader.ScanRanges(ctx, ranges, limit)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if want := iterRanges(t, reader, ranges, limit); fmtRanges(got) != want {
			t.Fatalf("round %d, ranges %q, limit %d:\ngot  %s\nwant %s", round, ranges, limit, fmtRanges(got), want)
		}
	}
}

// iterRanges reads each range with an iterator, at most limit pairs (0:
// all), formatted as fmtRanges does.
func iterRanges(t *testing.T, tx *Txn, ranges []kv.KeyRange, limit int) string {
	t.Helper()
	out := make([][]kv.KvPair, len(ranges))
	for i, kr := range ranges {
		if len(kr.End) > 0 && string(kr.Start) >= string(kr.End) {
			continue
		}
		it, err := tx.Iter(context.Background(), kr.Start, kr.End)
		if err != nil {
			t.Fatal(err)
		}
		for it.Valid() && (limit == 0 || len(out[i]) < limit) {
			out[i] = append(out[i], kv.KvPair{Key: slices.Clone(it.Key()), Value: slices.Clone(it.Value())})
			if err := it.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		it.Close()
	}
	return fmtRanges(out)
}

// fmtRanges formats each range's pairs as [k=v ...].
func fmtRanges(rs [][]kv.KvPair) string {
	var b strings.Builder
	for i, ps := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('[')
		for j, p := range ps {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%s=%s", p.Key, p.Value)
		}
		b.WriteByte(']')
	}
	return b.String()
}
