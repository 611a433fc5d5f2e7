package deadlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/deadlock/deadlockpb"
)

// Defaults of ClientConfig.
const (
	DefaultRequestTimeout  = time.Second
	DefaultRefreshInterval = 3 * time.Second
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// Self is the node's own address, and Local its Server: asked in
	// process when the detector is this node. Required.
	Self  string
	Local *Server
	// Locate returns the detector's address: the leader of the region
	// holding the first key, as pd knows it. Required.
	Locate func(ctx context.Context) (string, error)
	// RequestTimeout bounds one Detect, its re-locating included.
	// Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// RefreshInterval is how often the waits in progress are re-sent.
	// Default DefaultRefreshInterval; keep it well below the detector's
	// EdgeTTL.
	RefreshInterval time.Duration
	// Logger logs the detector out of reach. Default slog.Default().
	Logger *slog.Logger
}

// pair is a wait-for edge without its key: waiter txn, holder lockTS.
type pair struct{ txn, lockTS uint64 }

// wait is the store's waits in progress on one pair.
type wait struct {
	key []byte
	n   int
}

// Client is a KV node's kv.DeadlockDetector: it sends its store's waits
// to the cluster's detector (see doc.go).
type Client struct {
	cfg ClientConfig

	mu sync.Mutex
	// addr is the detector's address as last located ("" unknown);
	// sentTo the detector that has this node's waits in progress.
	addr, sentTo string
	conns        map[string]*grpc.ClientConn
	active       map[pair]*wait
	// ended are the pairs whose waits all ended, for the next CleanUp.
	ended []pair
	// downUntil: a Detect failed to reach the detector; until then
	// Detect does not try (its store asks one request at a time, see
	// kv's waiterTable.detect), and the background refresh delivers the
	// waits once the detector answers again.
	downUntil time.Time

	// cleanMu makes a CleanUp wait for the one in flight, so clean-ups
	// reach the detector in the order their waits ended, and a caller
	// whose cleanUp finds nothing left to send knows the pairs taken by
	// the background sender were delivered (or given up) before it
	// returns.
	cleanMu sync.Mutex

	kick chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

// NewClient returns a Client and starts its background sender, which
// runs until Close.
func NewClient(cfg ClientConfig) *Client {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Client{cfg: cfg, conns: map[string]*grpc.ClientConn{}, active: map[pair]*wait{},
		kick: make(chan struct{}, 1), stop: stop, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.loop(ctx)
	}()
	return c
}

// Close stops the background sender and closes the connections.
func (c *Client) Close() error {
	c.stop()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, cc := range c.conns {
		errs = append(errs, cc.Close())
	}
	clear(c.conns)
	return errors.Join(errs...)
}

// Detect implements kv.DeadlockDetector. Only the first wait on a pair
// is sent; a detector out of reach answers nil (doc.go).
func (c *Client) Detect(ctx context.Context, txn, lockTS uint64, key []byte) error {
	p := pair{txn, lockTS}
	c.mu.Lock()
	if w := c.active[p]; w != nil {
		w.n++
		c.mu.Unlock()
		return nil
	}
	c.active[p] = &wait{key: append([]byte(nil), key...), n: 1}
	down := time.Now().Before(c.downUntil)
	c.mu.Unlock()
	if down {
		return nil
	}

	sctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	edge := &deadlockpb.Edge{Txn: txn, WaitForTxn: lockTS, Key: key}
	resp, err := c.send(sctx, edge)
	if err != nil {
		if ctx.Err() != nil {
			return nil // the request ended: the detector is not to blame
		}
		c.mu.Lock()
		c.downUntil = time.Now().Add(c.cfg.RequestTimeout)
		c.mu.Unlock()
		c.cfg.Logger.Warn("deadlock detector out of reach; waits are not checked for a while", "txn", txn, "lock_ts", lockTS, "err", err)
		return nil
	}
	if len(resp.GetDeadlock()) == 0 {
		return nil
	}
	c.mu.Lock()
	if w := c.active[p]; w != nil {
		if w.n--; w.n == 0 {
			delete(c.active, p)
		}
	}
	c.mu.Unlock()
	de := &kv.DeadlockError{Key: append([]byte(nil), key...), StartTS: txn, LockTS: lockTS}
	for _, e := range resp.GetDeadlock() {
		de.Chain = append(de.Chain, kv.WaitForEntry{Txn: e.GetTxn(), WaitForTxn: e.GetWaitForTxn(), Key: e.GetKey()})
	}
	return de
}

// Done implements kv.DeadlockDetector: the last wait on a pair to end
// queues its CleanUp for the background sender.
func (c *Client) Done(txn, lockTS uint64) {
	p := pair{txn, lockTS}
	c.mu.Lock()
	w := c.active[p]
	if w == nil {
		c.mu.Unlock()
		return
	}
	w.n--
	if w.n > 0 {
		c.mu.Unlock()
		return
	}
	delete(c.active, p)
	c.ended = append(c.ended, p)
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// send sends a Detect of edge (nil: only the re-sent waits) to the
// detector, with the node's other waits in progress when the detector is
// not the one they were sent to. A detector that refuses (it moved) or
// cannot be reached is located again from pd, until ctx ends.
func (c *Client) send(ctx context.Context, edge *deadlockpb.Edge) (*deadlockpb.DetectResponse, error) {
	for {
		addr, err := c.detector(ctx)
		if err != nil {
			return nil, err
		}
		req := &deadlockpb.DetectRequest{Edge: edge, Resent: c.resend(addr, edge)}
		var resp *deadlockpb.DetectResponse
		if addr == c.cfg.Self {
			resp, err = c.cfg.Local.Detect(ctx, req)
		} else {
			var dc deadlockpb.DetectorClient
			if dc, err = c.client(addr); err == nil {
				resp, err = dc.Detect(ctx, req)
			}
		}
		if err == nil {
			c.mu.Lock()
			c.sentTo, c.downUntil = addr, time.Time{}
			c.mu.Unlock()
			return resp, nil
		}
		c.mu.Lock()
		if c.addr == addr {
			c.addr = ""
		}
		c.mu.Unlock()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("deadlock detector at %s: %w", addr, err)
		}
		// pd learns a new leader with the next store heartbeat: do not
		// ask it in a tight loop meanwhile.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("deadlock detector at %s: %w", addr, err)
		case <-time.After(c.cfg.RequestTimeout / 10):
		}
	}
}

// resend returns the waits in progress, other than edge's pair, to send
// to the detector at addr: all of them when it is not the detector they
// were sent to, else none.
func (c *Client) resend(addr string, edge *deadlockpb.Edge) []*deadlockpb.Edge {
	c.mu.Lock()
	defer c.mu.Unlock()
	if addr == c.sentTo {
		return nil
	}
	return c.activeLocked(edge)
}

func (c *Client) activeLocked(except *deadlockpb.Edge) []*deadlockpb.Edge {
	var out []*deadlockpb.Edge
	for p, w := range c.active {
		if except != nil && p == (pair{except.GetTxn(), except.GetWaitForTxn()}) {
			continue
		}
		out = append(out, &deadlockpb.Edge{Txn: p.txn, WaitForTxn: p.lockTS, Key: w.key})
	}
	return out
}

// detector returns the detector's address, located from pd if unknown.
func (c *Client) detector(ctx context.Context) (string, error) {
	c.mu.Lock()
	addr := c.addr
	c.mu.Unlock()
	if addr != "" {
		return addr, nil
	}
	addr, err := c.cfg.Locate(ctx)
	if err != nil {
		return "", fmt.Errorf("locate the deadlock detector: %w", err)
	}
	c.mu.Lock()
	c.addr = addr
	c.mu.Unlock()
	return addr, nil
}

// client returns a Detector client of addr, dialing it once.
func (c *Client) client(addr string) (deadlockpb.DetectorClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc := c.conns[addr]
	if cc == nil {
		var err error
		if cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return nil, fmt.Errorf("dial the deadlock detector at %s: %w", addr, err)
		}
		c.conns[addr] = cc
	}
	return deadlockpb.NewDetectorClient(cc), nil
}

// loop sends the CleanUps of ended waits as they come, and every
// RefreshInterval re-sends the waits in progress (to a detector that
// moved, and to keep them from expiring), locating the detector afresh
// so that a move is noticed without a new wait.
func (c *Client) loop(ctx context.Context) {
	t := time.NewTicker(c.cfg.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
			c.cleanUp(ctx)
		case <-t.C:
			c.cleanUp(ctx)
			c.refresh(ctx)
		}
	}
}

// cleanUp sends the ended pairs to the detector the waits were sent to;
// if that fails they are dropped: the detector expires them.
func (c *Client) cleanUp(ctx context.Context) {
	c.cleanMu.Lock()
	defer c.cleanMu.Unlock()
	c.mu.Lock()
	ended, to := c.ended, c.sentTo
	c.ended = nil
	c.mu.Unlock()
	if len(ended) == 0 || to == "" {
		return
	}
	req := &deadlockpb.CleanUpRequest{}
	for _, p := range ended {
		req.Edges = append(req.Edges, &deadlockpb.Edge{Txn: p.txn, WaitForTxn: p.lockTS})
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	var err error
	if to == c.cfg.Self {
		_, err = c.cfg.Local.CleanUp(ctx, req)
	} else {
		var dc deadlockpb.DetectorClient
		if dc, err = c.client(to); err == nil {
			_, err = dc.CleanUp(ctx, req)
		}
	}
	if err != nil {
		c.cfg.Logger.Debug("deadlock detector: clean-up not delivered; the detector expires the edges", "edges", len(ended), "err", err)
	}
}

// refresh re-sends the waits in progress, if any, to the detector as
// located now.
func (c *Client) refresh(ctx context.Context) {
	c.mu.Lock()
	n := len(c.active)
	if n > 0 {
		c.addr = ""
		c.sentTo = "" // re-send all to whichever node is the detector now
	}
	c.mu.Unlock()
	if n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if _, err := c.send(ctx, nil); err != nil {
		c.cfg.Logger.Debug("deadlock detector: waits not re-sent", "err", err)
	}
}
