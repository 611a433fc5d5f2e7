package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/tso"
)

// testOracle hands out increasing timestamps starting at the wall clock, so
// that lock TTLs mean what they say.
type testOracle struct{ last atomic.Uint64 }

func newTestOracle() *testOracle {
	o := &testOracle{}
	o.last.Store(tso.FromTime(time.Now()))
	return o
}

func (o *testOracle) next() uint64 { return o.last.Add(1) }

// pass makes every later timestamp exceed ts, as a real oracle's do once
// a calculated (1PC) commit timestamp ts is in use.
func (o *testOracle) pass(ts uint64) {
	for {
		cur := o.last.Load()
		if cur >= ts || o.last.CompareAndSwap(cur, ts) {
			return
		}
	}
}

// TestConcurrentTransfers runs transfers between accounts, half of them
// committed in one phase, against readers. Under snapshot isolation every
// snapshot sums to the initial total, and two reads at the same timestamp
// agree even while one-phase commits calculate their timestamps from
// max_read_ts.
func TestConcurrentTransfers(t *testing.T) {
	const accounts, initial = 5, 100
	writers, rounds := 3, 60
	if testing.Short() {
		rounds = 20
	}
	ctx := context.Background()
	s := openTestStore(t)
	c := NewLocalClient(s)
	o := newTestOracle()
	region, err := c.LocateKey(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rc := region.Ctx()
	account := func(i int) []byte { return []byte(fmt.Sprintf("acct%d", i)) }
	enc := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	dec := func(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

	var muts []Mutation
	for i := 0; i < accounts; i++ {
		muts = append(muts, Mutation{Op: OpInsert, Key: account(i), Value: enc(initial)})
	}
	start := o.next()
	if resp, err := c.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: account(0), StartTS: start, LockTTL: 10000}); err != nil || len(resp.Errors) > 0 {
		t.Fatalf("load: %v %v", resp, err)
	}
	keys := make([][]byte, accounts)
	for i := range keys {
		keys[i] = account(i)
	}
	if err := c.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: start, CommitTS: o.next()}); err != nil {
		t.Fatal(err)
	}

	// snapshot scans all accounts at ts, waiting out locks (every writer
	// commits or rolls back on its own, so they go away).
	snapshot := func(ts uint64) ([]KvPair, error) {
		for {
			pairs, err := c.Scan(ctx, &ScanRequest{Region: rc, Version: ts})
			var locked *KeyIsLockedError
			if !errors.As(err, &locked) {
				return pairs, err
			}
			runtime.Gosched()
		}
	}

	var committed, onePC atomic.Int64
	transfer := func(w, r int) error {
		from, to := account((w+r)%accounts), account((w+r+1+r%3)%accounts)
		for {
			startTS := o.next()
			pairs, err := c.BatchGet(ctx, rc, [][]byte{from, to}, startTS)
			var locked *KeyIsLockedError
			if errors.As(err, &locked) {
				runtime.Gosched()
				continue
			}
			if err != nil {
				return err
			}
			bal := map[string]int64{}
			for _, p := range pairs {
				bal[string(p.Key)] = dec(p.Value)
			}
			req := &PrewriteRequest{
				Region: rc, Primary: from, StartTS: startTS, LockTTL: 10000,
				Mutations: []Mutation{{Op: OpPut, Key: from, Value: enc(bal[string(from)] - 1)}, {Op: OpPut, Key: to, Value: enc(bal[string(to)] + 1)}},
			}
			if r%2 == 1 {
				req.TryOnePC, req.MaxCommitTS = true, o.next()
			}
			resp, err := c.Prewrite(ctx, req)
			if err != nil {
				return err
			}
			if len(resp.Errors) > 0 {
				// Nothing was written; try again with a new snapshot.
				runtime.Gosched()
				continue
			}
			if resp.OnePCCommitTS != 0 {
				onePC.Add(1)
			} else if err := c.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{from, to}, StartTS: startTS, CommitTS: o.next()}); err != nil {
				return err
			}
			committed.Add(1)
			return nil
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				if err := transfer(w, r); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	var readerDone sync.WaitGroup
	readerDone.Add(1)
	go func() {
		defer readerDone.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ts := o.next()
			first, err := snapshot(ts)
			if err == nil {
				runtime.Gosched()
				var second []KvPair
				second, err = snapshot(ts)
				if err == nil && fmt.Sprint(first) != fmt.Sprint(second) {
					err = fmt.Errorf("two reads at %d differ: %v then %v", ts, first, second)
				}
			}
			var sum int64
			for _, p := range first {
				sum += dec(p.Value)
			}
			if err == nil && sum != accounts*initial {
				err = fmt.Errorf("snapshot at %d sums to %d, want %d", ts, sum, accounts*initial)
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	readerDone.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if committed.Load() != int64(writers*rounds) {
		t.Errorf("%d transfers committed, want %d", committed.Load(), writers*rounds)
	}
	if onePC.Load() == 0 {
		t.Error("no transfer committed in one phase")
	}
	t.Logf("%d transfers, %d in one phase", committed.Load(), onePC.Load())
}
