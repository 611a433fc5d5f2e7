package kv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

// syncHookFS is a file system whose write-ahead log files run beforeSync
// before each sync: a test holds a synced batch between "visible" and
// "durable" with it, a benchmark gives every sync the same cost.
type syncHookFS struct {
	vfs.FS
	beforeSync func()
}

func (fs syncHookFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return hookedWAL{File: f, before: fs.beforeSync}, nil
}

func (fs syncHookFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	return fs.wrap(name, f, err)
}

func (fs syncHookFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	return fs.wrap(newname, f, err)
}

type hookedWAL struct {
	vfs.File
	before func()
}

func (f hookedWAL) Sync() error {
	f.before()
	return f.File.Sync()
}

func (f hookedWAL) SyncData() error {
	f.before()
	return f.File.SyncData()
}

func (f hookedWAL) SyncTo(length int64) (fullSync bool, err error) {
	f.before()
	return f.File.SyncTo(length)
}

// walGate holds the WAL's syncs while it is shut.
type walGate struct {
	mu     sync.Mutex
	open   chan struct{} // closed: syncs pass
	opened atomic.Bool
}

func newWALGate() *walGate {
	g := &walGate{open: make(chan struct{})}
	close(g.open)
	g.opened.Store(true)
	return g
}

// shut makes the WAL's syncs wait until reopen.
func (g *walGate) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.open = make(chan struct{})
	g.opened.Store(false)
}

// reopen lets the waiting syncs and later ones through.
func (g *walGate) reopen() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opened.Store(true)
	close(g.open)
}

// wait returns when the gate is open.
func (g *walGate) wait() {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
}

// TestLockWaiterWokenBeforeHolderSync: a transaction's commit wakes the
// request waiting for its lock as soon as the commit is visible, while
// its WAL sync is still under way (writeBatch.visible), and the commit
// itself answers only after the sync. A command that writes nothing and
// answers from that commit (Commit sent again) answers after the sync too.
// Without the early release the waiter stays queued until its wait slice
// ends and gets *KeyIsLockedError.
func TestLockWaiterWokenBeforeHolderSync(t *testing.T) {
	gate := newWALGate()
	s, err := Open("", Options{InMemory: true, LockWaitSlice: 30 * time.Second,
		testingFS: &testingFS{wrap: func(fs vfs.FS) vfs.FS { return syncHookFS{FS: fs, beforeSync: gate.wait} }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	// Before Close (cleanups run last first): a failed test leaves no
	// sync waiting, which Close would wait for.
	t.Cleanup(func() {
		if !gate.opened.Load() {
			gate.reopen()
		}
	})
	lt := lockTest{t: t, s: s}
	ctx := context.Background()
	if err := lt.acquire(ctx, 10, 10, 0, "k"); err != nil {
		t.Fatal(err)
	}
	waiter := lt.background(ctx, 20, 20, "k")
	lt.waitQueued(1)
	reg, _ := s.LocateKey([]byte("k"))
	resp, err := s.Prewrite(ctx, &PrewriteRequest{
		Region: reg.Ctx(), Primary: []byte("k"), StartTS: 10, ForUpdateTS: 10, LockTTL: 60_000,
		Mutations: []Mutation{{Op: OpPut, Key: []byte("k"), Value: []byte("v"), Pessimistic: true}},
	})
	if err != nil || len(resp.Errors) > 0 {
		t.Fatal(err, resp)
	}

	gate.shut()
	commit := func(which string) chan error {
		done := make(chan error, 1)
		go func() {
			err := s.Commit(ctx, &CommitRequest{Region: reg.Ctx(), Keys: [][]byte{[]byte("k")}, StartTS: 10, CommitTS: 35})
			if err == nil && !gate.opened.Load() {
				err = fmt.Errorf("%s commit answered before its WAL sync", which)
			}
			done <- err
		}()
		return done
	}
	first := commit("the")
	// The waiter gets the commit's conflict while the sync is held.
	var wc *WriteConflictError
	if err := <-waiter; !errors.As(err, &wc) || wc.ConflictCommitTS != 35 {
		t.Fatalf("waiter: got %v, want a write conflict with the commit at 35 while the holder's sync waits", err)
	}
	if gate.opened.Load() {
		t.Fatal("the gate opened by itself")
	}
	// The commit sent again finds it done, and must not say so before it
	// is durable.
	again := commit("the repeated")
	go func() {
		// Give a wrong Commit the time to answer; a right one waits.
		for range 1000 {
			runtime.Gosched()
		}
		gate.reopen()
	}()
	for _, done := range []chan error{first, again} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n := s.unsynced.Load(); n != 0 {
		t.Fatalf("%d batches still counted unsynced after their syncs", n)
	}
	if err := lt.acquire(ctx, 20, 36, 0, "k"); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHotRowCommit: pessimistic transactions that each lock one hot
// row, then write it and a row of their own in a one-phase commit, from 4
// goroutines: the shape of TPC-C's warehouse and district rows. They take
// the hot row's lock one after the other, so the time per transaction is
// how long a holder keeps the lock: its commit, and whatever passes
// before the next one is woken. "disk" runs on this machine's disk;
// "sync-1ms" in memory with every WAL sync taking 1 ms more, the same in
// every run, where a shared machine's disk varies by 10x between runs.
func BenchmarkHotRowCommit(b *testing.B) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"disk", Options{}},
		{"sync-1ms", Options{InMemory: true, testingFS: &testingFS{wrap: func(fs vfs.FS) vfs.FS {
			return syncHookFS{FS: fs, beforeSync: func() { time.Sleep(time.Millisecond) }}
		}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := Open(b.TempDir(), c.opts)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			var clock, workers atomic.Uint64
			clock.Store(1000)
			b.SetParallelism(2) // 4 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				w := workers.Add(1)
				for i := 0; pb.Next(); i++ {
					if err := hotRowTxn(s, &clock, fmt.Appendf(nil, "w%d-%d", w, i%1000)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// hotRowTxn is one transaction of BenchmarkHotRowCommit; clock stands in
// for the oracle.
func hotRowTxn(s *Store, clock *atomic.Uint64, own []byte) error {
	ctx := context.Background()
	hot := []byte("hot")
	reg, err := s.LocateKey(hot)
	if err != nil {
		return err
	}
	start := clock.Add(1)
	resp, err := s.AcquirePessimisticLock(ctx, &AcquirePessimisticLockRequest{
		Region: reg.Ctx(), Primary: hot, StartTS: start, ForUpdateTS: start, LockTTL: 60_000,
		WaitTimeout: time.Minute, LockWithConflict: true, Keys: []PessimisticKey{{Key: hot}},
	})
	if err != nil {
		return err
	}
	forUpdate := max(start, resp.ConflictTS)
	pw, err := s.Prewrite(ctx, &PrewriteRequest{
		Region: reg.Ctx(), Primary: hot, StartTS: start, ForUpdateTS: forUpdate, LockTTL: 60_000,
		TryOnePC: true, MaxCommitTS: math.MaxUint64 >> 1,
		Mutations: []Mutation{{Op: OpPut, Key: hot, Value: own, Pessimistic: true}, {Op: OpPut, Key: own, Value: []byte("v")}},
	})
	if err == nil && len(pw.Errors) > 0 {
		err = pw.Errors[0]
	}
	if err == nil && pw.OnePCCommitTS == 0 {
		err = errors.New("no one-phase commit")
	}
	if err != nil {
		return err
	}
	// The next transactions start above this commit.
	for c := clock.Load(); c < pw.OnePCCommitTS && !clock.CompareAndSwap(c, pw.OnePCCommitTS); c = clock.Load() {
	}
	return nil
}
