package txn

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// dump lists a buffer in key order as key=op:value.
func dump(b *memBuffer) []string {
	var out []string
	for _, k := range b.keys() {
		e := b.entries[k]
		out = append(out, fmt.Sprintf("%s=%d:%s", k, e.op, e.value))
	}
	return out
}

func put(b *memBuffer, k, v string) { b.set([]byte(k), entry{op: bufPut, value: []byte(v)}) }

func TestMemBufferOrderAndSize(t *testing.T) {
	b := newMemBuffer()
	put(b, "c", "3")
	put(b, "a", "1")
	if got := b.keys(); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("keys = %v", got)
	}
	put(b, "b", "2")
	put(b, "a", "11") // overwrite: no new key
	b.set([]byte("d"), entry{op: bufDelete})
	want := []string{"a=1:11", "b=1:2", "c=1:3", "d=2:"}
	if got := dump(b); !slices.Equal(got, want) {
		t.Fatalf("dump = %v, want %v", got, want)
	}
	if b.len() != 4 || b.size != (1+2)+(1+1)+(1+1)+1 {
		t.Fatalf("len %d size %d", b.len(), b.size)
	}
	snap := b.rangeSnapshot([]byte("b"), []byte("d"))
	if len(snap) != 2 || string(snap[0].key) != "b" || string(snap[1].key) != "c" {
		t.Fatalf("range [b,d) = %v", snap)
	}
	if got := b.rangeSnapshot([]byte("c"), nil); len(got) != 2 {
		t.Fatalf("range [c,+inf) has %d pairs", len(got))
	}
	// The snapshot is a copy: later writes do not show in it.
	put(b, "b", "changed")
	if string(snap[0].e.value) != "2" {
		t.Fatalf("snapshot changed under a write: %q", snap[0].e.value)
	}
}

func TestMemBufferCopiesValues(t *testing.T) {
	b := newMemBuffer()
	v := []byte("value")
	b.set([]byte("k"), entry{op: bufPut, value: v})
	v[0] = 'X'
	if e, _ := b.get([]byte("k")); string(e.value) != "value" {
		t.Fatalf("buffer shares the caller's slice: %q", e.value)
	}
}

func TestStagingCleanupUndoesOnlyItsStage(t *testing.T) {
	b := newMemBuffer()
	put(b, "a", "1")
	put(b, "b", "1")
	before, beforeSize := dump(b), b.size

	h1 := b.staging()
	put(b, "a", "2")  // overwrite
	put(b, "c", "2")  // new key
	put(b, "c", "22") // twice in one stage
	b.set([]byte("b"), entry{op: bufDelete})
	h2 := b.staging()
	put(b, "d", "3")
	b.cleanup(h2) // undo d only
	if _, ok := b.get([]byte("d")); ok {
		t.Fatal("cleanup of the inner stage kept its write")
	}
	if e, _ := b.get([]byte("c")); string(e.value) != "22" {
		t.Fatalf("cleanup of the inner stage undid the outer stage: c=%q", e.value)
	}
	b.cleanup(h1)
	if got := dump(b); !slices.Equal(got, before) || b.size != beforeSize {
		t.Fatalf("after cleanup: %v size %d, want %v size %d", got, b.size, before, beforeSize)
	}
	if len(b.created)+len(b.overwritten) != 0 || len(b.stages) != 0 {
		t.Fatalf("undo log %d+%d, stages %d after closing every stage", len(b.created), len(b.overwritten), len(b.stages))
	}
	// The keys list forgets the undone keys even when re-added later.
	put(b, "c", "again")
	if got := b.keys(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("keys = %v", got)
	}
}

func TestStagingReleaseKeepsWrites(t *testing.T) {
	b := newMemBuffer()
	h1 := b.staging()
	put(b, "a", "1")
	h2 := b.staging()
	put(b, "b", "2")
	b.release(h2) // b joins stage h1
	if len(b.stages) != 1 {
		t.Fatalf("%d stages open after release", len(b.stages))
	}
	b.cleanup(h1) // undoes a and b
	if b.len() != 0 || b.size != 0 {
		t.Fatalf("len %d size %d after cleanup of the outer stage", b.len(), b.size)
	}
	h := b.staging()
	put(b, "c", "3")
	b.release(h)
	if len(b.created)+len(b.overwritten) != 0 {
		t.Fatalf("undo log kept %d+%d records with no stage open", len(b.created), len(b.overwritten))
	}
	// Closed, unknown and zero handles are ignored.
	b.cleanup(h)
	b.cleanup(0)
	b.release(99)
	if got := dump(b); !slices.Equal(got, []string{"c=1:3"}) {
		t.Fatalf("dump = %v", got)
	}
}

// TestMemBufferRandomAgainstModel checks keys, sizes and staging against a
// plain map, over random writes and stage operations.
func TestMemBufferRandomAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := newMemBuffer()
	model := map[string]string{}
	var saved []map[string]string // model at each open stage
	var handles []StagingHandle
	for step := range 5000 {
		switch op := rng.IntN(10); {
		case op < 6:
			k := fmt.Sprintf("k%02d", rng.IntN(40))
			v := fmt.Sprintf("v%d", step)
			put(b, k, v)
			model[k] = v
		case op < 7:
			handles = append(handles, b.staging())
			saved = append(saved, maps.Clone(model))
		case op < 8 && len(handles) > 0:
			i := rng.IntN(len(handles))
			b.cleanup(handles[i])
			model = saved[i]
			handles, saved = handles[:i], saved[:i]
		case op < 9 && len(handles) > 0:
			i := rng.IntN(len(handles))
			b.release(handles[i])
			handles, saved = handles[:i], saved[:i]
		default:
			_ = b.keys()
		}
		if step%50 == 0 || step == 4999 {
			var want []string
			size := 0
			for k, v := range model {
				want = append(want, fmt.Sprintf("%s=1:%s", k, v))
				size += len(k) + len(v)
			}
			slices.Sort(want)
			if got := dump(b); !slices.Equal(got, want) || b.size != size {
				t.Fatalf("step %d: got %v (size %d), want %v (size %d)", step, got, b.size, want, size)
			}
		}
	}
}

// TestMemBufferEmptyValueStaysEmpty: an empty value, first or later write
// of its key, is kept non-nil (nil means no value: a delete or a lock).
func TestMemBufferEmptyValueStaysEmpty(t *testing.T) {
	b := newMemBuffer()
	for range 2 {
		b.set([]byte("k"), entry{op: bufPut, value: []byte{}})
		if e, _ := b.get([]byte("k")); e.value == nil {
			t.Fatal("an empty value became nil")
		}
	}
}

// BenchmarkMemBufferLarge buffers the writes of a 200,000-row INSERT ...
// SELECT (a row key and two index keys per row, in one statement stage)
// and reports the live heap they take per key.
func BenchmarkMemBufferLarge(b *testing.B) {
	const rows = 200000
	value := make([]byte, 100)
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		buf := newMemBuffer()
		h := buf.staging()
		for r := range rows {
			buf.set(fmt.Appendf(nil, "t\x80\x00\x00\x00\x00\x00\x00\x2a_r%08d", r), entry{op: bufPut, value: value, presumeNotExists: true})
			buf.set(fmt.Appendf(nil, "t\x80\x00\x00\x00\x00\x00\x00\x2a_i1%08d", r), entry{op: bufPut, value: []byte{'0'}, presumeNotExists: true})
			buf.set(fmt.Appendf(nil, "t\x80\x00\x00\x00\x00\x00\x00\x2a_i2%08d", r), entry{op: bufPut, value: []byte{'0'}, presumeNotExists: true})
		}
		buf.keys()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(buf.len()), "heap-B/key")
		b.ReportMetric(float64(buf.size)/float64(buf.len()), "data-B/key")
		buf.release(h)
		runtime.KeepAlive(buf)
	}
}
