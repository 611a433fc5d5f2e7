package pd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/pd/pdpb"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/tso/tsorpc"
)

// ClientOptions tunes a Client. The zero value gives the defaults.
type ClientOptions struct {
	// Timeout bounds how long one call retries pd members it cannot reach
	// (or that do not lead) before failing with *kv.RouterUnavailableError.
	// The caller's context bounds it too. Default DefaultTimeout.
	Timeout time.Duration
	// AttemptTimeout bounds one attempt at one member, so that a member
	// that hangs (an etcd without quorum) does not use up Timeout.
	// Default 3 s.
	AttemptTimeout time.Duration
}

// DefaultTimeout is ClientOptions.Timeout when left zero.
const DefaultTimeout = 15 * time.Second

// Client talks to the pd members at its addresses, following the leader.
// Safe for concurrent use.
type Client struct {
	addrs []string
	opts  ClientOptions
	conns []*grpc.ClientConn
	pds   []pdpb.PDClient

	mu  sync.Mutex
	cur int // the member that answered last
	// tsos are the oracle streams, one per member, opened when first used.
	tsos []*tsorpc.RemoteSource
}

// NewClient returns a client of the pd members at addrs (host:port). It
// connects lazily: a pd that is down now is found when it comes up.
func NewClient(addrs []string, opts ClientOptions) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("pd client: no pd address")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = 3 * time.Second
	}
	c := &Client{addrs: addrs, opts: opts, tsos: make([]*tsorpc.RemoteSource, len(addrs))}
	for _, a := range addrs {
		cc, err := grpc.NewClient(a, dialOptions()...)
		if err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("pd client %s: %w", a, err)
		}
		c.conns = append(c.conns, cc)
		c.pds = append(c.pds, pdpb.NewPDClient(cc))
	}
	return c, nil
}

// dialOptions are the connections' options: plaintext, and reconnecting
// within a quarter second of a member's restart.
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 250 * time.Millisecond},
			MinConnectTimeout: 2 * time.Second,
		}),
	}
}

// Addrs names the members, for errors.
func (c *Client) Addrs() string { return strings.Join(c.addrs, ",") }

// Close closes the connections and oracle streams.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, t := range c.tsos {
		if t != nil {
			errs = append(errs, t.Close())
		}
	}
	for _, cc := range c.conns {
		errs = append(errs, cc.Close())
	}
	return errors.Join(errs...)
}

// retryable reports whether err may be cured by trying again, maybe at
// another member: the member is down, not the leader, or timed out.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Unknown, codes.Internal, codes.Aborted:
		return true
	}
	return false
}

// retry runs fn on members, starting with the last that answered, until
// it succeeds, fails for good, or the client's Timeout or ctx ends.
func (c *Client) retry(ctx context.Context, what string, fn func(ctx context.Context, member int) error) error {
	deadline := time.Now().Add(c.opts.Timeout)
	pause := 10 * time.Millisecond
	c.mu.Lock()
	start := c.cur
	c.mu.Unlock()
	var last error
	for attempt := 0; ; attempt++ {
		m := (start + attempt) % len(c.addrs)
		actx, cancel := context.WithTimeout(ctx, c.opts.AttemptTimeout)
		err := fn(actx, m)
		cancel()
		if err == nil {
			c.mu.Lock()
			c.cur = m
			c.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) && (last != nil || retryable(err) || errors.Is(err, context.DeadlineExceeded)) {
				// The caller's deadline (a statement's, or the oracle's
				// batch client's bound on each call, which may be less
				// than Timeout) passed while no member answered: pd is as
				// unreachable as when Timeout passes.
				return &kv.RouterUnavailableError{Addrs: c.Addrs(), Err: fmt.Errorf("%s: %w", what, context.Cause(ctx))}
			}
			return fmt.Errorf("pd %s: %s: %w", c.addrs[m], what, context.Cause(ctx))
		}
		if !retryable(err) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("pd %s: %s: %w", c.addrs[m], what, err)
		}
		last = err
		// After a round of every member, back off.
		if (attempt+1)%len(c.addrs) == 0 {
			if !time.Now().Add(pause).Before(deadline) {
				return &kv.RouterUnavailableError{Addrs: c.Addrs(), Err: fmt.Errorf("%s: %w", what, last)}
			}
			t := time.NewTimer(pause/2 + rand.N(pause/2+1))
			select {
			case <-ctx.Done():
				t.Stop()
				if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
					// As above: the deadline passed while the client
					// waited to try the members again, where a member
					// that refuses connections (a pd restarting) leaves
					// it most of the time.
					return &kv.RouterUnavailableError{Addrs: c.Addrs(), Err: fmt.Errorf("%s: %w", what, context.Cause(ctx))}
				}
				return fmt.Errorf("pd %s: %s: %w", c.Addrs(), what, context.Cause(ctx))
			case <-t.C:
			}
			pause = min(2*pause, 500*time.Millisecond)
		}
	}
}

// PutStore registers a store (id 0: new) at addr and returns its id.
func (c *Client) PutStore(ctx context.Context, id uint64, addr string) (uint64, error) {
	return c.RegisterStore(ctx, &pdpb.Store{Id: id, Addr: addr})
}

// RegisterStore is PutStore with the store's labels (st: its id, 0 for a
// new store, its address and its labels).
func (c *Client) RegisterStore(ctx context.Context, st *pdpb.Store) (uint64, error) {
	var out uint64
	err := c.retry(ctx, "put store", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].PutStore(ctx, &pdpb.PutStoreRequest{Store: st})
		out = resp.GetStoreId()
		return err
	})
	return out, err
}

// StoreHeartbeat reports a store alive (req: its id and address, the
// regions it leads and their configurations), and returns the regions it
// holds a replica of and the replica repairs pd asks of it.
func (c *Client) StoreHeartbeat(ctx context.Context, req *pdpb.StoreHeartbeatRequest) (*pdpb.StoreHeartbeatResponse, error) {
	var out *pdpb.StoreHeartbeatResponse
	err := c.retry(ctx, "store heartbeat", func(ctx context.Context, m int) (err error) {
		out, err = c.pds[m].StoreHeartbeat(ctx, req)
		return err
	})
	return out, err
}

// RegionRecord returns pd's record of region id (its peers, learners and
// conf_ver) and the store it routes the region to.
func (c *Client) RegionRecord(ctx context.Context, id uint64) (*pdpb.GetRegionResponse, error) {
	var resp *pdpb.GetRegionResponse
	err := c.retry(ctx, "get region", func(ctx context.Context, m int) (err error) {
		resp, err = c.pds[m].GetRegionByID(ctx, &pdpb.GetRegionByIDRequest{RegionId: id})
		return err
	})
	return resp, err
}

// GetRegion returns the region holding key, with its store's address.
func (c *Client) GetRegion(ctx context.Context, key []byte) (kv.RegionInfo, error) {
	var resp *pdpb.GetRegionResponse
	err := c.retry(ctx, "locate key", func(ctx context.Context, m int) (err error) {
		resp, err = c.pds[m].GetRegion(ctx, &pdpb.GetRegionRequest{Key: key})
		return err
	})
	if err != nil {
		return kv.RegionInfo{}, err
	}
	return RegionInfo(resp.GetRegion(), resp.GetStore().GetAddr()), nil
}

// GetRegionByID returns region id, with its store's address.
func (c *Client) GetRegionByID(ctx context.Context, id uint64) (kv.RegionInfo, error) {
	var resp *pdpb.GetRegionResponse
	err := c.retry(ctx, "get region", func(ctx context.Context, m int) (err error) {
		resp, err = c.pds[m].GetRegionByID(ctx, &pdpb.GetRegionByIDRequest{RegionId: id})
		return err
	})
	if err != nil {
		return kv.RegionInfo{}, err
	}
	return RegionInfo(resp.GetRegion(), resp.GetStore().GetAddr()), nil
}

// GetStores lists the registered stores.
func (c *Client) GetStores(ctx context.Context) ([]*pdpb.Store, error) {
	var out []*pdpb.Store
	err := c.retry(ctx, "list stores", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].GetStores(ctx, &pdpb.GetStoresRequest{})
		out = resp.GetStores()
		return err
	})
	return out, err
}

// SetStoreStatus drains store id (pdpb.StoreStatus_OFFLINE) or cancels
// its drain (UP), and returns the store as pd recorded it.
func (c *Client) SetStoreStatus(ctx context.Context, id uint64, status pdpb.StoreStatus) (*pdpb.Store, error) {
	var out *pdpb.Store
	err := c.retry(ctx, "set store status", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].SetStoreStatus(ctx, &pdpb.SetStoreStatusRequest{StoreId: id, Status: status})
		out = resp.GetStore()
		return err
	})
	return out, err
}

// AllocID returns count new ids, the first of them.
func (c *Client) AllocID(ctx context.Context, count uint32) (uint64, error) {
	var out uint64
	err := c.retry(ctx, "alloc id", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].AllocID(ctx, &pdpb.AllocIDRequest{Count: count})
		out = resp.GetFirst()
		return err
	})
	return out, err
}

// RegionInfo converts a pd region record to kv's descriptor, served at
// addr.
func RegionInfo(r *pdpb.Region, addr string) kv.RegionInfo {
	return kv.RegionInfo{ID: r.GetId(), Start: r.GetStart(), End: r.GetEnd(),
		Epoch: kv.RegionEpoch{ConfVer: r.GetConfVer(), Version: r.GetVersion()}, Addr: addr}
}

// GetTimestamps implements tso.Source over the leader's oracle: a member
// that is down or does not lead is skipped, and the call retries up to
// the client's Timeout, then fails with *kv.RouterUnavailableError. Put a
// tso.BatchClient in front of it.
func (c *Client) GetTimestamps(ctx context.Context, count uint32) (uint64, error) {
	var last uint64
	err := c.retry(ctx, "get timestamps", func(ctx context.Context, m int) error {
		src, err := c.tsoSource(ctx, m)
		if err != nil {
			return err
		}
		last, err = src.GetTimestamps(ctx, count)
		if errors.Is(err, tso.ErrBadCount) {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		if err != nil {
			// The stream failed (the member went away or stopped
			// leading): tsorpc reopens it on the next call.
			return status.Error(codes.Unavailable, err.Error())
		}
		return nil
	})
	return last, err
}

// tsoSource returns member m's oracle stream, dialing it on first use.
func (c *Client) tsoSource(ctx context.Context, m int) (*tsorpc.RemoteSource, error) {
	c.mu.Lock()
	src := c.tsos[m]
	c.mu.Unlock()
	if src != nil {
		return src, nil
	}
	src, err := tsorpc.Dial(ctx, c.addrs[m], dialOptions()[1:]...)
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tsos[m] != nil {
		_ = src.Close()
		return c.tsos[m], nil
	}
	c.tsos[m] = src
	return src, nil
}

// RegionCache routes keys to regions for a kvrpc.Client: regions located
// through pd, kept until a region error drops them. Safe for concurrent
// use.
type RegionCache struct {
	pd *Client

	mu     sync.RWMutex
	byID   map[uint64]kv.RegionInfo
	sorted []kv.RegionInfo // by start key, non-overlapping
}

// NewRegionCache returns an empty cache over pd.
func NewRegionCache(pd *Client) *RegionCache {
	return &RegionCache{pd: pd, byID: map[uint64]kv.RegionInfo{}}
}

// LocateKey returns the region holding key, from the cache or pd.
func (rc *RegionCache) LocateKey(ctx context.Context, key []byte) (kv.RegionInfo, error) {
	rc.mu.RLock()
	i := sort.Search(len(rc.sorted), func(i int) bool { return bytes.Compare(rc.sorted[i].Start, key) > 0 })
	if i > 0 && rc.sorted[i-1].Contains(key) {
		r := rc.sorted[i-1]
		rc.mu.RUnlock()
		return r, nil
	}
	rc.mu.RUnlock()
	r, err := rc.pd.GetRegion(ctx, key)
	if err != nil {
		return kv.RegionInfo{}, err
	}
	rc.insert(r)
	return r, nil
}

// insert caches r, dropping the cached regions it overlaps (older views
// of a range that split or merged).
func (rc *RegionCache) insert(r kv.RegionInfo) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	kept := rc.sorted[:0:0]
	for _, c := range rc.sorted {
		overlaps := (len(r.End) == 0 || bytes.Compare(c.Start, r.End) < 0) && (len(c.End) == 0 || bytes.Compare(r.Start, c.End) < 0)
		if overlaps || c.ID == r.ID {
			delete(rc.byID, c.ID)
			continue
		}
		kept = append(kept, c)
	}
	i := sort.Search(len(kept), func(i int) bool { return bytes.Compare(kept[i].Start, r.Start) > 0 })
	kept = append(kept, kv.RegionInfo{})
	copy(kept[i+1:], kept[i:])
	kept[i] = r
	rc.sorted = kept
	rc.byID[r.ID] = r
}

// InvalidateRegion drops a region from the cache.
func (rc *RegionCache) InvalidateRegion(id uint64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := rc.byID[id]; !ok {
		return
	}
	delete(rc.byID, id)
	for i, r := range rc.sorted {
		if r.ID == id {
			rc.sorted = append(rc.sorted[:i:i], rc.sorted[i+1:]...)
			break
		}
	}
}

// RefreshRegion implements kvrpc.Refresher: it asks pd for region id
// (one attempt, bounded by the client's timeout and ctx) and caches the
// answer.
func (rc *RegionCache) RefreshRegion(ctx context.Context, id uint64) (string, bool) {
	r, err := rc.pd.GetRegionByID(ctx, id)
	if err != nil || r.ID != id {
		return "", false
	}
	rc.insert(r)
	return r.Addr, true
}

// RegionAddr returns the store address of a cached region.
func (rc *RegionCache) RegionAddr(id uint64) (string, bool) {
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	r, ok := rc.byID[id]
	return r.Addr, ok
}

// StoreAddrs implements kvrpc.StoreLister: the addresses of the stores
// that hold a replica of some region, where UnsafeDestroyRange is sent. A
// store that holds none (its replicas were re-created elsewhere while it
// was down) is left out: should it come back, it destroys the replicas it
// still has, keys and all (kv/node), so nothing of the range survives
// there either, and a store down for good does not hold the deletion
// back.
func (rc *RegionCache) StoreAddrs(ctx context.Context) ([]string, error) {
	stores, err := rc.pd.GetStores(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(stores))
	for _, st := range stores {
		if st.GetReplicas() > 0 {
			out = append(out, st.GetAddr())
		}
	}
	return out, nil
}
