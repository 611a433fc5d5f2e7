package kv

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// heldApplier holds the writes it is given, once armed, until released:
// a write stuck inside the storage, as in Pebble's write stall on a full
// disk, which no context ends.
type heldApplier struct {
	inner   applier
	armed   chan struct{} // closed: hold the next write
	entered chan struct{} // gets a value when a write is held
	release chan struct{} // closed: let the held writes go on
}

func (a *heldApplier) apply(ctx context.Context, wb *writeBatch) error {
	select {
	case <-a.armed:
		a.entered <- struct{}{}
		<-a.release
		// Past the applier's own check of ctx, as in Pebble's commit.
		ctx = context.WithoutCancel(ctx)
	default:
	}
	return a.inner.apply(ctx, wb)
}

// hangGuard fails the test when ch gives nothing within a minute: far
// longer than any step here takes, so a failure is a hang, not a slow
// machine.
func hangGuard[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: no answer within a minute (hung)", what)
		panic("unreachable")
	}
}

// TestWriteInDoubtOutlivesItsCaller: a write held inside the storage (no
// context ends it) does not hold its caller: when the caller's context
// ends, the command returns a *WriteInDoubtError at once while the write
// goes on. Until it is applied, its keys stay latched (a command on them
// waits) and a one-phase commit's keys stay published (a read above its
// commit_ts waits for it, else the read would miss the commit); reads of
// other keys go on. Once released, the write is applied, not lost: the
// prewrite's lock is there and the one-phase commit's value is read.
func TestWriteInDoubtOutlivesItsCaller(t *testing.T) {
	s, err := Open(t.TempDir(), Options{SyncWrites: SyncNone, ReserveSpace: -1, Logger: discard(), testingOwnWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc := regionOf(t, s)
	bg := context.Background()
	put := func(ctx context.Context, key string, ts uint64, onePC bool) (*PrewriteResponse, error) {
		req := &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte(key), Value: []byte("v-" + key)}}, Primary: []byte(key), StartTS: ts, LockTTL: 3000, TxnSize: 1}
		if onePC {
			req.TryOnePC, req.MaxCommitTS = true, MaxTS
		}
		return s.Prewrite(ctx, req)
	}
	if _, err := put(bg, "other", 5, true); err != nil {
		t.Fatal(err)
	}

	for _, onePC := range []bool{false, true} {
		held := &heldApplier{inner: s.applier, armed: make(chan struct{}), entered: make(chan struct{}, 1), release: make(chan struct{})}
		s.applier = held
		var releaseOnce sync.Once
		let := func() { releaseOnce.Do(func() { close(held.release) }) }
		// A failed step lets the held write go, so that Close, which
		// waits for it, returns.
		defer let()
		key := "two-phase"
		if onePC {
			key = "one-phase"
		}
		ts := uint64(100)
		if onePC {
			ts = 200
		}
		close(held.armed)
		ctx, cancel := context.WithCancel(bg)
		result := make(chan error, 1)
		go func() {
			_, err := put(ctx, key, ts, onePC)
			result <- err
		}()
		hangGuard(t, key+": the write reaching the storage", held.entered)
		cancel()
		err := hangGuard(t, key+": the prewrite after its context ended", result)
		var doubt *WriteInDoubtError
		if !errors.As(err, &doubt) || !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: prewrite whose context ended while the storage held its write: %v; want *WriteInDoubtError wrapping context.Canceled", key, err)
		}
		if st := s.DiskProtectionStats(); st.WritesInDoubt != 1 || st.WritesInDoubtPending != 1 {
			t.Fatalf("%s: stats %+v; want 1 write in doubt, 1 pending", key, st)
		}

		// Reads of other keys go on; a command on the held key waits for
		// its latch.
		if v, err := s.Get(bg, rc, []byte("other"), MaxTS); err != nil || string(v) != "v-other" {
			t.Fatalf("%s: a read of another key while the write is held: %q, %v", key, v, err)
		}
		short, cancelShort := context.WithTimeout(bg, 50*time.Millisecond)
		_, err = put(short, key, ts+50, false)
		cancelShort()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: another transaction's prewrite of the held key: %v; want it to wait for the latch until its deadline", key, err)
		}
		// A one-phase commit's keys stay published: a read above it waits.
		read := make(chan string, 1)
		if onePC {
			go func() {
				v, err := s.Get(bg, rc, []byte(key), MaxTS)
				if err != nil {
					read <- "error: " + err.Error()
					return
				}
				read <- string(v)
			}()
			select {
			case v := <-read:
				t.Fatalf("%s: a read above the held one-phase commit answered %q before the write was applied", key, v)
			case <-time.After(50 * time.Millisecond):
			}
		}

		// Released, the write is applied.
		s.applier = held.inner
		let()
		if onePC {
			if v := hangGuard(t, key+": the read once the write was released", read); v != "v-"+key {
				t.Fatalf("%s: the read above the one-phase commit: %q, want %q", key, v, "v-"+key)
			}
		} else {
			second := make(chan error, 1)
			go func() {
				resp, err := put(bg, key, ts+50, false)
				if err == nil && len(resp.Errors) == 0 {
					err = errors.New("accepted")
				} else if err == nil {
					err = resp.Errors[0]
				}
				second <- err
			}()
			err := hangGuard(t, key+": a prewrite once the write was released", second)
			var locked *KeyIsLockedError
			if !errors.As(err, &locked) || locked.Lock.StartTS != ts {
				t.Fatalf("%s: another prewrite of the key once the write was applied: %v; want the abandoned prewrite's lock (start_ts %d)", key, err, ts)
			}
			if err := s.BatchRollback(bg, rc, [][]byte{[]byte(key)}, ts); err != nil {
				t.Fatalf("%s: rollback of the abandoned prewrite: %v", key, err)
			}
		}
		deadline := time.Now().Add(time.Minute)
		for s.DiskProtectionStats().WritesInDoubtPending != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the applied write is still counted pending", key)
			}
			time.Sleep(time.Millisecond)
		}
		s.inflight.abandoned.Store(0)
	}
}
