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
//	/percdb/pd/gc/leader               the name of the SQL node that runs the collector, under its report's lease
//
// A SQL node's garbage collector computes a candidate (now minus the GC
// life time, its own running transactions, the service safe points:
// package gcworker) and proposes it (UpdateGCSafePoint); pd lowers it to
// every other SQL node's oldest running start_ts minus one, as they
// report them (ReportMinStartTS, renewed every half second with a lease of
// a few seconds, so that a node that dies stops holding GC back), and
// raises the safe point to it if it is higher. Deciding in pd rather than
// in the SQL node that runs the collector means that no collector, even
// two at once while a leadership changes hands, can move the safe point
// past another node's transaction, whose report pd holds. Only one SQL
// node runs the collector, the GC leader: a reporting node is granted the
// leadership when no node holds it and keeps it while its reports renew
// their lease (TiDB elects its GC leader among the SQL nodes the same
// way, through PD's etcd). The KV nodes learn the safe point with every
// heartbeat and refuse the reads below it.
const (
	keyGCSafePoint = keyPrefix + "gc/safe_point"
	keyMinStartTS  = keyPrefix + "gc/min_start_ts/"
	keyGCLeader    = keyPrefix + "gc/leader"
)

// gcSafePoint reads the safe point in force and its mod revision: from
// the leader's cache (dircache.go) while this member leads, so that a
// store heartbeat, which answers it, costs no etcd read.
func (d *directory) gcSafePoint(ctx context.Context) (uint64, int64, error) {
	if c := d.cache.Load(); c != nil {
		sp, rev := c.gcSafePoint()
		return sp, rev, nil
	}
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
		// Through the cache: applied on success, the key read again on
		// a failed comparison.
		txn, err := d.commit(ctx, []clientv3.Cmp{guard, clientv3.Compare(clientv3.ModRevision(keyGCSafePoint), "=", rev)},
			clientv3.OpPut(keyGCSafePoint, string(binary.BigEndian.AppendUint64(nil, bound))))
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
// entry goes) under a lease of ttl, and returns whether node is the GC
// leader: it becomes it when no node is, and stays it under the same
// lease.
func (d *directory) reportMinStartTS(ctx context.Context, guard clientv3.Cmp, node string, ts uint64, ttl time.Duration) (bool, error) {
	lease, err := d.nodeLease(ctx, node, ttl)
	if err != nil {
		return false, err
	}
	key := keyMinStartTS + node
	op := clientv3.OpDelete(key)
	if ts != 0 {
		op = clientv3.OpPut(key, string(binary.BigEndian.AppendUint64(nil, ts)), clientv3.WithLease(lease))
	}
	if _, err := d.guarded(ctx, guard, op); err != nil {
		return false, err
	}
	claim := clientv3.OpPut(keyGCLeader, node, clientv3.WithLease(lease))
	txn, err := d.cli.Txn(ctx).If(guard, clientv3.Compare(clientv3.CreateRevision(keyGCLeader), "=", 0)).Then(claim).Commit()
	if err != nil {
		return false, fmt.Errorf("pd: GC leader: %w", err)
	}
	if txn.Succeeded {
		return true, nil
	}
	// Held: renewed by its holder, under the new lease.
	txn, err = d.cli.Txn(ctx).If(guard, clientv3.Compare(clientv3.Value(keyGCLeader), "=", node)).Then(claim).Commit()
	if err != nil {
		return false, fmt.Errorf("pd: GC leader: %w", err)
	}
	return txn.Succeeded, nil
}

// nodeLease returns node's lease, renewed for ttl: the one it had if it
// is still alive (the previous report was within its ttl), else a new one.
func (d *directory) nodeLease(ctx context.Context, node string, ttl time.Duration) (clientv3.LeaseID, error) {
	d.leaseMu.Lock()
	id, ok := d.leases[node]
	d.leaseMu.Unlock()
	if ok {
		if _, err := d.cli.KeepAliveOnce(ctx, id); err == nil {
			return id, nil
		}
	}
	g, err := d.cli.Grant(ctx, max(1, int64((ttl+time.Second-1)/time.Second)))
	if err != nil {
		return 0, fmt.Errorf("pd: lease for %s's report: %w", node, err)
	}
	d.leaseMu.Lock()
	d.leases[node] = g.ID
	d.leaseMu.Unlock()
	return g.ID, nil
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
	leader, err := p.s.dir.reportMinStartTS(ctx, t.guard, req.GetNode(), req.GetMinStartTs(), ttl)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.ReportMinStartTSResponse{GcLeader: leader}, nil
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
// kept for ttl unless reported again, and returns whether node is the GC
// leader (the one SQL node that runs the collector).
func (c *Client) ReportMinStartTS(ctx context.Context, node string, ts uint64, ttl time.Duration) (bool, error) {
	var leader bool
	err := c.retry(ctx, "report min start_ts", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].ReportMinStartTS(ctx, &pdpb.ReportMinStartTSRequest{Node: node, MinStartTs: ts, TtlMs: uint64(ttl / time.Millisecond)})
		leader = resp.GetGcLeader()
		return err
	})
	return leader, err
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
