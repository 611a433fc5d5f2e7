package kvrpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvpb"
)

// Router locates regions for a Client: a cache fed by pd in a cluster
// (package pd), a store's own region map in tests.
type Router interface {
	// LocateKey returns the region holding key, with Addr set to the
	// store that serves it.
	LocateKey(ctx context.Context, key []byte) (kv.RegionInfo, error)
	// InvalidateRegion drops the route of a region after a region error.
	InvalidateRegion(regionID uint64)
	// RegionAddr returns the store address of a region as last located,
	// false when the router has no route for it (then the command answers
	// a *kv.RegionError and the caller locates the key again).
	RegionAddr(regionID uint64) (string, bool)
}

// Refresher is a Router that can ask its source where a region is served
// now. A Client whose router is one re-routes a command that cannot reach
// its store to wherever the region moved (a raft leader elected on
// another store) instead of waiting for the store to return.
type Refresher interface {
	RefreshRegion(ctx context.Context, regionID uint64) (addr string, ok bool)
}

// Options tunes a Client. The zero value gives the defaults.
type Options struct {
	// UnavailableTimeout bounds how long one command retries a store it
	// cannot reach (a node restarting) before it fails with
	// *kv.StoreUnavailableError. The caller's context bounds it too.
	// Default 15 s.
	UnavailableTimeout time.Duration
	// DialOptions are added to the connections' defaults (plaintext,
	// keepalive).
	DialOptions []grpc.DialOption
}

// DefaultUnavailableTimeout is Options.UnavailableTimeout when left zero.
const DefaultUnavailableTimeout = 15 * time.Second

// Client is a kv.Client whose commands go over gRPC to the stores the
// router names. It keeps one connection per store address. Safe for
// concurrent use.
type Client struct {
	router Router
	opts   Options

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	closed bool
}

var _ kv.GCClient = (*Client)(nil)

// NewClient returns a client routing with r. Close releases its
// connections.
func NewClient(r Router, opts Options) *Client {
	if opts.UnavailableTimeout <= 0 {
		opts.UnavailableTimeout = DefaultUnavailableTimeout
	}
	return &Client{router: r, opts: opts, conns: map[string]*grpc.ClientConn{}}
}

// Close closes every connection; later commands fail.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for addr, conn := range c.conns {
		if err := conn.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close connection to %s: %w", addr, err))
		}
	}
	c.conns = nil
	return errors.Join(errs...)
}

// errClientClosed is returned by commands after Close.
var errClientClosed = errors.New("kv client closed")

// conn returns the connection to addr, opening it (lazily: grpc connects
// on the first call) when there is none.
func (c *Client) conn(addr string) (kvpb.KVClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClientClosed
	}
	if cc, ok := c.conns[addr]; ok {
		return kvpb.NewKVClient(cc), nil
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// A peer that vanished without closing its connections (a
		// machine lost, not a process killed) is noticed within about
		// 13 s instead of the kernel's TCP timeout.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 3 * time.Second}),
		// Reconnect within a quarter second of a store's restart, not
		// after grpc's default backoff (up to 2 min).
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 250 * time.Millisecond},
			MinConnectTimeout: 2 * time.Second,
		}),
	}, c.opts.DialOptions...)
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("kv store %s: %w", addr, err)
	}
	c.conns[addr] = cc
	return kvpb.NewKVClient(cc), nil
}

// retryKind says whether a command may be sent again after its call
// failed in flight (the request may have reached the store).
type retryKind uint8

const (
	// idempotent: sending the request again has the effect of sending it
	// once (every Percolator command but a one-phase commit: a prewrite
	// finds its own lock, a commit its own commit record).
	idempotent retryKind = iota
	// onceOnly: a request that may have been applied must not be sent
	// again (a one-phase commit: sent again it would meet its own commit
	// record as a conflict).
	onceOnly
)

// call runs one command on the store of region, retrying while the store
// cannot be reached, up to the client's UnavailableTimeout and ctx.
func (c *Client) call(ctx context.Context, region kv.RegionCtx, kind retryKind, fn func(ctx context.Context, kc kvpb.KVClient) error) error {
	addr, ok := c.router.RegionAddr(region.RegionID)
	if !ok {
		return &kv.RegionError{RegionID: region.RegionID, Reason: ReasonNoRoute}
	}
	kc, err := c.conn(addr)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(c.opts.UnavailableTimeout)
	pause := 5 * time.Millisecond
	for {
		err := fn(ctx, kc)
		if err == nil {
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("kv store %s: %w", addr, context.Cause(ctx))
		}
		st, _ := status.FromError(err)
		switch st.Code() {
		case codes.Unavailable:
		case codes.Canceled:
			return fmt.Errorf("kv store %s: %w (%v)", addr, context.Canceled, err)
		case codes.DeadlineExceeded:
			return fmt.Errorf("kv store %s: %w (%v)", addr, context.DeadlineExceeded, err)
		default:
			return fmt.Errorf("kv store %s: %w", addr, err)
		}
		sent := !neverSent(st)
		if kind == onceOnly && sent {
			return &kv.StoreUnavailableError{Addr: addr, Undetermined: true, Err: err}
		}
		if !sent {
			// Not sent: the region may be served elsewhere now.
			if to, ok := c.refresh(ctx, region.RegionID); ok && to != addr {
				if kc, err = c.conn(to); err != nil {
					return err
				}
				addr = to
				continue
			}
		}
		if !time.Now().Add(pause).Before(deadline) {
			return &kv.StoreUnavailableError{Addr: addr, Err: err}
		}
		if err := sleep(ctx, pause/2+rand.N(pause/2+1)); err != nil {
			return fmt.Errorf("kv store %s: %w", addr, err)
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// refresh asks the router where region is served now, when it can tell.
func (c *Client) refresh(ctx context.Context, region uint64) (string, bool) {
	r, ok := c.router.(Refresher)
	if !ok {
		return "", false
	}
	return r.RefreshRegion(ctx, region)
}

// neverSent reports whether an Unavailable status is grpc's refusal to
// send on a connection that could not be made (the request never left),
// as opposed to a call that broke in flight. Both are "connection error"s
// to grpc: a stream whose transport closed under it fails with
// `connection error: desc = "error reading from server: EOF"`, and only
// a dial failure says "while dialing" (grpc internal/transport,
// http2Client.Close and the dialer's errors).
func neverSent(st *status.Status) bool {
	return strings.Contains(st.Message(), "while dialing")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// answer turns a response's error fields into the command's error.
func answer(re *kvpb.RegionError, ke *kvpb.KeyError, addr string) error {
	if re != nil {
		e := RegionErrorFromPB(re)
		if hasPrefix(e.Reason, ReasonRegionUnavailable) {
			// Not retried as a region error: no replica can serve the
			// region until a quorum is back (the request was not run).
			return fmt.Errorf("kv store %s: %w: region %d: %s", addr, kv.ErrRegionUnavailable, e.RegionID, e.Reason)
		}
		return e
	}
	if ke != nil {
		return keyErrorFromPB(ke, addr)
	}
	return nil
}

// addrOf names region's store for errors.
func (c *Client) addrOf(region kv.RegionCtx) string {
	a, _ := c.router.RegionAddr(region.RegionID)
	return a
}

// LocateKey implements kv.Client through the router.
func (c *Client) LocateKey(ctx context.Context, key []byte) (kv.RegionInfo, error) {
	return c.router.LocateKey(ctx, key)
}

// InvalidateRegion implements kv.Client through the router.
func (c *Client) InvalidateRegion(regionID uint64) { c.router.InvalidateRegion(regionID) }

// Get implements kv.Client.
func (c *Client) Get(ctx context.Context, region kv.RegionCtx, key []byte, version uint64) ([]byte, error) {
	var resp *kvpb.GetResponse
	err := c.call(ctx, region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.Get(ctx, &kvpb.GetRequest{Region: regionCtxToPB(region), Key: key, Version: version})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(region)); err != nil {
		return nil, err
	}
	if !resp.GetFound() {
		return nil, nil
	}
	if v := resp.GetValue(); v != nil {
		return v, nil
	}
	return []byte{}, nil
}

// BatchGet implements kv.Client.
func (c *Client) BatchGet(ctx context.Context, region kv.RegionCtx, keys [][]byte, version uint64) ([]kv.KvPair, error) {
	var resp *kvpb.BatchGetResponse
	err := c.call(ctx, region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.BatchGet(ctx, &kvpb.BatchGetRequest{Region: regionCtxToPB(region), Keys: keys, Version: version})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(region)); err != nil {
		return nil, err
	}
	return pairsFromPB(resp.GetPairs(), false), nil
}

// Scan implements kv.Client.
func (c *Client) Scan(ctx context.Context, req *kv.ScanRequest) ([]kv.KvPair, error) {
	var resp *kvpb.ScanResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.Scan(ctx, &kvpb.ScanRequest{
			Region: regionCtxToPB(req.Region), Start: req.Start, End: req.End, Limit: int64(req.Limit), Version: req.Version,
			Reverse: req.Reverse, KeyOnly: req.KeyOnly, BypassLocks: req.BypassLocks, IgnoreLocks: req.IgnoreLocks,
			Ranges: keyRangesToPB(req.Ranges),
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	return pairsFromPB(resp.GetPairs(), req.KeyOnly), nil
}

// Prewrite implements kv.Client. A one-phase commit whose call broke in
// flight is not simply sent again (it would meet its own commit record as
// a conflict): settleOnePC finds out what became of it.
func (c *Client) Prewrite(ctx context.Context, req *kv.PrewriteRequest) (*kv.PrewriteResponse, error) {
	if !req.TryOnePC {
		return c.prewrite(ctx, req, idempotent)
	}
	resp, err := c.prewrite(ctx, req, onceOnly)
	var su *kv.StoreUnavailableError
	if !errors.As(err, &su) || !su.Undetermined {
		return resp, err
	}
	return c.settleOnePC(ctx, req, err)
}

// maxOnePCSettles bounds how often one one-phase commit is checked and
// sent again after its calls broke in flight.
const maxOnePCSettles = 3

// settleOnePC decides a one-phase commit whose call broke in flight
// (undetermined, the error): its primary, which the request holds (a
// one-phase commit writes all its keys in one region, in one batch),
// says whether the batch was applied. A commit record: it committed, at
// that commit_ts. A prewrite lock of the transaction: the store fell back
// to an ordinary prewrite, whose locks are in place. Neither (or the
// transaction's pessimistic lock, which the prewrite would have replaced):
// nothing was applied, and the request is sent again.
func (c *Client) settleOnePC(ctx context.Context, req *kv.PrewriteRequest, undetermined error) (*kv.PrewriteResponse, error) {
	for range maxOnePCSettles {
		st, err := c.checkPrimary(ctx, req)
		var notFound *kv.TxnLockNotFoundError
		switch {
		case errors.As(err, &notFound):
		case err != nil:
			// Formatted, not wrapped: the caller must not take the
			// check's region error for the prewrite's and send the
			// prewrite again.
			return nil, fmt.Errorf("%w (check the outcome: %v)", undetermined, err)
		case st.Action == kv.TxnActionCommitted:
			return &kv.PrewriteResponse{OnePCCommitTS: st.CommitTS}, nil
		case st.Action == kv.TxnActionRolledBack:
			return &kv.PrewriteResponse{Errors: []error{&kv.TxnAbortedError{Key: req.Primary, StartTS: req.StartTS}}}, nil
		case st.Lock != nil && st.Lock.Type != kv.OpPessimisticLock:
			return &kv.PrewriteResponse{}, nil
		}
		resp, err := c.prewrite(ctx, req, onceOnly)
		var su *kv.StoreUnavailableError
		if !errors.As(err, &su) || !su.Undetermined {
			return resp, err
		}
		undetermined = err
	}
	return nil, undetermined
}

// checkPrimary asks for the status of a one-phase commit's transaction
// at its primary, following the region (a raft leader elected elsewhere
// while the commit's store died answers NotLeader, or the route is gone)
// for up to the client's UnavailableTimeout.
func (c *Client) checkPrimary(ctx context.Context, req *kv.PrewriteRequest) (*kv.CheckTxnStatusResponse, error) {
	region := req.Region
	pause := 10 * time.Millisecond
	deadline := time.Now().Add(c.opts.UnavailableTimeout)
	for {
		st, err := c.CheckTxnStatus(ctx, &kv.CheckTxnStatusRequest{
			Region: region, PrimaryKey: req.Primary, LockTS: req.StartTS,
			// Checked at the transaction's own start, its lock cannot have
			// expired: the check never rolls it back.
			CurrentTS: req.StartTS,
		})
		var re *kv.RegionError
		if !errors.As(err, &re) || time.Now().After(deadline) {
			return st, err
		}
		c.router.InvalidateRegion(region.RegionID)
		if err := sleep(ctx, pause); err != nil {
			return nil, errors.Join(re, err)
		}
		pause = min(2*pause, 500*time.Millisecond)
		r, err := c.router.LocateKey(ctx, req.Primary)
		if err != nil {
			return nil, errors.Join(re, err)
		}
		region = r.Ctx()
	}
}

// prewrite sends a prewrite once (kind onceOnly) or until it is answered.
func (c *Client) prewrite(ctx context.Context, req *kv.PrewriteRequest, kind retryKind) (*kv.PrewriteResponse, error) {
	var resp *kvpb.PrewriteResponse
	err := c.call(ctx, req.Region, kind, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.Prewrite(ctx, &kvpb.PrewriteRequest{
			Region: regionCtxToPB(req.Region), Mutations: mutationsToPB(req.Mutations), Primary: req.Primary, StartTs: req.StartTS,
			LockTtl: req.LockTTL, TxnSize: req.TxnSize, TryOnePc: req.TryOnePC, MaxCommitTs: req.MaxCommitTS,
			AllowWhenDiskFull: req.AllowWhenDiskFull, ForUpdateTs: req.ForUpdateTS, SnapshotTs: req.SnapshotTS,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	addr := c.addrOf(req.Region)
	if err := answer(resp.GetRegionError(), resp.GetError(), addr); err != nil {
		return nil, err
	}
	out := &kv.PrewriteResponse{OnePCCommitTS: resp.GetOnePcCommitTs()}
	for _, e := range resp.GetErrors() {
		out.Errors = append(out.Errors, keyErrorFromPB(e, addr))
	}
	return out, nil
}

// Commit implements kv.Client.
func (c *Client) Commit(ctx context.Context, req *kv.CommitRequest) error {
	var resp *kvpb.CommitResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.Commit(ctx, &kvpb.CommitRequest{Region: regionCtxToPB(req.Region), Keys: req.Keys, StartTs: req.StartTS, CommitTs: req.CommitTS})
		return err
	})
	if err != nil {
		return err
	}
	return answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region))
}

// command runs a command whose answer is only its error.
func (c *Client) command(ctx context.Context, region kv.RegionCtx, fn func(ctx context.Context, kc kvpb.KVClient) (*kvpb.CommandResponse, error)) error {
	var resp *kvpb.CommandResponse
	err := c.call(ctx, region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = fn(ctx, kc)
		return err
	})
	if err != nil {
		return err
	}
	return answer(resp.GetRegionError(), resp.GetError(), c.addrOf(region))
}

// BatchRollback implements kv.Client.
func (c *Client) BatchRollback(ctx context.Context, region kv.RegionCtx, keys [][]byte, startTS uint64) error {
	return c.command(ctx, region, func(ctx context.Context, kc kvpb.KVClient) (*kvpb.CommandResponse, error) {
		return kc.BatchRollback(ctx, &kvpb.BatchRollbackRequest{Region: regionCtxToPB(region), Keys: keys, StartTs: startTS})
	})
}

// Cleanup implements kv.Client.
func (c *Client) Cleanup(ctx context.Context, region kv.RegionCtx, key []byte, startTS, currentTS uint64) error {
	return c.command(ctx, region, func(ctx context.Context, kc kvpb.KVClient) (*kvpb.CommandResponse, error) {
		return kc.Cleanup(ctx, &kvpb.CleanupRequest{Region: regionCtxToPB(region), Key: key, StartTs: startTS, CurrentTs: currentTS})
	})
}

// CheckTxnStatus implements kv.Client.
func (c *Client) CheckTxnStatus(ctx context.Context, req *kv.CheckTxnStatusRequest) (*kv.CheckTxnStatusResponse, error) {
	var resp *kvpb.CheckTxnStatusResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.CheckTxnStatus(ctx, &kvpb.CheckTxnStatusRequest{
			Region: regionCtxToPB(req.Region), PrimaryKey: req.PrimaryKey, LockTs: req.LockTS, CallerStartTs: req.CallerStartTS,
			CurrentTs: req.CurrentTS, RollbackIfNotExist: req.RollbackIfNotExist,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	out := &kv.CheckTxnStatusResponse{Action: kv.TxnAction(resp.GetAction()), CommitTS: resp.GetCommitTs(), LockTTL: resp.GetLockTtl()}
	if l := resp.GetLock(); l != nil {
		li := lockFromPB(l)
		out.Lock = &li
	}
	return out, nil
}

// ResolveLock implements kv.Client.
func (c *Client) ResolveLock(ctx context.Context, req *kv.ResolveLockRequest) error {
	return c.command(ctx, req.Region, func(ctx context.Context, kc kvpb.KVClient) (*kvpb.CommandResponse, error) {
		return kc.ResolveLock(ctx, &kvpb.ResolveLockRequest{Region: regionCtxToPB(req.Region), StartTs: req.StartTS, CommitTs: req.CommitTS, Keys: req.Keys})
	})
}

// TxnHeartBeat implements kv.Client.
func (c *Client) TxnHeartBeat(ctx context.Context, region kv.RegionCtx, primary []byte, startTS, adviseTTL uint64) (uint64, error) {
	var resp *kvpb.TxnHeartBeatResponse
	err := c.call(ctx, region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.TxnHeartBeat(ctx, &kvpb.TxnHeartBeatRequest{Region: regionCtxToPB(region), Primary: primary, StartTs: startTS, AdviseTtl: adviseTTL})
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(region)); err != nil {
		return 0, err
	}
	return resp.GetLockTtl(), nil
}

// AcquirePessimisticLock implements kv.Client. The lock wait is one long
// call, bounded by ctx (the call's gRPC deadline) as well as by the
// request's WaitTimeout, rounded up to whole milliseconds.
func (c *Client) AcquirePessimisticLock(ctx context.Context, req *kv.AcquirePessimisticLockRequest) (*kv.AcquirePessimisticLockResponse, error) {
	keys := make([]*kvpb.PessimisticKey, len(req.Keys))
	for i, k := range req.Keys {
		keys[i] = &kvpb.PessimisticKey{Key: k.Key, CheckNotExists: k.CheckNotExists}
	}
	wait := int64((req.WaitTimeout + time.Millisecond - 1) / time.Millisecond)
	var resp *kvpb.AcquirePessimisticLockResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.AcquirePessimisticLock(ctx, &kvpb.AcquirePessimisticLockRequest{
			Region: regionCtxToPB(req.Region), Keys: keys, Primary: req.Primary, StartTs: req.StartTS, ForUpdateTs: req.ForUpdateTS,
			LockTtl: req.LockTTL, ReturnValues: req.ReturnValues, WaitTimeoutMs: wait, LockWithConflict: req.LockWithConflict,
			Range: lockRangeToPB(req.Range), LockOnlyIfExists: req.LockOnlyIfExists,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	out := &kv.AcquirePessimisticLockResponse{ConflictTS: resp.GetConflictTs()}
	if req.Range != nil {
		pairs, absent := resp.GetPairs(), resp.GetPairAbsent()
		if len(absent) != len(pairs) {
			return nil, fmt.Errorf("kv store %s: %d absence flags for %d locked pairs", c.addrOf(req.Region), len(absent), len(pairs))
		}
		out.Pairs = make([]kv.KvPair, len(pairs))
		for i, p := range pairs {
			out.Pairs[i] = kv.KvPair{Key: p.GetKey(), Value: presentValue(p.GetValue(), absent[i])}
		}
		return out, nil
	}
	if req.ReturnValues {
		vals, missing := resp.GetValues(), resp.GetNotFound()
		if len(vals) != len(req.Keys) || len(missing) != len(vals) {
			return nil, fmt.Errorf("kv store %s: %d values for %d keys", c.addrOf(req.Region), len(vals), len(req.Keys))
		}
		out.Values = make([][]byte, len(vals))
		for i, v := range vals {
			out.Values[i] = presentValue(v, missing[i])
		}
	}
	return out, nil
}

// presentValue is a value received with its absence flag: nil when
// absent, never nil when present (protobuf sends an empty value as nil).
func presentValue(v []byte, absent bool) []byte {
	switch {
	case absent:
		return nil
	case v == nil:
		return []byte{}
	}
	return v
}

// lockRangeToPB is r on the wire (nil: none).
func lockRangeToPB(r *kv.LockRange) *kvpb.LockRange {
	if r == nil {
		return nil
	}
	return &kvpb.LockRange{Start: r.Start, End: r.End, Limit: int64(r.Limit), Reverse: r.Reverse, BypassLocks: r.BypassLocks}
}

// PessimisticRollback implements kv.Client.
func (c *Client) PessimisticRollback(ctx context.Context, region kv.RegionCtx, keys [][]byte, startTS, forUpdateTS uint64) error {
	return c.command(ctx, region, func(ctx context.Context, kc kvpb.KVClient) (*kvpb.CommandResponse, error) {
		return kc.PessimisticRollback(ctx, &kvpb.PessimisticRollbackRequest{Region: regionCtxToPB(region), Keys: keys, StartTs: startTS, ForUpdateTs: forUpdateTS})
	})
}

// ValidateReads implements kv.Client. Sending it again is harmless: it
// reads, and raises max_read_ts to the same To.
func (c *Client) ValidateReads(ctx context.Context, req *kv.ValidateReadsRequest) (*kv.ValidateReadsResponse, error) {
	var resp *kvpb.ValidateReadsResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.ValidateReads(ctx, &kvpb.ValidateReadsRequest{
			Region: regionCtxToPB(req.Region), Keys: req.Keys, Ranges: keyRangesToPB(req.Ranges),
			From: req.From, To: req.To, BypassLocks: req.BypassLocks, ChangesFirst: req.ChangesFirst,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	out := &kv.ValidateReadsResponse{More: resp.GetMore(), LocksUnchecked: resp.GetLocksUnchecked()}
	for _, c := range resp.GetChanges() {
		out.Changes = append(out.Changes, kv.KeyChange{Key: nonNil(c.GetKey()), CommitTS: c.GetCommitTs()})
	}
	return out, nil
}

// ScanNotify implements kv.Client.
func (c *Client) ScanNotify(ctx context.Context, req *kv.ScanNotifyRequest) (*kv.ScanNotifyResponse, error) {
	var resp *kvpb.ScanNotifyResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.ScanNotify(ctx, &kvpb.ScanNotifyRequest{Region: regionCtxToPB(req.Region), Start: req.Start, End: req.End, Limit: int64(req.Limit), Scanner: req.Scanner, Columns: req.Columns})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	out := &kv.ScanNotifyResponse{Entries: notifyEntriesFromPB(resp.GetEntries()), Skipped: int(resp.GetSkipped()), Trailing: resp.GetTrailing()}
	if len(resp.GetResume()) > 0 {
		out.Resume = resp.GetResume()
	}
	return out, nil
}

// ClearNotify implements kv.Client. Sending it again is harmless: an
// entry cleared already is skipped, a newer one kept.
func (c *Client) ClearNotify(ctx context.Context, region kv.RegionCtx, entries []kv.NotifyEntry) error {
	return c.command(ctx, region, func(ctx context.Context, kc kvpb.KVClient) (*kvpb.CommandResponse, error) {
		return kc.ClearNotify(ctx, &kvpb.ClearNotifyRequest{Region: regionCtxToPB(region), Entries: notifyEntriesToPB(entries)})
	})
}

// ScanChanges implements kv.Client.
func (c *Client) ScanChanges(ctx context.Context, req *kv.ScanChangesRequest) ([]kv.Change, error) {
	var resp *kvpb.ScanChangesResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.ScanChanges(ctx, &kvpb.ScanChangesRequest{
			Region: regionCtxToPB(req.Region), Start: req.Start, End: req.End, FromTs: req.FromTS, ToTs: req.ToTS,
			Limit: int64(req.Limit), BypassLocks: req.BypassLocks,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	return changesFromPB(resp.GetChanges()), nil
}

// Coprocessor implements kv.Client.
func (c *Client) Coprocessor(ctx context.Context, req *kv.CoprocessorRequest) (*kv.CoprocessorResponse, error) {
	var resp *kvpb.CoprocessorResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.Coprocessor(ctx, &kvpb.CoprocessorRequest{
			Region: regionCtxToPB(req.Region), Start: req.Start, End: req.End, Version: req.Version,
			Program: req.Program, BypassLocks: req.BypassLocks, Ranges: keyRangesToPB(req.Ranges), Reverse: req.Reverse,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	out := &kv.CoprocessorResponse{Data: resp.GetData(), Done: resp.GetDone(), Visited: resp.GetVisited()}
	if resp.GetHasResume() {
		out.Resume = nonNil(resp.GetResume())
	}
	return out, nil
}

// ScanLock implements kv.GCClient.
func (c *Client) ScanLock(ctx context.Context, req *kv.ScanLockRequest) (*kv.ScanLockResponse, error) {
	var resp *kvpb.ScanLockResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.ScanLock(ctx, &kvpb.ScanLockRequest{Region: regionCtxToPB(req.Region), Start: req.Start, MaxTs: req.MaxTS, Limit: int64(req.Limit)})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	out := &kv.ScanLockResponse{}
	for _, l := range resp.GetLocks() {
		out.Locks = append(out.Locks, lockFromPB(l))
	}
	if resp.GetHasNext() {
		out.Next = nonNil(resp.GetNext())
	}
	return out, nil
}

// GC implements kv.GCClient. Sending it again is harmless: what it
// deleted is gone, what it left is left again.
func (c *Client) GC(ctx context.Context, req *kv.GCRequest) (*kv.GCResponse, error) {
	var resp *kvpb.GCResponse
	err := c.call(ctx, req.Region, idempotent, func(ctx context.Context, kc kvpb.KVClient) (err error) {
		resp, err = kc.GC(ctx, &kvpb.GCRequest{Region: regionCtxToPB(req.Region), Start: req.Start, SafePoint: req.SafePoint, Limit: int64(req.Limit)})
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := answer(resp.GetRegionError(), resp.GetError(), c.addrOf(req.Region)); err != nil {
		return nil, err
	}
	out := &kv.GCResponse{Skipped: resp.GetSkipped(), KeysScanned: resp.GetKeysScanned(), VersionsDeleted: resp.GetVersionsDeleted(),
		BytesDeleted: resp.GetBytesDeleted()}
	if resp.GetHasNext() {
		out.Next = nonNil(resp.GetNext())
	}
	return out, nil
}

// StoreLister is what a Router may implement to name every store of the
// cluster: UnsafeDestroyRange is sent to each of them.
type StoreLister interface {
	StoreAddrs(ctx context.Context) ([]string, error)
}

// storeAddrs lists every store through the router (StoreLister), for a
// command sent to each (what names it in errors).
func (c *Client) storeAddrs(ctx context.Context, what string) ([]string, error) {
	sl, ok := c.router.(StoreLister)
	if !ok {
		return nil, fmt.Errorf("kv client: %s: the router cannot list the stores", what)
	}
	addrs, err := sl.StoreAddrs(ctx)
	if err != nil {
		return nil, fmt.Errorf("kv client: %s: %w", what, err)
	}
	return addrs, nil
}

// UnsafeDestroyRange implements kv.GCClient: it is sent to every store
// the router lists (StoreLister), each retried up to the client's
// UnavailableTimeout, and fails unless every store destroyed the range
// (the garbage collector then keeps the range and tries again at its
// next run). The response adds up the stores' bytes.
func (c *Client) UnsafeDestroyRange(ctx context.Context, start, end []byte) (*kv.DestroyRangeResponse, error) {
	addrs, err := c.storeAddrs(ctx, "destroy range")
	if err != nil {
		return nil, err
	}
	out := &kv.DestroyRangeResponse{}
	var errs []error
	for _, addr := range addrs {
		resp, err := c.destroyRangeOn(ctx, addr, start, end)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.BytesBefore += resp.GetBytesBefore()
		out.BytesAfter += resp.GetBytesAfter()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("kv client: destroy range [%q, %q): %w", start, end, err)
	}
	return out, nil
}

// destroyRangeOn sends UnsafeDestroyRange to the store at addr, again
// while it is unavailable, up to the client's UnavailableTimeout
// (destroying a range again is harmless).
func (c *Client) destroyRangeOn(ctx context.Context, addr string, start, end []byte) (*kvpb.UnsafeDestroyRangeResponse, error) {
	kc, err := c.conn(addr)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.opts.UnavailableTimeout)
	pause := 5 * time.Millisecond
	for {
		resp, err := kc.UnsafeDestroyRange(ctx, &kvpb.UnsafeDestroyRangeRequest{Start: start, End: end})
		if err == nil {
			if ke := resp.GetError(); ke != nil {
				return nil, keyErrorFromPB(ke, addr)
			}
			return resp, nil
		}
		if status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			return nil, fmt.Errorf("kv store %s: %w", addr, err)
		}
		if !time.Now().Add(pause).Before(deadline) {
			return nil, &kv.StoreUnavailableError{Addr: addr, Err: err}
		}
		if err := sleep(ctx, pause); err != nil {
			return nil, fmt.Errorf("kv store %s: %w", addr, err)
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// splitAttempts bounds how many times SplitRegion routes again after a
// region error (a stale route, a leader being elected).
const splitAttempts = 20

// SplitRegion implements kv.Splitter: the leader of the region holding
// key splits it through raft. A region error routes the request again,
// after a backoff, up to splitAttempts times.
func (c *Client) SplitRegion(ctx context.Context, key []byte) (left, right kv.RegionInfo, err error) {
	pause := 20 * time.Millisecond
	for attempt := 0; ; attempt++ {
		region, err := c.router.LocateKey(ctx, key)
		if err != nil {
			return left, right, fmt.Errorf("kv client: split at %q: %w", key, err)
		}
		var resp *kvpb.SplitRegionResponse
		err = c.call(ctx, region.Ctx(), onceOnly, func(ctx context.Context, kc kvpb.KVClient) (err error) {
			resp, err = kc.SplitRegion(ctx, &kvpb.SplitRegionRequest{Region: regionCtxToPB(region.Ctx()), SplitKey: key})
			return err
		})
		if err == nil {
			err = answer(resp.GetRegionError(), resp.GetError(), c.addrOf(region.Ctx()))
		}
		var re *kv.RegionError
		if !errors.As(err, &re) || attempt+1 >= splitAttempts {
			if err != nil {
				return left, right, fmt.Errorf("kv client: split at %q: %w", key, err)
			}
			if resp.GetLeft() == nil || resp.GetRight() == nil {
				return left, right, fmt.Errorf("kv client: split at %q: the store answered without the regions", key)
			}
			c.router.InvalidateRegion(region.ID) // its range changed
			return *RegionInfoFromPB(resp.GetLeft()), *RegionInfoFromPB(resp.GetRight()), nil
		}
		c.router.InvalidateRegion(region.ID)
		select {
		case <-ctx.Done():
			return left, right, fmt.Errorf("kv client: split at %q: %w", key, context.Cause(ctx))
		case <-time.After(pause):
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}
