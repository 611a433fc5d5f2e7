package keyspace

import (
	"bytes"
	"math"
	"math/rand"
	"testing"
)

// TestVersionSplitOfVersions checks that a version key splits into the
// user key's prefix and the 8-byte timestamp, and that a key of any other
// space is its own prefix.
func TestVersionSplitOfVersions(t *testing.T) {
	for _, k := range keys {
		for _, ts := range []uint64{0, 1, 42, math.MaxUint64} {
			for _, v := range [][]byte{WriteKey(k, ts), DataKey(k, ts)} {
				n := VersionSplit(v)
				if n != len(v)-8 {
					t.Errorf("VersionSplit(%x) = %d, want %d", v, n, len(v)-8)
				}
				if !IsVersionPrefix(v[:n]) || VersionSplit(v[:n]) != n {
					t.Errorf("prefix %x of %x is not a version prefix", v[:n], v)
				}
			}
		}
		if !bytes.Equal(WriteKey(k, 9)[:VersionSplit(WriteKey(k, 9))], WritePrefix(k)) {
			t.Errorf("write key of %x: prefix is not WritePrefix", k)
		}
		for _, other := range [][]byte{LockKey(k), NotifyKey(k, []byte("c")), NotifyBound(k)} {
			if n := VersionSplit(other); n != len(other) || IsVersionPrefix(other) {
				t.Errorf("VersionSplit(%x) = %d, want the whole key", other, n)
			}
		}
	}
	for _, k := range [][]byte{nil, {Write}, {Data}, SpaceEnd(Write), RegionKey(3), GCSafePointKey()} {
		if n := VersionSplit(k); n != len(k) || IsVersionPrefix(k) {
			t.Errorf("VersionSplit(%x) = %d, want the whole key", k, n)
		}
	}
}

// splitCorpus returns well-formed keys of every space, the bounds the
// store iterates with, and random keys over bytes that make group
// boundaries, markers and shared prefixes likely, ill-formed ones
// included: Pebble may call Split on any key.
func splitCorpus() [][]byte {
	var corpus [][]byte
	for _, k := range keys {
		for _, ts := range []uint64{1, 7, math.MaxUint64} {
			corpus = append(corpus, WriteKey(k, ts), DataKey(k, ts))
		}
		wp := WritePrefix(k)
		corpus = append(corpus, LockKey(k), NotifyKey(k, k), wp, KeyBound(Data, k), PrefixEnd(wp), append(bytes.Clone(wp), 0))
	}
	corpus = append(corpus, nil, SpaceStart(Write), SpaceEnd(Write), SpaceStart(Data), SpaceEnd(Data), RegionKey(1), GCSafePointKey())
	rnd := rand.New(rand.NewSource(1))
	alphabet := []byte{0x00, 0x01, 'a', 0xF7, 0xFA, 0xFE, 0xFF}
	for i := 0; i < 600; i++ {
		k := []byte{[]byte{Write, Data, Lock, Write + 1}[rnd.Intn(4)]}
		for n := rnd.Intn(40); n > 0; n-- {
			k = append(k, alphabet[rnd.Intn(len(alphabet))])
		}
		corpus = append(corpus, k)
		// A random key's own versions and neighbours.
		p := k[:VersionSplit(k)]
		corpus = append(corpus, append(bytes.Clone(p), 0x80, 0, 0, 0, 0, 0, 0, 1), AppendPrefixSuccessor(nil, p))
	}
	return corpus
}

// TestVersionSplitContract checks, over every pair of keys of the
// corpus, the properties Pebble's Comparer.Split and ImmediateSuccessor
// documentation requires of a comparer whose order is bytes.Compare
// (pebble internal/base/comparer.go).
func TestVersionSplitContract(t *testing.T) {
	corpus := splitCorpus()
	prefix := func(k []byte) []byte { return k[:VersionSplit(k)] }
	for _, a := range corpus {
		pa := prefix(a)
		// 1. The prefix is a byte prefix, and 2. sorts before the key
		// when there is a suffix.
		if !bytes.HasPrefix(a, pa) || (len(pa) < len(a) && bytes.Compare(pa, a) >= 0) {
			t.Fatalf("prefix %x of %x", pa, a)
		}
		if VersionSplit(pa) != len(pa) {
			t.Fatalf("prefix %x of %x splits again at %d", pa, a, VersionSplit(pa))
		}
		succ := AppendPrefixSuccessor(nil, pa)
		if VersionSplit(succ) != len(succ) || bytes.Compare(succ, pa) <= 0 {
			t.Fatalf("successor %x of prefix %x: not a greater prefix", succ, pa)
		}
		for _, b := range corpus {
			pb := prefix(b)
			c := bytes.Compare(a, b)
			// 3. Prefixes order keys before suffixes.
			if c <= 0 && bytes.Compare(pa, pb) > 0 {
				t.Fatalf("%x <= %x but prefix %x > %x", a, b, pa, pb)
			}
			// 4. Under one prefix, suffixes order the keys.
			if bytes.Equal(pa, pb) && bytes.Compare(a[len(pa):], b[len(pb):]) != c {
				t.Fatalf("%x and %x share prefix %x but their suffixes order otherwise", a, b, pa)
			}
			// The successor follows every key of the prefix and no prefix
			// lies between it and the prefix.
			if bytes.Equal(pb, pa) && bytes.Compare(b, succ) >= 0 {
				t.Fatalf("%x of prefix %x is not below its successor %x", b, pa, succ)
			}
			if VersionSplit(b) == len(b) && bytes.Compare(b, pa) > 0 && bytes.Compare(b, succ) < 0 {
				t.Fatalf("prefix %x lies between %x and its successor %x", b, pa, succ)
			}
		}
	}
}

// FuzzVersionSplit checks the Split contract (see TestVersionSplitContract)
// on pairs of arbitrary keys.
func FuzzVersionSplit(f *testing.F) {
	f.Add(WriteKey([]byte("a"), 1), WriteKey([]byte("abcdefgh"), 2))
	f.Add(WritePrefix([]byte("abcdefgh")), []byte{Write, 0xFF})
	f.Add([]byte{Data, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 1}, []byte{Data, 0, 0, 0, 0, 0, 0, 0, 0, 0xFE})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, pb := a[:VersionSplit(a)], b[:VersionSplit(b)]
		if bytes.Compare(a, b) <= 0 && bytes.Compare(pa, pb) > 0 {
			t.Fatalf("%x <= %x but prefix %x > %x", a, b, pa, pb)
		}
		if bytes.Equal(pa, pb) && bytes.Compare(a[len(pa):], b[len(pb):]) != bytes.Compare(a, b) {
			t.Fatalf("%x and %x share prefix %x but their suffixes order otherwise", a, b, pa)
		}
		succ := AppendPrefixSuccessor(nil, pa)
		if bytes.Compare(a, succ) >= 0 || VersionSplit(succ) != len(succ) {
			t.Fatalf("successor %x of prefix %x of %x", succ, pa, a)
		}
		if bytes.Equal(pa, pb) || VersionSplit(b) != len(b) {
			return
		}
		if bytes.Compare(b, pa) > 0 && bytes.Compare(b, succ) < 0 {
			t.Fatalf("prefix %x lies between %x and its successor %x", b, pa, succ)
		}
	})
}
