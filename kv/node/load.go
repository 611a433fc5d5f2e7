package node

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/percdb/percdb/pd/pdpb"
)

// The load of each region as this node served it: the reads and writes of
// the commands its replica served as leader, counted as they are served
// and turned into rates once per heartbeat (roll), for the hot regions
// (metrics.go), the console's region list and the heartbeats to pd,
// which carry each led region's counts of the last interval (its
// RegionLoad), so that pd knows the whole cluster's load by region.
// Counts are per node: a region's load is on the store that led it at
// the time.

// regionLoad counts one region's commands served here since the node
// started. Written by the commands, read by roll.
type regionLoad struct {
	readKeys, readBytes, writeKeys, writeBytes atomic.Uint64
}

// loadSample is a regionLoad's counts at one moment.
type loadSample struct {
	readKeys, readBytes, writeKeys, writeBytes uint64
}

// sample returns l's counts now.
func (l *regionLoad) sample() loadSample {
	return loadSample{readKeys: l.readKeys.Load(), readBytes: l.readBytes.Load(), writeKeys: l.writeKeys.Load(), writeBytes: l.writeBytes.Load()}
}

// Rates are a region's reads and writes per second over the last
// heartbeat interval.
type Rates struct {
	ReadKeys   float64 `json:"read_keys_per_second"`
	ReadBytes  float64 `json:"read_bytes_per_second"`
	WriteKeys  float64 `json:"write_keys_per_second"`
	WriteBytes float64 `json:"write_bytes_per_second"`
}

// total is the rate of keys read and written, by which regions are hot.
func (r Rates) total() float64 { return r.ReadKeys + r.WriteKeys }

// loadTable is the node's regionLoads and their last rates.
type loadTable struct {
	mu    sync.RWMutex
	m     map[uint64]*regionLoad
	last  map[uint64]loadSample
	rates map[uint64]Rates
	at    time.Time
	// reported are the counts as of the last heartbeat's report, taken
	// at reportedAt (reportLoads).
	reported   map[uint64]loadSample
	reportedAt time.Time
}

// of returns region id's counters, made on first use. Every command
// served calls it: the common case takes the read lock only.
func (t *loadTable) of(id uint64) *regionLoad {
	t.mu.RLock()
	l := t.m[id]
	t.mu.RUnlock()
	if l != nil {
		return l
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[uint64]*regionLoad{}
	}
	l = t.m[id]
	if l == nil {
		l = &regionLoad{}
		t.m[id] = l
	}
	return l
}

// read counts keys read of bytes from region id.
func (t *loadTable) read(id uint64, keys, bytes int) {
	l := t.of(id)
	l.readKeys.Add(uint64(keys))
	l.readBytes.Add(uint64(bytes))
}

// write counts keys written of bytes to region id.
func (t *loadTable) write(id uint64, keys, bytes int) {
	l := t.of(id)
	l.writeKeys.Add(uint64(keys))
	l.writeBytes.Add(uint64(bytes))
}

// roll turns the counts since the last roll into rates, and forgets the
// regions not in held (no longer on this node).
func (t *loadTable) roll(now time.Time, held func(id uint64) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	secs := now.Sub(t.at).Seconds()
	first := t.at.IsZero()
	t.at = now
	last := t.last
	t.last = make(map[uint64]loadSample, len(t.m))
	t.rates = make(map[uint64]Rates, len(t.m))
	for id, l := range t.m {
		if !held(id) {
			delete(t.m, id)
			continue
		}
		cur := l.sample()
		t.last[id] = cur
		if first || secs <= 0 {
			continue
		}
		prev := last[id]
		t.rates[id] = Rates{
			ReadKeys: float64(cur.readKeys-prev.readKeys) / secs, ReadBytes: float64(cur.readBytes-prev.readBytes) / secs,
			WriteKeys: float64(cur.writeKeys-prev.writeKeys) / secs, WriteBytes: float64(cur.writeBytes-prev.writeBytes) / secs,
		}
	}
}

// totals returns region id's counts since the node started, and its
// rates over the last interval.
func (t *loadTable) get(id uint64) (loadSample, Rates) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s loadSample
	if l := t.m[id]; l != nil {
		s = l.sample()
	}
	return s, t.rates[id]
}

// reportLoads returns the counts of each region in ids since the
// previous call, over the time since (a heartbeat's RegionLoads: each
// heartbeat reports the time since the one before, so that pd's running
// totals count every interval once, whatever made the heartbeats come
// early, and with the interval's end, by which pd counts a heartbeat sent
// again once); none at the first call, which only starts the interval.
func (t *loadTable) reportLoads(now time.Time, ids []uint64) map[uint64]*pdpb.RegionLoad {
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, prevAt := t.reported, t.reportedAt
	t.reported, t.reportedAt = make(map[uint64]loadSample, len(t.m)), now
	for id, l := range t.m {
		t.reported[id] = l.sample()
	}
	if prevAt.IsZero() || !now.After(prevAt) {
		return nil
	}
	ms := uint64(now.Sub(prevAt).Milliseconds())
	out := make(map[uint64]*pdpb.RegionLoad, len(ids))
	for _, id := range ids {
		cur, p := t.reported[id], prev[id]
		if cur.readKeys < p.readKeys || cur.readBytes < p.readBytes || cur.writeKeys < p.writeKeys || cur.writeBytes < p.writeBytes {
			p = loadSample{} // the region's counts began again (it left and came back)
		}
		out[id] = &pdpb.RegionLoad{ReadKeys: cur.readKeys - p.readKeys, ReadBytes: cur.readBytes - p.readBytes,
			WrittenKeys: cur.writeKeys - p.writeKeys, WrittenBytes: cur.writeBytes - p.writeBytes, IntervalMs: ms,
			EndUnixMs: uint64(now.UnixMilli())}
	}
	return out
}
