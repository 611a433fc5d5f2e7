// Package kvrpctest serves a kv.Store over gRPC on a loopback port for
// tests, so that a test suite written against kv.Client (txn's) runs over
// the wire: set PERCDB_TEST_KV=grpc and ClientFor gives the remote client.
package kvrpctest

import (
	"context"
	"net"
	"os"
	"testing"

	"google.golang.org/grpc"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
)

// EnvVar names the environment variable that makes ClientFor serve over
// gRPC when it is "grpc".
const EnvVar = "PERCDB_TEST_KV"

// ClientFor returns the client through which a test reaches s: in process
// (kv.NewLocalClient) by default, over gRPC on loopback (Loopback) when
// PERCDB_TEST_KV=grpc.
func ClientFor(t testing.TB, s *kv.Store) kv.Client {
	t.Helper()
	if os.Getenv(EnvVar) == "grpc" {
		return Loopback(t, s)
	}
	return kv.NewLocalClient(s)
}

// Loopback serves s on a gRPC server at 127.0.0.1 (a free port) and
// returns a kvrpc.Client for it, routed by s's own region map. Both stop
// when the test ends.
func Loopback(t testing.TB, s *kv.Store) kv.Client {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	kvrpc.NewServer(s).Register(srv)
	go func() { _ = srv.Serve(lis) }()
	c := kvrpc.NewClient(storeRouter{local: kv.NewLocalClient(s), addr: lis.Addr().String()}, kvrpc.Options{})
	t.Cleanup(func() {
		_ = c.Close()
		srv.Stop()
	})
	return c
}

// storeRouter routes every region of one store to its address.
type storeRouter struct {
	local kv.Client
	addr  string
}

func (r storeRouter) LocateKey(ctx context.Context, key []byte) (kv.RegionInfo, error) {
	info, err := r.local.LocateKey(ctx, key)
	info.Addr = r.addr
	return info, err
}

func (r storeRouter) InvalidateRegion(uint64) {}

func (r storeRouter) RegionAddr(uint64) (string, bool) { return r.addr, true }

// StoreAddrs implements kvrpc.StoreLister: the one store.
func (r storeRouter) StoreAddrs(context.Context) ([]string, error) { return []string{r.addr}, nil }
