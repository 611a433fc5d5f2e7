package txn

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// recordingGuard is a CommitGuard that refuses while refuse is set and
// records the tokens it was asked about.
type recordingGuard struct {
	mu     sync.Mutex
	token  uint64
	refuse bool
	asked  []uint64
}

var errGuard = errors.New("guard refuses")

func (g *recordingGuard) Token() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.token
}

func (g *recordingGuard) Check(token uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, token)
	if g.refuse {
		return errGuard
	}
	return nil
}

// TestCommitGuard: a commit is vetted once, with the token of its begin,
// in one phase and in two; a refused commit fails with the guard's error
// and leaves nothing committed and no lock behind; a read-only commit is
// not vetted.
func TestCommitGuard(t *testing.T) {
	for _, onePC := range []bool{true, false} {
		t.Run(map[bool]string{true: "1pc", false: "2pc"}[onePC], func(t *testing.T) {
			ctx := context.Background()
			g := &recordingGuard{token: 7}
			e := newEnv(t, Options{CommitGuard: g, EnableOnePC: new(onePC)})
			tx, err := e.s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			g.mu.Lock()
			g.token = 8 // taken at Begin: the commit is asked about 7
			g.mu.Unlock()
			_ = tx.Set([]byte("a"), []byte("1"))
			_ = tx.Set([]byte("b"), []byte("1"))
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if len(g.asked) != 1 || g.asked[0] != 7 {
				t.Fatalf("guard asked about %v, want [7]", g.asked)
			}

			g.mu.Lock()
			g.refuse, g.asked = true, nil
			g.mu.Unlock()
			tx, _ = e.s.Begin(ctx)
			_ = tx.Set([]byte("a"), []byte("2"))
			_ = tx.Set([]byte("c"), []byte("2"))
			if err := tx.Commit(ctx); !errors.Is(err, errGuard) {
				t.Fatalf("commit refused by the guard: %v, want its error", err)
			}
			g.mu.Lock()
			g.refuse = false
			g.mu.Unlock()
			// Neither write took effect, and no lock is left to meet.
			r, _ := e.s.Begin(ctx)
			for key, want := range map[string]string{"a": "1", "c": ""} {
				v, _, err := r.Get(ctx, []byte(key))
				if err != nil {
					t.Fatalf("read %s after the refused commit: %v", key, err)
				}
				if string(v) != want {
					t.Fatalf("%s = %q after the refused commit, want %q", key, v, want)
				}
			}
			g.mu.Lock()
			g.asked = nil
			g.mu.Unlock()
			if err := r.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if len(g.asked) != 0 {
				t.Fatalf("a read-only commit was vetted: %v", g.asked)
			}
		})
	}
}
