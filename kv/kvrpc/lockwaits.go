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
	addrs, err := c.storeAddrs(ctx, "lock waits")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lockWaitInfoTimeout)
	defer cancel()
	type answer struct {
		waits []kv.LockWait
		err   error
	}
	answers := make([]answer, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i].waits, answers[i].err = c.lockWaitsOn(ctx, addr)
		}()
	}
	wg.Wait()
	var out []kv.LockWait
	var errs []error
	for _, a := range answers {
		out = append(out, a.waits...)
		if a.err != nil {
			errs = append(errs, a.err)
		}
	}
	return out, errors.Join(errs...)
}

// lockWaitsOn asks the store at addr for its waiting lock requests.
func (c *Client) lockWaitsOn(ctx context.Context, addr string) ([]kv.LockWait, error) {
	kc, err := c.conn(addr)
	if err != nil {
		return nil, fmt.Errorf("kv store %s: lock waits: %w", addr, err)
	}
	resp, err := kc.GetLockWaitInfo(ctx, &kvpb.GetLockWaitInfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("kv store %s: lock waits: %w", addr, err)
	}
	out := make([]kv.LockWait, len(resp.GetEntries()))
	for i, e := range resp.GetEntries() {
		out[i] = kv.LockWait{Key: e.GetKey(), Txn: e.GetTxn(), LockTS: e.GetLockTs()}
	}
	return out, nil
}
