package txntypes

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

var locks = []*Lock{
	{Type: LockPut, Primary: []byte("p"), StartTS: 10, TTL: 3000, ShortValue: []byte("v")},
	{Type: LockPut, Primary: []byte("p"), StartTS: 10, TTL: 3000, ShortValue: []byte{}},
	{Type: LockPut, Primary: []byte("p"), StartTS: 1 << 62, TTL: 0, MinCommitTS: 1<<62 + 1, TxnSize: 1000},
	{Type: LockDelete, Primary: []byte{}, StartTS: 1},
	{Type: LockLock, Primary: bytes.Repeat([]byte("k"), 300), StartTS: 7, TTL: 1, ShortValue: bytes.Repeat([]byte("v"), ShortValueMaxLen)},
	{Type: LockPessimistic, Primary: []byte("p"), StartTS: 10, TTL: 3000, ForUpdateTS: 12, TxnSize: 1},
	{Type: LockPut, Primary: []byte("p"), StartTS: 10, TTL: 3000, ShortValue: []byte("v"), MinCommitTS: 13, ForUpdateTS: 12},
	{Type: LockDelete, Primary: []byte("p"), StartTS: 10, Notify: [][]byte{[]byte("hash"), {}}},
	{Type: LockPut, Primary: []byte("p"), StartTS: 10, ShortValue: []byte("v"), Notify: [][]byte{bytes.Repeat([]byte("o"), 200)}},
}

var writes = []*Write{
	{Type: WritePut, StartTS: 10, ShortValue: []byte("v")},
	{Type: WritePut, StartTS: 10, ShortValue: []byte{}},
	{Type: WritePut, StartTS: 10},
	{Type: WriteDelete, StartTS: 1 << 63},
	{Type: WriteLock, StartTS: 3},
	{Type: WriteRollback, StartTS: 3},
	{Type: WritePut, StartTS: 5, ShortValue: []byte("x"), OverlappedRollback: true},
	{Type: WriteLock, StartTS: 3, LastChangeTS: 2, VersionsToLastChange: 1},
	{Type: WriteLock, StartTS: 1 << 62, LastChangeTS: 1<<62 - 1, VersionsToLastChange: 1 << 40},
	{Type: WriteLock, StartTS: 3, VersionsToLastChange: 4}, // no change below
	{Type: WriteLock, StartTS: 3, LastChangeTS: 2, VersionsToLastChange: 9, OverlappedRollback: true},
}

// TestWriteWithoutLastChange checks that a Lock record encoded before the
// last-change field existed (type, start_ts and nothing else: the bytes
// are spelled out, not produced by Encode) reads as one without a
// pointer, and that a record without a pointer encodes as it always did.
func TestWriteWithoutLastChange(t *testing.T) {
	old := []byte{byte(WriteLock), 3}
	w, err := DecodeWrite(old)
	if err != nil {
		t.Fatal(err)
	}
	if w.HasLastChange() || w.LastChangeTS != 0 {
		t.Fatalf("old record read with a pointer: %+v", w)
	}
	if got := w.Encode(); !bytes.Equal(got, old) {
		t.Fatalf("record without a pointer encodes as %x, want %x", got, old)
	}
}

// TestNextLastChange checks the pointer a Lock record gets from the
// record directly below it.
func TestNextLastChange(t *testing.T) {
	for _, c := range []struct {
		below   Write
		belowTS uint64
		ts, n   uint64
		known   bool
	}{
		{Write{Type: WritePut, StartTS: 1}, 5, 5, 1, true},
		{Write{Type: WriteDelete, StartTS: 1}, 5, 5, 1, true},
		{Write{Type: WriteLock, StartTS: 4, LastChangeTS: 2, VersionsToLastChange: 3}, 5, 2, 4, true},
		{Write{Type: WriteLock, StartTS: 4, VersionsToLastChange: 3}, 5, 0, 4, true},
		{Write{Type: WriteLock, StartTS: 4}, 5, 0, 0, false},
		{Write{Type: WriteRollback, StartTS: 5}, 5, 0, 0, false},
	} {
		ts, n, known := c.below.NextLastChange(c.belowTS)
		if ts != c.ts || n != c.n || known != c.known {
			t.Errorf("above %+v at %d: got %d, %d, %v; want %d, %d, %v", c.below, c.belowTS, ts, n, known, c.ts, c.n, c.known)
		}
	}
}

func TestLockRoundTrip(t *testing.T) {
	for _, l := range locks {
		got, err := DecodeLock(l.Encode())
		if err != nil {
			t.Fatalf("%+v: %v", l, err)
		}
		if !reflect.DeepEqual(got, l) {
			t.Errorf("round trip of %+v gave %+v", l, got)
		}
	}
}

func TestWriteRoundTrip(t *testing.T) {
	for _, w := range writes {
		got, err := DecodeWrite(w.Encode())
		if err != nil {
			t.Fatalf("%+v: %v", w, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("round trip of %+v gave %+v", w, got)
		}
	}
}

// TestPeekWriteType checks that the type read from an encoded Write's
// first byte is the type it was encoded with, and that an empty record or
// an unknown type is corrupt.
func TestPeekWriteType(t *testing.T) {
	for _, w := range writes {
		got, err := PeekWriteType(w.Encode())
		if err != nil || got != w.Type {
			t.Errorf("peek of %+v gave %v, %v", w, got, err)
		}
	}
	for _, b := range [][]byte{nil, {0xee, 1}} {
		if _, err := PeekWriteType(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("peek of %x: got %v, want ErrCorrupt", b, err)
		}
	}
}

// TestUnknownFieldSkipped checks that a field added by a later version is
// skipped by this one.
func TestUnknownFieldSkipped(t *testing.T) {
	w := &Write{Type: WritePut, StartTS: 9, ShortValue: []byte("v")}
	b := appendField(w.Encode(), 'z', []byte("future"))
	got, err := DecodeWrite(b)
	if err != nil || !reflect.DeepEqual(got, w) {
		t.Fatalf("got %+v, %v", got, err)
	}
	l := locks[0]
	gotLock, err := DecodeLock(appendUvarintField(l.Encode(), 'z', 77))
	if err != nil || !reflect.DeepEqual(gotLock, l) {
		t.Fatalf("got %+v, %v", gotLock, err)
	}
}

func TestDecodeCorrupt(t *testing.T) {
	good := locks[0].Encode()
	for name, b := range map[string][]byte{
		"empty":           nil,
		"unknown type":    append([]byte{'X'}, good[1:]...),
		"truncated":       good[:len(good)-1],
		"zero start_ts":   (&Lock{Type: LockPut, Primary: []byte("p")}).Encode(),
		"duplicate field": appendUvarintField(appendUvarintField(good, tagTxnSize, 1), tagTxnSize, 2),
		"long primary":    {byte(LockPut), 0x7f, 'p'},
		"empty notify":    appendField((&Lock{Type: LockPut, StartTS: 1}).Encode(), tagNotify, nil),
		"notify column":   appendField((&Lock{Type: LockPut, StartTS: 1}).Encode(), tagNotify, []byte{5, 'a'}),
		"bad varint":      {byte(LockPut), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
		"long short value": appendField((&Lock{Type: LockPut, StartTS: 1}).Encode(), tagShortValue,
			make([]byte, ShortValueMaxLen+1)),
		"min_commit_ts trailing": appendField((&Lock{Type: LockPut, StartTS: 1}).Encode(), tagMinCommitTS, []byte{1, 2}),
		"for_update_ts trailing": appendField((&Lock{Type: LockPessimistic, StartTS: 1}).Encode(), tagForUpdateTS, []byte{1, 2}),
	} {
		if _, err := DecodeLock(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("lock %s: got %v, want ErrCorrupt", name, err)
		}
	}
	goodW := writes[0].Encode()
	for name, b := range map[string][]byte{
		"empty":                     nil,
		"unknown type":              append([]byte{'X'}, goodW[1:]...),
		"truncated":                 goodW[:len(goodW)-1],
		"zero start_ts":             (&Write{Type: WritePut}).Encode(),
		"flag with data":            appendField((&Write{Type: WritePut, StartTS: 1}).Encode(), tagOverlappedRollback, []byte{1}),
		"last change on a put":      appendField((&Write{Type: WritePut, StartTS: 1}).Encode(), tagLastChange, []byte{1, 1}),
		"last change zero versions": appendField((&Write{Type: WriteLock, StartTS: 1}).Encode(), tagLastChange, []byte{1, 0}),
		"last change trailing":      appendField((&Write{Type: WriteLock, StartTS: 1}).Encode(), tagLastChange, []byte{1, 1, 1}),
		"last change short":         appendField((&Write{Type: WriteLock, StartTS: 1}).Encode(), tagLastChange, []byte{1}),
	} {
		if _, err := DecodeWrite(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("write %s: got %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzDecodeLock checks that decoding never panics and that a decoded
// lock survives a round trip.
func FuzzDecodeLock(f *testing.F) {
	for _, l := range locks {
		f.Add(l.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLock(b)
		if err != nil {
			return
		}
		again, err := DecodeLock(l.Encode())
		if err != nil || !reflect.DeepEqual(again, l) {
			t.Fatalf("%x decoded to %+v, which round-trips to %+v, %v", b, l, again, err)
		}
	})
}

// FuzzDecodeWrite checks that decoding never panics, that a decoded
// write survives a round trip, and that the narrow reading of a short
// Put agrees with the general walk.
func FuzzDecodeWrite(f *testing.F) {
	for _, w := range writes {
		f.Add(w.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if ts, v, ok := parseShortPut(b); ok {
			want, err := parseWriteFields(b)
			if got := (Write{Type: WritePut, StartTS: ts, ShortValue: v}); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%x: narrow %+v; fields %+v, %v", b, got, want, err)
			}
		}
		w, err := DecodeWrite(b)
		if err != nil {
			return
		}
		again, err := DecodeWrite(w.Encode())
		if err != nil || !reflect.DeepEqual(again, w) {
			t.Fatalf("%x decoded to %+v, which round-trips to %+v, %v", b, w, again, err)
		}
	})
}

// shortPutSamples are encodings around parseShortPut's shape: Put records
// with a short value only (which it must read) and their near misses
// (other fields before or after the value, other types, long and
// truncated values, start_ts of every uvarint width), each also cut
// short and with one byte changed.
func shortPutSamples() [][]byte {
	var base [][]byte
	for _, w := range writes {
		base = append(base, w.Encode())
	}
	for _, ts := range []uint64{1, 127, 128, 1 << 40, 1<<64 - 1} {
		for _, n := range []int{0, 1, 127, 128, ShortValueMaxLen} {
			v := bytes.Repeat([]byte{'v'}, n)
			put := (&Write{Type: WritePut, StartTS: ts, ShortValue: v}).Encode()
			base = append(base, put,
				appendField(put, 'z', []byte("future")),
				appendField(put, tagShortValue, v),
				appendField(appendUvarint([]byte{byte(WritePut)}, ts), tagOverlappedRollback, nil),
				append(appendField(appendUvarint([]byte{byte(WritePut)}, ts), 'z', nil), put[1+len(appendUvarint(nil, ts)):]...),
				append([]byte{byte(WriteLock)}, put[1:]...),
				append([]byte{byte(WriteDelete)}, put[1:]...))
		}
		long := appendField(appendUvarint([]byte{byte(WritePut)}, ts), tagShortValue, make([]byte, ShortValueMaxLen+1))
		base = append(base, long)
	}
	base = append(base, []byte{byte(WritePut), 0, tagShortValue, 0}, []byte{byte(WritePut), 1, tagShortValue, 0x80})
	var out [][]byte
	for _, b := range base {
		out = append(out, b)
		for cut := 0; cut < len(b); cut++ {
			out = append(out, b[:cut])
		}
		for i := range b {
			c := bytes.Clone(b)
			c[i] ^= 0x81
			out = append(out, c)
		}
	}
	return out
}

// TestShortPutMatchesFields checks that ParseWrite's narrow reading of a
// Put record with only a short value returns what the general walk over
// the fields returns, on every sample, and that it does read the records
// it is for.
func TestShortPutMatchesFields(t *testing.T) {
	read := 0
	for _, b := range shortPutSamples() {
		ts, v, ok := parseShortPut(b)
		want, err := parseWriteFields(b)
		if !ok {
			// ParseWrite is the general walk.
			got, gerr := ParseWrite(b)
			if !reflect.DeepEqual(got, want) || (gerr == nil) != (err == nil) {
				t.Errorf("%x: ParseWrite %+v, %v; fields %+v, %v", b, got, gerr, want, err)
			}
			continue
		}
		read++
		got := Write{Type: WritePut, StartTS: ts, ShortValue: v}
		if err != nil || !reflect.DeepEqual(got, want) || cap(v) != len(v) {
			t.Errorf("%x: narrow %+v (cap %d); fields %+v, %v", b, got, cap(v), want, err)
		}
	}
	// Each start_ts and value length makes one record the narrow path
	// reads (writes[0] and [1] are two more), and no near miss.
	if want := 5*5 + 2; read < want {
		t.Errorf("the narrow path read %d records, want at least %d", read, want)
	}
}
