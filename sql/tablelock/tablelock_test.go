package tablelock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// code returns the MySQL error code of err, 0 for nil.
func code(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		t.Fatalf("%v is not a MySQL error", err)
	}
	return se.Number()
}

// TestManager: a READ lock lets others read and not write, the holder
// uses only what it locked, the global read lock fails the holder's
// writes, and a release lets the waiter through.
func TestManager(t *testing.T) {
	ctx := context.Background()
	const short = time.Millisecond
	var m Manager
	if m.Active() {
		t.Fatal("a new manager holds locks")
	}
	read := Use{DB: "d", Name: "t", Alias: "t"}
	write := Use{DB: "d", Name: "t", Alias: "t", Write: true}
	if err := m.Lock(ctx, 1, []Use{read}, short); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		id    uint32
		uses  []Use
		write bool
		want  int
	}{
		{"other session reads", 2, []Use{read}, false, 0},
		{"other session writes: waits, times out", 2, []Use{write}, true, mysql.ERLockWaitTimeout},
		{"holder reads what it locked", 1, []Use{read}, false, 0},
		{"holder writes a table locked READ", 1, []Use{write}, true, 1099},
		{"holder uses another table", 1, []Use{{DB: "d", Name: "u", Alias: "u"}}, false, 1100},
		{"holder uses it by another name", 1, []Use{{DB: "d", Name: "t", Alias: "x"}}, false, 1100},
	} {
		if got := code(t, m.Admit(ctx, c.id, c.uses, c.write, short)); got != c.want {
			t.Errorf("%s: error %d, want %d", c.name, got, c.want)
		}
	}
	if got := code(t, m.LockGlobal(ctx, 1, short)); got != 1192 {
		t.Errorf("global read lock over table locks: error %d, want 1192", got)
	}
	m.Release(1)
	if m.Active() {
		t.Fatal("locks left after release")
	}
	if err := m.LockGlobal(ctx, 1, short); err != nil {
		t.Fatal(err)
	}
	if got := code(t, m.Admit(ctx, 1, []Use{write}, true, short)); got != 1223 {
		t.Errorf("holder of the global read lock writes: error %d, want 1223", got)
	}
	if got := code(t, m.Lock(ctx, 1, []Use{write}, short)); got != 1223 {
		t.Errorf("holder of the global read lock locks WRITE: error %d, want 1223", got)
	}
	done := make(chan error, 1)
	go func() { done <- m.Admit(ctx, 2, []Use{write}, true, time.Hour) }()
	m.Release(1)
	if err := <-done; err != nil {
		t.Errorf("writer after the release: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	if err := m.Lock(ctx, 3, []Use{write}, short); err != nil {
		t.Fatal(err)
	}
	cancel()
	if got := code(t, m.Admit(cancelled, 2, []Use{read}, false, time.Hour)); got != mysql.ERQueryInterrupted {
		t.Errorf("cancelled wait: error %d, want %d", got, mysql.ERQueryInterrupted)
	}
}
