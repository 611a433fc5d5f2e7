package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// This file is MVCC garbage collection on the store side: the commands a
// GC worker (package gcworker) sends through GCClient, region by region,
// so that it works the same whether the regions live in this process or on
// other KV nodes. The protocol is in doc.go ("Garbage collection").

// GCClient is the part of the contract the garbage collector needs on top
// of Client. It is an interface of its own so that the Client of the
// transaction layer stays as it is; the in-process client serves both.
type GCClient interface {
	Client
	// ScanLock returns the locks of the region whose start_ts is at most
	// req.MaxTS, in key order, at most req.Limit of them, and the key to
	// continue from (nil when the region is done).
	ScanLock(ctx context.Context, req *ScanLockRequest) (*ScanLockResponse, error)
	// GC collects one bounded batch of a region's old versions at
	// req.SafePoint (see GCRequest) and says where to continue.
	GC(ctx context.Context, req *GCRequest) (*GCResponse, error)
	// UnsafeDestroyRange removes every lock, write and data record of the
	// user keys in [start, end) from the store, whichever regions hold
	// them, with range deletions, and compacts the range so that its
	// space returns to the file system. Unsafe: no version of those keys
	// survives, so it is only for ranges no transaction can read or
	// write any more (a dropped table whose DROP committed below the GC
	// safe point). In a cluster it is sent to every store.
	UnsafeDestroyRange(ctx context.Context, start, end []byte) (*DestroyRangeResponse, error)
}

// NewLocalGCClient returns the in-process client of s (NewLocalClient) as
// a GCClient.
func NewLocalGCClient(s *Store) GCClient { return localClient{s} }

// ScanLockRequest asks for the locks of a region older than MaxTS.
type ScanLockRequest struct {
	Region RegionCtx
	// Start is where to begin (empty: the region's start).
	Start []byte
	MaxTS uint64
	// Limit bounds the locks returned; 0 means DefaultGCBatchKeys.
	Limit int
	// Within, when set, confines the scan to the part of the region in
	// it: a KV node of a cluster serves its raft regions over a store
	// that is one region (kv/node).
	Within *KeyRange
}

// ScanLockResponse is a page of ScanLock.
type ScanLockResponse struct {
	Locks []LockInfo
	// Next is the key to send as Start for the next page; nil when the
	// region has no more.
	Next []byte
}

// GCRequest collects garbage in a region at SafePoint: for each user key
// from Start, it keeps every version committed above SafePoint and the
// newest Put at or below it (a reader at any ts >= SafePoint reads the
// same value as before), and deletes the older versions, every Lock and
// Rollback record at or below SafePoint, a Delete at or below it that is
// the newest there (nothing older is left for it to hide), and the data
// records of the Puts deleted. A request examines at most Limit keys and
// writes one batch of bounded size under the latches of the keys it
// changes, so it never holds latches for long; GCResponse.Next says where
// to continue. The store records SafePoint first (never lowering it):
// from then on it refuses reads below it and prewrites at or below it with
// *GCTooOldError, since the versions they would need may be gone.
type GCRequest struct {
	Region RegionCtx
	// Start is where to continue (empty: the region's start, which begins
	// a new pass over the region).
	Start     []byte
	SafePoint uint64
	// Limit bounds the keys examined; 0 means DefaultGCBatchKeys.
	Limit int
	// Within, when set, confines the pass to the part of the region in
	// it (as ScanLockRequest.Within). Such a pass is never skipped as
	// quiet, and does not count as a pass over the region.
	Within *KeyRange
}

// GCResponse reports one GC batch.
type GCResponse struct {
	// Next is the key to send as Start to continue; nil when the region
	// is done.
	Next []byte
	// Skipped: the region was not scanned, since nothing was written to
	// it since a pass that left no version above its safe point (so no
	// version can have become garbage since: tikv#9216's quiet regions).
	Skipped bool
	// KeysScanned counts the user keys examined, VersionsDeleted the
	// write records deleted, BytesDeleted the bytes of the keys and
	// values of every record deleted (write and data).
	KeysScanned, VersionsDeleted, BytesDeleted uint64
}

// DestroyRangeResponse reports an UnsafeDestroyRange.
type DestroyRangeResponse struct {
	// BytesBefore and BytesAfter are Pebble's estimate of the disk space
	// of the range before the deletion and after its compaction.
	BytesBefore, BytesAfter uint64
}

// GCTooOldError: a read at ReadTS below the store's GC safe point, or a
// prewrite at a start_ts at or below it. The versions it needs may have
// been collected, so it must not be served (TiDB's error 9006, "GC life
// time is shorter than transaction duration").
type GCTooOldError struct {
	TS        uint64
	SafePoint uint64
}

func (e *GCTooOldError) Error() string {
	return fmt.Sprintf("timestamp %d is too old for the GC safe point %d", e.TS, e.SafePoint)
}

// DefaultGCBatchKeys is the number of keys one GC or ScanLock request
// examines when its Limit is 0: about a millisecond of work.
const DefaultGCBatchKeys = 256

// maxGCBatchDeletes bounds the records one GC batch deletes, so that a key
// with millions of versions is collected in many batches (each resuming at
// that key) rather than one huge one.
const maxGCBatchDeletes = 4096

// regionGC is what the store remembers, in memory only, of a region's
// garbage: whether anything was written to it since the last complete
// pass, and whether that pass met versions above its safe point (which
// become garbage once the safe point moves past them). A region with
// neither is quiet and is not scanned again (after a restart every region
// is scanned once).
type regionGC struct {
	// writes counts the batches of commands that may leave garbage
	// (everything but GC's own).
	writes atomic.Uint64

	mu sync.Mutex
	// pass* describe the pass under way: the writes count when it began
	// and whether it met a version above its safe point.
	passWrites  uint64
	passPending bool
	passOn      bool
	// done* describe the last complete pass.
	done        bool
	doneWrites  uint64
	donePending bool
}

// wrote records a batch applied to the region.
func (g *regionGC) wrote() { g.writes.Add(1) }

// quiet reports whether a new pass would find nothing to collect.
func (g *regionGC) quiet() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done && !g.donePending && g.doneWrites == g.writes.Load()
}

// begin starts a pass.
func (g *regionGC) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.passOn, g.passWrites, g.passPending = true, g.writes.Load(), false
}

// progress records a batch of the pass; finished says it was the last.
func (g *regionGC) progress(pending, finished bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.passOn {
		// The pass began before a restart of the worker's view (or on a
		// region this store has since split): it cannot vouch for the
		// region.
		return
	}
	g.passPending = g.passPending || pending
	if finished {
		g.done, g.doneWrites, g.donePending, g.passOn = true, g.passWrites, g.passPending, false
	}
}

// GCSafePoint returns the highest GC safe point the store collected at.
func (s *Store) GCSafePoint() uint64 { return s.gcSafePoint.Load() }

// loadGCSafePoint reads the safe point kept in the meta space.
func (s *Store) loadGCSafePoint() error {
	v, closer, err := s.db.Get(keyspace.GCSafePointKey())
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load GC safe point: %w", err)
	}
	ts, err := keyspace.DecodeTS(v)
	_ = closer.Close()
	if err != nil {
		return fmt.Errorf("load GC safe point: %w", err)
	}
	s.gcSafePoint.Store(ts)
	return nil
}

// raiseGCSafePoint records sp as the store's safe point, durably, unless
// it is not above the one recorded. Callers hold s.enter.
func (s *Store) raiseGCSafePoint(ctx context.Context, sp uint64) error {
	for {
		cur := s.gcSafePoint.Load()
		if sp <= cur {
			return nil
		}
		// Written before it is published: a safe point in force is never
		// lost in a crash, so reads refused before one stay refused after.
		var wb writeBatch
		wb.collects = true
		wb.put(keyspace.GCSafePointKey(), keyspace.EncodeTS(sp))
		if err := s.write(ctx, &wb); err != nil {
			return fmt.Errorf("record GC safe point %d: %w", sp, err)
		}
		if s.gcSafePoint.CompareAndSwap(cur, sp) {
			return nil
		}
		// A concurrent raise won; write again if ours is still higher.
	}
}

// AdvanceGCSafePoint raises the store's GC safe point to sp, durably, if
// it is higher, and returns the safe point in force. A single node's
// garbage collector keeps its safe point here (gcworker.LocalSafePoint):
// it is written to the meta space, not to a region, so it does not make a
// quiet region look written.
func (s *Store) AdvanceGCSafePoint(ctx context.Context, sp uint64) (uint64, error) {
	if sp == MaxTS {
		return 0, fmt.Errorf("advance GC safe point: invalid safe point %d", sp)
	}
	if err := s.enter(); err != nil {
		return 0, fmt.Errorf("advance GC safe point: %w", err)
	}
	defer s.exit()
	if err := s.raiseGCSafePoint(ctx, sp); err != nil {
		return 0, err
	}
	return s.gcSafePoint.Load(), nil
}

// checkReadTS refuses a read at ts below the GC safe point. Reads check
// after reading: GC raises the safe point before it deletes anything, so a
// read that may have missed a collected version sees the raised point.
func (s *Store) checkReadTS(ts uint64) error {
	if sp := s.gcSafePoint.Load(); ts != MaxTS && ts < sp {
		return &GCTooOldError{TS: ts, SafePoint: sp}
	}
	return nil
}

// checkStartTS refuses a prewrite or pessimistic lock of a transaction
// started at or below the GC safe point: the Rollback record that would
// stop a late prewrite of a rolled-back transaction may have been
// collected.
func (s *Store) checkStartTS(startTS uint64) error {
	if sp := s.gcSafePoint.Load(); startTS <= sp {
		return &GCTooOldError{TS: startTS, SafePoint: sp}
	}
	return nil
}

// gcPage checks the region of a ScanLock or GC request and returns it,
// where the page starts (start, or where the region's part within starts)
// and ends (nil: unbounded), and how many keys it examines. A nil region
// means start is past that part: nothing to do.
func (s *Store) gcPage(rc RegionCtx, start []byte, within *KeyRange, limit int) (*region, []byte, []byte, int, error) {
	reg, err := s.regions.check(rc, 0)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	lo, end := confine(reg.info, within)
	if bytes.Compare(start, lo) < 0 {
		start = lo
	}
	if !reg.info.Contains(start) || (len(end) != 0 && bytes.Compare(start, end) >= 0) {
		return nil, nil, nil, 0, nil
	}
	if limit <= 0 {
		limit = DefaultGCBatchKeys
	}
	return reg, start, end, limit, nil
}

// confine returns the part of region r's range in within (nil: all of
// it); an empty end is unbounded.
func confine(r RegionInfo, within *KeyRange) (start, end []byte) {
	start, end = r.Start, r.End
	if within != nil {
		if bytes.Compare(within.Start, start) > 0 {
			start = within.Start
		}
		if len(within.End) != 0 && (len(end) == 0 || bytes.Compare(within.End, end) < 0) {
			end = within.End
		}
	}
	if len(end) == 0 {
		end = nil
	}
	return start, end
}

// ScanLock returns a page of the region's locks with start_ts <= MaxTS.
func (s *Store) ScanLock(ctx context.Context, req *ScanLockRequest) (*ScanLockResponse, error) {
	what := fmt.Sprintf("scan locks up to %d", req.MaxTS)
	reg, start, end, limit, err := s.gcPage(req.Region, req.Start, req.Within, req.Limit)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		return &ScanLockResponse{}, nil
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer s.exit()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	resp := &ScanLockResponse{}
	r := newMVCCReader(s.db)
	defer r.close()
	err = r.locks(start, end, false, func(key []byte, l *txntypes.Lock) bool {
		if len(resp.Locks) == limit {
			resp.Next = key
			return false
		}
		if l.StartTS <= req.MaxTS {
			resp.Locks = append(resp.Locks, lockInfo(key, l))
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return resp, nil
}

// gcDeletion is one record a GC batch deletes.
type gcDeletion struct {
	key []byte // user key, for the latch
	raw []byte // store key
}

// GC collects one batch of the region's garbage (see GCRequest).
func (s *Store) GC(ctx context.Context, req *GCRequest) (*GCResponse, error) {
	what := fmt.Sprintf("gc at safe point %d", req.SafePoint)
	if req.SafePoint == 0 || req.SafePoint == MaxTS {
		return nil, fmt.Errorf("%s: invalid safe point", what)
	}
	reg, start, end, limit, err := s.gcPage(req.Region, req.Start, req.Within, req.Limit)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		return &GCResponse{}, nil
	}
	whole := req.Within == nil
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := s.raiseGCSafePoint(ctx, req.SafePoint); err != nil {
		s.exit()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	newPass := bytes.Equal(start, reg.info.Start) && whole
	if newPass {
		if reg.gc.quiet() {
			s.exit()
			return &GCResponse{Skipped: true}, nil
		}
		reg.gc.begin()
	}
	// The safe point in force may be above the request's (another
	// worker's, or one recorded before a restart): collecting at the
	// request's is always safe, as it is lower.
	resp := &GCResponse{}
	dels, pending, err := s.gcScan(start, end, req.SafePoint, limit, resp)
	s.exit()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(dels) > 0 {
		keys := make([][]byte, 0, len(dels))
		for i, d := range dels {
			if i == 0 || !bytes.Equal(d.key, dels[i-1].key) {
				keys = append(keys, d.key)
			}
		}
		// Under the latches of the keys, so that the batch is ordered
		// with the commands on them; nothing GC deletes can be written
		// again (every commit from now on is above the safe point), so
		// the decisions made without the latches stay right.
		err := s.mutate(ctx, req.Region, what, keys, func(_ *mvccReader, wb *writeBatch) error {
			wb.collects = true
			for _, d := range dels {
				wb.del(d.raw)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if whole {
		reg.gc.progress(pending, resp.Next == nil)
	}
	return resp, nil
}

// gcScan walks the write space from start (to end, empty: unbounded) and
// returns what a batch deletes: the garbage of at most limit keys and at
// most maxGCBatchDeletes records. pending says a version above sp was met.
// It fills resp's counters and Next.
func (s *Store) gcScan(start, end []byte, sp uint64, limit int, resp *GCResponse) (dels []gcDeletion, pending bool, err error) {
	upper := keyspace.SpaceEnd(keyspace.Write)
	if len(end) != 0 {
		upper = keyspace.WritePrefix(end)
	}
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: keyspace.WritePrefix(start), UpperBound: upper})
	if err != nil {
		return nil, false, fmt.Errorf("open write-space iterator: %w", err)
	}
	defer iter.Close()
	r := newMVCCReader(s.db)
	defer r.close()
	var (
		cur      []byte // the user key being examined
		keepSeen bool   // cur's newest Put or Delete at or below sp was met
		// held is the deletion of cur's newest Delete at or below sp,
		// heldBytes its size: it goes into the batch only with the last
		// of cur's older records. A batch cut inside the key leaves it,
		// so that the next batch, resuming at the key, finds the Delete
		// again as the record that decides it; had it gone first, the
		// next batch would take the newest Put below it for the key's
		// value and keep it, and the deleted row would come back.
		held      *gcDeletion
		heldBytes uint64
	)
	release := func() {
		if held != nil {
			dels = append(dels, *held)
			resp.VersionsDeleted++
			resp.BytesDeleted += heldBytes
			held = nil
		}
	}
	for ok := iter.First(); ok; ok = iter.Next() {
		key, ts, err := keyspace.DecodeWriteKey(iter.Key())
		if err != nil {
			return nil, false, err
		}
		if cur == nil || !bytes.Equal(key, cur) {
			release() // cur's records are all seen
			if int(resp.KeysScanned) == limit || len(dels) >= maxGCBatchDeletes {
				resp.Next = key
				return dels, pending, nil
			}
			cur, keepSeen = key, false
			resp.KeysScanned++
		} else if len(dels) >= maxGCBatchDeletes {
			// Cut inside a key: the next batch resumes at it, finds its
			// kept version (or the Delete held back) again and goes on
			// below it.
			resp.Next = key
			return dels, pending, nil
		}
		if ts > sp {
			pending = true
			continue
		}
		w, err := txntypes.DecodeWrite(iter.Value())
		if err != nil {
			return nil, false, fmt.Errorf("read write record of %q at %d: %w", key, ts, err)
		}
		keep, decides := false, false
		if !keepSeen && (w.Type == txntypes.WritePut || w.Type == txntypes.WriteDelete) {
			keepSeen, decides = true, true
			keep = w.Type == txntypes.WritePut
		}
		if keep {
			continue
		}
		raw := append([]byte(nil), iter.Key()...)
		if decides {
			// The newest Delete at or below sp: held back (see held).
			held, heldBytes = &gcDeletion{key: cur, raw: raw}, uint64(len(raw)+len(iter.Value()))
			continue
		}
		dels = append(dels, gcDeletion{key: cur, raw: raw})
		resp.VersionsDeleted++
		resp.BytesDeleted += uint64(len(raw) + len(iter.Value()))
		if w.Type == txntypes.WritePut && w.ShortValue == nil {
			dk := keyspace.DataKey(key, w.StartTS)
			v, err := r.exact(dk)
			if err != nil {
				return nil, false, err
			}
			if v != nil {
				dels = append(dels, gcDeletion{key: cur, raw: dk})
				resp.BytesDeleted += uint64(len(dk) + len(v))
			}
		}
	}
	release()
	return dels, pending, iter.Error()
}

// UnsafeDestroyRange removes the user keys [start, end) (end empty:
// unbounded) from all three spaces with range deletions and compacts
// them (see GCClient).
func (s *Store) UnsafeDestroyRange(ctx context.Context, start, end []byte) (*DestroyRangeResponse, error) {
	what := fmt.Sprintf("destroy range [%q, %q)", start, end)
	if len(end) != 0 && bytes.Compare(end, start) <= 0 {
		return nil, fmt.Errorf("%s: end is not after start", what)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer s.exit()
	bounds := make([][2][]byte, len(dataSpaces))
	resp := &DestroyRangeResponse{}
	for i, sp := range dataSpaces {
		lo, hi := spaceBounds(sp, start, end)
		bounds[i] = [2][]byte{lo, hi}
		n, err := s.db.EstimateDiskUsage(lo, hi)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		resp.BytesBefore += n
	}
	var wb writeBatch
	wb.collects = true
	// The lock set must lose the keys whose locks go (a leftover entry
	// would only cost a lookup, but the set is kept exact where it can).
	r := newMVCCReader(s.db)
	var endKey []byte
	if len(end) != 0 {
		endKey = end
	}
	err := r.locks(start, endKey, false, func(key []byte, _ *txntypes.Lock) bool {
		wb.lockDels = append(wb.lockDels, key)
		return true
	})
	r.close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, b := range bounds {
		wb.delRange(b[0], b[1])
	}
	if err := s.write(ctx, &wb); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	s.waiters.released(wb.lockDels)
	// The cached iterators would pin the files the compaction replaces.
	s.iters.release()
	// Compaction drops the deleted records and the tombstone itself, so
	// that the space returns to the file system now rather than whenever
	// the levels next compact (tikv#17256: disk not shrinking after mass
	// deletes).
	//
	// The range is deleted once the batch is written: a compaction that
	// fails (on a disk too full to write its output, the moment space
	// matters most) leaves the space to Pebble's own compactions rather
	// than failing the deletion, which would fail the whole GC run and
	// keep every later range and version too.
	for _, b := range bounds {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if err := s.db.Compact(b[0], b[1], false); err != nil {
			s.logger.Warn("kv: a destroyed range's compaction failed; Pebble's own compactions will reclaim it", "range", what, "err", err)
		}
		n, err := s.db.EstimateDiskUsage(b[0], b[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		resp.BytesAfter += n
	}
	return resp, nil
}
