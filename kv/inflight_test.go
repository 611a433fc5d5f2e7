package kv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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

// holdWrites puts an armed heldApplier in front of s's applier: the next
// write is held. let lets the held writes go; it may be called more than
// once (a test defers it, so that a failed step does not leave Close
// waiting for a held write).
func holdWrites(s *Store) (held *heldApplier, let func()) {
	held = &heldApplier{inner: s.applier, armed: make(chan struct{}), entered: make(chan struct{}, 1), release: make(chan struct{})}
	s.applier = held
	var once sync.Once
	close(held.armed)
	return held, func() { once.Do(func() { close(held.release) }) }
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

// TestCloseWithWriteHeldInStorage: Close does not wait for good on a
// write the storage holds (no context ends it, as in Pebble's write stall
// on a full disk). The write's caller, under a context that cannot end,
// gets *WriteInDoubtError wrapping ErrClosed; Close returns within its
// bound with ErrCloseInDoubt; later commands get ErrClosed at once. A
// restart from the disk as Close left it (a crash now) has every
// acknowledged write and not the held one, which never reached the log;
// once the storage lets the held write go it is applied, the store
// finishes closing, and a restart has it: the log decides.
func TestCloseWithWriteHeldInStorage(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{ReserveSpace: -1, Logger: discard(), testingOwnWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	rc := regionOf(t, s)
	bg := context.Background()
	prewrite := func(s *Store, key string, ts uint64, onePC bool) error {
		req := &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte(key), Value: []byte("v-" + key)}}, Primary: []byte(key), StartTS: ts, LockTTL: 3000, TxnSize: 1}
		if onePC {
			req.TryOnePC, req.MaxCommitTS = true, MaxTS
		}
		resp, err := s.Prewrite(bg, req)
		if err == nil && len(resp.Errors) > 0 {
			err = resp.Errors[0]
		}
		return err
	}
	if err := prewrite(s, "acked", 5, true); err != nil {
		t.Fatal(err)
	}

	held, let := holdWrites(s)
	defer let()
	result := make(chan error, 1)
	go func() { result <- prewrite(s, "held", 10, false) }()
	hangGuard(t, "the write reaching the storage", held.entered)

	s.closeWait = 100 * time.Millisecond
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	err = hangGuard(t, "Close while the storage holds a write", closed)
	if !errors.Is(err, ErrCloseInDoubt) {
		t.Fatalf("Close while the storage holds a write: %v, want ErrCloseInDoubt", err)
	}
	err = hangGuard(t, "the held write's caller once Close began", result)
	var doubt *WriteInDoubtError
	if !errors.As(err, &doubt) || !errors.Is(err, ErrClosed) {
		t.Fatalf("the held write's caller: %v, want *WriteInDoubtError wrapping ErrClosed", err)
	}
	if _, err := s.Get(bg, rc, []byte("acked"), MaxTS); !errors.Is(err, ErrClosed) {
		t.Fatalf("a read after Close: %v, want ErrClosed", err)
	}

	// A crash now: the disk as it is, Pebble still open on it.
	crashed := filepath.Join(t.TempDir(), "crashed")
	if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	checkRestart(t, crashed, false)

	// The storage lets the write go: it is applied, and the store closes.
	let()
	hangGuard(t, "the store closing after its held write ended", s.closeDone)
	checkRestart(t, dir, true)
}

// checkRestart opens the store in dir and checks that the acknowledged
// one-phase commit of "acked" is there and that the held prewrite's lock
// on "held" is there when heldApplied, absent otherwise.
func checkRestart(t *testing.T, dir string, heldApplied bool) {
	t.Helper()
	s, err := Open(dir, Options{ReserveSpace: -1, Logger: discard()})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s.Close()
	rc := regionOf(t, s)
	if v, err := s.Get(context.Background(), rc, []byte("acked"), MaxTS); err != nil || string(v) != "v-acked" {
		t.Fatalf("restart: the acknowledged commit: %q, %v", v, err)
	}
	_, err = s.Get(context.Background(), rc, []byte("held"), 20)
	var locked *KeyIsLockedError
	if got := errors.As(err, &locked); got != heldApplied {
		t.Fatalf("restart: a read of the held write's key: %v; want its lock there: %v", err, heldApplied)
	}
}
