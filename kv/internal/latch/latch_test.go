package latch

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
)

// TestMutualExclusion has goroutines increment shared counters under the
// latches of overlapping key sets taken in random order. The race detector
// reports any increment not ordered by a latch; the totals catch lost
// updates; a deadlock hangs the test.
func TestMutualExclusion(t *testing.T) {
	tbl := New(8) // few slots: keys share slots
	keys := make([][]byte, 16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%d", i))
	}
	counters := make([]int, len(keys))
	const workers, rounds = 4, 200
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for r := 0; r < rounds; r++ {
				idx := rng.Perm(len(keys))[:3]
				set := [][]byte{keys[idx[0]], keys[idx[1]], keys[idx[2]], keys[idx[0]]}
				g, err := tbl.Acquire(context.Background(), set)
				if err != nil {
					t.Error(err)
					return
				}
				for _, i := range idx {
					counters[i]++
				}
				g.Release()
			}
		}(int64(w))
	}
	wg.Wait()
	total := 0
	for _, c := range counters {
		total += c
	}
	if total != workers*rounds*3 {
		t.Fatalf("total %d, want %d", total, workers*rounds*3)
	}
}

func TestAcquireCancelled(t *testing.T) {
	tbl := New(0)
	held, err := tbl.Acquire(context.Background(), [][]byte{[]byte("a")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tbl.Acquire(ctx, [][]byte{[]byte("b"), []byte("a")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	held.Release()
	// The cancelled attempt released what it took: both keys are free.
	g, err := tbl.Acquire(context.Background(), [][]byte{[]byte("a"), []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	g.Release()
}

// TestAcquireOrAborts: a wait for a held latch ends, holding nothing, when
// the abort channel closes, and the latches it took before are free
// again; a free latch is taken whatever the channel says.
func TestAcquireOrAborts(t *testing.T) {
	tbl := New(1024)
	ctx := context.Background()
	held, err := tbl.Acquire(ctx, [][]byte{[]byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	abort := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := tbl.AcquireOr(ctx, [][]byte{[]byte("a"), []byte("b")}, abort)
		done <- err
	}()
	close(abort)
	if err := <-done; !errors.Is(err, ErrAborted) {
		t.Fatalf("a wait for a held latch when abort closed: %v; want ErrAborted", err)
	}
	held.Release()
	g, err := tbl.AcquireOr(ctx, [][]byte{[]byte("a"), []byte("b")}, abort)
	if err != nil {
		t.Fatalf("free latches with abort closed: %v", err)
	}
	g.Release()
}
