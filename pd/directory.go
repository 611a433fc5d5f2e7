package pd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/pd/pdpb"
)

// Keys in etcd (all under keyPrefix). Values are pdpb messages or
// big-endian integers:
//
//	/percdb/pd/alloc_id            uint64: the next id not yet allocated
//	/percdb/pd/bootstrapped        "1" once the first region exists
//	/percdb/pd/store/<id>          pdpb.Store (id as 16 hex digits)
//	/percdb/pd/region/<start>      pdpb.Region, keyed by its start key (raw bytes)
//	/percdb/pd/region-id/<id>      the start key of region id
//	/percdb/pd/tso                 uint64: the oracle's saved window bound
//	/percdb/pd/leader/...          the leader election (etcd concurrency)
//
// Regions keyed by start key make the region holding a key one range read
// (the greatest start at or below the key).
const (
	keyPrefix       = "/percdb/pd/"
	keyAllocID      = keyPrefix + "alloc_id"
	keyBootstrapped = keyPrefix + "bootstrapped"
	keyStorePrefix  = keyPrefix + "store/"
	keyRegionPrefix = keyPrefix + "region/"
	keyRegionByID   = keyPrefix + "region-id/"
	keyTSO          = keyPrefix + "tso"
	keyElection     = keyPrefix + "leader"
)

func storeKey(id uint64) string     { return keyStorePrefix + idHex(id) }
func regionKey(start []byte) string { return keyRegionPrefix + string(start) }
func regionIDKey(id uint64) string  { return keyRegionByID + idHex(id) }

func idHex(id uint64) string {
	s := strconv.FormatUint(id, 16)
	return string(bytes.Repeat([]byte{'0'}, 16-len(s))) + s
}

// errNotBootstrapped: no store has registered yet, so there is no region.
var errNotBootstrapped = errors.New("pd: cluster not bootstrapped (no kv store has registered yet)")

// directory is the cluster's stores and regions in etcd. Only the pd
// leader writes it; guard is the leader's election key comparison, so a
// deposed leader's writes fail. While this member leads, its reads of
// stores and regions are served from cache (dircache.go), which its
// writes go through.
type directory struct {
	cli *clientv3.Client
	// cache is the leader's copy of the stores and regions; nil outside
	// a term (reads go to etcd).
	cache atomic.Pointer[dirCache]
	// replicas is how many replicas each region gets (Config.Replicas).
	replicas int

	// leases are the etcd leases of the SQL nodes' reports, renewed by
	// each report (gc.go).
	leaseMu sync.Mutex
	leases  map[string]clientv3.LeaseID
}

// allocIDs reserves count ids and returns the first.
func (d *directory) allocIDs(ctx context.Context, guard clientv3.Cmp, count uint32) (uint64, error) {
	if count == 0 {
		return 0, errors.New("pd: alloc 0 ids")
	}
	for {
		resp, err := d.cli.Get(ctx, keyAllocID)
		if err != nil {
			return 0, fmt.Errorf("pd: alloc id: %w", err)
		}
		next, rev := uint64(1), int64(0)
		if len(resp.Kvs) == 1 {
			if len(resp.Kvs[0].Value) != 8 {
				return 0, fmt.Errorf("pd: alloc id: corrupt counter of %d bytes", len(resp.Kvs[0].Value))
			}
			next, rev = binary.BigEndian.Uint64(resp.Kvs[0].Value), resp.Kvs[0].ModRevision
		}
		txn, err := d.cli.Txn(ctx).
			If(guard, clientv3.Compare(clientv3.ModRevision(keyAllocID), "=", rev)).
			Then(clientv3.OpPut(keyAllocID, string(binary.BigEndian.AppendUint64(nil, next+uint64(count))))).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("pd: alloc id: %w", err)
		}
		if txn.Succeeded {
			return next, nil
		}
		if err := d.checkGuard(ctx, guard); err != nil {
			return 0, err
		}
	}
}

// errNotLeader: this pd is not (or no longer) the leader.
var errNotLeader = errors.New("pd: not leader")

// checkGuard returns errNotLeader when the guard no longer holds.
func (d *directory) checkGuard(ctx context.Context, guard clientv3.Cmp) error {
	txn, err := d.cli.Txn(ctx).If(guard).Commit()
	if err != nil {
		return fmt.Errorf("pd: %w", err)
	}
	if !txn.Succeeded {
		return errNotLeader
	}
	return nil
}

// putStore registers a store or updates its address; a new store (id 0)
// gets an id, and the first store bootstraps the first region on itself.
func (d *directory) putStore(ctx context.Context, guard clientv3.Cmp, st *pdpb.Store) (uint64, error) {
	if st.GetAddr() == "" {
		return 0, errors.New("pd: store without an address")
	}
	id := st.GetId()
	var status pdpb.StoreStatus
	if id == 0 {
		var err error
		if id, err = d.allocIDs(ctx, guard, 1); err != nil {
			return 0, err
		}
	} else {
		// A known store keeps its status (a drain outlives a restart).
		old, err := d.store(ctx, id)
		if err != nil {
			return 0, err
		}
		status = old.GetStatus()
	}
	rec, err := proto.Marshal(&pdpb.Store{Id: id, Addr: st.GetAddr(), Status: status, StatusAddr: st.GetStatusAddr(), Labels: st.GetLabels()})
	if err != nil {
		return 0, err
	}
	if _, err := d.guarded(ctx, guard, clientv3.OpPut(storeKey(id), string(rec))); err != nil {
		return 0, fmt.Errorf("pd: put store %d: %w", id, err)
	}
	if err := d.bootstrap(ctx, guard); err != nil {
		return 0, err
	}
	return id, nil
}

// setStoreStatus records store id's status, if the store is registered
// and not a tombstone (a tombstone is final), and returns the record.
func (d *directory) setStoreStatus(ctx context.Context, guard clientv3.Cmp, id uint64, status pdpb.StoreStatus) (*pdpb.Store, error) {
	st, err := d.store(ctx, id)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("%w: store %d is not registered", errBadRequest, id)
	}
	if st.GetStatus() == status {
		return st, nil
	}
	if st.GetStatus() == pdpb.StoreStatus_TOMBSTONE {
		return nil, fmt.Errorf("%w: store %d is a tombstone (drained and removed for good)", errFailedPrecondition, id)
	}
	st.Status = status
	rec, err := proto.Marshal(st)
	if err != nil {
		return nil, err
	}
	if _, err := d.guarded(ctx, guard, clientv3.OpPut(storeKey(id), string(rec))); err != nil {
		return nil, fmt.Errorf("pd: set store %d %s: %w", id, status, err)
	}
	return st, nil
}

// guarded runs ops if guard holds.
func (d *directory) guarded(ctx context.Context, guard clientv3.Cmp, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	txn, err := d.commit(ctx, []clientv3.Cmp{guard}, ops...)
	if err != nil {
		return nil, err
	}
	if !txn.Succeeded {
		return nil, errNotLeader
	}
	return txn, nil
}

// bootstrap creates the first region, the whole key space, with a
// replica on each of the first d.replicas stores (by id), once that many
// have registered, unless the cluster is bootstrapped already. Its first
// peer is named its leader until a store reports leading it.
func (d *directory) bootstrap(ctx context.Context, guard clientv3.Cmp) error {
	resp, err := d.cli.Get(ctx, keyBootstrapped)
	if err != nil {
		return fmt.Errorf("pd: bootstrap: %w", err)
	}
	if len(resp.Kvs) > 0 {
		return nil
	}
	stores, err := d.stores(ctx)
	if err != nil {
		return err
	}
	if len(stores) < d.replicas {
		return nil // not yet: the next store to register bootstraps
	}
	peers := make([]uint64, 0, len(stores))
	for _, st := range stores {
		peers = append(peers, st.GetId())
	}
	slices.Sort(peers)
	peers = peers[:d.replicas]
	id, err := d.allocIDs(ctx, guard, 1)
	if err != nil {
		return err
	}
	rec, err := proto.Marshal(&pdpb.Region{Id: id, ConfVer: 1, Version: 1, StoreId: peers[0], Peers: peers})
	if err != nil {
		return err
	}
	txn, err := d.commit(ctx, []clientv3.Cmp{guard, clientv3.Compare(clientv3.Version(keyBootstrapped), "=", 0)},
		clientv3.OpPut(regionKey(nil), string(rec)), clientv3.OpPut(regionIDKey(id), ""), clientv3.OpPut(keyBootstrapped, "1"))
	if err != nil {
		return fmt.Errorf("pd: bootstrap: %w", err)
	}
	if !txn.Succeeded {
		// Bootstrapped meanwhile by another call, or deposed.
		return d.checkGuard(ctx, guard)
	}
	return nil
}

// store reads a store record; nil when there is none.
func (d *directory) store(ctx context.Context, id uint64) (*pdpb.Store, error) {
	if c := d.cache.Load(); c != nil {
		return c.store(id), nil
	}
	resp, err := d.cli.Get(ctx, storeKey(id))
	if err != nil {
		return nil, fmt.Errorf("pd: get store %d: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	st := &pdpb.Store{}
	if err := proto.Unmarshal(resp.Kvs[0].Value, st); err != nil {
		return nil, fmt.Errorf("pd: store %d: %w", id, err)
	}
	return st, nil
}

// stores lists every store.
func (d *directory) stores(ctx context.Context) ([]*pdpb.Store, error) {
	if c := d.cache.Load(); c != nil {
		return c.storeList(), nil
	}
	resp, err := d.cli.Get(ctx, keyStorePrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("pd: list stores: %w", err)
	}
	out := make([]*pdpb.Store, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		st := &pdpb.Store{}
		if err := proto.Unmarshal(kv.Value, st); err != nil {
			return nil, fmt.Errorf("pd: store %q: %w", kv.Key, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// regionOf returns the region holding key: the one with the greatest
// start at or below it.
func (d *directory) regionOf(ctx context.Context, key []byte) (*pdpb.Region, error) {
	var r *pdpb.Region
	if c := d.cache.Load(); c != nil {
		if r = c.regionOf(key); r == nil {
			return nil, errNotBootstrapped
		}
	} else {
		resp, err := d.cli.Get(ctx, keyRegionPrefix,
			clientv3.WithRange(regionKey(key)+"\x00"), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(1))
		if err != nil {
			return nil, fmt.Errorf("pd: locate key %q: %w", key, err)
		}
		if len(resp.Kvs) == 0 {
			return nil, errNotBootstrapped
		}
		r = &pdpb.Region{}
		if err := proto.Unmarshal(resp.Kvs[0].Value, r); err != nil {
			return nil, fmt.Errorf("pd: region %q: %w", resp.Kvs[0].Key, err)
		}
	}
	if len(r.End) > 0 && bytes.Compare(key, r.End) >= 0 {
		return nil, fmt.Errorf("pd: locate key %q: no region holds it (hole after region %d)", key, r.Id)
	}
	return r, nil
}

// regionByID returns region id; nil when there is none.
func (d *directory) regionByID(ctx context.Context, id uint64) (*pdpb.Region, error) {
	if c := d.cache.Load(); c != nil {
		if r, _, _ := c.record(id); r != nil {
			return proto.Clone(r).(*pdpb.Region), nil
		}
		return nil, nil
	}
	resp, err := d.cli.Get(ctx, regionIDKey(id))
	if err != nil {
		return nil, fmt.Errorf("pd: get region %d: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	r, err := d.cli.Get(ctx, regionKey(resp.Kvs[0].Value))
	if err != nil {
		return nil, fmt.Errorf("pd: get region %d: %w", id, err)
	}
	if len(r.Kvs) == 0 {
		return nil, nil
	}
	out := &pdpb.Region{}
	if err := proto.Unmarshal(r.Kvs[0].Value, out); err != nil {
		return nil, fmt.Errorf("pd: region %d: %w", id, err)
	}
	if out.Id != id {
		return nil, nil // the index is being rewritten; the caller asks again
	}
	return out, nil
}

// hasPeer reports whether r has a replica on storeID.
func hasPeer(r *pdpb.Region, storeID uint64) bool {
	if len(r.GetPeers()) == 0 {
		return r.GetStoreId() == storeID
	}
	return slices.Contains(r.GetPeers(), storeID)
}

// setLeader records that storeID leads region id, if the region has a
// replica there and pd had another leader for it, and takes the region's
// configuration as its leader reported it (rep, may be nil) when it is
// newer than the record's (a higher conf_ver): the peers become its
// voters and learners, so that a store added as a learner is told of the
// region in its next heartbeat, and a store removed is not. retry: the
// claim was not taken (the record changed meanwhile, or does not list
// the store as a peer): the store is to send it again.
func (d *directory) setLeader(ctx context.Context, guard clientv3.Cmp, id, storeID uint64, rep *pdpb.RegionReport) (bool, error) {
	cur, key, rev, err := d.recordByID(ctx, id)
	if err != nil || cur == nil {
		// No record (its report's range not taken): the claim goes again.
		return err == nil, err
	}
	newerConf := rep.GetConfVer() > cur.GetConfVer() && slices.Contains(rep.GetVoters(), storeID)
	if !newerConf && cur.GetStoreId() == storeID {
		return false, nil // as recorded: no copy, no write
	}
	if !newerConf && !hasPeer(cur, storeID) {
		// A leader the record does not list as a peer: its report of
		// the configuration is behind the record's, or missing; the
		// claim goes again (a partial heartbeat would drop it).
		return true, nil
	}
	r := proto.Clone(cur).(*pdpb.Region)
	changed := false
	if newerConf {
		peers := slices.Concat(rep.GetVoters(), rep.GetLearners())
		slices.Sort(peers)
		r.Peers, r.Learners, r.ConfVer = slices.Compact(peers), slices.Clone(rep.GetLearners()), rep.GetConfVer()
		changed = true
	}
	if r.GetStoreId() != storeID && hasPeer(r, storeID) {
		r.StoreId = storeID
		changed = true
	}
	if !changed {
		return false, nil
	}
	rec, err := proto.Marshal(r)
	if err != nil {
		return false, err
	}
	// Only if the record did not change meanwhile (a split, or another
	// leader's report: the next heartbeat settles it).
	txn, err := d.commit(ctx, []clientv3.Cmp{guard, clientv3.Compare(clientv3.ModRevision(key), "=", rev)}, clientv3.OpPut(key, string(rec)))
	if err != nil {
		return false, fmt.Errorf("pd: region %d: set leader: %w", id, err)
	}
	if !txn.Succeeded {
		return true, d.checkGuard(ctx, guard)
	}
	return false, nil
}

// regionsOf lists the regions with a replica on storeID, and the
// revision the list is as of (0: read from etcd outside a term's cache,
// not to be compared).
func (d *directory) regionsOf(ctx context.Context, storeID uint64) ([]*pdpb.Region, int64, error) {
	if c := d.cache.Load(); c != nil {
		list, rev := c.regionsOn(storeID)
		return list, rev, nil
	}
	all, err := d.regions(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []*pdpb.Region
	for _, r := range all {
		if hasPeer(r, storeID) {
			out = append(out, r)
		}
	}
	return out, 0, nil
}

// regions lists every region, by start key. The records may be the
// cache's own: not to be modified.
func (d *directory) regions(ctx context.Context) ([]*pdpb.Region, error) {
	if c := d.cache.Load(); c != nil {
		return c.regionList(), nil
	}
	resp, err := d.cli.Get(ctx, keyRegionPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("pd: list regions: %w", err)
	}
	out := make([]*pdpb.Region, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		r := &pdpb.Region{}
		if err := proto.Unmarshal(kv.Value, r); err != nil {
			return nil, fmt.Errorf("pd: region %q: %w", kv.Key, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// windowStore keeps the oracle's window bound in etcd (tso.WindowStore),
// written only while guard (the leadership) holds, so that a deposed
// leader cannot move the bound under its successor.
type windowStore struct {
	cli   *clientv3.Client
	guard clientv3.Cmp
}

// Load implements tso.WindowStore.
func (w windowStore) Load(ctx context.Context) (uint64, error) {
	resp, err := w.cli.Get(ctx, keyTSO)
	if err != nil {
		return 0, fmt.Errorf("load tso window from etcd: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	if v := resp.Kvs[0].Value; len(v) == 8 {
		return binary.BigEndian.Uint64(v), nil
	}
	return 0, fmt.Errorf("load tso window from etcd: corrupt value of %d bytes", len(resp.Kvs[0].Value))
}

// Save implements tso.WindowStore: the bound is durable (committed by the
// etcd cluster) when it returns nil.
func (w windowStore) Save(ctx context.Context, bound uint64) error {
	txn, err := w.cli.Txn(ctx).If(w.guard).Then(clientv3.OpPut(keyTSO, string(binary.BigEndian.AppendUint64(nil, bound)))).Commit()
	if err != nil {
		return fmt.Errorf("save tso window to etcd: %w", err)
	}
	if !txn.Succeeded {
		return fmt.Errorf("save tso window to etcd: %w", errNotLeader)
	}
	return nil
}

// updateRange takes a region's range from a report of one of its
// replicas (on store) when it is newer than the record's (a higher
// version: the region was split): the record moves to its new start key
// if that changed, keeping its peers and leader; a region pd does not
// know (split off another) gets a record with the report's
// configuration and the reporting store as where clients go first (its
// replica answers NotLeader with the leader's address if it does not
// lead). A region's range and version come from its raft log, applied
// alike by every replica, so any replica's report at a version is the
// truth at that version. Records of a split's two halves may overlap the
// parent's old record for a moment (a key is routed by the record with
// the greatest start at or below it, so the newer half wins); a record
// that changed meanwhile is left for the next heartbeat.
func (d *directory) updateRange(ctx context.Context, guard clientv3.Cmp, store uint64, rep *pdpb.RegionReport) (bool, error) {
	if rep.GetVersion() == 0 {
		return false, nil // a node that predates splits
	}
	id := rep.GetRegionId()
	cur, curKey, curRev, err := d.recordByID(ctx, id)
	if err != nil {
		return false, err
	}
	if cur != nil && cur.GetVersion() >= rep.GetVersion() {
		return false, nil
	}
	next := &pdpb.Region{Id: id, Start: rep.GetStart(), End: rep.GetEnd(), Version: rep.GetVersion()}
	if cur != nil {
		next.ConfVer, next.StoreId, next.Peers, next.Learners = cur.GetConfVer(), cur.GetStoreId(), cur.GetPeers(), cur.GetLearners()
	} else {
		peers := slices.Concat(rep.GetVoters(), rep.GetLearners())
		slices.Sort(peers)
		next.ConfVer, next.StoreId, next.Peers, next.Learners = rep.GetConfVer(), store, slices.Compact(peers), rep.GetLearners()
	}
	key := regionKey(next.GetStart())
	old, atRev, err := d.regionAt(ctx, next.GetStart())
	if err != nil {
		return false, err
	}
	if old != nil && old.GetId() != id && old.GetVersion() >= next.GetVersion() {
		return false, nil // a newer region starts there (the report is stale)
	}
	rec, err := proto.Marshal(next)
	if err != nil {
		return false, err
	}
	cmps := []clientv3.Cmp{guard, clientv3.Compare(clientv3.ModRevision(key), "=", atRev)}
	ops := []clientv3.Op{clientv3.OpPut(key, string(rec)), clientv3.OpPut(regionIDKey(id), string(next.GetStart()))}
	if cur != nil && curKey != key {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(curKey), "=", curRev))
		ops = append(ops, clientv3.OpDelete(curKey))
	}
	txn, err := d.commit(ctx, cmps, ops...)
	if err != nil {
		return false, fmt.Errorf("pd: region %d: update range: %w", id, err)
	}
	if !txn.Succeeded {
		return true, d.checkGuard(ctx, guard)
	}
	return false, nil
}

// recordByID returns region id's record, its etcd key and that key's
// mod revision; a nil record when there is none. The record may be the
// cache's own: not to be modified.
func (d *directory) recordByID(ctx context.Context, id uint64) (*pdpb.Region, string, int64, error) {
	if c := d.cache.Load(); c != nil {
		r, key, rev := c.record(id)
		return r, key, rev, nil
	}
	resp, err := d.cli.Get(ctx, regionIDKey(id))
	if err != nil {
		return nil, "", 0, fmt.Errorf("pd: get region %d: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, "", 0, nil
	}
	key := regionKey(resp.Kvs[0].Value)
	rr, err := d.cli.Get(ctx, key)
	if err != nil {
		return nil, "", 0, fmt.Errorf("pd: get region %d: %w", id, err)
	}
	if len(rr.Kvs) == 0 {
		return nil, "", 0, nil
	}
	r := &pdpb.Region{}
	if err := proto.Unmarshal(rr.Kvs[0].Value, r); err != nil {
		return nil, "", 0, fmt.Errorf("pd: region %d: %w", id, err)
	}
	if r.GetId() != id {
		return nil, "", 0, nil
	}
	return r, key, rr.Kvs[0].ModRevision, nil
}

// regionAt returns the record at start key start and its key's mod
// revision (0 and nil: none). The record may be the cache's own: not to
// be modified.
func (d *directory) regionAt(ctx context.Context, start []byte) (*pdpb.Region, int64, error) {
	if c := d.cache.Load(); c != nil {
		r, rev := c.at(start)
		return r, rev, nil
	}
	key := regionKey(start)
	at, err := d.cli.Get(ctx, key)
	if err != nil {
		return nil, 0, fmt.Errorf("pd: read region %q: %w", key, err)
	}
	if len(at.Kvs) == 0 {
		return nil, 0, nil
	}
	old := &pdpb.Region{}
	if err := proto.Unmarshal(at.Kvs[0].Value, old); err != nil {
		return nil, 0, fmt.Errorf("pd: region %q: %w", key, err)
	}
	return old, at.Kvs[0].ModRevision, nil
}
