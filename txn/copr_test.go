package txn

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn/txntest"
)

// keysCoprocessor's programs output the keys they are fed, "key;" each,
// and are full after every two.
type keysCoprocessor struct{}

type keysProgram struct {
	n   int
	out []byte
}

func (keysCoprocessor) Compile([]byte) (kv.CoprocessorProgram, error) { return &keysProgram{}, nil }

func (p *keysProgram) Feed(key, _ []byte) (full, done bool, err error) {
	p.out = append(append(p.out, key...), ';')
	p.n++
	return p.n%2 == 0, false, nil
}

func (p *keysProgram) Output() ([]byte, error) {
	out := p.out
	p.out = nil
	return out, nil
}

// TestCoprocessor checks that Txn.Coprocessor walks every region and every
// page of one in key order, resolves a dead transaction's lock met on the
// way as a scan does, and refuses a range where the transaction has
// writes of its own.
func TestCoprocessor(t *testing.T) {
	ctx := context.Background()
	reader := coprReader(t, []string{"a", "1", "b", "2", "c", "3", "n", "4", "p", "5"}, "d", "o")
	it, err := reader.Coprocessor(ctx, []byte("a"), nil, nil)
	got := drainCopr(t, it, err)
	if want := "a;b;|c;|n;p;|"; strings.Join(got, "|")+"|" != want || it.Visited() != 5 {
		t.Fatalf("outputs %q (visited %d), want %q", got, it.Visited(), want)
	}

	if err := reader.Set([]byte("b2"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Coprocessor(ctx, []byte("a"), []byte("c"), nil); !errors.Is(err, ErrBufferedWrites) {
		t.Fatalf("with a buffered write in the range: %v", err)
	}
	if _, err := reader.Coprocessor(ctx, []byte("c"), nil, nil); err != nil {
		t.Fatalf("with a buffered write outside the range: %v", err)
	}
}

// TestCoprocessorRanges checks that Txn.CoprocessorRanges feeds one
// program exactly its ranges' keys in order, across a region boundary
// (the env splits at "m") and through pages that stop inside a range,
// resolves a dead transaction's locks met in the ranges, and refuses
// overlapping ranges and ranges where the transaction has writes.
func TestCoprocessorRanges(t *testing.T) {
	ctx := context.Background()
	reader := coprReader(t, []string{"a", "1", "b", "2", "c", "3", "e", "4", "l", "5", "n", "6", "p", "7", "r", "8"}, "d", "o")
	kr := func(start, end string) kv.KeyRange { return kv.KeyRange{Start: []byte(start), End: []byte(end)} }
	// b is a point; [c, f) holds the lock on d; [k, o) crosses the
	// region boundary; [q, ) is unbounded; [x, x) is empty.
	ranges := []kv.KeyRange{kr("b", "b\x00"), kr("c", "f"), kr("k", "o"), kr("o\x00", "p"), kr("q", "")}
	it, err := reader.CoprocessorRanges(ctx, ranges, nil)
	got := drainCopr(t, it, err)
	// Pages of two keys; the region boundary at m ends a request.
	if want := "b;c;|e;l;|n;r;|"; strings.Join(got, "|")+"|" != want || it.Visited() != 6 {
		t.Fatalf("outputs %q (visited %d), want %q", got, it.Visited(), want)
	}
	if string(ranges[1].Start) != "c" {
		t.Fatalf("the caller's ranges were changed: %q", ranges)
	}

	if _, err := reader.CoprocessorRanges(ctx, []kv.KeyRange{kr("a", "c"), kr("b", "d")}, nil); err == nil {
		t.Fatal("overlapping ranges were read")
	}
	if err := reader.Set([]byte("z"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.CoprocessorRanges(ctx, []kv.KeyRange{kr("a", "b"), kr("y", "")}, nil); !errors.Is(err, ErrBufferedWrites) {
		t.Fatalf("with a buffered write in a range: %v", err)
	}
	if _, err := reader.CoprocessorRanges(ctx, []kv.KeyRange{kr("a", "b"), kr("y", "y\x00")}, nil); err != nil {
		t.Fatalf("with a buffered write outside the ranges: %v", err)
	}
}

// TestCoprocessorReverse checks that Txn.CoprocessorReverse feeds one
// program the ranges' keys in descending order, the last range first,
// walking the regions from the last backwards (the env splits at "m";
// here also at "f" and "q", so that a range spans three regions and an
// unbounded one starts in the last), through pages that stop inside a
// range and region boundaries that cut one; resolves a dead
// transaction's locks met on the way as a forward walk does; and refuses
// ranges where the transaction has writes.
func TestCoprocessorReverse(t *testing.T) {
	ctx := context.Background()
	reader := coprReaderSplit(t, []string{"f", "m", "q"},
		[]string{"a", "1", "b", "2", "c", "3", "e", "4", "g", "5", "l", "6", "n", "7", "p", "8", "r", "9", "t", "10"}, "d", "o")
	kr := func(start, end string) kv.KeyRange { return kv.KeyRange{Start: []byte(start), End: []byte(end)} }

	it, err := reader.CoprocessorReverse(ctx, []kv.KeyRange{kr("", "")}, nil)
	got := drainCopr(t, it, err)
	// Pages of two keys; each region boundary (q, m, f) ends a request.
	if want := "t;r;|p;n;|l;g;|e;c;|b;a;|"; strings.Join(got, "|")+"|" != want || it.Visited() != 10 {
		t.Fatalf("whole key space backwards: outputs %q (visited %d), want %q", got, it.Visited(), want)
	}

	// b is a point; [c, h) holds the lock on d and crosses f; [k, s)
	// crosses m and q and holds the lock on o; [s, ) is unbounded.
	ranges := []kv.KeyRange{kr("b", "b\x00"), kr("c", "h"), kr("k", "o\x00"), kr("p", "s"), kr("s", "")}
	it, err = reader.CoprocessorReverse(ctx, ranges, nil)
	got = drainCopr(t, it, err)
	if want := "t;r;|p;n;|l;g;|e;c;|b;|"; strings.Join(got, "|")+"|" != want || it.Visited() != 9 {
		t.Fatalf("ranges backwards: outputs %q (visited %d), want %q", got, it.Visited(), want)
	}
	if string(ranges[4].Start) != "s" || len(ranges[4].End) != 0 || string(ranges[1].End) != "h" {
		t.Fatalf("the caller's ranges were changed: %q", ranges)
	}

	// Every key back to one range inside one region, and none.
	it, err = reader.CoprocessorReverse(ctx, []kv.KeyRange{kr("g", "m")}, nil)
	if got := drainCopr(t, it, err); strings.Join(got, "|") != "l;g;" {
		t.Fatalf("[g, m) backwards: %q", got)
	}
	it, err = reader.CoprocessorReverse(ctx, []kv.KeyRange{kr("h", "k"), kr("u", "")}, nil)
	if got := drainCopr(t, it, err); len(got) != 0 {
		t.Fatalf("ranges of no key backwards: %q", got)
	}

	if _, err := reader.CoprocessorReverse(ctx, []kv.KeyRange{kr("a", "c"), kr("b", "d")}, nil); err == nil {
		t.Fatal("overlapping ranges were read")
	}
	if err := reader.Set([]byte("z"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.CoprocessorReverse(ctx, []kv.KeyRange{kr("a", "b"), kr("y", "")}, nil); !errors.Is(err, ErrBufferedWrites) {
		t.Fatalf("with a buffered write in a range: %v", err)
	}
}

// coprReader returns a transaction over a store of keysCoprocessor split
// at "m", in which kvs (key, value, ...) are committed and dead are
// locked by a transaction whose locks' TTL has passed.
func coprReader(t *testing.T, kvs []string, dead ...string) *Txn {
	t.Helper()
	return coprReaderSplit(t, []string{"m"}, kvs, dead...)
}

// coprReaderSplit is coprReader over a store split at splits.
func coprReaderSplit(t *testing.T, splits, kvs []string, dead ...string) *Txn {
	t.Helper()
	ctx := context.Background()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone, Coprocessor: keysCoprocessor{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	e := newEnvOn(t, ks, txntest.NewClockOracle(0), Options{}, splits...)
	mustCommit(t, e.s, kvs...)
	dying := e.dyingStore(t, time.Millisecond)
	tx, err := dying.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range dead {
		if err := tx.Set([]byte(k), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatalf("dying commit: %v", err)
	}
	time.Sleep(5 * time.Millisecond) // the locks' TTL passes
	reader, err := e.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return reader
}

// drainCopr returns the outputs of it (started with error err) that are
// not empty (a page may be empty: the walk's last).
func drainCopr(t *testing.T, it *CoprIter, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		data, err := it.Next(context.Background())
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 {
			got = append(got, string(data))
		}
	}
}
