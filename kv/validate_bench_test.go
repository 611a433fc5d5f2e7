package kv

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkValidateReads validates four 100-key ranges (sysbench
// read_write's range reads) of a 1,000-key table whose keys have 1 or 8
// versions, in a window where one key in each range changed, from the
// memtable and from sstables.
func BenchmarkValidateReads(b *testing.B) {
	for _, versions := range []int{1, 8} {
		for _, flushed := range []bool{false, true} {
			where := "memtable"
			if flushed {
				where = "sstable"
			}
			b.Run(fmt.Sprintf("versions=%d/%s", versions, where), func(b *testing.B) {
				benchValidateReads(b, versions, flushed)
			})
		}
	}
}

func benchValidateReads(b *testing.B, versions int, flush bool) {
	ctx := context.Background()
	s, rc, keys := loadBenchKeys(b, 1000, false)
	ts := uint64(20)
	commit := func(keys [][]byte) {
		b.Helper()
		start, commitTS := ts+1, ts+2
		ts = commitTS
		muts := make([]Mutation, len(keys))
		for i, k := range keys {
			muts[i] = Mutation{Op: OpPut, Key: k, Value: []byte(fmt.Sprintf("version at %d", commitTS))}
		}
		if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: start, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
			b.Fatal(resp, err)
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: start, CommitTS: commitTS}); err != nil {
			b.Fatal(err)
		}
	}
	for v := 1; v < versions; v++ {
		commit(keys)
	}
	from := ts
	var changed [][]byte
	for r := 0; r < 4; r++ {
		changed = append(changed, keys[r*200+50])
	}
	commit(changed)
	if flush {
		if err := s.db.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	req := &ValidateReadsRequest{Region: rc, From: from, To: ts + 10}
	for r := 0; r < 4; r++ {
		req.Ranges = append(req.Ranges, KeyRange{Start: keys[r*200], End: keys[r*200+100]})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := s.ValidateReads(ctx, req)
		if err != nil || len(resp.Changes) != 4 {
			b.Fatal(resp, err)
		}
	}
}
