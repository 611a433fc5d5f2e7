package pd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/percdb/percdb/pd/pdpb"
)

// The SQL nodes' schema leases, as TiDB keeps them in PD's etcd
// (/tidb/ddl/global_schema_version and all_schema_versions/<node>):
//
//	/percdb/pd/schema/version        uint64: the newest schema version published
//	/percdb/pd/schema/node/<node>    uint64: the version the node has loaded, under the node's lease
//
// A SQL node reports the version it has loaded, with no transaction of
// an older one still able to commit, every half lease
// (ReportSchemaVersion); its key lives under an etcd lease of the lease's
// length, so a node that stops reporting drops out of the map when its
// lease ends. A schema change publishes the version it committed
// (PublishSchemaVersion) and waits (WatchSchema) until every key left
// holds at least that version. Package sql/schemalease is the SQL node's
// side and says why this keeps at most two versions in use.
const (
	keySchemaVersion    = keyPrefix + "schema/version"
	keySchemaNodePrefix = keyPrefix + "schema/node/"
)

// maxSchemaWatch bounds one WatchSchema call: below a client attempt's
// timeout (ClientOptions.AttemptTimeout).
const maxSchemaWatch = 2 * time.Second

// maxSchemaLeaseTTL bounds a schema lease.
const maxSchemaLeaseTTL = 10 * time.Minute

func decodeVersion(key string, v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("pd: %s: corrupt value of %d bytes", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// reportSchemaVersion keeps node's loaded schema version under a lease of
// ttl: the lease its key holds if it is still alive, else a new one. It
// returns the newest published version and whether the lease was renewed.
func (d *directory) reportSchemaVersion(ctx context.Context, guard clientv3.Cmp, node string, version uint64, ttl time.Duration) (latest uint64, renewed bool, err error) {
	key := keySchemaNodePrefix + node
	resp, err := d.cli.Get(ctx, key)
	if err != nil {
		return 0, false, fmt.Errorf("pd: read %s's schema lease: %w", node, err)
	}
	var lease clientv3.LeaseID
	if len(resp.Kvs) > 0 && resp.Kvs[0].Lease != 0 {
		// Alive: its key is there. Renewing it keeps the key without a
		// gap in which a schema change could stop waiting for the node.
		// The lease's TTL is the one it was granted; a node that changes
		// its lease length gets the new one at its next grant.
		if _, err := d.cli.KeepAliveOnce(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err == nil {
			lease, renewed = clientv3.LeaseID(resp.Kvs[0].Lease), true
		}
	}
	if lease == 0 {
		g, err := d.cli.Grant(ctx, max(1, int64((ttl+time.Second-1)/time.Second)))
		if err != nil {
			return 0, false, fmt.Errorf("pd: schema lease for %s: %w", node, err)
		}
		lease = g.ID
	}
	put := clientv3.OpPut(key, string(binary.BigEndian.AppendUint64(nil, version)), clientv3.WithLease(lease))
	get := clientv3.OpGet(keySchemaVersion)
	txn, err := d.cli.Txn(ctx).If(guard).Then(put, get).Commit()
	if err != nil {
		return 0, false, fmt.Errorf("pd: report %s's schema version: %w", node, err)
	}
	if !txn.Succeeded {
		return 0, false, errNotLeader
	}
	if kvs := txn.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		if latest, err = decodeVersion(keySchemaVersion, kvs[0].Value); err != nil {
			return 0, false, err
		}
	}
	return latest, renewed, nil
}

// publishSchemaVersion raises the published version to v and returns the
// newest.
func (d *directory) publishSchemaVersion(ctx context.Context, guard clientv3.Cmp, v uint64) (uint64, error) {
	for {
		resp, err := d.cli.Get(ctx, keySchemaVersion)
		if err != nil {
			return 0, fmt.Errorf("pd: read the schema version: %w", err)
		}
		var cur uint64
		var rev int64
		if len(resp.Kvs) > 0 {
			if cur, err = decodeVersion(keySchemaVersion, resp.Kvs[0].Value); err != nil {
				return 0, err
			}
			rev = resp.Kvs[0].ModRevision
		}
		if v <= cur {
			return cur, nil
		}
		txn, err := d.cli.Txn(ctx).If(guard, clientv3.Compare(clientv3.ModRevision(keySchemaVersion), "=", rev)).
			Then(clientv3.OpPut(keySchemaVersion, string(binary.BigEndian.AppendUint64(nil, v)))).Commit()
		if err != nil {
			return 0, fmt.Errorf("pd: publish schema version %d: %w", v, err)
		}
		if txn.Succeeded {
			return v, nil
		}
		if err := d.checkGuard(ctx, guard); err != nil {
			return 0, err
		}
	}
}

// schemaState reads the published version and the live nodes' leases,
// and the revision they were read at.
func (d *directory) schemaState(ctx context.Context) (*pdpb.WatchSchemaResponse, int64, error) {
	resp, err := d.cli.Get(ctx, keyPrefix+"schema/", clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("pd: read the schema leases: %w", err)
	}
	out := &pdpb.WatchSchemaResponse{}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		v, err := decodeVersion(key, kv.Value)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case key == keySchemaVersion:
			out.Latest = v
		case strings.HasPrefix(key, keySchemaNodePrefix):
			out.Nodes = append(out.Nodes, &pdpb.SchemaLease{Node: key[len(keySchemaNodePrefix):], Version: v})
		}
	}
	return out, resp.Header.Revision, nil
}

// watchSchema answers the schema state once it satisfies req (see
// pdpb.PDServer's WatchSchema), or after req's wait.
func (d *directory) watchSchema(ctx context.Context, req *pdpb.WatchSchemaRequest) (*pdpb.WatchSchemaResponse, error) {
	wait := min(time.Duration(req.GetWaitMs())*time.Millisecond, maxSchemaWatch)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for {
		st, rev, err := d.schemaState(ctx)
		if err != nil {
			return nil, err
		}
		if st.Latest > req.GetNewerThan() || (req.GetSyncedAt() != 0 && synced(st, req.GetSyncedAt())) {
			return st, nil
		}
		// Any change under the prefix (a report, a lease that ended, a
		// publication) is worth a look.
		wch := d.cli.Watch(clientv3.WithRequireLeader(wctx), keyPrefix+"schema/", clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		select {
		case <-timer.C:
			return st, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wch:
		}
	}
}

// synced reports whether every live node reports at least v.
func synced(st *pdpb.WatchSchemaResponse, v uint64) bool {
	for _, n := range st.Nodes {
		if n.Version < v {
			return false
		}
	}
	return true
}

// ReportSchemaVersion implements pdpb.PDServer.
func (p *pdService) ReportSchemaVersion(ctx context.Context, req *pdpb.ReportSchemaVersionRequest) (*pdpb.ReportSchemaVersionResponse, error) {
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	ttl := time.Duration(req.GetTtlMs()) * time.Millisecond
	if req.GetNode() == "" || strings.Contains(req.GetNode(), "/") || ttl <= 0 || ttl > maxSchemaLeaseTTL {
		return nil, toStatus(errors.Join(errBadRequest, fmt.Errorf("schema lease of node %q for %v", req.GetNode(), ttl)))
	}
	latest, renewed, err := p.s.dir.reportSchemaVersion(ctx, t.guard, req.GetNode(), req.GetVersion(), ttl)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.ReportSchemaVersionResponse{Latest: latest, Renewed: renewed}, nil
}

// PublishSchemaVersion implements pdpb.PDServer.
func (p *pdService) PublishSchemaVersion(ctx context.Context, req *pdpb.PublishSchemaVersionRequest) (*pdpb.PublishSchemaVersionResponse, error) {
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	latest, err := p.s.dir.publishSchemaVersion(ctx, t.guard, req.GetVersion())
	if err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.PublishSchemaVersionResponse{Latest: latest}, nil
}

// WatchSchema implements pdpb.PDServer.
func (p *pdService) WatchSchema(ctx context.Context, req *pdpb.WatchSchemaRequest) (*pdpb.WatchSchemaResponse, error) {
	if _, err := p.s.leader(); err != nil {
		return nil, err
	}
	st, err := p.s.dir.watchSchema(ctx, req)
	if err != nil {
		return nil, toStatus(err)
	}
	return st, nil
}

// ReportSchemaVersion keeps node's schema lease for ttl with the version
// it has loaded, and returns the newest published version and whether
// the lease was renewed (false: it had ended, or never existed).
func (c *Client) ReportSchemaVersion(ctx context.Context, node string, version uint64, ttl time.Duration) (latest uint64, renewed bool, err error) {
	err = c.retry(ctx, "report schema version", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].ReportSchemaVersion(ctx, &pdpb.ReportSchemaVersionRequest{Node: node, Version: version, TtlMs: uint64(ttl / time.Millisecond)})
		latest, renewed = resp.GetLatest(), resp.GetRenewed()
		return err
	})
	return latest, renewed, err
}

// PublishSchemaVersion raises the published schema version to v and
// returns the newest.
func (c *Client) PublishSchemaVersion(ctx context.Context, v uint64) (uint64, error) {
	var latest uint64
	err := c.retry(ctx, "publish schema version", func(ctx context.Context, m int) error {
		resp, err := c.pds[m].PublishSchemaVersion(ctx, &pdpb.PublishSchemaVersionRequest{Version: v})
		latest = resp.GetLatest()
		return err
	})
	return latest, err
}

// WatchSchema returns the newest published schema version and the live
// nodes' reported versions by node, once the published version is above
// newerThan or every node reports at least syncedAt (0: not asked), or
// after wait (at most 2 s).
func (c *Client) WatchSchema(ctx context.Context, newerThan, syncedAt uint64, wait time.Duration) (uint64, map[string]uint64, error) {
	var resp *pdpb.WatchSchemaResponse
	err := c.retry(ctx, "watch schema", func(ctx context.Context, m int) error {
		var err error
		resp, err = c.pds[m].WatchSchema(ctx, &pdpb.WatchSchemaRequest{NewerThan: newerThan, SyncedAt: syncedAt, WaitMs: uint64(wait / time.Millisecond)})
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	nodes := make(map[string]uint64, len(resp.GetNodes()))
	for _, n := range resp.GetNodes() {
		nodes[n.GetNode()] = n.GetVersion()
	}
	return resp.GetLatest(), nodes, nil
}
