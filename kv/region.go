package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// Region reasons, as RegionError.Reason.
const (
	reasonNotFound      = "not found"
	reasonEpochNotMatch = "epoch not match"
	reasonKeyNotInRange = "key not in region"
)

// region is the store's state of one region it serves.
type region struct {
	info RegionInfo // immutable; a split replaces the region
	// maxReadTS is the largest timestamp a read on the region used
	// (excluding MaxTS). A 1PC commit timestamp is calculated above it so
	// that no read that has happened can miss the commit.
	maxReadTS atomic.Uint64
	// gc tells the garbage collector whether the region can hold new
	// garbage since its last pass (gc.go).
	gc regionGC
}

// observe raises maxReadTS to ts, unless ts is MaxTS (not issued by the
// oracle, so it must not push calculated commit timestamps).
func (r *region) observe(ts uint64) {
	if ts == MaxTS {
		return
	}
	for {
		cur := r.maxReadTS.Load()
		if ts <= cur || r.maxReadTS.CompareAndSwap(cur, ts) {
			return
		}
	}
}

// regionMap is the set of regions the store serves, kept in the meta space.
type regionMap struct {
	// mu is read-held while a command checks its RegionCtx and records its
	// read timestamp, and write-held by a split, so that a read's
	// max_read_ts is never recorded on a region after the split copied it.
	mu     sync.RWMutex
	byID   map[uint64]*region
	sorted []*region // by start key
	nextID uint64
}

// loadRegions reads the region descriptors from the meta space, creating one
// region over the whole key space when there are none.
func loadRegions(ctx context.Context, db *pebble.DB, ap applier) (*regionMap, error) {
	m := &regionMap{byID: map[uint64]*region{}, nextID: 1}
	prefix := keyspace.RegionKeyPrefix()
	iter, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: keyspace.PrefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("load regions: %w", err)
	}
	for ok := iter.First(); ok; ok = iter.Next() {
		id, err := keyspace.DecodeRegionKey(iter.Key())
		if err == nil {
			var info RegionInfo
			info, err = decodeRegionInfo(iter.Value())
			if err == nil && info.ID != id {
				err = fmt.Errorf("descriptor under id %d names region %d", id, info.ID)
			}
			if err == nil {
				m.add(info)
			}
		}
		if err != nil {
			_ = iter.Close()
			return nil, fmt.Errorf("load regions: %w", err)
		}
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("load regions: %w", err)
	}
	if len(m.sorted) == 0 {
		first := RegionInfo{ID: m.nextID, Epoch: RegionEpoch{ConfVer: 1, Version: 1}}
		var wb writeBatch
		wb.put(keyspace.RegionKey(first.ID), encodeRegionInfo(first))
		if err := ap.apply(ctx, &wb); err != nil {
			return nil, fmt.Errorf("create first region: %w", err)
		}
		m.add(first)
	}
	return m, nil
}

// add inserts info (at load or split) and keeps the map's indexes.
func (m *regionMap) add(info RegionInfo) *region {
	r := &region{info: info}
	m.byID[info.ID] = r
	i := sort.Search(len(m.sorted), func(i int) bool { return bytes.Compare(m.sorted[i].info.Start, info.Start) >= 0 })
	if i < len(m.sorted) && bytes.Equal(m.sorted[i].info.Start, info.Start) {
		m.sorted[i] = r
	} else {
		m.sorted = append(m.sorted, nil)
		copy(m.sorted[i+1:], m.sorted[i:])
		m.sorted[i] = r
	}
	if info.ID >= m.nextID {
		m.nextID = info.ID + 1
	}
	return r
}

// locate returns the region holding key.
func (m *regionMap) locate(key []byte) (RegionInfo, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	i := sort.Search(len(m.sorted), func(i int) bool { return bytes.Compare(m.sorted[i].info.Start, key) > 0 })
	if i == 0 || !m.sorted[i-1].info.Contains(key) {
		return RegionInfo{}, fmt.Errorf("locate key %q: no region holds it", key)
	}
	return cloneRegionInfo(m.sorted[i-1].info), nil
}

// all returns every region, by start key.
func (m *regionMap) all() []RegionInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]RegionInfo, len(m.sorted))
	for i, r := range m.sorted {
		out[i] = cloneRegionInfo(r.info)
	}
	return out
}

// check returns the region rc names if the store serves it at rc's epoch
// and every key lies in it, else a *RegionError. When readTS is non-zero it
// is recorded as a read on the region, atomically with the check.
func (m *regionMap) check(rc RegionCtx, readTS uint64, keys ...[]byte) (*region, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.byID[rc.RegionID]
	if !ok {
		return nil, &RegionError{RegionID: rc.RegionID, Reason: reasonNotFound}
	}
	if r.info.Epoch != rc.Epoch {
		cur := cloneRegionInfo(r.info)
		return nil, &RegionError{RegionID: rc.RegionID, Reason: reasonEpochNotMatch, Current: &cur}
	}
	for _, k := range keys {
		if !r.info.Contains(k) {
			cur := cloneRegionInfo(r.info)
			return nil, &RegionError{RegionID: rc.RegionID, Reason: fmt.Sprintf("%s: %q", reasonKeyNotInRange, k), Current: &cur}
		}
	}
	if readTS != 0 {
		r.observe(readTS)
	}
	return r, nil
}

// observeAll raises every region's max_read_ts to ts.
func (m *regionMap) observeAll(ts uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, r := range m.sorted {
		r.observe(ts)
	}
}

// split cuts the region holding splitKey in two at splitKey. The left half
// keeps the region's id, the right half gets a new one; both get the next
// epoch version and inherit max_read_ts.
func (m *regionMap) split(ctx context.Context, ap applier, splitKey []byte) (left, right RegionInfo, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parent *region
	for _, r := range m.sorted {
		if r.info.Contains(splitKey) {
			parent = r
			break
		}
	}
	if parent == nil {
		return left, right, fmt.Errorf("split at %q: no region holds the key", splitKey)
	}
	if bytes.Equal(parent.info.Start, splitKey) {
		return left, right, fmt.Errorf("split at %q: key is already the start of region %d", splitKey, parent.info.ID)
	}
	epoch := RegionEpoch{ConfVer: parent.info.Epoch.ConfVer, Version: parent.info.Epoch.Version + 1}
	key := append([]byte{}, splitKey...)
	left = RegionInfo{ID: parent.info.ID, Start: parent.info.Start, End: key, Epoch: epoch}
	right = RegionInfo{ID: m.nextID, Start: key, End: parent.info.End, Epoch: epoch}
	var wb writeBatch
	wb.put(keyspace.RegionKey(left.ID), encodeRegionInfo(left))
	wb.put(keyspace.RegionKey(right.ID), encodeRegionInfo(right))
	if err := ap.apply(ctx, &wb); err != nil {
		return RegionInfo{}, RegionInfo{}, fmt.Errorf("split region %d at %q: %w", parent.info.ID, splitKey, err)
	}
	maxRead := parent.maxReadTS.Load()
	m.add(left).maxReadTS.Store(maxRead)
	m.add(right).maxReadTS.Store(maxRead)
	return cloneRegionInfo(left), cloneRegionInfo(right), nil
}

// cloneRegionInfo returns a copy that shares no memory with the map.
func cloneRegionInfo(r RegionInfo) RegionInfo {
	r.Start = append([]byte(nil), r.Start...)
	r.End = append([]byte(nil), r.End...)
	return r
}

// Region descriptor encoding, in the meta space:
//
//	version(1)=1 | uvarint id | uvarint len start | start | uvarint len end | end
//	             | uvarint conf_ver | uvarint version
const regionInfoFormat = 1

// encodeRegionInfo encodes a region descriptor. Addr is not stored: it is
// routing information, not the store's.
func encodeRegionInfo(r RegionInfo) []byte {
	b := []byte{regionInfoFormat}
	b = binary.AppendUvarint(b, r.ID)
	b = binary.AppendUvarint(b, uint64(len(r.Start)))
	b = append(b, r.Start...)
	b = binary.AppendUvarint(b, uint64(len(r.End)))
	b = append(b, r.End...)
	b = binary.AppendUvarint(b, r.Epoch.ConfVer)
	return binary.AppendUvarint(b, r.Epoch.Version)
}

// errBadRegionInfo is wrapped by region descriptor decoding errors.
var errBadRegionInfo = errors.New("corrupt region descriptor")

// decodeRegionInfo decodes a region descriptor.
func decodeRegionInfo(b []byte) (RegionInfo, error) {
	if len(b) == 0 || b[0] != regionInfoFormat {
		return RegionInfo{}, fmt.Errorf("%w: unknown format", errBadRegionInfo)
	}
	d := regionDecoder{b: b[1:]}
	r := RegionInfo{ID: d.uvarint(), Start: d.bytes(), End: d.bytes()}
	r.Epoch.ConfVer = d.uvarint()
	r.Epoch.Version = d.uvarint()
	switch {
	case d.bad:
		return RegionInfo{}, fmt.Errorf("%w: truncated", errBadRegionInfo)
	case len(d.b) != 0:
		return RegionInfo{}, fmt.Errorf("%w: %d trailing bytes", errBadRegionInfo, len(d.b))
	case r.ID == 0:
		return RegionInfo{}, fmt.Errorf("%w: region id 0", errBadRegionInfo)
	}
	return r, nil
}

// regionDecoder reads a descriptor's fields; after the first bad field it
// sets bad and returns zero values.
type regionDecoder struct {
	b   []byte
	bad bool
}

func (d *regionDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if d.bad || n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *regionDecoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}
