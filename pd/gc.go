package pd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/pd/pdpb"
)

// The cluster's GC safe point, as PD keeps TiDB's: pd is the one place it
// is decided, and etcd the one place it is kept.
//
//	/percdb/pd/gc/safe_point           uint64: the safe point in force
//	/percdb/pd/gc/min_start_ts/<node>  uint64: a SQL node's oldest running start_ts, under an etcd lease
//
// A SQL node's garbage collector computes a candidate (now minus the GC
// life time, its own running transactions, the service safe points:
// package gcworker) and proposes it (UpdateGCSafePoint); pd lowers it to
// every other SQL node's oldest running start_ts minus one, as they
// report them (ReportMinStartTS, renewed every half second with a lease of
// a few seconds, so that a node that dies stops holding GC back), and
// raises the safe point to it if it is higher. Deciding in pd rather than
// in one SQL node holding a lease means no election among SQL nodes: any
// of them may run the collector, and none can move the safe point past
// another's transaction, whose report pd holds. The KV nodes learn the
// safe point with every heartbeat and refuse the reads below it.
const (
	keyGCSafePoint = keyPrefix + "gc/safe_point"
	keyMinStartTS  = keyPrefix + "gc/min_start_ts/"
)

// gcSafePoint reads the safe point in force and its mod revision.
func (d *directory) gcSafePoint(ctx context.Context) (uint64, int64, error) {
	resp, err := d.cli.Get(ctx, keyGCSafePoint)
	if err != nil {
		return 0, 0, fmt.Errorf("pd: read the GC safe point: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, 0, nil
	}
	v := resp.Kvs[0].Value
	if len(v) != 8 {
		return 0, 0, fmt.Errorf("pd: GC safe point: corrupt value of %d bytes", len(v))
	}
	return binary.BigEndian.Uint64(v), resp.Kvs[0].ModRevision, nil
}

// minStartTS returns the oldest start_ts the SQL nodes reported (0: none).
func (d *directory) minStartTS(ctx context.Context) (uint64, error) {
	resp, err := d.cli.Get(ctx, keyMinStartTS, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("pd: read the SQL nodes' start_ts: %w", err)
	}
	var out uint64
	for _, kv := range resp.Kvs {
		if len(kv.Value) != 8 {
			return 0, fmt.Errorf("pd: %s: corrupt value of %d bytes", kv.Key, len(kv.Value))
		}
		if ts := binary.BigEndian.Uint64(kv.Value); ts != 0 && (out == 0 || ts < out) {
			out = ts
		}
	}
	return out, nil
}

// updateGCSafePoint raises the safe point to min(candidate, the oldest
// reported start_ts - 1) if that is higher, and returns the safe point in
// force.
func (d *directory) updateGCSafePoint(ctx context.Context, guard clientv3.Cmp, candidate uint64) (uint64, error) {
	for {
		cur, rev, err := d.gcSafePoint(ctx)
		if err != nil {
			return 0, err
		}
		bound := candidate
		oldest, err := d.minStartTS(ctx)
		if err != nil {
			return 0, err
		}
		if oldest != 0 && oldest-1 < bound {
			bound = oldest - 1
		}
		if bound <= cur {
			return cur, nil
		}
		txn, err := d.cli.Txn(ctx).
			If(guard, clientv3.Compare(clientv3.ModRevision(keyGCSafePoint), "=", rev)).
			Then(clientv3.OpPut(keyGCSafePoint, string(binary.BigEndian.AppendUint64(nil, bound)))).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("pd: save the GC safe point: %w", err)
		}
		if txn.Succeeded {
			return bound, nil
		}
		if err := d.checkGuard(ctx, guard); err != nil {
			return 0, err
		}
	}
}

// reportMinStartTS keeps node's oldest running start_ts (0: none, the
// entry goes) under a lease of ttl.
func (d *directory) reportMinStartTS(ctx context.Context, guard clientv3.Cmp, node string, ts uint64, ttl time.Duration) error {
	key := keyMinStartTS + node
	if ts == 0 {
		_, err := d.guarded(ctx, guard, clientv3.OpDelete(key))
		return err
	}
	lease, err := d.cli.Grant(ctx, max(1, int64((ttl+time.Second-1)/time.Second)))
	if err != nil {
		return fmt.Errorf("pd: lease for %s's start_ts: %w", node, err)
	}
	_, err = d.guarded(ctx, guard, clientv3.OpPut(key, string(binary.BigEndian.AppendUint64(nil, ts)), clientv3.WithLease(lease.ID)))
	return err
}

// maxStartTSTTL bounds a report's lease.
const maxStartTSTTL = time.Minute

// GetGCSafePoint implements pdpb.PDServer.
func (p *pdService) GetGCSafePoint(ctx context.Context, _ *pdpb.GetGCSafePointRequest) (*pdpb.GCSafePointResponse, error) {
	if _, err := p.s.leader(); err != nil {
		return nil, err
	}
	sp, _, err := p.s.dir.gcSafePoint(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.GCSafePointResponse{SafePoint: sp}, nil
}

// UpdateGCSafePoint implements pdpb.PDServer.
func (p *pdService) UpdateGCSafePoint(ctx context.Context, req *pdpb.UpdateGCSafePointRequest) (*pdpb.GCSafePointResponse, error) {
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	if req.GetCandidate() == 0 || req.GetCandidate() == ^uint64(0) {
		return nil, status.Errorf(codes.InvalidArgument, "pd: GC safe point candidate %d", req.GetCandidate())
	}
	sp, err := p.s.dir.updateGCSafePoint(ctx, t.guard, req.GetCandidate())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.GCSafePointResponse{SafePoint: sp}, nil
}

// ReportMinStartTS implements pdpb.PDServer.
func (p *pdService) ReportMinStartTS(ctx context.Context, req *pdpb.ReportMinStartTSRequest) (*pdpb.ReportMinStartTSResponse, error) {
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	ttl := time.Duration(req.GetTtlMs()) * time.Millisecond
	if req.GetNode() == "" || strings.Contains(req.GetNode(), "/") || ttl <= 0 || ttl > maxStartTSTTL {
		return nil, toStatus(errors.Join(errBadRequest, fmt.Errorf("report start_ts of node %q for %v", req.GetNode(), ttl)))
	}
	if err := p.s.dir.reportMinStartTS(ctx, t.guard, req.GetNode(), req.GetMinStartTs(), ttl); err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.ReportMinStartTSResponse{}, nil
}

// GCSafePoint returns the cluster's GC safe point (0: none yet).
func (c *Client) GCSafePoint(ctx context.Context) (uint64, error) {
	var out uint64
	err := c.retry(ctx, "get GC safe point", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].GetGCSafePoint(ctx, &pdpb.GetGCSafePointRequest{})
		out = resp.GetSafePoint()
		return err
	})
	return out, err
}

// UpdateGCSafePoint proposes candidate and returns the safe point in
// force.
func (c *Client) UpdateGCSafePoint(ctx context.Context, candidate uint64) (uint64, error) {
	var out uint64
	err := c.retry(ctx, "update GC safe point", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].UpdateGCSafePoint(ctx, &pdpb.UpdateGCSafePointRequest{Candidate: candidate})
		out = resp.GetSafePoint()
		return err
	})
	return out, err
}

// ReportMinStartTS tells pd node's oldest running start_ts (0: none),
// kept for ttl unless reported again.
func (c *Client) ReportMinStartTS(ctx context.Context, node string, ts uint64, ttl time.Duration) error {
	return c.retry(ctx, "report min start_ts", func(ctx context.Context, m int) error {
		_, err := c.pds[m].ReportMinStartTS(ctx, &pdpb.ReportMinStartTSRequest{Node: node, MinStartTs: ts, TtlMs: uint64(ttl / time.Millisecond)})
		return err
	})
}

// GCSafePoints is the cluster's GC safe point as a SQL node's garbage
// collector keeps it (gcworker.SafePointSource): pd decides and keeps it.
type GCSafePoints struct{ Client *Client }

// SafePoint returns the safe point in force.
func (g GCSafePoints) SafePoint(ctx context.Context) (uint64, error) {
	return g.Client.GCSafePoint(ctx)
}

// Advance proposes candidate to pd and returns the safe point in force.
func (g GCSafePoints) Advance(ctx context.Context, candidate uint64) (uint64, error) {
	return g.Client.UpdateGCSafePoint(ctx, candidate)
}
