package deadlock

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/deadlock/deadlockpb"
)

// DefaultEdgeTTL is ServerConfig.EdgeTTL when left zero: several
// RefreshIntervals, so that a Client's re-sends keep its edges alive.
const DefaultEdgeTTL = 10 * time.Second

// ServerConfig configures a Server.
type ServerConfig struct {
	// Leading reports whether the Server's node is the detector now (it
	// leads the region holding the first key). Required.
	Leading func() bool
	// EdgeTTL is how long an edge lives without being recorded again.
	// Default DefaultEdgeTTL.
	EdgeTTL time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Server is a KV node's side of the detector: the graph, kept while the
// node is the detector.
type Server struct {
	deadlockpb.UnimplementedDetectorServer
	cfg ServerConfig

	mu    sync.Mutex
	graph *kv.WaitForGraph
	// serving: the node was the detector at the last request; a request
	// that finds it the detector again after it was not starts a new,
	// empty graph.
	serving bool
	// swept is when edges were last expired.
	swept time.Time
}

// NewServer returns a Server.
func NewServer(cfg ServerConfig) *Server {
	if cfg.EdgeTTL <= 0 {
		cfg.EdgeTTL = DefaultEdgeTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Server{cfg: cfg, graph: kv.NewWaitForGraph(cfg.Now)}
}

// Register adds the Detector service to g.
func (s *Server) Register(g *grpc.Server) { deadlockpb.RegisterDetectorServer(g, s) }

// errNotDetector answers a request to a node that is not the detector.
var errNotDetector = status.Error(codes.FailedPrecondition, "deadlock detector: this node does not lead the first region")

// current returns the graph to use, or errNotDetector. Edges older than
// EdgeTTL are dropped at most every quarter of it.
func (s *Server) current() (*kv.WaitForGraph, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cfg.Leading() {
		s.serving = false
		return nil, errNotDetector
	}
	now := s.cfg.Now()
	if !s.serving {
		s.serving = true
		s.graph.Reset()
		s.swept = now
	}
	if now.Sub(s.swept) >= s.cfg.EdgeTTL/4 {
		s.graph.ExpireBefore(now.Add(-s.cfg.EdgeTTL))
		s.swept = now
	}
	return s.graph, nil
}

// LeadershipChanged tells the Server that a leadership of its node began
// or ended (raftstore's OnLeaderChange): if the node is not the detector
// now, its graph is stale from here on, and a later leadership starts a
// new one, even if no request came in between (a leadership lost and
// regained while the others sent their waits and clean-ups elsewhere).
func (s *Server) LeadershipChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cfg.Leading() {
		s.serving = false
	}
}

// Detect implements deadlockpb.DetectorServer.
func (s *Server) Detect(ctx context.Context, req *deadlockpb.DetectRequest) (*deadlockpb.DetectResponse, error) {
	g, err := s.current()
	if err != nil {
		return nil, err
	}
	for _, e := range req.GetResent() {
		g.Ensure(e.GetTxn(), e.GetWaitForTxn(), e.GetKey())
	}
	resp := &deadlockpb.DetectResponse{}
	e := req.GetEdge()
	if e == nil {
		return resp, nil
	}
	err = g.Detect(ctx, e.GetTxn(), e.GetWaitForTxn(), e.GetKey())
	if de, ok := err.(*kv.DeadlockError); ok {
		for _, w := range de.Chain {
			resp.Deadlock = append(resp.Deadlock, &deadlockpb.Edge{Txn: w.Txn, WaitForTxn: w.WaitForTxn, Key: w.Key})
		}
		return resp, nil
	}
	return resp, err
}

// CleanUp implements deadlockpb.DetectorServer.
func (s *Server) CleanUp(_ context.Context, req *deadlockpb.CleanUpRequest) (*deadlockpb.CleanUpResponse, error) {
	g, err := s.current()
	if err != nil {
		return nil, err
	}
	for _, e := range req.GetEdges() {
		g.Done(e.GetTxn(), e.GetWaitForTxn())
	}
	return &deadlockpb.CleanUpResponse{}, nil
}
