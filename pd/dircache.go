package pd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/pd/pdpb"
)

// The leader's copy of the directory, after PD's region and store cache
// (PD's basicCluster, loaded from etcd when a member becomes leader):
// every heartbeat reads the stores and regions (placement, balance,
// repair, the regions a store holds), and reading them from etcd cost
// a linearizable etcd read per region reported, and a read of the whole
// directory several times over, at each heartbeat, growing with the
// region count. The cache mirrors the etcd keys of the stores, the
// regions and the region-id index (directory.go) as they are:
//
//   - loaded in one read when a term begins (Server.lead), before the
//     member serves;
//   - written through: every change the directory commits (commit) is
//     applied to it at the transaction's revision, and a key's change
//     applies only over an older revision, so that two heartbeats'
//     changes landing in either order, or a deposed term's change that
//     committed before this term's load, leave what etcd holds;
//   - refreshed key by key from etcd when a conditional change fails on
//     a key it mirrors (a change of this member not applied yet, or a
//     cache that is wrong: it heals itself);
//   - dropped when the term ends, so that a member that leads again loads
//     anew (another leader may have written meanwhile).
//
// Only the leader writes these keys (each write is conditioned on its
// election key), so while a term lasts nothing but this member's own
// commits changes them. Records it returns from regions() are shared and
// never modified (a change replaces a record): callers must not modify
// them; the single-record reads return copies.
type dirCache struct {
	mu sync.RWMutex
	// base is the revision of the load: a change at or below it is in
	// the load already.
	base   int64
	stores map[uint64]*cachedStore
	// regions maps a region record's start key to its entry, deleted
	// ones included (rec nil), whose revision orders later changes;
	// sorted holds the live ones by start key.
	regions map[string]*cachedRegion
	sorted  []*cachedRegion
	// ids is the region-id index: region id to its record's start key.
	ids map[uint64]*cachedIndex
	// replicas and leaders count each store's replicas (the peers of the
	// live records) and the regions it leads, kept as records change
	// (tally): placement and leader balance read them at every
	// heartbeat, and counting them over every region each time cost a
	// heartbeat time in proportion to the cluster's regions.
	replicas, leaders map[uint64]int
	// sizes is each region's approximate size as its leader last
	// reported it (kept across records: a split's halves report
	// theirs), weights each store's replicas' weights (replicaWeight of
	// their regions' sizes), kept as records and sizes change: balance
	// by size reads them.
	sizes   map[uint64]uint64
	weights map[uint64]int64
	// replicaSizes and leaderSizes sum, per store, the sizes of the
	// regions it holds a replica of and of those it leads (GetStores).
	replicaSizes, leaderSizes map[uint64]int64
	// held and led index the live records by store: the regions with a
	// replica on each store and those each store leads, each region
	// counted once per record naming it (a split's records overlap for a
	// moment); learning counts the records of each region with learners
	// (a change under way). A heartbeat reads these instead of walking
	// every region (heartbeat.go).
	held, led map[uint64]map[uint64]int
	learning  map[uint64]int
	// storeRevs is, for each store, the revision of the last change of
	// a record with a replica on it (before or after the change), no
	// lower than base: the region list a heartbeat answered the store as
	// of a revision is still current while this is not above it.
	storeRevs map[uint64]int64
	// safePoint is the GC safe point (gc.go) and safePointRev its key's
	// revision (0: none yet): every store heartbeat answers it.
	safePoint    uint64
	safePointRev int64
}

type cachedStore struct {
	rec *pdpb.Store // nil: deleted
	rev int64
}

type cachedRegion struct {
	start string
	rec   *pdpb.Region // nil: deleted
	rev   int64
}

type cachedIndex struct {
	start   string
	deleted bool
	rev     int64
}

// loadCache reads the directory's keys in one etcd read and makes the
// cache of them the one reads use.
func (d *directory) loadCache(ctx context.Context) error {
	c, err := d.readCache(ctx)
	if err != nil {
		return err
	}
	d.cache.Store(c)
	return nil
}

// readCache reads the directory's keys in one etcd read into a cache.
func (d *directory) readCache(ctx context.Context) (*dirCache, error) {
	resp, err := d.cli.Get(ctx, keyPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("pd: load the directory: %w", err)
	}
	c := &dirCache{base: resp.Header.Revision, stores: map[uint64]*cachedStore{}, regions: map[string]*cachedRegion{}, ids: map[uint64]*cachedIndex{},
		replicas: map[uint64]int{}, leaders: map[uint64]int{}, sizes: map[uint64]uint64{}, weights: map[uint64]int64{},
		replicaSizes: map[uint64]int64{}, leaderSizes: map[uint64]int64{},
		held: map[uint64]map[uint64]int{}, led: map[uint64]map[uint64]int{}, learning: map[uint64]int{}, storeRevs: map[uint64]int64{}}
	for _, kv := range resp.Kvs {
		if err := c.apply(string(kv.Key), kv.Value, false, kv.ModRevision, true); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// view returns the leader's cache, or, outside a term (no cache), the
// directory read from etcd now, for the decisions that read many
// records at once. Its records are shared: not to be modified.
func (d *directory) view(ctx context.Context) (*dirCache, error) {
	if c := d.cache.Load(); c != nil {
		return c, nil
	}
	return d.readCache(ctx)
}

// noteSize records region id's approximate size in the cache, if any
// (balance by size).
func (d *directory) noteSize(id, size uint64) {
	if c := d.cache.Load(); c != nil {
		c.setSize(id, size)
	}
}

// dropCache stops reads using the cache (the term ended).
func (d *directory) dropCache() { d.cache.Store(nil) }

// commit runs a transaction on etcd and, if it succeeded, applies its
// changes to the cache; if it failed, refreshes the cache's copy of the
// keys it compared.
func (d *directory) commit(ctx context.Context, cmps []clientv3.Cmp, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	txn, err := d.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
	if err != nil {
		return nil, err
	}
	c := d.cache.Load()
	if c == nil {
		return txn, nil
	}
	if txn.Succeeded {
		// All of the transaction at once: a size recorded meanwhile
		// (setSize) sees the region's record before or after it.
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, op := range ops {
			if !op.IsPut() && !op.IsDelete() {
				continue
			}
			if err := c.applyLocked(string(op.KeyBytes()), op.ValueBytes(), op.IsDelete(), txn.Header.Revision, false); err != nil {
				return nil, err
			}
		}
		return txn, nil
	}
	for _, cm := range cmps {
		if key := string(cm.KeyBytes()); mirrored(key) {
			if err := d.refresh(ctx, c, key); err != nil {
				return nil, err
			}
		}
	}
	return txn, nil
}

// refresh reads key from etcd into c.
func (d *directory) refresh(ctx context.Context, c *dirCache, key string) error {
	resp, err := d.cli.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("pd: refresh %q: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return c.apply(key, nil, true, resp.Header.Revision, false)
	}
	return c.apply(key, resp.Kvs[0].Value, false, resp.Kvs[0].ModRevision, false)
}

// mirrored reports whether the cache mirrors etcd key key.
func mirrored(key string) bool {
	return strings.HasPrefix(key, keyStorePrefix) || strings.HasPrefix(key, keyRegionPrefix) || strings.HasPrefix(key, keyRegionByID) ||
		key == keyGCSafePoint
}

// apply takes a key's value (deleted: its deletion) at revision rev,
// unless the cache holds a change of the key at rev or later, or the
// load was at rev or later (loading: the load itself). Keys the cache
// does not mirror are ignored.
func (c *dirCache) apply(key string, value []byte, deleted bool, rev int64, loading bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applyLocked(key, value, deleted, rev, loading)
}

// applyLocked is apply with c.mu held.
func (c *dirCache) applyLocked(key string, value []byte, deleted bool, rev int64, loading bool) error {
	if !mirrored(key) {
		return nil
	}
	if !loading && rev <= c.base {
		return nil
	}
	switch {
	case key == keyGCSafePoint:
		if rev <= c.safePointRev {
			return nil
		}
		var sp uint64
		if !deleted {
			if len(value) != 8 {
				return fmt.Errorf("pd: GC safe point: corrupt value of %d bytes", len(value))
			}
			sp = binary.BigEndian.Uint64(value)
		}
		c.safePoint, c.safePointRev = sp, rev
	case strings.HasPrefix(key, keyStorePrefix):
		id, err := strconv.ParseUint(key[len(keyStorePrefix):], 16, 64)
		if err != nil {
			return fmt.Errorf("pd: store key %q: %w", key, err)
		}
		if e := c.stores[id]; e != nil && e.rev >= rev {
			return nil
		}
		var st *pdpb.Store
		if !deleted {
			st = &pdpb.Store{}
			if err := proto.Unmarshal(value, st); err != nil {
				return fmt.Errorf("pd: store %q: %w", key, err)
			}
		}
		c.stores[id] = &cachedStore{rec: st, rev: rev}
	case strings.HasPrefix(key, keyRegionByID):
		id, err := strconv.ParseUint(key[len(keyRegionByID):], 16, 64)
		if err != nil {
			return fmt.Errorf("pd: region index key %q: %w", key, err)
		}
		if e := c.ids[id]; e != nil && e.rev >= rev {
			return nil
		}
		c.ids[id] = &cachedIndex{start: string(value), deleted: deleted, rev: rev}
	default:
		start := key[len(keyRegionPrefix):]
		e := c.regions[start]
		if e != nil && e.rev >= rev {
			return nil
		}
		var r *pdpb.Region
		if !deleted {
			r = &pdpb.Region{}
			if err := proto.Unmarshal(value, r); err != nil {
				return fmt.Errorf("pd: region %q: %w", key, err)
			}
		}
		if e == nil {
			e = &cachedRegion{start: start}
			c.regions[start] = e
		}
		wasLive := e.rec != nil
		c.tally(e.rec, -1, rev)
		c.tally(r, 1, rev)
		e.rec, e.rev = r, rev
		i, found := c.search(start)
		switch {
		case r != nil && !wasLive && !found:
			c.sorted = slices.Insert(c.sorted, i, e)
		case r == nil && found:
			c.sorted = slices.Delete(c.sorted, i, i+1)
		}
	}
	return nil
}

// tally adds delta to the counts of r's replicas (its peers, or its
// leader's store when it lists none, as hasPeer counts them), delta
// times their weight to the stores' weights, and delta to its leader's
// leaderships, indexes r by store (held, led, learning) and marks its
// stores changed at rev; r nil counts nothing. c.mu held.
func (c *dirCache) tally(r *pdpb.Region, delta int, rev int64) {
	if r == nil {
		return
	}
	id := r.GetId()
	c.leaders[r.GetStoreId()] += delta
	index(c.led, r.GetStoreId(), id, delta)
	if len(r.GetLearners()) > 0 {
		if c.learning[id] += delta; c.learning[id] <= 0 {
			delete(c.learning, id)
		}
	}
	w, size := int64(delta)*replicaWeight(c.sizes[id]), int64(delta)*int64(min(c.sizes[id], 1<<62))
	c.leaderSizes[r.GetStoreId()] += size
	for _, p := range replicaStores(r) {
		c.replicas[p] += delta
		c.weights[p] += w
		c.replicaSizes[p] += size
		index(c.held, p, id, delta)
		c.storeRevs[p] = max(c.storeRevs[p], rev)
	}
}

// index adds delta to region id's count under store in m, dropping
// what falls to zero.
func index(m map[uint64]map[uint64]int, store, id uint64, delta int) {
	ids := m[store]
	if ids == nil {
		ids = map[uint64]int{}
		m[store] = ids
	}
	if ids[id] += delta; ids[id] <= 0 {
		delete(ids, id)
	}
}

// storeRevision is the revision of the last change of a record with a
// replica on store (at least the load's).
func (c *dirCache) storeRevision(store uint64) int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return max(c.base, c.storeRevs[store])
}

// ledBy returns the regions store leads by the records, sorted.
func (c *dirCache) ledBy(store uint64) []uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.led[store]))
}

// learners returns the regions whose record has learners, sorted.
func (c *dirCache) learners() []uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.learning))
}

// replicaStores returns the stores holding r's replicas: its peers, or
// its leader's store when it lists none (hasPeer).
func replicaStores(r *pdpb.Region) []uint64 {
	if len(r.GetPeers()) == 0 {
		return []uint64{r.GetStoreId()}
	}
	return r.GetPeers()
}

// minReplicaWeight is the least a replica weighs in balance by size,
// PD's size of an empty region (1 MiB): regions too small to tell apart
// by size balance by count.
const minReplicaWeight = 1 << 20

// replicaWeight is what a replica of a region of size bytes weighs in
// balance by size.
func replicaWeight(size uint64) int64 {
	return int64(min(max(size, minReplicaWeight), 1<<62))
}

// setSize records region id's approximate size as its leader reported
// it, moving the weight of its replicas.
func (c *dirCache) setSize(id, size uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.sizes[id]
	if ok && old == size {
		return
	}
	c.sizes[id] = size
	if ix := c.ids[id]; ix != nil && !ix.deleted {
		if e := c.regions[ix.start]; e != nil && e.rec.GetId() == id {
			d, ds := replicaWeight(size)-replicaWeight(old), int64(min(size, 1<<62))-int64(min(old, 1<<62))
			c.leaderSizes[e.rec.GetStoreId()] += ds
			for _, p := range replicaStores(e.rec) {
				c.weights[p] += d
				c.replicaSizes[p] += ds
			}
		}
	}
}

// size returns region id's weight per replica (replicaWeight of its
// last reported size).
func (c *dirCache) weight(id uint64) int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return replicaWeight(c.sizes[id])
}

// storeWeights returns a copy of each store's weight (stores with none
// may be missing).
func (c *dirCache) storeWeights() map[uint64]int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.weights)
}

// storeSizes returns, for each store, the sum of the sizes of the
// regions it holds a replica of and of those it leads (stores with none
// may be missing).
func (c *dirCache) storeSizes() (replicas, leaders map[uint64]int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.replicaSizes), maps.Clone(c.leaderSizes)
}

// counts returns copies of each store's replica and leadership counts
// (stores with none may be missing).
func (c *dirCache) counts() (replicas, leaders map[uint64]int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.replicas), maps.Clone(c.leaders)
}

// gcSafePoint returns the GC safe point and its key's revision.
func (c *dirCache) gcSafePoint() (uint64, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.safePoint, c.safePointRev
}

// search returns where start is (or would be) in c.sorted. c.mu held.
func (c *dirCache) search(start string) (int, bool) {
	i := sort.Search(len(c.sorted), func(i int) bool { return c.sorted[i].start >= start })
	return i, i < len(c.sorted) && c.sorted[i].start == start
}

// store returns a copy of store id's record, nil when there is none.
func (c *dirCache) store(id uint64) *pdpb.Store {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.stores[id]; e != nil && e.rec != nil {
		return proto.Clone(e.rec).(*pdpb.Store)
	}
	return nil
}

// storeList returns copies of every store's record, by id.
func (c *dirCache) storeList() []*pdpb.Store {
	c.mu.RLock()
	out := make([]*pdpb.Store, 0, len(c.stores))
	for _, e := range c.stores {
		if e.rec != nil {
			out = append(out, proto.Clone(e.rec).(*pdpb.Store))
		}
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *pdpb.Store) int { return cmp.Compare(a.GetId(), b.GetId()) })
	return out
}

// regionList returns every region's record (shared: not to be
// modified), by start key.
func (c *dirCache) regionList() []*pdpb.Region {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*pdpb.Region, len(c.sorted))
	for i, e := range c.sorted {
		out[i] = e.rec
	}
	return out
}

// regionOf returns a copy of the record with the greatest start at or
// below key, nil when there is none.
func (c *dirCache) regionOf(key []byte) *pdpb.Region {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i := sort.Search(len(c.sorted), func(i int) bool { return c.sorted[i].start > string(key) })
	if i == 0 {
		return nil
	}
	return proto.Clone(c.sorted[i-1].rec).(*pdpb.Region)
}

// record returns region id's record (shared), its etcd key and that
// key's revision, as recordByID does; a nil record when there is none.
func (c *dirCache) record(id uint64) (*pdpb.Region, string, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.ids[id]
	if ix == nil || ix.deleted {
		return nil, "", 0
	}
	e := c.regions[ix.start]
	if e == nil || e.rec == nil || e.rec.GetId() != id {
		return nil, "", 0
	}
	return e.rec, regionKey([]byte(ix.start)), e.rev
}

// at returns the record at start key start (shared) and its key's
// revision (0: no such key, as etcd's ModRevision of a missing key).
func (c *dirCache) at(start []byte) (*pdpb.Region, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.regions[string(start)]; e != nil && e.rec != nil {
		return e.rec, e.rev
	}
	return nil, 0
}

// regionsOn returns the regions with a replica on store (shared), by
// start key, and the revision they are as of (storeRevision): from the
// store's index, not a walk over every region.
func (c *dirCache) regionsOn(store uint64) ([]*pdpb.Region, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*pdpb.Region, 0, len(c.held[store]))
	for id := range c.held[store] {
		ix := c.ids[id]
		if ix == nil || ix.deleted {
			continue
		}
		if e := c.regions[ix.start]; e != nil && e.rec != nil && e.rec.GetId() == id && hasPeer(e.rec, store) {
			out = append(out, e.rec)
		}
	}
	slices.SortFunc(out, func(a, b *pdpb.Region) int { return bytes.Compare(a.GetStart(), b.GetStart()) })
	return out, max(c.base, c.storeRevs[store])
}
