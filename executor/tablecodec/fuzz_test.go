package tablecodec

import (
	"bytes"
	"testing"
)

// The fuzz targets feed arbitrary bytes to every decoder. Beyond not
// panicking, they check that what decodes re-encodes to something that
// decodes to the same thing. Seed corpora are in testdata/fuzz.

func FuzzDecodeKey(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, v, err := DecodeKey(b)
		skipped, serr := SkipKey(b)
		if err != nil {
			return
		}
		if serr != nil || len(skipped) != len(rest) {
			t.Fatalf("SkipKey(%x) left %d bytes (%v), DecodeKey %d", b, len(skipped), serr, len(rest))
		}
		enc, err := EncodeKey(nil, v)
		if err != nil {
			return // NaN floats decode but are not keys
		}
		_, v2, err := DecodeKey(enc)
		if err != nil {
			t.Fatalf("re-encoded %#v as %x, which does not decode: %v", v, enc, err)
		}
		enc2, err := EncodeKey(nil, v2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("%#v encodes as %x, decodes as %#v, re-encodes as %x (%v)", v, enc, v2, enc2, err)
		}
	})
}

func FuzzDecodeBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, out, err := DecodeBytes(b, nil)
		if err != nil {
			return
		}
		if enc := EncodeBytes(nil, out); !bytes.Equal(enc, b[:len(b)-len(rest)]) {
			t.Fatalf("DecodeBytes(%x) = %q, which encodes as %x", b, out, enc)
		}
	})
}

func FuzzDecodeRow(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := RowColumnIDs(b)
		if err != nil {
			// DecodeRow must fail too, or at least not panic, whatever is asked.
			_ = DecodeRow(b, []int64{1, 2, 3}, make([]any, 3), make([]bool, 3))
			return
		}
		vals, present := make([]any, len(ids)), make([]bool, len(ids))
		if err := DecodeRow(b, ids, vals, present); err != nil {
			return
		}
		enc, err := EncodeRow(ids, vals)
		if err != nil {
			t.Fatalf("decoded row %#v does not re-encode: %v", vals, err)
		}
		vals2 := make([]any, len(ids))
		if err := DecodeRow(enc, ids, vals2, present); err != nil {
			t.Fatalf("re-encoded row %x does not decode: %v", enc, err)
		}
		enc2, err := EncodeRow(ids, vals2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("row re-encodes as %x then %x (%v)", enc, enc2, err)
		}
	})
}

func FuzzDecodeRowKey(f *testing.F) {
	f.Fuzz(func(t *testing.T, key []byte, common bool) {
		tid, h, err := DecodeRowKey(key, common)
		if err != nil {
			return
		}
		if k := RowKey(nil, tid, h); !bytes.Equal(k, key) {
			t.Fatalf("DecodeRowKey(%x) = %d, %v, which encodes as %x", key, tid, h, k)
		}
	})
}

func FuzzDecodeIndexKey(f *testing.F) {
	f.Fuzz(func(t *testing.T, key, value []byte, numCols uint8, common bool) {
		tid, iid, vals, err := DecodeIndexKey(key)
		if err != nil {
			return
		}
		if k := append(IndexPrefix(nil, tid, iid), vals...); !bytes.Equal(k, key) {
			t.Fatalf("DecodeIndexKey(%x) = %d, %d, %x, which encodes as %x", key, tid, iid, vals, k)
		}
		h, err := DecodeIndexHandle(key, value, int(numCols%8), common)
		if err != nil {
			return
		}
		if common == h.IsInt() {
			t.Fatalf("DecodeIndexHandle(common=%v) returned %v", common, h)
		}
	})
}

// FuzzSkipValue: skipValue's inline steps end where skip does, and fail
// where it fails.
func FuzzSkipValue(f *testing.F) {
	for _, seed := range [][]byte{{tagInt64, 0x80, 0x01}, {tagString, 3, 'a', 'b', 'c'}, {tagNull}, {tagUint64, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {tagBytes, 5, 1}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, slow := rowDecoder{b: b}, rowDecoder{b: b}
		ferr, serr := fast.skipValue(), slow.skip()
		if (ferr == nil) != (serr == nil) || (ferr == nil && fast.pos != slow.pos) {
			t.Fatalf("%x: skipValue at %d, %v; skip at %d, %v", b, fast.pos, ferr, slow.pos, serr)
		}
	})
}
