package deadlock

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/percdb/percdb/kv"
)

// testNode is a Server on 127.0.0.1 and the Client of the same node.
type testNode struct {
	addr    string
	leading atomic.Bool
	server  *Server
	client  *Client
}

// startNodes starts n nodes whose clients locate the detector at
// *detector's address.
func startNodes(t testing.TB, n int, detector *atomic.Pointer[testNode]) []*testNode {
	t.Helper()
	var nodes []*testNode
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tn := &testNode{addr: l.Addr().String()}
		tn.server = NewServer(ServerConfig{Leading: tn.leading.Load})
		g := grpc.NewServer()
		tn.server.Register(g)
		go func() { _ = g.Serve(l) }()
		t.Cleanup(g.Stop)
		tn.client = NewClient(ClientConfig{Self: tn.addr, Local: tn.server, RefreshInterval: time.Hour,
			Locate: func(context.Context) (string, error) { return detector.Load().addr, nil }})
		t.Cleanup(func() { _ = tn.client.Close() })
		nodes = append(nodes, tn)
	}
	return nodes
}

func lead(detector *atomic.Pointer[testNode], nodes []*testNode, i int) {
	for j, n := range nodes {
		n.leading.Store(j == i)
	}
	detector.Store(nodes[i])
}

func isDeadlock(err error) bool {
	var de *kv.DeadlockError
	return errors.As(err, &de)
}

// TestClusterDetector: waits sent from three nodes meet in the one
// detector; a cycle across them is refused at the edge that closes it,
// with the cycle; ended waits are cleaned up; after the detector moves,
// the new one starts empty and the waits in progress are re-sent.
func TestClusterDetector(t *testing.T) {
	ctx := context.Background()
	var detector atomic.Pointer[testNode]
	nodes := startNodes(t, 3, &detector)
	a, b, c := nodes[0], nodes[1], nodes[2]
	lead(&detector, nodes, 0)

	if err := b.client.Detect(ctx, 1, 2, []byte("k1")); err != nil {
		t.Fatal(err)
	}
	if err := c.client.Detect(ctx, 2, 3, []byte("k2")); err != nil {
		t.Fatal(err)
	}
	err := a.client.Detect(ctx, 3, 1, []byte("k3"))
	var de *kv.DeadlockError
	if !errors.As(err, &de) || de.StartTS != 3 || de.LockTS != 1 || len(de.Chain) != 2 ||
		de.Chain[0].Txn != 1 || de.Chain[1].Txn != 2 || string(de.Chain[1].Key) != "k2" {
		t.Fatalf("3 -> 1 closing 1 -> 2 -> 3 across nodes: got %v (%+v)", err, de)
	}
	if got := a.server.graph.Edges(); len(got) != 2 {
		t.Fatalf("the refused wait was recorded: %v", got)
	}

	// A second wait on a pair a node already waits on is not sent; the
	// pair's edge stays until the last of them ends.
	if err := b.client.Detect(ctx, 1, 2, []byte("k4")); err != nil {
		t.Fatal(err)
	}
	b.client.Done(1, 2)
	b.client.cleanUp(ctx)
	if got := a.server.graph.Edges(); len(got) != 2 {
		t.Fatalf("one of two waits on 1 -> 2 ended: edges %v", got)
	}
	b.client.Done(1, 2)
	b.client.cleanUp(ctx)
	if got := a.server.graph.Edges(); len(got) != 1 || got[0].Txn != 2 {
		t.Fatalf("both waits on 1 -> 2 ended: edges %v", got)
	}
	if err := a.client.Detect(ctx, 3, 1, []byte("k3")); err != nil {
		t.Fatalf("3 -> 1 once 1 waits no more: %v", err)
	}

	// The detector moves to b: the node a no longer answers, b starts
	// empty, and a's and c's waits in progress reach it with their next
	// request (c's re-send: refresh).
	lead(&detector, nodes, 1)
	if err := a.client.Detect(ctx, 3, 4, []byte("k5")); err != nil {
		t.Fatal(err)
	}
	if got := b.server.graph.Edges(); len(got) != 2 {
		t.Fatalf("new detector after a's request: edges %v, want 3 -> 1 (re-sent) and 3 -> 4", got)
	}
	c.client.refresh(ctx)
	if err := b.client.Detect(ctx, 1, 2, []byte("k1")); !isDeadlock(err) {
		t.Fatalf("1 -> 2 closing 2 -> 3 -> 1 after the move: got %v", err)
	}
	if _, err := a.server.current(); err == nil {
		t.Fatal("the old detector still answers")
	}

	// a is the detector again (a new graph), then its leadership ends and
	// comes back with no request in between, but told
	// (LeadershipChanged): it starts empty again, without 7 -> 8.
	lead(&detector, nodes, 0)
	if err := a.client.Detect(ctx, 7, 8, []byte("k7")); err != nil {
		t.Fatal(err)
	}
	lead(&detector, nodes, 2)
	a.server.LeadershipChanged()
	lead(&detector, nodes, 0)
	if err := c.client.Detect(ctx, 9, 3, []byte("k9")); err != nil {
		t.Fatal(err)
	}
	// c's waits: 2 -> 3 (re-sent: c last sent to b) and 9 -> 3.
	got := a.server.graph.Edges()
	if len(got) != 2 || got[0].Txn != 2 || got[0].WaitForTxn != 3 || got[1].Txn != 9 {
		t.Fatalf("a detector again after its leadership ended: edges %v, want only c's 2 -> 3 and 9 -> 3", got)
	}
}

// TestDetectorOutOfReach: a detector that cannot be reached answers "no
// deadlock" within the request timeout, and the wait is re-sent once it
// is back.
func TestDetectorOutOfReach(t *testing.T) {
	ctx := context.Background()
	var detector atomic.Pointer[testNode]
	nodes := startNodes(t, 2, &detector)
	a, b := nodes[0], nodes[1]
	lead(&detector, nodes, 0)
	a.leading.Store(false) // a is named by pd but refuses
	b.client.cfg.RequestTimeout = 50 * time.Millisecond
	if err := b.client.Detect(ctx, 1, 2, []byte("k")); err != nil {
		t.Fatalf("detector out of reach: %v", err)
	}
	a.leading.Store(true)
	// The next Detects do not try for a while: they answer at once,
	// unchecked (the refresh delivers them).
	b.client.cfg.Locate = func(context.Context) (string, error) {
		return "", errors.New("pd asked while the detector is out of reach")
	}
	if err := b.client.Detect(ctx, 1, 3, []byte("k")); err != nil {
		t.Fatalf("detector just found out of reach: %v", err)
	}
	b.client.cfg.Locate = func(context.Context) (string, error) { return a.addr, nil }
	if err := a.client.Detect(ctx, 2, 1, []byte("j")); err != nil {
		t.Fatalf("b's wait was never delivered, so no cycle yet: %v", err)
	}
	b.client.refresh(ctx)
	if got := a.server.graph.Edges(); len(got) != 3 {
		t.Fatalf("after b re-sent its waits: edges %v", got)
	}
	if err := b.client.Detect(ctx, 3, 2, []byte("k")); !isDeadlock(err) {
		t.Fatalf("3 -> 2 closing 2 -> 1 -> 3 once the detector is back: %v", err)
	}
}

// BenchmarkDetect is the cost of one wait's Detect and Done: in process
// when the node is the detector, over loopback gRPC when another node is
// (the store holds its wait table during the Detect).
func BenchmarkDetect(b *testing.B) {
	var detector atomic.Pointer[testNode]
	nodes := startNodes(b, 2, &detector)
	lead(&detector, nodes, 0)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		from *testNode
	}{{"local", nodes[0]}, {"remote", nodes[1]}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := range b.N {
				txn := uint64(2*i + 1)
				if err := bc.from.client.Detect(ctx, txn, txn+1, []byte("k")); err != nil {
					b.Fatal(err)
				}
				bc.from.client.Done(txn, txn+1)
			}
		})
	}
}
