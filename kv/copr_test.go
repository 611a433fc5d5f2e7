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
	s, rc, write := listStore(t)
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

// TestCoprocessorRanges checks a request of many ranges: one program is
// fed the visible pairs of exactly its ranges in order (a point as the
// range [key, key+"\x00")), a full output resumes inside a range, a lock
// blocks the request only inside its ranges (up to where the walk
// stopped), and malformed lists and lists reaching past the region are
// refused.
func TestCoprocessorRanges(t *testing.T) {
	ctx := context.Background()
	s, rc, write := listStore(t)
	write(10, true, doubledLetters()...)
	kr := func(start, end string) KeyRange { return KeyRange{Start: []byte(start), End: []byte(end)} }
	ranges := []KeyRange{kr("a", "a\x00"), kr("b\x00", "c\x00"), kr("d", "d"), kr("e", "f"), kr("f\x00", "")}
	resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Ranges: ranges, Version: 20, Program: []byte("0")})
	if err != nil || string(resp.Data) != "a=aa;c=cc;e=ee;g=gg;" || resp.Resume != nil || resp.Visited != 4 {
		t.Fatalf("ranges: %+v %v", resp, err)
	}
	// Pages of two: the first stops inside the second range.
	resp, err = s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Ranges: ranges, Version: 20, Program: []byte("2")})
	if err != nil || string(resp.Data) != "a=aa;c=cc;" || string(resp.Resume) != "c\x00" {
		t.Fatalf("first page: %+v %v", resp, err)
	}

	// A lock on b (between the ranges' keys, not in them) and on f (in
	// no range) blocks nothing; one on e blocks the ranges holding it.
	lock := func(key string, ts uint64) {
		t.Helper()
		write(ts, false, Mutation{Op: OpPut, Key: []byte(key), Value: []byte("new")})
	}
	lock("b", 30)
	lock("f", 31)
	if resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Ranges: ranges, Version: 40, Program: []byte("0")}); err != nil || string(resp.Data) != "a=aa;c=cc;e=ee;g=gg;" {
		t.Fatalf("locks outside the ranges: %+v %v", resp, err)
	}
	lock("e", 32)
	var locked *KeyIsLockedError
	if _, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Ranges: ranges, Version: 40, Program: []byte("0")}); !errors.As(err, &locked) || string(locked.Lock.Key) != "e" {
		t.Fatalf("a lock in a range: %v", err)
	}
	// The page that stops before the lock does not see it.
	if resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Ranges: ranges, Version: 40, Program: []byte("2")}); err != nil || string(resp.Data) != "a=aa;c=cc;" {
		t.Fatalf("page before the lock: %+v %v", resp, err)
	}

	for name, req := range map[string]*CoprocessorRequest{
		"overlapping":  {Ranges: []KeyRange{kr("a", "c"), kr("b", "d")}},
		"descending":   {Ranges: []KeyRange{kr("c", "d"), kr("a", "b")}},
		"reversed":     {Ranges: []KeyRange{kr("c", "a")}},
		"unbounded":    {Ranges: []KeyRange{kr("a", ""), kr("c", "d")}},
		"start+ranges": {Start: []byte("a"), Ranges: []KeyRange{kr("c", "d")}},
	} {
		req.Region, req.Version, req.Program = rc, 20, []byte("0")
		if resp, err := s.Coprocessor(ctx, req); err == nil {
			t.Errorf("%s: evaluated: %+v", name, resp)
		}
	}

	// Past a region's end: the last range, as a single range's end.
	left, _, err := s.SplitRegion(ctx, []byte("d"))
	if err != nil {
		t.Fatal(err)
	}
	var re *RegionError
	if _, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: left.Ctx(), Ranges: []KeyRange{kr("a", "b"), kr("c", "e")}, Version: 20, Program: []byte("0")}); !errors.As(err, &re) {
		t.Fatalf("past the region: %v", err)
	}
	if resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: left.Ctx(), Ranges: []KeyRange{kr("a", "b"), kr("c", "")}, Version: 20, Program: []byte("0")}); err != nil || string(resp.Data) != "a=aa;c=cc;" {
		t.Fatalf("to the region's end: %+v %v", resp, err)
	}
}

// TestCoprocessorReverse checks a Reverse request: the program is fed
// the visible pairs in descending key order (of Ranges, the last range
// first), a full output resumes below the last key fed, asked again with
// that key as the End the walk goes on from there, and a lock blocks the
// request only in the part the walk covered, from its end down to where
// it stopped.
func TestCoprocessorReverse(t *testing.T) {
	ctx := context.Background()
	s, rc, write := listStore(t)
	write(10, true, doubledLetters()...)
	write(20, true, Mutation{Op: OpDelete, Key: []byte("f")})

	rev := func(version uint64, program string, start, end string, ranges ...KeyRange) (*CoprocessorResponse, error) {
		return s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Start: []byte(start), End: []byte(end), Ranges: ranges,
			Version: version, Program: []byte(program), Reverse: true})
	}
	resp, err := rev(30, "0", "", "")
	if err != nil || string(resp.Data) != "g=gg;e=ee;d=dd;c=cc;b=bb;a=aa;" || resp.Resume != nil || resp.Visited != 6 {
		t.Fatalf("whole region backwards: %+v %v", resp, err)
	}
	// Before the delete, f is visible.
	if resp, err := rev(15, "0", "d", "g"); err != nil || string(resp.Data) != "f=ff;e=ee;d=dd;" {
		t.Fatalf("[d, g) at 15: %+v %v", resp, err)
	}
	// Pages of two: resume at the last key fed, the rest below it.
	resp, err = rev(30, "2", "b", "")
	if err != nil || string(resp.Data) != "g=gg;e=ee;" || string(resp.Resume) != "e" {
		t.Fatalf("first page: %+v %v", resp, err)
	}
	resp, err = rev(30, "2", "b", string(resp.Resume))
	if err != nil || string(resp.Data) != "d=dd;c=cc;" || string(resp.Resume) != "c" {
		t.Fatalf("second page: %+v %v", resp, err)
	}
	resp, err = rev(30, "2", "b", string(resp.Resume))
	if err != nil || string(resp.Data) != "b=bb;" || resp.Resume != nil {
		t.Fatalf("last page: %+v %v", resp, err)
	}

	// Many ranges: the last first, a page stopping inside one.
	kr := func(start, end string) KeyRange { return KeyRange{Start: []byte(start), End: []byte(end)} }
	ranges := []KeyRange{kr("a", "a\x00"), kr("b\x00", "d\x00"), kr("e", "")}
	if resp, err := rev(30, "0", "", "", ranges...); err != nil || string(resp.Data) != "g=gg;e=ee;d=dd;c=cc;a=aa;" || resp.Resume != nil {
		t.Fatalf("ranges backwards: %+v %v", resp, err)
	}
	resp, err = rev(30, "3", "", "", ranges...)
	if err != nil || string(resp.Data) != "g=gg;e=ee;d=dd;" || string(resp.Resume) != "d" {
		t.Fatalf("ranges, first page: %+v %v", resp, err)
	}

	// A lock on b: the pages that stop above it do not see it, the walk
	// that reaches it does; one above the covered part blocks nothing.
	write(40, false, Mutation{Op: OpPut, Key: []byte("b"), Value: []byte("new")})
	if resp, err := rev(50, "2", "", ""); err != nil || string(resp.Data) != "g=gg;e=ee;" {
		t.Fatalf("page above the lock: %+v %v", resp, err)
	}
	if resp, err := rev(50, "0", "", "b"); err != nil || string(resp.Data) != "a=aa;" {
		t.Fatalf("below the lock: %+v %v", resp, err)
	}
	var locked *KeyIsLockedError
	if _, err := rev(50, "0", "", ""); !errors.As(err, &locked) || string(locked.Lock.Key) != "b" {
		t.Fatalf("under a lock: %v", err)
	}
	if _, err := rev(50, "0", "", "", ranges...); err != nil {
		t.Fatalf("a lock between the ranges: %v", err)
	}
	if resp, err := rev(50, "3", "", "", kr("a", "c"), kr("d", "")); err != nil || string(resp.Data) != "g=gg;e=ee;d=dd;" {
		t.Fatalf("ranges, page above the lock: %+v %v", resp, err)
	}
	if _, err := rev(50, "0", "", "", kr("a", "c"), kr("d", "")); !errors.As(err, &locked) || string(locked.Lock.Key) != "b" {
		t.Fatalf("ranges under a lock: %v", err)
	}

	// Past a region's end, as forwards.
	left, _, err := s.SplitRegion(ctx, []byte("d"))
	if err != nil {
		t.Fatal(err)
	}
	var re *RegionError
	if _, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: left.Ctx(), Start: []byte("a"), End: []byte("e"), Version: 30, Program: []byte("0"), Reverse: true}); !errors.As(err, &re) {
		t.Fatalf("past the region: %v", err)
	}
	if resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: left.Ctx(), Start: []byte("c"), Version: 30, Program: []byte("0"), Reverse: true}); err != nil || string(resp.Data) != "c=cc;" {
		t.Fatalf("to the region's end: %+v %v", resp, err)
	}
}

// doubledLetters returns the puts of the keys a to g, each of its value
// the letter twice.
func doubledLetters() []Mutation {
	var muts []Mutation
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		muts = append(muts, Mutation{Op: OpPut, Key: []byte(k), Value: []byte(k + k)})
	}
	return muts
}

// listStore opens an in-memory store of listCoprocessor and returns it,
// its region and a function that prewrites muts at start, and commits
// them at start+1 when commit.
func listStore(t *testing.T) (*Store, RegionCtx, func(start uint64, commit bool, muts ...Mutation)) {
	t.Helper()
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, Coprocessor: listCoprocessor{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	rc := s.Regions()[0].Ctx()
	return s, rc, func(start uint64, commit bool, muts ...Mutation) {
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
}
