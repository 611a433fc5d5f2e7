package keyspace

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

var keys = [][]byte{{}, []byte("a"), []byte("a\x00"), []byte("abcdefgh"), []byte("abcdefghi"), {0xFF, 0xFF}}

func TestRoundTrip(t *testing.T) {
	for _, k := range keys {
		for _, ts := range []uint64{1, 42, math.MaxUint64} {
			if got, gotTS, err := DecodeWriteKey(WriteKey(k, ts)); err != nil || !bytes.Equal(got, k) || gotTS != ts {
				t.Errorf("write key %x@%d: got %x@%d, %v", k, ts, got, gotTS, err)
			}
			if got, gotTS, err := DecodeDataKey(DataKey(k, ts)); err != nil || !bytes.Equal(got, k) || gotTS != ts {
				t.Errorf("data key %x@%d: got %x@%d, %v", k, ts, got, gotTS, err)
			}
		}
		if got, err := DecodeLockKey(LockKey(k)); err != nil || !bytes.Equal(got, k) {
			t.Errorf("lock key %x: got %x, %v", k, got, err)
		}
		for _, col := range keys {
			if got, gotCol, err := DecodeNotifyKey(NotifyKey(k, col)); err != nil || !bytes.Equal(got, k) || !bytes.Equal(gotCol, col) {
				t.Errorf("notify key %x/%x: got %x/%x, %v", k, col, got, gotCol, err)
			}
			if !bytes.HasPrefix(NotifyKey(k, col), NotifyBound(k)) {
				t.Errorf("notify key of %x does not start with its bound", k)
			}
		}
		if !bytes.HasPrefix(WriteKey(k, 7), WritePrefix(k)) {
			t.Errorf("write key of %x does not start with its prefix", k)
		}
	}
	for _, id := range []uint64{1, 1 << 40} {
		if got, err := DecodeRegionKey(RegionKey(id)); err != nil || got != id {
			t.Errorf("region key %d: got %d, %v", id, got, err)
		}
	}
}

// TestVersionOrder checks that newer versions sort first and that every
// version of a key sorts before every version of a greater key.
func TestVersionOrder(t *testing.T) {
	if bytes.Compare(WriteKey([]byte("a"), 20), WriteKey([]byte("a"), 10)) >= 0 {
		t.Error("commit_ts 20 does not sort before 10")
	}
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if bytes.Compare(a, b) >= 0 {
				continue
			}
			if bytes.Compare(WriteKey(a, 1), WriteKey(b, math.MaxUint64)) >= 0 {
				t.Errorf("oldest version of %x sorts after newest of %x", a, b)
			}
			// A region [a, b) holds a's notifications, whatever their
			// columns, and none of b's.
			if bytes.Compare(NotifyKey(a, []byte{0xFF, 0xFF, 0xFF}), NotifyBound(b)) >= 0 {
				t.Errorf("a notification of %x sorts after the bound of %x", a, b)
			}
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, err := range map[string]error{
		"lock key as write key":     func() error { _, _, err := DecodeWriteKey(LockKey([]byte("a"))); return err }(),
		"write key as lock key":     func() error { _, err := DecodeLockKey(WriteKey([]byte("a"), 1)); return err }(),
		"short timestamp":           func() error { _, _, err := DecodeDataKey(DataKey([]byte("a"), 1)[:12]); return err }(),
		"empty":                     func() error { _, err := DecodeLockKey(nil); return err }(),
		"truncated user key":        func() error { _, _, err := DecodeNotifyKey(NotifyKey([]byte("a"), []byte("c"))[:5]); return err }(),
		"notify key without column": func() error { _, _, err := DecodeNotifyKey(NotifyBound([]byte("a"))); return err }(),
		"region key length":         func() error { _, err := DecodeRegionKey(RegionKey(1)[:9]); return err }(),
		"region key space":          func() error { _, err := DecodeRegionKey(LockKey([]byte("abcdefg"))[:10]); return err }(),
	} {
		if !errors.Is(err, ErrBadKey) {
			t.Errorf("%s: got %v, want ErrBadKey", name, err)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want []byte }{
		{[]byte("a"), []byte("b")},
		{[]byte{'a', 0xFF}, []byte("b")},
		{[]byte{0xFF}, nil},
	} {
		if got := PrefixEnd(c.in); !bytes.Equal(got, c.want) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", c.in, got, c.want)
		}
	}
}

// FuzzDecodeKey checks that no decoder panics and that every key a decoder
// accepts re-encodes to itself.
func FuzzDecodeKey(f *testing.F) {
	for _, k := range keys {
		f.Add(LockKey(k))
		f.Add(WriteKey(k, 5))
		f.Add(DataKey(k, math.MaxUint64))
		f.Add(NotifyKey(k, []byte("col")))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if k, ts, err := DecodeWriteKey(b); err == nil && !bytes.Equal(WriteKey(k, ts), b) {
			t.Fatalf("write key %x decoded to %x@%d", b, k, ts)
		}
		if k, ts, err := DecodeDataKey(b); err == nil && !bytes.Equal(DataKey(k, ts), b) {
			t.Fatalf("data key %x decoded to %x@%d", b, k, ts)
		}
		if k, err := DecodeLockKey(b); err == nil && !bytes.Equal(LockKey(k), b) {
			t.Fatalf("lock key %x decoded to %x", b, k)
		}
		if k, col, err := DecodeNotifyKey(b); err == nil && !bytes.Equal(NotifyKey(k, col), b) {
			t.Fatalf("notify key %x decoded to %x", b, k)
		}
		if id, err := DecodeRegionKey(b); err == nil && !bytes.Equal(RegionKey(id), b) {
			t.Fatalf("region key %x decoded to %d", b, id)
		}
	})
}

func TestTSValueRoundTrip(t *testing.T) {
	for _, ts := range []uint64{0, 1, 1 << 40, math.MaxUint64} {
		if got, err := DecodeTS(EncodeTS(ts)); err != nil || got != ts {
			t.Errorf("ts %d: got %d, %v", ts, got, err)
		}
	}
	if _, err := DecodeTS([]byte{1, 2, 3}); !errors.Is(err, ErrBadKey) {
		t.Errorf("short timestamp value: got %v, want ErrBadKey", err)
	}
	if k := GCSafePointKey(); k[0] != Meta || bytes.HasPrefix(k, RegionKeyPrefix()) {
		t.Errorf("GC safe point key %x is not a meta key of its own", k)
	}
}
