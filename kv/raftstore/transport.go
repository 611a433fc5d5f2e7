package raftstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/kv/raftstore/rspb"
)

// peerQueue is how many rounds' batches wait for a peer's stream before
// more are dropped (raft sends again).
const peerQueue = 1024

// GRPCTransport sends raft messages to other stores, one gRPC stream per
// destination store, each round's messages to it as one RaftBatch.
type GRPCTransport struct {
	from    uint64
	resolve func(ctx context.Context, store uint64) (string, error)
	logger  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	peers map[uint64]chan []Envelope
}

// NewGRPCTransport returns the transport of store from; resolve returns
// a store's address (from pd), asked again whenever a stream breaks.
func NewGRPCTransport(from uint64, resolve func(ctx context.Context, store uint64) (string, error), logger *slog.Logger) *GRPCTransport {
	if logger == nil {
		logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &GRPCTransport{from: from, resolve: resolve, logger: logger, ctx: ctx, cancel: cancel, peers: map[uint64]chan []Envelope{}}
}

// Send implements Transport: it queues msgs for to's stream, or drops
// them when the queue is full (the peer is down or slow).
func (t *GRPCTransport) Send(to uint64, msgs []Envelope) {
	t.mu.Lock()
	ch, ok := t.peers[to]
	if !ok {
		if t.ctx.Err() != nil {
			t.mu.Unlock()
			return
		}
		ch = make(chan []Envelope, peerQueue)
		t.peers[to] = ch
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			t.stream(to, ch)
		}()
	}
	t.mu.Unlock()
	select {
	case ch <- msgs:
	default:
	}
}

// Close stops every stream.
func (t *GRPCTransport) Close() {
	t.cancel()
	t.wg.Wait()
}

// stream keeps a stream open to store to and sends its queue on it,
// reconnecting (after a pause) whenever it breaks.
func (t *GRPCTransport) stream(to uint64, ch chan []Envelope) {
	for t.ctx.Err() == nil {
		err := t.streamOnce(to, ch)
		if t.ctx.Err() != nil {
			return
		}
		t.logger.Debug("raftstore: stream to store broke", "store", to, "err", err)
		// Drain what queued for the dead stream: raft sends again, and
		// old heartbeats are of no use.
		for len(ch) > 0 {
			<-ch
		}
		select {
		case <-t.ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// dial returns a connection to store to, at the address pd has for it.
func (t *GRPCTransport) dial(ctx context.Context, to uint64) (*grpc.ClientConn, error) {
	addr, err := t.resolve(ctx, to)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial store %d at %s: %w", to, addr, err)
	}
	return conn, nil
}

func (t *GRPCTransport) streamOnce(to uint64, ch chan []Envelope) error {
	conn, err := t.dial(t.ctx, to)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(t.ctx)
	defer cancel()
	st, err := rspb.NewRaftClient(conn).Send(ctx)
	if err != nil {
		return fmt.Errorf("open stream to store %d: %w", to, err)
	}
	for {
		var msgs []Envelope
		select {
		case <-ctx.Done():
			return ctx.Err()
		case msgs = <-ch:
		}
		b := &rspb.RaftBatch{FromStore: t.from, ToStore: to, Messages: make([]*rspb.RaftMessage, 0, len(msgs))}
		for _, m := range msgs {
			data, err := proto.Marshal(m.Msg)
			if err != nil {
				return fmt.Errorf("encode raft message: %w", err)
			}
			b.Messages = append(b.Messages, &rspb.RaftMessage{RegionId: m.RegionID, Message: data})
		}
		if err := st.Send(b); err != nil {
			return fmt.Errorf("send to store %d: %w", to, err)
		}
	}
}

// snapshotTimeout bounds the sending of one snapshot: a receiver that
// stopped reading does not hold the region's snapshot for ever (raft
// sends another after the failure is reported).
const snapshotTimeout = 5 * time.Minute

// SendSnapshot implements Transport: a stream of its own (a region's
// snapshot is large; the raft stream keeps carrying heartbeats), the
// MsgSnap in the first chunk, and the region's keys in chunks of about
// snapshotChunkBytes.
func (t *GRPCTransport) SendSnapshot(ctx context.Context, to uint64, env Envelope, export func(emit func(chunk []byte) error) error) error {
	ctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
	defer cancel()
	conn, err := t.dial(ctx, to)
	if err != nil {
		return err
	}
	defer conn.Close()
	st, err := rspb.NewRaftClient(conn).Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("open snapshot stream to store %d: %w", to, err)
	}
	data, err := proto.Marshal(env.Msg)
	if err != nil {
		return fmt.Errorf("encode raft message: %w", err)
	}
	head := &rspb.SnapshotChunk{FromStore: t.from, ToStore: to, Message: &rspb.RaftMessage{RegionId: env.RegionID, Message: data}}
	if err := st.Send(head); err != nil {
		return fmt.Errorf("send snapshot to store %d: %w", to, err)
	}
	if err := export(func(chunk []byte) error {
		return st.Send(&rspb.SnapshotChunk{FromStore: t.from, ToStore: to, Data: chunk})
	}); err != nil {
		return fmt.Errorf("send snapshot to store %d: %w", to, err)
	}
	if _, err := st.CloseAndRecv(); err != nil {
		return fmt.Errorf("snapshot to store %d: %w", to, err)
	}
	return nil
}

// raftServer receives the raft streams of other stores.
type raftServer struct {
	rspb.UnimplementedRaftServer
	s *Store
}

// RegisterServer serves the raft transport of s on g.
func RegisterServer(g *grpc.Server, s *Store) { rspb.RegisterRaftServer(g, raftServer{s: s}) }

// Send implements rspb.RaftServer: every batch received is stepped into
// the store's groups. A batch for another store (a stale address) ends
// the stream.
func (rs raftServer) Send(st rspb.Raft_SendServer) error {
	for {
		b, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return st.SendAndClose(&rspb.Done{})
		}
		if err != nil {
			return err
		}
		if b.GetToStore() != rs.s.cfg.StoreID {
			return fmt.Errorf("raftstore: a batch for store %d reached store %d", b.GetToStore(), rs.s.cfg.StoreID)
		}
		envs := make([]Envelope, 0, len(b.GetMessages()))
		for _, m := range b.GetMessages() {
			msg := &pb.Message{}
			if err := proto.Unmarshal(m.GetMessage(), msg); err != nil {
				return fmt.Errorf("raftstore: decode raft message from store %d: %w", b.GetFromStore(), err)
			}
			envs = append(envs, Envelope{RegionID: m.GetRegionId(), Msg: msg})
		}
		rs.s.Step(envs)
	}
}

// Snapshot implements rspb.RaftServer: it gathers a region's snapshot
// and answers once the store's loop installed it.
func (rs raftServer) Snapshot(st rspb.Raft_SnapshotServer) error {
	var env Envelope
	var chunks [][]byte
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if c.GetToStore() != rs.s.cfg.StoreID {
			return fmt.Errorf("raftstore: a snapshot for store %d reached store %d", c.GetToStore(), rs.s.cfg.StoreID)
		}
		if m := c.GetMessage(); m != nil {
			msg := &pb.Message{}
			if err := proto.Unmarshal(m.GetMessage(), msg); err != nil {
				return fmt.Errorf("raftstore: decode snapshot message from store %d: %w", c.GetFromStore(), err)
			}
			env = Envelope{RegionID: m.GetRegionId(), Msg: msg}
		}
		if len(c.GetData()) > 0 {
			chunks = append(chunks, c.GetData())
		}
	}
	if env.Msg == nil || env.Msg.GetType() != pb.MsgSnap {
		return errors.New("raftstore: a snapshot stream without its MsgSnap")
	}
	select {
	case err := <-rs.s.ReceiveSnapshot(env, chunks):
		if err != nil {
			return err
		}
		return st.SendAndClose(&rspb.Done{})
	case <-st.Context().Done():
		return st.Context().Err()
	}
}
