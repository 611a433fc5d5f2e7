package kv

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/kv/internal/txntypes"
)

// resolveBatchKeys bounds the keys one ResolveLock batch latches and
// writes when it scans a region for a transaction's locks. Each batch is
// one synced write: 1,024 keys resolved a dead transaction of a million
// 35% faster than TiKV's 256 (BenchmarkResolveDeadTxn), and hold their
// latches for milliseconds.
const resolveBatchKeys = 1024

// ResolveLock commits (req.CommitTS > 0) or rolls back (req.CommitTS == 0)
// the locks of transaction req.StartTS, on req.Keys or, when req.Keys is
// empty, on every key of the region found by scanning its lock space,
// resolveBatchKeys locks per batch: one pass over the region's lock space
// in all, so that n locks cost O(n). Each key follows the rules of Commit
// or BatchRollback. The scan stops between batches when ctx ends; the
// batches already written stay.
func (s *Store) ResolveLock(ctx context.Context, req *ResolveLockRequest) error {
	what := fmt.Sprintf("resolve locks of txn %d (commit_ts %d)", req.StartTS, req.CommitTS)
	if req.StartTS == 0 {
		return fmt.Errorf("%s: start_ts is 0", what)
	}
	if req.CommitTS != 0 {
		if err := validateCommitTS(req.StartTS, req.CommitTS); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	resolve := func(keys [][]byte) error {
		return s.mutate(ctx, req.Region, what, keys, func(r *mvccReader, wb *writeBatch) error {
			for _, k := range keys {
				var err error
				if req.CommitTS != 0 {
					err = commitKey(r, wb, k, req.StartTS, req.CommitTS, true)
				} else {
					err = rollbackKey(r, wb, k, req.StartTS)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	if len(req.Keys) > 0 {
		return resolve(req.Keys)
	}
	reg, err := s.regions.check(req.Region, 0)
	if err != nil {
		return err
	}
	from, end := confine(reg.info, req.Within)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		keys, next, err := s.scanLocksOf(req.StartTS, from, end, resolveBatchKeys)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if len(keys) > 0 {
			if err := resolve(keys); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		from = next
	}
}

// scanLocksOf returns up to limit keys in [start, end) (end empty:
// unbounded) locked by startTS, and the key to continue from, nil when the
// range is done.
func (s *Store) scanLocksOf(startTS uint64, start, end []byte, limit int) (keys [][]byte, next []byte, err error) {
	if len(end) == 0 {
		end = nil
	}
	if err := s.enter(); err != nil {
		return nil, nil, fmt.Errorf("scan locks: %w", err)
	}
	defer s.exit()
	r := newMVCCReader(s.db)
	defer r.close()
	err = r.locks(start, end, false, func(key []byte, l *txntypes.Lock) bool {
		if len(keys) == limit {
			next = key
			return false
		}
		if l.StartTS == startTS {
			keys = append(keys, key)
		}
		return true
	})
	return keys, next, err
}
