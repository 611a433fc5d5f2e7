package pd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/pd/pdpb"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/tso/tsopb"
	"github.com/percdb/percdb/tso/tsorpc"
)

// Config configures a pd server.
type Config struct {
	// DataDir holds the embedded etcd's data (DataDir/etcd).
	DataDir string
	// Addr is the host:port of pd's gRPC service (PD and TSO).
	Addr string
	// Name is this member's name in the etcd cluster. Default "pd".
	Name string
	// PeerURL and ClientURL are the embedded etcd's peer and client
	// URLs. Defaults: http://host:port+1 and http://host:port+2 of Addr.
	PeerURL, ClientURL string
	// InitialCluster lists the etcd members as name=peerURL,...; default
	// this member alone.
	InitialCluster string
	// SessionTTL is the leadership lease: a leader that stops renewing it
	// is replaced after about this long. Default 3 s.
	SessionTTL time.Duration
	// Replicas is how many replicas each region gets, each on its own
	// store; the cluster is bootstrapped once that many stores have
	// registered. Default 3.
	Replicas int
	// MaxStoreDownTime is how long a store may go without a heartbeat
	// before pd replaces its replicas with replicas on live stores (PD's
	// max-store-down-time). Default 30 minutes.
	MaxStoreDownTime time.Duration
	// LowSpaceRatio is the share of a store's capacity in use above which
	// the store is low on space (PD's low-space-ratio): pd places no
	// replica on it and moves replicas off it (placement.go). Default 0.8.
	LowSpaceRatio float64
	// MaxMoves is how many replica moves (balance, drain, low space) may
	// be under way at once in the cluster. Default 4.
	MaxMoves int
	// MoveTimeout is how long pd keeps asking for a replica move before
	// it gives the move up (placement.go): a snapshot of a large region
	// and two conf changes fit well inside. Default DefaultMoveTimeout.
	MoveTimeout time.Duration
	// LocationLabels are the store label keys that place a store,
	// outermost first (e.g. zone, host: PD's location-labels): pd keeps
	// a region's replicas on stores whose labels differ at the highest
	// level it can (labels.go). None: labels place nothing.
	LocationLabels []string
	// Now is pd's clock for its placement decisions: heartbeats' times,
	// stores' liveness, moves' and transfers' ages. Default time.Now;
	// tests give a fake one.
	Now func() time.Time
	// Logger logs leadership changes. Default slog.Default().
	Logger *slog.Logger
}

// Server is a pd member: an embedded etcd member, and, while this member
// is the leader, the oracle and the directory's writer.
type Server struct {
	cfg      Config
	etcd     *embed.Etcd
	cli      *clientv3.Client
	dir      directory
	grpc     *grpc.Server
	listener net.Listener

	// heartbeats records each store's last heartbeat (unix ms); kept in
	// memory, not written to etcd on every beat.
	hbMu       sync.Mutex
	heartbeats map[uint64]int64
	// beats counts the heartbeats received (status.go's metrics).
	beats atomic.Uint64
	// repairing is the replica repair last asked of each region's
	// leader, so that it is logged once.
	repairing map[uint64]*pdpb.ChangePeer
	// transfers are the leader transfers pd asked lately, by region
	// (balance.go).
	transfers map[uint64]*leaderTransfer
	// moves are the replica moves under way, by region (placement.go).
	moves map[uint64]*move
	// refilling are the stores that were low on space and are no balance
	// target yet; noTargetLogged is when pd last logged that replicas
	// could not move (placement.go).
	refilling      map[uint64]bool
	noTargetLogged time.Time
	// unreported are the stores that registered (their node started)
	// and have not heartbeated since: what pd knows of their space is
	// the previous process's (placement.go).
	unreported map[uint64]bool
	// movedOff is when a move took each region's replica off a store,
	// for moveBackWindow (placement.go).
	movedOff map[regionStore]time.Time
	// space is each store's disk as its last heartbeat reported it.
	space map[uint64]*pdpb.StoreSpace
	// sizes is each region's approximate size as its leader last
	// reported it.
	sizes map[uint64]uint64
	// loads is each region's load (reads and writes over an interval)
	// as its leader last reported it, totals the sum of every load
	// reported (the API's RegionRecord.Total).
	loads, totals map[uint64]*pdpb.RegionLoad
	// counted is, per region, the store and end of the last load added
	// to its totals (a heartbeat sent again is not counted twice), and
	// prunedAt when the region maps were last rid of the regions that no
	// longer exist (status.go).
	counted  map[uint64]loadMark
	prunedAt time.Time

	mu   sync.Mutex
	term *term // nil while not the leader

	stop context.CancelFunc
	done chan struct{}
}

// term is one leadership of this member.
type term struct {
	guard  clientv3.Cmp
	oracle *tso.Oracle
	tso    *tsorpc.Server
	// since is when the term began: a store not heard from in this term
	// counts as last heard from then.
	since time.Time
	// reported are the stores that sent a full heartbeat in this term
	// (heartbeat.go); hbMu held.
	reported map[uint64]bool
}

// Open starts the embedded etcd member and pd's gRPC service, and
// campaigns for leadership in the background. Close stops both.
func Open(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.DataDir == "" || cfg.Addr == "" {
		return nil, errors.New("pd: DataDir and Addr are required")
	}
	if cfg.Name == "" {
		cfg.Name = "pd"
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 3
	}
	if cfg.MaxStoreDownTime <= 0 {
		cfg.MaxStoreDownTime = 30 * time.Minute
	}
	if cfg.LowSpaceRatio <= 0 || cfg.LowSpaceRatio > 1 {
		cfg.LowSpaceRatio = 0.8
	}
	if cfg.MaxMoves <= 0 {
		cfg.MaxMoves = 4
	}
	if cfg.MoveTimeout <= 0 {
		cfg.MoveTimeout = DefaultMoveTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("pd: --addr %q: %w", cfg.Addr, err)
	}
	if cfg.PeerURL == "" {
		cfg.PeerURL, err = offsetURL(host, port, 1)
	}
	if err == nil && cfg.ClientURL == "" {
		cfg.ClientURL, err = offsetURL(host, port, 2)
	}
	if err != nil {
		return nil, err
	}
	peer, err := url.Parse(cfg.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("pd: peer url: %w", err)
	}
	client, err := url.Parse(cfg.ClientURL)
	if err != nil {
		return nil, fmt.Errorf("pd: client url: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("pd: %w", err)
	}
	ec := embed.NewConfig()
	ec.Name = cfg.Name
	ec.Dir = filepath.Join(cfg.DataDir, "etcd")
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	ec.InitialCluster = cfg.InitialCluster
	if ec.InitialCluster == "" {
		ec.InitialCluster = ec.InitialClusterFromName(cfg.Name)
	}
	ec.LogLevel = "error"

	s := &Server{cfg: cfg, heartbeats: map[uint64]int64{}, repairing: map[uint64]*pdpb.ChangePeer{},
		transfers: map[uint64]*leaderTransfer{}, moves: map[uint64]*move{}, refilling: map[uint64]bool{}, unreported: map[uint64]bool{}, movedOff: map[regionStore]time.Time{}, space: map[uint64]*pdpb.StoreSpace{},
		sizes: map[uint64]uint64{}, loads: map[uint64]*pdpb.RegionLoad{}, totals: map[uint64]*pdpb.RegionLoad{},
		counted: map[uint64]loadMark{}, done: make(chan struct{})}
	// The pd's own port is taken before etcd starts: etcd's gateway dials
	// its client URL from an ephemeral local port, which could otherwise be
	// the very port chosen for Addr (and a busy Addr then fails before
	// etcd has touched its directory).
	s.listener, err = net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("pd: listen: %w", err)
	}
	defer func() {
		if err != nil {
			s.closeEtcd()
			_ = s.listener.Close()
		}
	}()
	s.etcd, err = embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("pd: start etcd: %w", err)
	}
	select {
	case <-s.etcd.Server.ReadyNotify():
	case err := <-s.etcd.Err():
		return nil, fmt.Errorf("pd: etcd: %w", err)
	case <-ctx.Done():
		return nil, fmt.Errorf("pd: waiting for etcd to be ready: %w", ctx.Err())
	}
	s.cli = v3client.New(s.etcd.Server)
	s.dir = directory{cli: s.cli, replicas: cfg.Replicas, leases: map[string]clientv3.LeaseID{}}

	s.grpc = grpc.NewServer()
	pdpb.RegisterPDServer(s.grpc, &pdService{s: s})
	tsopb.RegisterTSOServer(s.grpc, &tsoService{s: s})
	go func() { _ = s.grpc.Serve(s.listener) }()

	bg, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() {
		defer close(s.done)
		s.campaign(bg)
	}()
	return s, nil
}

// offsetURL is http://host:(port+off).
func offsetURL(host, port string, off int) (string, error) {
	var p int
	if _, err := fmt.Sscanf(port, "%d", &p); err != nil || p <= 0 || p+off > 65535 {
		return "", fmt.Errorf("pd: cannot derive an etcd port from port %q; give the URLs explicitly", port)
	}
	return fmt.Sprintf("http://%s:%d", host, p+off), nil
}

// now reads pd's clock (Config.Now).
func (s *Server) now() time.Time { return s.cfg.Now() }

// Addr is where pd's gRPC service listens.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// campaign runs leadership terms until ctx ends: win the election, open
// the oracle from the window in etcd, serve until the session is lost.
func (s *Server) campaign(ctx context.Context) {
	for ctx.Err() == nil {
		if err := s.lead(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("pd leadership ended", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// lead campaigns once and serves one term.
func (s *Server) lead(ctx context.Context) error {
	sess, err := concurrency.NewSession(s.cli, concurrency.WithTTL(int((s.cfg.SessionTTL+time.Second-1)/time.Second)), concurrency.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer sess.Close()
	addr := s.listener.Addr().String()
	if err := s.revokeOwnStaleLeadership(ctx, addr, sess.Lease()); err != nil {
		return err
	}
	el := concurrency.NewElection(sess, keyElection)
	if err := el.Campaign(ctx, addr); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	guard := clientv3.Compare(clientv3.CreateRevision(el.Key()), "=", el.Rev())
	oracle, err := tso.Open(ctx, windowStore{cli: s.cli, guard: guard}, tso.Options{})
	if err != nil {
		_ = el.Resign(context.Background())
		return fmt.Errorf("open oracle: %w", err)
	}
	// The directory's cache, loaded after the election is won: every
	// change of an earlier term is in etcd by then or fails its guard.
	if err := s.dir.loadCache(ctx); err != nil {
		oracle.Close()
		_ = el.Resign(context.Background())
		return err
	}
	// The regions' sizes reported in an earlier term of this member
	// weigh until their leaders report again (balance by size).
	s.hbMu.Lock()
	for id, size := range s.sizes {
		s.dir.noteSize(id, size)
	}
	s.hbMu.Unlock()
	t := &term{guard: guard, oracle: oracle, tso: tsorpc.NewServer(oracle), since: s.now(), reported: map[uint64]bool{}}
	s.mu.Lock()
	s.term = t
	s.mu.Unlock()
	s.cfg.Logger.Info("pd is the leader", "addr", s.listener.Addr().String())
	select {
	case <-ctx.Done():
	case <-sess.Done():
	}
	s.mu.Lock()
	s.term = nil
	s.mu.Unlock()
	s.dir.dropCache()
	oracle.Close()
	rctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = el.Resign(rctx)
	if ctx.Err() == nil {
		return errors.New("etcd session lost")
	}
	return nil
}

// revokeOwnStaleLeadership revokes the election leases that this member's
// previous process left (a candidacy under the same address, not under
// the current session's lease): a pd killed while leading would otherwise
// keep its successor, itself restarted, waiting out the old lease.
func (s *Server) revokeOwnStaleLeadership(ctx context.Context, addr string, current clientv3.LeaseID) error {
	resp, err := s.cli.Get(ctx, keyElection+"/", clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("read the election: %w", err)
	}
	for _, kv := range resp.Kvs {
		if string(kv.Value) != addr || clientv3.LeaseID(kv.Lease) == current {
			continue
		}
		if _, err := s.cli.Revoke(ctx, clientv3.LeaseID(kv.Lease)); err != nil {
			s.cfg.Logger.Warn("pd could not revoke its previous process' election lease", "err", err)
		}
	}
	return nil
}

// IsLeader reports whether this member leads now.
func (s *Server) IsLeader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term != nil
}

// leader returns the current term, or a gRPC Unavailable status when
// this member does not lead (the client tries another member).
func (s *Server) leader() (*term, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.term == nil {
		return nil, status.Error(codes.Unavailable, errNotLeader.Error())
	}
	return s.term, nil
}

// Close stops serving, ends the leadership and stops etcd.
func (s *Server) Close() error {
	if s.grpc != nil {
		s.grpc.Stop()
	}
	if s.stop != nil {
		s.stop()
		<-s.done
	}
	s.closeEtcd()
	return nil
}

func (s *Server) closeEtcd() {
	if s.cli != nil {
		_ = s.cli.Close()
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
}

// tsoService serves the TSO protocol from the current term's oracle.
type tsoService struct {
	tsopb.UnimplementedTSOServer
	s *Server
}

// GetTimestamps implements tsopb.TSOServer: a stream is served by the
// oracle of the term it started in, and ends with that term.
func (t *tsoService) GetTimestamps(stream grpc.BidiStreamingServer[tsopb.TsoRequest, tsopb.TsoResponse]) error {
	term, err := t.s.leader()
	if err != nil {
		return err
	}
	return term.tso.GetTimestamps(stream)
}
