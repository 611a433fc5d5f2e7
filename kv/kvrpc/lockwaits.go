package kvrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvpb"
)

// lockWaitInfoTimeout bounds how long LockWaitInfo waits for the stores:
// it serves operators' views (a process list, DATA_LOCK_WAITS), which
// must not hang on a store that is down.
const lockWaitInfoTimeout = 5 * time.Second

// LockWaitInfo implements kv.Client: GetLockWaitInfo is sent to every
// store the router lists (StoreLister) at once, each once, and the
// answers are put together. A store that does not answer within
// lockWaitInfoTimeout is named in the error, which comes with the other
// stores' waits: a lock wait is a moment's state, and whoever shows it
// asks again.
func (c *Client) LockWaitInfo(ctx context.Context) ([]kv.LockWait, error) {
	var out []kv.LockWait
	err := c.askStores(ctx, false, func(resp *kvpb.GetLockWaitInfoResponse) {
		for _, e := range resp.GetEntries() {
			out = append(out, kv.LockWait{Key: e.GetKey(), Txn: e.GetTxn(), LockTS: e.GetLockTs()})
		}
	})
	return out, err
}

// LockWaitCounts implements kv.Client: each store's counts, asked as
// LockWaitInfo asks for the waits, summed.
func (c *Client) LockWaitCounts(ctx context.Context) (kv.LockWaitStats, error) {
	var sum kv.LockWaitStats
	err := c.askStores(ctx, true, func(resp *kvpb.GetLockWaitInfoResponse) {
		n := resp.GetCounts()
		sum = sum.Add(kv.LockWaitStats{Waiting: n.GetWaiting(), Waits: n.GetWaits(), WaitTime: time.Duration(n.GetWaitNanos()),
			Deadlocks: n.GetDeadlocks()})
	})
	return sum, err
}

// askStores sends GetLockWaitInfo (only the counts when countsOnly) to
// every store the router lists at once, and hands each answer to take,
// one at a time. A store that does not answer within lockWaitInfoTimeout
// is named in the error.
func (c *Client) askStores(ctx context.Context, countsOnly bool, take func(*kvpb.GetLockWaitInfoResponse)) error {
	addrs, err := c.storeAddrs(ctx, "lock waits")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, lockWaitInfoTimeout)
	defer cancel()
	type answer struct {
		resp *kvpb.GetLockWaitInfoResponse
		err  error
	}
	answers := make([]answer, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i].resp, answers[i].err = c.lockWaitsOn(ctx, addr, countsOnly)
		}()
	}
	wg.Wait()
	var errs []error
	for _, a := range answers {
		if a.err != nil {
			errs = append(errs, a.err)
			continue
		}
		take(a.resp)
	}
	return errors.Join(errs...)
}

// lockWaitsOn asks the store at addr for its lock waits.
func (c *Client) lockWaitsOn(ctx context.Context, addr string, countsOnly bool) (*kvpb.GetLockWaitInfoResponse, error) {
	kc, err := c.conn(addr)
	if err != nil {
		return nil, fmt.Errorf("kv store %s: lock waits: %w", addr, err)
	}
	resp, err := kc.GetLockWaitInfo(ctx, &kvpb.GetLockWaitInfoRequest{CountsOnly: countsOnly})
	if err != nil {
		return nil, fmt.Errorf("kv store %s: lock waits: %w", addr, err)
	}
	return resp, nil
}
