package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/percdb/percdb/kv"
)

// errEmptyKey: keys are never empty (kv reserves nothing, but an empty key
// is always a caller's bug, and an empty End means +infinity).
var errEmptyKey = errors.New("empty key")

// checkKey rejects keys no caller should send.
func checkKey(key []byte) error {
	if len(key) == 0 {
		return errEmptyKey
	}
	return nil
}

// lockMet handles a lock a read at callerTS met: it resolves it, waits
// when its owner is alive (through w), and returns the read timestamp to
// retry with: readTS unchanged, or the version below the lock when the
// reader may read past it.
func (s *Store) lockMet(ctx context.Context, l kv.LockInfo, callerTS, readTS uint64, w *lockWaiter) (uint64, error) {
	outcome, err := s.resolver.Resolve(ctx, l, callerTS)
	if err != nil {
		return 0, err
	}
	switch outcome {
	case LockReadPast:
		return min(readTS, versionBelow(l)), nil
	case LockAlive:
		if err := s.waitLock(ctx, l, w); err != nil {
			return 0, err
		}
	}
	return readTS, nil
}

// waitLock backs off once for live lock l, through w, which bounds the
// whole operation's waiting by Options.LockWaitTimeout.
func (s *Store) waitLock(ctx context.Context, l kv.LockInfo, w *lockWaiter) error {
	if w.deadline.IsZero() {
		*w = newLockWaiter(s.opts.LockWaitTimeout)
	}
	return w.wait(ctx, fmt.Sprintf("lock of txn %d on %q", l.StartTS, l.Key))
}

// get reads key at version through the lock resolver. A nil value means
// not found.
func (s *Store) get(ctx context.Context, key []byte, version uint64) ([]byte, error) {
	return s.getAt(ctx, key, version, version)
}

// getAt is get for a reader at callerTS that has learned it may read key
// at readTS <= callerTS (past a lock it met).
func (s *Store) getAt(ctx context.Context, key []byte, callerTS, readTS uint64) ([]byte, error) {
	var w lockWaiter
	rr := newRegionRetrier(s.opts)
	for {
		reg, err := s.client.LocateKey(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("locate: %w", err)
		}
		v, err := s.client.Get(ctx, reg.Ctx(), key, readTS)
		if err == nil {
			return v, nil
		}
		var (
			re     *kv.RegionError
			locked *kv.KeyIsLockedError
		)
		switch {
		case errors.As(err, &re):
			s.client.InvalidateRegion(reg.ID)
			err = rr.retry(ctx, err)
		case errors.As(err, &locked):
			readTS, err = s.lockMet(ctx, locked.Lock, callerTS, readTS, &w)
		}
		if err != nil {
			return nil, err
		}
	}
}

// sortedKeys returns a sorted copy of keys without duplicates, or an error
// naming an empty key.
func sortedKeys(keys [][]byte) ([][]byte, error) {
	sorted := make([][]byte, 0, len(keys))
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, err
		}
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, bytes.Compare)
	return slices.CompactFunc(sorted, bytes.Equal), nil
}

// batchGet reads keys at version, one BatchGet per region, the regions in
// parallel, and returns the pairs found.
func (s *Store) batchGet(ctx context.Context, keys [][]byte, version uint64) (map[string][]byte, error) {
	sorted, err := sortedKeys(keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(sorted))
	if len(sorted) == 0 {
		return out, nil
	}
	var mu sync.Mutex
	add := func(k, v []byte) {
		mu.Lock()
		out[string(k)] = v
		mu.Unlock()
	}
	spans, err := groupByRegion(ctx, s.client, sorted, 0, len(sorted))
	if err != nil {
		return nil, err
	}
	err = s.runSpans(ctx, sorted, spans, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		pending := sorted[lo:hi:hi]
		var w lockWaiter
		for len(pending) > 0 {
			pairs, err := s.client.BatchGet(ctx, reg.Ctx(), pending, version)
			if err == nil {
				for _, p := range pairs {
					add(p.Key, p.Value)
				}
				return nil
			}
			var locked *kv.KeyIsLockedError
			if !errors.As(err, &locked) {
				return err // a *kv.RegionError is re-routed by runSpan
			}
			locks := locked.Locks()
			outcomes, err := s.resolver.ResolveLocks(ctx, locks, version)
			if err != nil {
				return err
			}
			wait := -1
			for i, o := range outcomes {
				switch {
				case o == LockReadPast:
					// Read the locked key alone, past the lock, and the
					// rest as before.
					l := locks[i]
					v, err := s.getAt(ctx, l.Key, version, versionBelow(l))
					if err != nil {
						return fmt.Errorf("get %q: %w", l.Key, err)
					}
					if v != nil {
						add(l.Key, v)
					}
					n := len(pending)
					pending = slices.DeleteFunc(slices.Clone(pending), func(k []byte) bool { return bytes.Equal(k, l.Key) })
					if len(pending) == n {
						return fmt.Errorf("store reported a lock on %q, which was not asked for", l.Key)
					}
				case o == LockAlive && wait < 0:
					wait = i
				}
			}
			if wait >= 0 {
				if err := s.waitLock(ctx, locks[wait], &w); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
