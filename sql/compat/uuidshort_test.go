package compat

import (
	"sync"
	"testing"
	"time"
)

// TestUUIDShort checks UUID_SHORT()'s values on one server: the low byte
// of server_id in the top 8 bits, the start time in seconds from bit 24,
// and values that differ and increase across concurrent callers.
func TestUUIDShort(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	u := NewUUIDShort(start)
	const workers, each = 4, 500
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := uint64(0)
			for range each {
				v := u.next(0x1ff) // only the low byte counts
				if v <= last {
					t.Errorf("value %d after %d: not increasing", v, last)
				}
				last = v
				mu.Lock()
				if seen[v] {
					t.Errorf("value %d twice", v)
				}
				seen[v] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != workers*each {
		t.Fatalf("%d values, want %d", len(seen), workers*each)
	}
	for v := range seen {
		if id := v >> 56; id != 0xff {
			t.Fatalf("value %#x: server id bits %#x, want 0xff", v, id)
		}
		if secs := v << 8 >> 32; secs != uint64(start.Unix()) {
			t.Fatalf("value %#x: start bits %d, want %d", v, secs, start.Unix())
		}
		if n := v & (1<<24 - 1); n >= workers*each {
			t.Fatalf("value %#x: count %d beyond the calls made", v, n)
		}
	}
}
