package kv

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// listCoprocessor's programs output the keys and values they are fed,
// "key=value;" each; the program text is the number of pairs after which
// the output is full (0: never).
type listCoprocessor struct{}

type listProgram struct {
	page, n int
	out     []byte
}

func (listCoprocessor) Compile(program []byte) (CoprocessorProgram, error) {
	page, err := strconv.Atoi(string(program))
	if err != nil {
		return nil, err
	}
	return &listProgram{page: page}, nil
}

func (p *listProgram) Feed(key, value []byte) (full, done bool, err error) {
	if value == nil {
		return false, false, errors.New("a visible pair with a nil value")
	}
	p.out = fmt.Appendf(p.out, "%s=%s;", key, value)
	p.n++
	return p.page > 0 && p.n%p.page == 0, false, nil
}

func (p *listProgram) Output() ([]byte, error) { return p.out, nil }

// TestCoprocessor checks that a program is fed the pairs a Scan returns
// (an empty value included), that a full output stops the walk with a
// resume key, that a lock in the covered range fails the request as it
// fails a scan, and that a store without a coprocessor refuses.
func TestCoprocessor(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, Coprocessor: listCoprocessor{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc := s.Regions()[0].Ctx()
	write := func(start uint64, commit bool, muts ...Mutation) {
		t.Helper()
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: muts[0].Key, StartTS: start, LockTTL: 1000})
		if err != nil || len(resp.Errors) > 0 {
			t.Fatal(resp, err)
		}
		if commit {
			keys := make([][]byte, len(muts))
			for i, m := range muts {
				keys[i] = m.Key
			}
			if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: start, CommitTS: start + 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(10, true, Mutation{Op: OpPut, Key: []byte("a"), Value: []byte("1")}, Mutation{Op: OpPut, Key: []byte("b"), Value: []byte{}},
		Mutation{Op: OpPut, Key: []byte("c"), Value: []byte("3")}, Mutation{Op: OpPut, Key: []byte("d"), Value: make([]byte, 300)})
	write(20, true, Mutation{Op: OpDelete, Key: []byte("c")})

	resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Version: 30, Program: []byte("0")})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a=1;b=;d=" + string(make([]byte, 300)) + ";"; string(resp.Data) != want || resp.Resume != nil || resp.Visited != 3 {
		t.Fatalf("whole range: %q resume %q visited %d", resp.Data, resp.Resume, resp.Visited)
	}
	resp, err = s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Version: 15, Program: []byte("2")})
	if err != nil || string(resp.Data) != "a=1;b=;" || string(resp.Resume) != "b\x00" {
		t.Fatalf("first page: %q resume %q %v", resp.Data, resp.Resume, err)
	}
	resp, err = s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Start: resp.Resume, Version: 15, Program: []byte("2")})
	if err != nil || string(resp.Data) != "c=3;d="+string(make([]byte, 300))+";" {
		t.Fatalf("second page: %q resume %q %v", resp.Data, resp.Resume, err)
	}

	write(40, false, Mutation{Op: OpPut, Key: []byte("c"), Value: []byte("new")})
	var locked *KeyIsLockedError
	if _, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Version: 50, Program: []byte("0")}); !errors.As(err, &locked) || string(locked.Lock.Key) != "c" {
		t.Fatalf("under a lock: %v", err)
	}
	// The page that stops before the lock does not see it.
	if resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Version: 50, Program: []byte("1")}); err != nil || string(resp.Data) != "a=1;" {
		t.Fatalf("page before the lock: %v %v", resp, err)
	}
	if resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Version: 50, Program: []byte("0"), BypassLocks: []uint64{40}}); err != nil || resp.Visited != 3 {
		t.Fatalf("bypassing the lock: %v %v", resp, err)
	}
	if _, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Version: 50, Program: []byte("x")}); err == nil {
		t.Fatal("a malformed program was evaluated")
	}

	bare := openTestStore(t)
	if _, err := bare.Coprocessor(ctx, &CoprocessorRequest{Region: bare.Regions()[0].Ctx(), Version: 5, Program: []byte("0")}); !errors.Is(err, ErrNoCoprocessor) {
		t.Fatalf("store without a coprocessor: %v", err)
	}
}
