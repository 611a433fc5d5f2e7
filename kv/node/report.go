package node

import (
	"sync"
	"time"

	"github.com/percdb/percdb/kv/raftstore"
	"github.com/percdb/percdb/pd/pdpb"
)

// What a heartbeat tells pd of the node's regions, after TiKV's region
// heartbeats (each region reports when it changed, and on a slow
// schedule besides): a region's report goes with a heartbeat only when
// something pd keeps of it changed since the report pd last acknowledged
// (the heartbeat's answer came back and did not name the region in
// resend): the store leading it or not, its raft configuration (conf_ver),
// its range (version), its approximate size by more than sizeReportStep
// or a sixteenth, or its load (a led region that served reads or writes
// in the interval, and once more with zeroes when it stopped). Such a
// heartbeat is partial (StoreHeartbeatRequest.partial); a full one,
// every region, is sent first (after the node started), when pd asks for
// it (it restarted, or another pd member took over: what it keeps in
// memory is gone) and every Config.FullReportInterval, so that pd heals
// from anything lost. A heartbeat that fails acknowledges nothing: its
// changes go with the next one.
//
// The answer's region list alike: the node sends the revision of the
// last list it took whole (pd's regions_revision; 0 until it has one,
// when it could not create a listed region yet (a split here is to), when
// a replica it serves was destroyed (the one pd added back is to be
// created from the list), and with each full report), and pd answers the
// list only when one of the store's regions changed since.
//
// A led region's approximate size is measured (kv.Store.ApproximateSize,
// from the table files' metadata) when its replica applied something
// since the last measure, its range changed, it was not led before, or
// the heartbeat is full: an idle region costs nothing.

// sizeReportStep is the least change of a region's approximate size that
// is reported before a full report (a sixteenth of the size when that
// is more): pd weighs a replica at least 1 MiB (balance by size), so
// changes well below that move nothing.
const sizeReportStep = 64 << 10

// DefaultFullReportInterval is Config.FullReportInterval's default:
// TiKV's region heartbeat interval (pd-heartbeat-tick-interval).
const DefaultFullReportInterval = time.Minute

// regionState is one replica's region as a heartbeat reads it.
type regionState struct {
	id      uint64
	leading bool
	conf    raftstore.Conf
	desc    raftstore.Descriptor
	// applied is the replica's applied bytes (a measure of writes since
	// the last size measure).
	applied uint64
}

// reported is what a region's report said, as pd acknowledged it.
type reported struct {
	leading          bool
	confVer, version uint64
	size             uint64
	// loaded: the report's load was not zero.
	loaded bool
}

// measured is a led region's approximate size and when it was measured
// (the replica's applied bytes and the region's version then).
type measured struct {
	size, applied, version uint64
}

// reporter keeps what pd acknowledged of the node's reports.
type reporter struct {
	mu    sync.Mutex
	acked map[uint64]reported
	sizes map[uint64]measured
	// fullAt is when pd acknowledged the last full report (zero: none
	// yet), wantFull that pd asked for one.
	fullAt   time.Time
	wantFull bool
	// regionsRev is the revision of the last region list the node took
	// whole (0: none).
	regionsRev uint64
}

// outgoing is a heartbeat's reports with what each says, to acknowledge
// once pd answered.
type outgoing struct {
	req  *pdpb.StoreHeartbeatRequest
	full bool
	says map[uint64]reported
}

// fullDue reports whether the next heartbeat is to be full, at now.
func (r *reporter) fullDue(now time.Time, every time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fullAt.IsZero() || r.wantFull || now.Sub(r.fullAt) >= every
}

// build makes a heartbeat's reports of the regions in states: every one
// (full) or those changed since acknowledged, with each led region's size
// (measure measures it; called only when it may have changed) and load
// (loads: the interval's, by region).
func (r *reporter) build(states []regionState, full bool, loads map[uint64]*pdpb.RegionLoad,
	measure func(raftstore.Descriptor) (uint64, error)) *outgoing {
	out := &outgoing{req: &pdpb.StoreHeartbeatRequest{Partial: !full}, full: full, says: map[uint64]reported{}}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.acked == nil {
		r.acked, r.sizes = map[uint64]reported{}, map[uint64]measured{}
	}
	out.req.RegionsRevision = r.regionsRev
	for _, st := range states {
		if st.conf.Ver == 0 {
			continue // uninitialized: nothing to report yet
		}
		last, known := r.acked[st.id]
		cur := reported{leading: st.leading, confVer: st.conf.Ver, version: st.desc.Version}
		var load *pdpb.RegionLoad
		if st.leading {
			cur.size = r.sizeLocked(st, full || !last.leading, measure)
			load = loads[st.id]
			cur.loaded = load.GetReadKeys()+load.GetReadBytes()+load.GetWrittenKeys()+load.GetWrittenBytes() > 0
		}
		if !full && known && !last.differs(cur) {
			continue
		}
		rep := &pdpb.RegionReport{RegionId: st.id, ConfVer: st.conf.Ver, Voters: st.conf.Voters, Learners: st.conf.Learners,
			Start: st.desc.Start, End: st.desc.End, Version: st.desc.Version}
		if st.leading {
			rep.ApproximateSize, rep.Load = cur.size, load
			out.req.Leading = append(out.req.Leading, st.id)
		}
		out.req.Reports = append(out.req.Reports, rep)
		out.says[st.id] = cur
	}
	if full {
		// Forget the regions no longer here.
		here := make(map[uint64]bool, len(states))
		for _, st := range states {
			here[st.id] = true
		}
		for id := range r.acked {
			if !here[id] {
				delete(r.acked, id)
			}
		}
		for id := range r.sizes {
			if !here[id] {
				delete(r.sizes, id)
			}
		}
	}
	return out
}

// sizeLocked returns led region st's approximate size: measured again
// when fresh is set, when never measured, or when its replica applied
// something or its range changed since; else the last measure. r.mu held.
func (r *reporter) sizeLocked(st regionState, fresh bool, measure func(raftstore.Descriptor) (uint64, error)) uint64 {
	m, ok := r.sizes[st.id]
	if ok && !fresh && m.applied == st.applied && m.version == st.desc.Version {
		return m.size
	}
	size, err := measure(st.desc)
	if err != nil {
		return m.size
	}
	r.sizes[st.id] = measured{size: size, applied: st.applied, version: st.desc.Version}
	return size
}

// differs reports whether a report saying cur is due after one saying
// last was acknowledged.
func (last reported) differs(cur reported) bool {
	if last.leading != cur.leading || last.confVer != cur.confVer || last.version != cur.version || last.loaded || cur.loaded {
		return true
	}
	step := max(uint64(sizeReportStep), last.size/16)
	return cur.size >= last.size+step || cur.size+step <= last.size
}

// ack takes pd's answer to o: every report not named in resend is
// acknowledged, a full report's time kept, and pd's wish for a full
// report noted.
func (r *reporter) ack(o *outgoing, resp *pdpb.StoreHeartbeatResponse, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	again := make(map[uint64]bool, len(resp.GetResend()))
	for _, id := range resp.GetResend() {
		again[id] = true
	}
	for id, says := range o.says {
		if again[id] {
			delete(r.acked, id)
			continue
		}
		r.acked[id] = says
	}
	if o.full {
		r.fullAt, r.wantFull = now, false
	}
	if resp.GetFullReportWanted() {
		r.wantFull = true
	}
}

// tookRegions records the revision of the region list the node took
// whole (0: it could not take all of it: ask for it again).
func (r *reporter) tookRegions(rev uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.regionsRev = rev
}
