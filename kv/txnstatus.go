package kv

import (
	"bytes"
	"context"
	"fmt"
)

// CheckTxnStatus decides the state of transaction req.LockTS from its
// primary key req.PrimaryKey:
//
//   - the primary lock is there and its TTL has passed by req.CurrentTS:
//     it is rolled back (TxnActionTTLExpireRollback);
//   - the lock is alive: its TTL is returned, and when req.CallerStartTS is
//     neither 0 nor MaxTS its min_commit_ts is pushed above CallerStartTS
//     (TxnActionMinCommitTSPushed), so the caller may read past the lock;
//   - no lock, and a commit record: TxnActionCommitted with its commit_ts;
//   - no lock, and a Rollback record: TxnActionRolledBack;
//   - neither: with req.RollbackIfNotExist a Rollback record is written
//     (TxnActionLockNotExistRollback), else *TxnLockNotFoundError.
//
// CallerStartTS counts as a read on the region for max_read_ts.
func (s *Store) CheckTxnStatus(ctx context.Context, req *CheckTxnStatusRequest) (*CheckTxnStatusResponse, error) {
	what := fmt.Sprintf("check status of txn %d on %q", req.LockTS, req.PrimaryKey)
	if req.LockTS == 0 || req.CurrentTS == 0 {
		return nil, fmt.Errorf("%s: lock_ts %d or current_ts %d is 0", what, req.LockTS, req.CurrentTS)
	}
	if req.CallerStartTS != 0 {
		if _, err := s.regions.check(req.Region, req.CallerStartTS, req.PrimaryKey); err != nil {
			return nil, err
		}
	}
	resp := &CheckTxnStatusResponse{}
	key := req.PrimaryKey
	err := s.mutate(ctx, req.Region, what, [][]byte{key}, func(r *mvccReader, wb *writeBatch) error {
		l, err := r.lock(key)
		if err != nil {
			return err
		}
		if l != nil && l.StartTS == req.LockTS {
			if !bytes.Equal(l.Primary, key) {
				return fmt.Errorf("key %q is not the primary of txn %d (primary %q)", key, req.LockTS, l.Primary)
			}
			if lockExpired(l, req.CurrentTS) {
				resp.Action = TxnActionTTLExpireRollback
				return rollbackKey(r, wb, key, req.LockTS)
			}
			if req.CallerStartTS != 0 && req.CallerStartTS != MaxTS && l.MinCommitTS <= req.CallerStartTS {
				l.MinCommitTS = req.CallerStartTS + 1
				wb.putLock(key, l)
				resp.Action = TxnActionMinCommitTSPushed
			}
			resp.LockTTL = l.TTL
			info := lockInfo(key, l)
			resp.Lock = &info
			return nil
		}
		status, commitTS, err := r.txnRecord(key, req.LockTS)
		switch {
		case err != nil:
			return err
		case status == txnCommitted:
			resp.Action, resp.CommitTS = TxnActionCommitted, commitTS
			return nil
		case status == txnRolledBack:
			resp.Action = TxnActionRolledBack
			return nil
		case !req.RollbackIfNotExist:
			return &TxnLockNotFoundError{Key: cloneKey(key), StartTS: req.LockTS}
		}
		resp.Action = TxnActionLockNotExistRollback
		return putRollbackRecord(r, wb, key, req.LockTS)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// TxnHeartBeat extends the TTL of the primary lock of startTS to adviseTTL
// (never shortening it) and returns the TTL in force. A missing lock is
// *TxnLockNotFoundError.
func (s *Store) TxnHeartBeat(ctx context.Context, rc RegionCtx, primary []byte, startTS, adviseTTL uint64) (uint64, error) {
	what := fmt.Sprintf("heartbeat txn %d on %q", startTS, primary)
	if startTS == 0 {
		return 0, fmt.Errorf("%s: start_ts is 0", what)
	}
	var ttl uint64
	err := s.mutate(ctx, rc, what, [][]byte{primary}, func(r *mvccReader, wb *writeBatch) error {
		l, err := r.lock(primary)
		if err != nil {
			return err
		}
		if l == nil || l.StartTS != startTS {
			return &TxnLockNotFoundError{Key: cloneKey(primary), StartTS: startTS}
		}
		if adviseTTL > l.TTL {
			l.TTL = adviseTTL
			wb.putLock(primary, l)
		}
		ttl = l.TTL
		return nil
	})
	return ttl, err
}
