package kv

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"
)

// BenchmarkPessimisticUpdate runs the write transactions of an OLTP
// client in the default pessimistic mode on existing rows, as TPC-C's
// New-Order and Payment and sysbench's updates do: each of n rows is
// locked by a request of its own (one per statement), and so is one new
// row, with its existence check (an INSERT); then the transaction writes
// them, in one phase (every key in one region) or in two. The rows are in sstables with one
// version each, 300-byte values (over the short-value limit, as TPC-C's
// stock and customer rows).
func BenchmarkPessimisticUpdate(b *testing.B) {
	for _, onePC := range []bool{true, false} {
		for _, n := range []int{1, 10} {
			b.Run(fmt.Sprintf("rows=%d/1pc=%v", n, onePC), func(b *testing.B) { benchPessimisticUpdate(b, n, onePC) })
		}
	}
}

func benchPessimisticUpdate(b *testing.B, n int, onePC bool) {
	s, rc, keys := loadBenchValues(b, 1000, true, bytes.Repeat([]byte{'v'}, 300))
	ctx := context.Background()
	value := bytes.Repeat([]byte{'w'}, 300)
	ts := uint64(100)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	defer func() { b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op") }()
	for i := 0; i < b.N; i++ {
		start := ts
		ts += 2
		muts := make([]Mutation, 0, n+1)
		for j := 0; j < n; j++ {
			k := keys[(i*7+j*61)%len(keys)]
			if _, err := s.AcquirePessimisticLock(ctx, &AcquirePessimisticLockRequest{
				Region: rc, Keys: []PessimisticKey{{Key: k}}, Primary: muts0(muts, k), StartTS: start, ForUpdateTS: start, LockTTL: 60_000,
			}); err != nil {
				b.Fatal(err)
			}
			muts = append(muts, Mutation{Op: OpPut, Key: k, Value: value, Pessimistic: true})
		}
		ins := []byte(fmt.Sprintf("t2_r%08d", i))
		if _, err := s.AcquirePessimisticLock(ctx, &AcquirePessimisticLockRequest{
			Region: rc, Keys: []PessimisticKey{{Key: ins, CheckNotExists: true}}, Primary: muts0(muts, ins), StartTS: start, ForUpdateTS: start, LockTTL: 60_000,
		}); err != nil {
			b.Fatal(err)
		}
		muts = append(muts, Mutation{Op: OpInsert, Key: ins, Value: value, Pessimistic: true})
		req := &PrewriteRequest{Region: rc, Mutations: muts, Primary: muts[0].Key, StartTS: start, ForUpdateTS: start, LockTTL: 60_000}
		if onePC {
			req.TryOnePC, req.MaxCommitTS = true, math.MaxUint64>>1
		}
		resp, err := s.Prewrite(ctx, req)
		if err != nil || len(resp.Errors) > 0 {
			b.Fatal(resp, err)
		}
		commitTS := start + 1
		if onePC {
			if resp.OnePCCommitTS == 0 {
				b.Fatal("no one-phase commit")
			}
			// The next transactions start above this commit.
			ts = max(ts, resp.OnePCCommitTS+1)
			continue
		}
		ks := make([][]byte, len(muts))
		for j, m := range muts {
			ks[j] = m.Key
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: ks, StartTS: start, CommitTS: commitTS}); err != nil {
			b.Fatal(err)
		}
	}
}

// muts0 is the primary key of a transaction whose mutations so far are
// muts and whose next key is k.
func muts0(muts []Mutation, k []byte) []byte {
	if len(muts) > 0 {
		return muts[0].Key
	}
	return k
}
