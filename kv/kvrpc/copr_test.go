package kvrpc_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/percdb/percdb/kv"
)

// keysCoprocessor's programs output the keys they are fed, "key;" each;
// the program text is the number of keys after which the output is full
// (0: never).
type keysCoprocessor struct{}

type keysProgram struct {
	page, n int
	out     []byte
}

func (keysCoprocessor) Compile(program []byte) (kv.CoprocessorProgram, error) {
	page, err := strconv.Atoi(string(program))
	return &keysProgram{page: page}, err
}

func (p *keysProgram) Feed(key, _ []byte) (full, done bool, err error) {
	p.out = append(append(p.out, key...), ';')
	p.n++
	return p.page > 0 && p.n%p.page == 0, false, nil
}

func (p *keysProgram) Output() ([]byte, error) { return p.out, nil }

// TestCoprocessorRangesOverGRPC sends the same coprocessor requests of
// many ranges to a store and through gRPC to it, on a region that ends
// at "d": both answer alike, their ranges honoured exactly (the pairs,
// the resume key inside a range, a lock only where a range holds it, a
// range past the region refused with a region error).
func TestCoprocessorRangesOverGRPC(t *testing.T) {
	ctx := context.Background()
	s := openStoreWith(t, kv.Options{Coprocessor: keysCoprocessor{}})
	var muts []kv.Mutation
	var keys [][]byte
	for _, k := range []string{"a", "b", "c", "c1", "d", "e"} {
		keys = append(keys, []byte(k))
		muts = append(muts, kv.Mutation{Op: kv.OpPut, Key: []byte(k), Value: []byte("v")})
	}
	rc := s.Regions()[0].Ctx()
	if resp, err := s.Prewrite(ctx, &kv.PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: 10, LockTTL: 3000}); err != nil || len(resp.Errors) != 0 {
		t.Fatalf("prewrite: %v %v", err, resp)
	}
	if err := s.Commit(ctx, &kv.CommitRequest{Region: rc, Keys: keys, StartTS: 10, CommitTS: 11}); err != nil {
		t.Fatal(err)
	}
	lock := kv.Mutation{Op: kv.OpPut, Key: []byte("b"), Value: []byte("new")}
	if resp, err := s.Prewrite(ctx, &kv.PrewriteRequest{Region: rc, Mutations: []kv.Mutation{lock}, Primary: lock.Key, StartTS: 30, LockTTL: 3000}); err != nil || len(resp.Errors) != 0 {
		t.Fatalf("prewrite the lock: %v %v", err, resp)
	}
	if _, _, err := s.SplitRegion(ctx, []byte("d")); err != nil {
		t.Fatal(err)
	}
	c, left := servedClientOf(t, s, []byte("a"))
	kr := func(start, end string) kv.KeyRange { return kv.KeyRange{Start: []byte(start), End: []byte(end)} }
	for _, tc := range []struct {
		name    string
		ranges  []kv.KeyRange
		version uint64
		page    string
		want    string
	}{
		{"points and a range", []kv.KeyRange{kr("a", "a\x00"), kr("c", "c1\x00")}, 20, "0", "a;c;c1; resume <nil>"},
		{"a page stops inside a range", []kv.KeyRange{kr("a", "a\x00"), kr("c", "c1\x00")}, 20, "2", `a;c; resume "c\x00"`},
		{"to the region's end", []kv.KeyRange{kr("", "a\x00"), kr("c1", "")}, 20, "0", "a;c1; resume <nil>"},
		{"the lock between the ranges", []kv.KeyRange{kr("a", "b"), kr("b\x00", "")}, 40, "0", "a;c;c1; resume <nil>"},
		{"the lock in a range", []kv.KeyRange{kr("a", "a\x00"), kr("b", "c")}, 40, "0", "locked b"},
		{"the page before the lock", []kv.KeyRange{kr("a", "a\x00"), kr("b", "c")}, 40, "1", `a; resume "a\x00"`},
		{"past the region", []kv.KeyRange{kr("a", "b"), kr("c", "e")}, 20, "0", "region error"},
		{"overlapping", []kv.KeyRange{kr("a", "c"), kr("b", "c1")}, 20, "0", "error"},
	} {
		for _, via := range []struct {
			name string
			c    interface {
				Coprocessor(context.Context, *kv.CoprocessorRequest) (*kv.CoprocessorResponse, error)
			}
		}{{"store", s}, {"grpc", c}} {
			resp, err := via.c.Coprocessor(ctx, &kv.CoprocessorRequest{Region: left.Ctx(), Ranges: tc.ranges, Version: tc.version, Program: []byte(tc.page)})
			var got string
			var re *kv.RegionError
			var locked *kv.KeyIsLockedError
			switch {
			case errors.As(err, &re):
				got = "region error"
			case errors.As(err, &locked):
				got = "locked " + string(locked.Lock.Key)
			case err != nil:
				got = "error"
			case resp.Resume == nil:
				got = fmt.Sprintf("%s resume <nil>", resp.Data)
			default:
				got = fmt.Sprintf("%s resume %q", resp.Data, resp.Resume)
			}
			if got != tc.want {
				t.Errorf("%s via %s: %s (%v), want %s", tc.name, via.name, got, err, tc.want)
			}
		}
	}
}
