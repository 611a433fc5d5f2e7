package schemalease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestWaitOlderReturnsWhenOlderUsesEnd(t *testing.T) {
	tr := New()
	old := tr.Begin() // version 0
	tr.Published(1)
	cur := tr.Begin() // version 1: not waited for
	done := make(chan int, 1)
	go func() {
		n, err := tr.WaitOlder(context.Background(), 1, time.Hour, time.Hour, nil)
		if err != nil {
			t.Error(err)
		}
		done <- n
	}()
	select {
	case <-done:
		t.Fatal("WaitOlder returned while a transaction at version 0 was registered")
	case <-time.After(20 * time.Millisecond):
	}
	old.End()
	if n := <-done; n != 0 {
		t.Fatalf("marked %d stale, want 0", n)
	}
	if err := cur.BeginCommit(); err != nil {
		t.Fatalf("current transaction: %v", err)
	}
	cur.End()
}

func TestObserveMovesAUseUp(t *testing.T) {
	tr := New()
	u := tr.Begin()
	u.Observe(3)
	if n := tr.InUse(3); n != 0 {
		t.Fatalf("InUse(3) = %d after Observe(3)", n)
	}
	u.Observe(1) // never down
	if n := tr.InUse(3); n != 0 {
		t.Fatalf("InUse(3) = %d after Observe(1)", n)
	}
	if tr.Latest() != 3 {
		t.Fatalf("Latest = %d, want 3", tr.Latest())
	}
	if got := tr.Begin(); got.version != 3 {
		t.Fatalf("a new use starts at %d, want 3", got.version)
	}
}

func TestTimeoutMarksStaleAndCommitFails(t *testing.T) {
	tr := New()
	u := tr.Begin()
	tr.Published(1)
	n, err := tr.WaitOlder(context.Background(), 1, 0, 0, nil)
	if err != nil || n != 1 {
		t.Fatalf("WaitOlder = %d, %v; want 1 marked", n, err)
	}
	if !u.Stale() {
		t.Fatal("use not stale")
	}
	if err := u.BeginCommit(); !errors.Is(err, ErrSchemaChanged) {
		t.Fatalf("BeginCommit = %v, want ErrSchemaChanged", err)
	}
	// A stale use is not waited for again.
	if n, err := tr.WaitOlder(context.Background(), 1, time.Hour, time.Hour, nil); err != nil || n != 0 {
		t.Fatalf("second WaitOlder = %d, %v", n, err)
	}
}

func TestCommittingUseIsWaitedOutNotMarked(t *testing.T) {
	tr := New()
	u := tr.Begin()
	if err := u.BeginCommit(); err != nil {
		t.Fatal(err)
	}
	tr.Published(1)
	done := make(chan int, 1)
	go func() {
		n, _ := tr.WaitOlder(context.Background(), 1, time.Millisecond, time.Millisecond, nil)
		done <- n
	}()
	select {
	case <-done:
		t.Fatal("WaitOlder returned while a commit at version 0 was running")
	case <-time.After(30 * time.Millisecond):
	}
	if u.Stale() {
		t.Fatal("a committing use was marked stale")
	}
	u.End()
	if n := <-done; n != 0 {
		t.Fatalf("marked %d, want 0", n)
	}
}

func TestExceptAndContext(t *testing.T) {
	tr := New()
	self := tr.Begin()
	tr.Published(1)
	if n, err := tr.WaitOlder(context.Background(), 1, time.Hour, time.Hour, nil, self); err != nil || n != 0 {
		t.Fatalf("WaitOlder except self = %d, %v", n, err)
	}
	other := tr.Begin()
	other.version = 0 // registered before the change
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.WaitOlder(ctx, 1, time.Hour, time.Hour, nil, self); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitOlder with a cancelled context = %v", err)
	}
}

// TestNoCommitSlipsPastAChange races commits against schema changes: a
// use at an old version either committed before WaitOlder returned or
// failed its commit; it never starts committing after WaitOlder returned.
func TestNoCommitSlipsPastAChange(t *testing.T) {
	for round := 0; round < 200; round++ {
		tr := New()
		const n = 8
		uses := make([]*Use, n)
		for i := range uses {
			uses[i] = tr.Begin()
		}
		tr.Published(1)
		var mu sync.Mutex
		waitDone := false
		var wg sync.WaitGroup
		for _, u := range uses {
			wg.Add(1)
			go func(u *Use) {
				defer wg.Done()
				if err := u.BeginCommit(); err != nil {
					return
				}
				mu.Lock()
				late := waitDone
				mu.Unlock()
				if late {
					t.Error("a transaction at the old version committed after the change's wait returned")
				}
				u.End()
			}(u)
		}
		if _, err := tr.WaitOlder(context.Background(), 1, time.Duration(round%3)*time.Microsecond, time.Duration(round%3)*time.Microsecond, nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		waitDone = true
		mu.Unlock()
		wg.Wait()
	}
}

func TestPerTableWaitAndStaleness(t *testing.T) {
	tr := New()
	writerOfT := tr.Begin()
	writerOfT.Wrote(7)
	otherWriter := tr.Begin()
	otherWriter.Wrote(8)
	reader := tr.Begin()
	tr.Published(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if n, err := tr.WaitOlder(context.Background(), 1, time.Hour, 0, []int64{7}); err != nil || n != 0 {
			t.Errorf("WaitOlder = %d, %v", n, err)
		}
	}()
	select {
	case <-done:
		t.Fatal("WaitOlder did not wait for the writer of table 7")
	case <-time.After(20 * time.Millisecond):
	}
	if err := writerOfT.BeginCommit(); err != nil {
		t.Fatalf("the writer of table 7 commits in time: %v", err)
	}
	writerOfT.End()
	<-done
	// Neither other transaction was waited for; the one that writes
	// table 7 only now fails, the other commits.
	if err := otherWriter.BeginCommit(); err != nil {
		t.Fatalf("writer of table 8: %v", err)
	}
	reader.Wrote(7)
	if err := reader.BeginCommit(); !errors.Is(err, ErrSchemaChanged) {
		t.Fatalf("late writer of table 7: %v, want ErrSchemaChanged", err)
	}
}

// TestGraceForTransactionsNotYetWriting: a transaction of the older schema
// that has not written the changed table is waited for during the grace
// period (an autocommit statement about to write finishes unharmed), and
// marked stale for the table after it.
func TestGraceForTransactionsNotYetWriting(t *testing.T) {
	tr := New()
	quick := tr.Begin()
	slow := tr.Begin()
	tr.Published(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := tr.WaitOlder(context.Background(), 1, time.Hour, 200*time.Millisecond, []int64{7}); err != nil {
			t.Error(err)
		}
	}()
	quick.Wrote(7)
	if err := quick.BeginCommit(); err != nil {
		t.Fatalf("a transaction that writes within the grace period: %v", err)
	}
	quick.End()
	<-done
	slow.Wrote(7)
	if err := slow.BeginCommit(); !errors.Is(err, ErrSchemaChanged) {
		t.Fatalf("a transaction that wrote after the grace period: %v, want ErrSchemaChanged", err)
	}
}

func TestExemptUseIsNotWaitedFor(t *testing.T) {
	tr := New()
	ddl := tr.Begin()
	ddl.Wrote(7)
	ddl.Exempt()
	tr.Published(1)
	if n, err := tr.WaitOlder(context.Background(), 1, time.Hour, time.Hour, nil); err != nil || n != 0 {
		t.Fatalf("WaitOlder = %d, %v", n, err)
	}
	if err := ddl.BeginCommit(); err != nil {
		t.Fatalf("an exempt use is never marked stale: %v", err)
	}
}
