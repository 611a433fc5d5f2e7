package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/percdb/percdb/kv"
)

// regionSpan is a run [lo, hi) of key-sorted items that one region holds.
type regionSpan struct {
	region kv.RegionInfo
	lo, hi int
}

// groupByRegion cuts the sorted keys[lo:hi] into runs that each live in
// one region, routing with one LocateKey per run.
func groupByRegion(ctx context.Context, c kv.Client, keys [][]byte, lo, hi int) ([]regionSpan, error) {
	var out []regionSpan
	for i := lo; i < hi; {
		r, err := c.LocateKey(ctx, keys[i])
		if err != nil {
			return nil, fmt.Errorf("locate key %q: %w", keys[i], err)
		}
		if !r.Contains(keys[i]) {
			return nil, fmt.Errorf("locate key %q: router answered region %d [%q, %q), which does not hold it", keys[i], r.ID, r.Start, r.End)
		}
		j := i + 1
		for j < hi && r.Contains(keys[j]) {
			j++
		}
		out = append(out, regionSpan{region: r, lo: i, hi: j})
		i = j
	}
	return out, nil
}

// splitBySize cuts each span further so that no piece is much larger than
// limit bytes as measured by size (a piece always holds at least one item).
func splitBySize(spans []regionSpan, limit int, size func(i int) int) []regionSpan {
	if limit <= 0 {
		return spans
	}
	var out []regionSpan
	for _, sp := range spans {
		start, acc := sp.lo, 0
		for i := sp.lo; i < sp.hi; i++ {
			acc += size(i)
			if acc >= limit && i+1 < sp.hi {
				out = append(out, regionSpan{region: sp.region, lo: start, hi: i + 1})
				start, acc = i+1, 0
			}
		}
		out = append(out, regionSpan{region: sp.region, lo: start, hi: sp.hi})
	}
	return out
}

// regionFunc is one region-addressed request over keys[lo:hi].
type regionFunc func(ctx context.Context, region kv.RegionInfo, lo, hi int) error

// runSpan runs fn on one span, re-routing after region errors: the route is
// dropped, the span's keys are grouped again (a split may have cut them
// apart) and each new run is retried, within Options.MaxRegionRetries.
func (s *Store) runSpan(ctx context.Context, keys [][]byte, sp regionSpan, fn regionFunc) error {
	rr := newRegionRetrier(s.opts)
	queue := []regionSpan{sp}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		err := fn(ctx, cur.region, cur.lo, cur.hi)
		var re *kv.RegionError
		if !errors.As(err, &re) {
			if err != nil {
				return err
			}
			continue
		}
		s.client.InvalidateRegion(cur.region.ID)
		if err := rr.retry(ctx, err); err != nil {
			return err
		}
		again, err := groupByRegion(ctx, s.client, keys, cur.lo, cur.hi)
		if err != nil {
			return err
		}
		queue = append(again, queue...)
	}
	return nil
}

// runSpans runs fn on every span, concurrently when there is more than one
// (the first in the calling goroutine, which saves a handoff), and returns
// the first error; the other requests are then cancelled through ctx.
func (s *Store) runSpans(ctx context.Context, keys [][]byte, spans []regionSpan, fn regionFunc) error {
	if len(spans) == 1 {
		return s.runSpan(ctx, keys, spans[0], fn)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
			cancel()
		}
	}
	for _, sp := range spans[1:] {
		wg.Go(func() {
			if err := s.runSpan(ctx, keys, sp, fn); err != nil {
				fail(err)
			}
		})
	}
	if err := s.runSpan(ctx, keys, spans[0], fn); err != nil {
		fail(err)
	}
	wg.Wait()
	return first
}

// onRegion runs fn on the region holding key, re-routing after region
// errors.
func (s *Store) onRegion(ctx context.Context, key []byte, fn func(ctx context.Context, region kv.RegionInfo) error) error {
	keys := [][]byte{key}
	spans, err := groupByRegion(ctx, s.client, keys, 0, 1)
	if err != nil {
		return err
	}
	return s.runSpan(ctx, keys, spans[0], func(ctx context.Context, r kv.RegionInfo, _, _ int) error {
		return fn(ctx, r)
	})
}
