package raftstore

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// loopNetwork connects stores whose loops run (Store.Start): Send steps
// a copy of each message on the destination store at once.
type loopNetwork struct {
	mu     sync.Mutex
	stores map[uint64]*Store
}

type loopTransport struct {
	net *loopNetwork
}

func (t loopTransport) Send(to uint64, msgs []Envelope) {
	t.net.mu.Lock()
	s := t.net.stores[to]
	t.net.mu.Unlock()
	if s == nil {
		return
	}
	out := make([]Envelope, len(msgs))
	for i, m := range msgs {
		out[i] = Envelope{RegionID: m.RegionID, Msg: proto.Clone(m.Msg).(*pb.Message)}
	}
	s.Step(out)
}

func (loopTransport) SendSnapshot(context.Context, uint64, Envelope, func(func([]byte) error) error) error {
	return io.ErrClosedPipe // the benchmark's logs are never truncated
}

// BenchmarkReadBarrier measures one read barrier on the leader of a
// region of three stores whose loops run, with 10 ms ticks (a lease of
// 70 ms): "lease" serves reads from the commit index while the lease
// holds (renewed by a ReadIndex of its own once half of it is left);
// "safe" disables the lease (a clock drift above the election timeout),
// so that every barrier waits for a ReadIndex heartbeat round, as etcd
// raft's ReadOnlySafe alone would. In process the round costs two loop
// wakeups and two message hops; over gRPC between KV nodes it adds two
// network hops more.
func BenchmarkReadBarrier(b *testing.B) {
	for _, mode := range []struct {
		name  string
		drift time.Duration
	}{{"lease", 0}, {"safe", time.Hour}} {
		b.Run(mode.name, func(b *testing.B) {
			net := &loopNetwork{stores: map[uint64]*Store{}}
			var ts atomic.Uint64
			peers := []uint64{1, 2, 3}
			for _, id := range peers {
				s, err := Open(Config{StoreID: id, InMemory: true, Applier: &fakeApplier{}, Transport: loopTransport{net},
					FreshTS:      func(context.Context) (uint64, error) { return ts.Add(1), nil },
					TickInterval: 10 * time.Millisecond, MaxClockDrift: mode.drift,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.AddRegion(1, Descriptor{}, peers, 1); err != nil {
					b.Fatal(err)
				}
				net.mu.Lock()
				net.stores[id] = s
				net.mu.Unlock()
				defer s.Close()
			}
			for _, id := range peers {
				net.stores[id].Start()
			}
			var l Leadership
			for found := false; !found; {
				for _, id := range peers {
					if lead, err := net.stores[id].Replica(1).Leading(); err == nil {
						l, found = lead, true
						break
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				if err := l.ReadBarrier(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
