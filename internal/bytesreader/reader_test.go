package bytesreader_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/percdb/percdb/internal/bytesreader"
)

var errCorrupt = errors.New("corrupt")

// encode writes the layout the test reads: a signed varint, a count of
// length-prefixed strings, and a big-endian uint64.
func encode(v int64, items []string, u uint64) []byte {
	b := binary.AppendVarint(nil, v)
	b = binary.AppendUvarint(b, uint64(len(items)))
	for _, s := range items {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return binary.BigEndian.AppendUint64(b, u)
}

func decode(b []byte) (int64, []string, uint64, error) {
	r := bytesreader.New(b, "test", errCorrupt)
	v := r.Varint()
	var items []string
	for range r.Count(1) {
		items = append(items, string(r.LenBytes()))
	}
	u := r.Uint64()
	return v, items, u, r.End()
}

func TestRoundTrip(t *testing.T) {
	b := encode(-300, []string{"", "a", "bcd"}, 1<<63+5)
	v, items, u, err := decode(b)
	if err != nil || v != -300 || len(items) != 3 || items[2] != "bcd" || u != 1<<63+5 {
		t.Fatalf("got %d %q %d %v", v, items, u, err)
	}
}

// TestEveryTruncationFails cuts the layout at every length and appends a
// byte: each must be an error wrapping the caller's sentinel, never a
// panic or a silent success.
func TestEveryTruncationFails(t *testing.T) {
	b := encode(7, []string{"xy", "z"}, 9)
	for n := range len(b) {
		if _, _, _, err := decode(b[:n]); !errors.Is(err, errCorrupt) {
			t.Fatalf("cut at %d of %d: err %v", n, len(b), err)
		}
	}
	if _, _, _, err := decode(append(b, 0)); !errors.Is(err, errCorrupt) {
		t.Fatalf("trailing byte: err %v", err)
	}
}

// TestHugeCountRefused: a count the input cannot hold fails before any
// item is read, so a corrupt count cannot make a decoder allocate.
func TestHugeCountRefused(t *testing.T) {
	b := binary.AppendUvarint(nil, 1<<40)
	r := bytesreader.New(append(b, 1, 2, 3), "test", errCorrupt)
	if n := r.Count(1); n != 0 || !errors.Is(r.Err(), errCorrupt) {
		t.Fatalf("count %d err %v", n, r.Err())
	}
	if r.Uvarint() != 0 || r.Bytes(1) != nil {
		t.Fatal("reads after an error must return zero values")
	}
}
