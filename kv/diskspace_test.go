package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestApproximateSize: a range's estimate grows with what is flushed into
// it and stays near zero for a range that holds nothing; DiskSpace reads
// the file system.
func TestApproximateSize(t *testing.T) {
	s, err := Open(t.TempDir(), Options{ReserveSpace: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	reg, err := s.LocateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	var muts []Mutation
	for i := 0; i < 2000; i++ {
		val := make([]byte, 1000)
		for j := range val {
			val[j] = byte(rng.Uint32()) // incompressible: compression must not hide it
		}
		muts = append(muts, Mutation{Op: OpPut, Key: []byte(fmt.Sprintf("a%05d", i)), Value: val})
	}
	// Long values go to the data space at prewrite: no commit is needed
	// for the estimate to see them.
	resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: reg.Ctx(), Mutations: muts, Primary: muts[0].Key, StartTS: 10, LockTTL: 3000, TxnSize: 2000})
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("prewrite: %v %v", err, resp)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	full, err := s.ApproximateSize([]byte("a"), []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	empty, err := s.ApproximateSize([]byte("x"), []byte("y"))
	if err != nil {
		t.Fatal(err)
	}
	// An estimate's unit is a data block: an empty range may be charged
	// one.
	if full < 500_000 || empty > max(full/100, blockSize) {
		t.Fatalf("estimates: [a, b) %d bytes (2,000 values of 1,000 bytes), [x, y) %d", full, empty)
	}
	ds, err := s.DiskSpace()
	if err != nil || ds.Total == 0 || ds.Available > ds.Total || ds.Reserve != 0 || ds.Full {
		t.Fatalf("DiskSpace: %+v %v", ds, err)
	}
}
