package kvrpc

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvpb"
)

// Backend is what a Server serves: the commands of kv.Client without its
// routing (LocateKey, InvalidateRegion), which the client side does. A
// *kv.Store is one (its own regions); a KV node is another (the regions pd
// gave it, package node).
type Backend interface {
	Get(ctx context.Context, region kv.RegionCtx, key []byte, version uint64) ([]byte, error)
	BatchGet(ctx context.Context, region kv.RegionCtx, keys [][]byte, version uint64) ([]kv.KvPair, error)
	Scan(ctx context.Context, req *kv.ScanRequest) ([]kv.KvPair, error)
	Prewrite(ctx context.Context, req *kv.PrewriteRequest) (*kv.PrewriteResponse, error)
	Commit(ctx context.Context, req *kv.CommitRequest) error
	BatchRollback(ctx context.Context, region kv.RegionCtx, keys [][]byte, startTS uint64) error
	Cleanup(ctx context.Context, region kv.RegionCtx, key []byte, startTS, currentTS uint64) error
	CheckTxnStatus(ctx context.Context, req *kv.CheckTxnStatusRequest) (*kv.CheckTxnStatusResponse, error)
	ResolveLock(ctx context.Context, req *kv.ResolveLockRequest) error
	TxnHeartBeat(ctx context.Context, region kv.RegionCtx, primary []byte, startTS, adviseTTL uint64) (uint64, error)
	AcquirePessimisticLock(ctx context.Context, req *kv.AcquirePessimisticLockRequest) (*kv.AcquirePessimisticLockResponse, error)
	PessimisticRollback(ctx context.Context, region kv.RegionCtx, keys [][]byte, startTS, forUpdateTS uint64) error
	ValidateReads(ctx context.Context, req *kv.ValidateReadsRequest) (*kv.ValidateReadsResponse, error)
	ScanNotify(ctx context.Context, req *kv.ScanNotifyRequest) (*kv.ScanNotifyResponse, error)
	ClearNotify(ctx context.Context, region kv.RegionCtx, entries []kv.NotifyEntry) error
	ScanChanges(ctx context.Context, req *kv.ScanChangesRequest) ([]kv.Change, error)
	Coprocessor(ctx context.Context, req *kv.CoprocessorRequest) (*kv.CoprocessorResponse, error)
	ScanLock(ctx context.Context, req *kv.ScanLockRequest) (*kv.ScanLockResponse, error)
	GC(ctx context.Context, req *kv.GCRequest) (*kv.GCResponse, error)
	UnsafeDestroyRange(ctx context.Context, start, end []byte) (*kv.DestroyRangeResponse, error)
	// LockWaitInfo lists the store's waiting lock requests, and
	// LockWaitCounts returns its lock-wait counts.
	LockWaitInfo(ctx context.Context) ([]kv.LockWait, error)
	LockWaitCounts(ctx context.Context) (kv.LockWaitStats, error)
}

// Server serves a Backend on the KV service.
type Server struct {
	kvpb.UnimplementedKVServer
	backend Backend
}

// NewServer returns the service of b; Register puts it on a gRPC server.
func NewServer(b Backend) *Server { return &Server{backend: b} }

// Register registers the KV service on r (a *grpc.Server).
func (s *Server) Register(r grpc.ServiceRegistrar) { kvpb.RegisterKVServer(r, s) }

// outcome sorts a command's error into the response's two error fields,
// or a gRPC status for failures of the call itself: the request's context
// ended (the client gave up), or the store is closing (the client tries
// again, here or elsewhere).
func outcome(err error) (*kvpb.RegionError, *kvpb.KeyError, error) {
	if err == nil {
		return nil, nil, nil
	}
	var re *kv.RegionError
	switch {
	case errors.As(err, &re):
		return RegionErrorToPB(re), nil, nil
	case errors.Is(err, context.Canceled):
		return nil, nil, status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return nil, nil, status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, kv.ErrClosed):
		return nil, nil, status.Error(codes.Unavailable, err.Error())
	}
	return nil, keyErrorToPB(err), nil
}

// Get implements kvpb.KVServer.
func (s *Server) Get(ctx context.Context, req *kvpb.GetRequest) (*kvpb.GetResponse, error) {
	v, err := s.backend.Get(ctx, regionCtxFromPB(req.GetRegion()), req.GetKey(), req.GetVersion())
	re, ke, serr := outcome(err)
	return &kvpb.GetResponse{RegionError: re, Error: ke, Value: v, Found: err == nil && v != nil}, serr
}

// BatchGet implements kvpb.KVServer.
func (s *Server) BatchGet(ctx context.Context, req *kvpb.BatchGetRequest) (*kvpb.BatchGetResponse, error) {
	pairs, err := s.backend.BatchGet(ctx, regionCtxFromPB(req.GetRegion()), req.GetKeys(), req.GetVersion())
	re, ke, serr := outcome(err)
	return &kvpb.BatchGetResponse{RegionError: re, Error: ke, Pairs: pairsToPB(pairs)}, serr
}

// Scan implements kvpb.KVServer.
func (s *Server) Scan(ctx context.Context, req *kvpb.ScanRequest) (*kvpb.ScanResponse, error) {
	pairs, err := s.backend.Scan(ctx, &kv.ScanRequest{
		Region: regionCtxFromPB(req.GetRegion()), Start: req.GetStart(), End: req.GetEnd(), Limit: int(req.GetLimit()),
		Version: req.GetVersion(), Reverse: req.GetReverse(), KeyOnly: req.GetKeyOnly(),
		BypassLocks: req.GetBypassLocks(), IgnoreLocks: req.GetIgnoreLocks(), Ranges: keyRangesFromPB(req.GetRanges()),
	})
	re, ke, serr := outcome(err)
	return &kvpb.ScanResponse{RegionError: re, Error: ke, Pairs: pairsToPB(pairs)}, serr
}

// Prewrite implements kvpb.KVServer.
func (s *Server) Prewrite(ctx context.Context, req *kvpb.PrewriteRequest) (*kvpb.PrewriteResponse, error) {
	resp, err := s.backend.Prewrite(ctx, &kv.PrewriteRequest{
		Region: regionCtxFromPB(req.GetRegion()), Mutations: mutationsFromPB(req.GetMutations()), Primary: req.GetPrimary(),
		StartTS: req.GetStartTs(), LockTTL: req.GetLockTtl(), TxnSize: req.GetTxnSize(), TryOnePC: req.GetTryOnePc(),
		MaxCommitTS: req.GetMaxCommitTs(), AllowWhenDiskFull: req.GetAllowWhenDiskFull(), ForUpdateTS: req.GetForUpdateTs(),
		SnapshotTS: req.GetSnapshotTs(),
	})
	re, ke, serr := outcome(err)
	out := &kvpb.PrewriteResponse{RegionError: re, Error: ke}
	if resp != nil {
		out.OnePcCommitTs = resp.OnePCCommitTS
		for _, e := range resp.Errors {
			out.Errors = append(out.Errors, keyErrorToPB(e))
		}
	}
	return out, serr
}

// Commit implements kvpb.KVServer.
func (s *Server) Commit(ctx context.Context, req *kvpb.CommitRequest) (*kvpb.CommitResponse, error) {
	err := s.backend.Commit(ctx, &kv.CommitRequest{Region: regionCtxFromPB(req.GetRegion()), Keys: req.GetKeys(), StartTS: req.GetStartTs(), CommitTS: req.GetCommitTs()})
	re, ke, serr := outcome(err)
	return &kvpb.CommitResponse{RegionError: re, Error: ke}, serr
}

// command answers a command that returns nothing but its error.
func command(err error) (*kvpb.CommandResponse, error) {
	re, ke, serr := outcome(err)
	return &kvpb.CommandResponse{RegionError: re, Error: ke}, serr
}

// BatchRollback implements kvpb.KVServer.
func (s *Server) BatchRollback(ctx context.Context, req *kvpb.BatchRollbackRequest) (*kvpb.CommandResponse, error) {
	return command(s.backend.BatchRollback(ctx, regionCtxFromPB(req.GetRegion()), req.GetKeys(), req.GetStartTs()))
}

// Cleanup implements kvpb.KVServer.
func (s *Server) Cleanup(ctx context.Context, req *kvpb.CleanupRequest) (*kvpb.CommandResponse, error) {
	return command(s.backend.Cleanup(ctx, regionCtxFromPB(req.GetRegion()), req.GetKey(), req.GetStartTs(), req.GetCurrentTs()))
}

// CheckTxnStatus implements kvpb.KVServer.
func (s *Server) CheckTxnStatus(ctx context.Context, req *kvpb.CheckTxnStatusRequest) (*kvpb.CheckTxnStatusResponse, error) {
	resp, err := s.backend.CheckTxnStatus(ctx, &kv.CheckTxnStatusRequest{
		Region: regionCtxFromPB(req.GetRegion()), PrimaryKey: req.GetPrimaryKey(), LockTS: req.GetLockTs(),
		CallerStartTS: req.GetCallerStartTs(), CurrentTS: req.GetCurrentTs(), RollbackIfNotExist: req.GetRollbackIfNotExist(),
	})
	re, ke, serr := outcome(err)
	out := &kvpb.CheckTxnStatusResponse{RegionError: re, Error: ke}
	if resp != nil {
		out.Action, out.CommitTs, out.LockTtl = uint32(resp.Action), resp.CommitTS, resp.LockTTL
		if resp.Lock != nil {
			out.Lock = lockToPB(*resp.Lock)
		}
	}
	return out, serr
}

// ResolveLock implements kvpb.KVServer.
func (s *Server) ResolveLock(ctx context.Context, req *kvpb.ResolveLockRequest) (*kvpb.CommandResponse, error) {
	return command(s.backend.ResolveLock(ctx, &kv.ResolveLockRequest{Region: regionCtxFromPB(req.GetRegion()), StartTS: req.GetStartTs(), CommitTS: req.GetCommitTs(), Keys: req.GetKeys()}))
}

// TxnHeartBeat implements kvpb.KVServer.
func (s *Server) TxnHeartBeat(ctx context.Context, req *kvpb.TxnHeartBeatRequest) (*kvpb.TxnHeartBeatResponse, error) {
	ttl, err := s.backend.TxnHeartBeat(ctx, regionCtxFromPB(req.GetRegion()), req.GetPrimary(), req.GetStartTs(), req.GetAdviseTtl())
	re, ke, serr := outcome(err)
	return &kvpb.TxnHeartBeatResponse{RegionError: re, Error: ke, LockTtl: ttl}, serr
}

// AcquirePessimisticLock implements kvpb.KVServer. A wait for other
// transactions' locks is bounded by the request's wait_timeout, the
// store's lock-wait slice and the call's deadline (ctx), whichever ends
// first.
func (s *Server) AcquirePessimisticLock(ctx context.Context, req *kvpb.AcquirePessimisticLockRequest) (*kvpb.AcquirePessimisticLockResponse, error) {
	keys := make([]kv.PessimisticKey, len(req.GetKeys()))
	for i, k := range req.GetKeys() {
		keys[i] = kv.PessimisticKey{Key: k.GetKey(), CheckNotExists: k.GetCheckNotExists()}
	}
	resp, err := s.backend.AcquirePessimisticLock(ctx, &kv.AcquirePessimisticLockRequest{
		Region: regionCtxFromPB(req.GetRegion()), Keys: keys, Primary: req.GetPrimary(), StartTS: req.GetStartTs(),
		ForUpdateTS: req.GetForUpdateTs(), LockTTL: req.GetLockTtl(), ReturnValues: req.GetReturnValues(),
		WaitTimeout: time.Duration(req.GetWaitTimeoutMs()) * time.Millisecond, LockWithConflict: req.GetLockWithConflict(),
		Range: lockRangeFromPB(req.GetRange()), LockOnlyIfExists: req.GetLockOnlyIfExists(),
	})
	re, ke, serr := outcome(err)
	out := &kvpb.AcquirePessimisticLockResponse{RegionError: re, Error: ke}
	if resp != nil {
		out.ConflictTs = resp.ConflictTS
		if req.GetRange() != nil {
			out.Pairs = make([]*kvpb.KvPair, len(resp.Pairs))
			out.PairAbsent = make([]bool, len(resp.Pairs))
			for i, p := range resp.Pairs {
				out.Pairs[i], out.PairAbsent[i] = &kvpb.KvPair{Key: p.Key, Value: p.Value}, p.Value == nil
			}
		}
		if resp.Values != nil {
			out.Values = make([][]byte, len(resp.Values))
			out.NotFound = make([]bool, len(resp.Values))
			for i, v := range resp.Values {
				out.Values[i], out.NotFound[i] = v, v == nil
			}
		}
	}
	return out, serr
}

// lockRangeFromPB is r off the wire (nil: none).
func lockRangeFromPB(r *kvpb.LockRange) *kv.LockRange {
	if r == nil {
		return nil
	}
	return &kv.LockRange{Start: r.GetStart(), End: r.GetEnd(), Limit: int(r.GetLimit()), Reverse: r.GetReverse(), BypassLocks: r.GetBypassLocks()}
}

// PessimisticRollback implements kvpb.KVServer.
func (s *Server) PessimisticRollback(ctx context.Context, req *kvpb.PessimisticRollbackRequest) (*kvpb.CommandResponse, error) {
	return command(s.backend.PessimisticRollback(ctx, regionCtxFromPB(req.GetRegion()), req.GetKeys(), req.GetStartTs(), req.GetForUpdateTs()))
}

// ValidateReads implements kvpb.KVServer.
func (s *Server) ValidateReads(ctx context.Context, req *kvpb.ValidateReadsRequest) (*kvpb.ValidateReadsResponse, error) {
	resp, err := s.backend.ValidateReads(ctx, &kv.ValidateReadsRequest{
		Region: regionCtxFromPB(req.GetRegion()), Keys: req.GetKeys(), Ranges: keyRangesFromPB(req.GetRanges()),
		From: req.GetFrom(), To: req.GetTo(), BypassLocks: req.GetBypassLocks(), ChangesFirst: req.GetChangesFirst(),
	})
	re, ke, serr := outcome(err)
	out := &kvpb.ValidateReadsResponse{RegionError: re, Error: ke}
	if resp != nil {
		out.More, out.LocksUnchecked = resp.More, resp.LocksUnchecked
		for _, c := range resp.Changes {
			out.Changes = append(out.Changes, &kvpb.KeyChange{Key: c.Key, CommitTs: c.CommitTS})
		}
	}
	return out, serr
}

// ScanNotify implements kvpb.KVServer.
func (s *Server) ScanNotify(ctx context.Context, req *kvpb.ScanNotifyRequest) (*kvpb.ScanNotifyResponse, error) {
	resp, err := s.backend.ScanNotify(ctx, &kv.ScanNotifyRequest{
		Region: regionCtxFromPB(req.GetRegion()), Start: req.GetStart(), End: req.GetEnd(), Limit: int(req.GetLimit()),
		Scanner: req.GetScanner(), Columns: req.GetColumns(),
	})
	re, ke, serr := outcome(err)
	out := &kvpb.ScanNotifyResponse{RegionError: re, Error: ke}
	if resp != nil {
		out.Entries, out.Resume = notifyEntriesToPB(resp.Entries), resp.Resume
		out.Skipped, out.Trailing = int64(resp.Skipped), resp.Trailing
	}
	return out, serr
}

// ClearNotify implements kvpb.KVServer.
func (s *Server) ClearNotify(ctx context.Context, req *kvpb.ClearNotifyRequest) (*kvpb.CommandResponse, error) {
	return command(s.backend.ClearNotify(ctx, regionCtxFromPB(req.GetRegion()), notifyEntriesFromPB(req.GetEntries())))
}

// ScanChanges implements kvpb.KVServer.
func (s *Server) ScanChanges(ctx context.Context, req *kvpb.ScanChangesRequest) (*kvpb.ScanChangesResponse, error) {
	changes, err := s.backend.ScanChanges(ctx, &kv.ScanChangesRequest{
		Region: regionCtxFromPB(req.GetRegion()), Start: req.GetStart(), End: req.GetEnd(),
		FromTS: req.GetFromTs(), ToTS: req.GetToTs(), Limit: int(req.GetLimit()), BypassLocks: req.GetBypassLocks(),
	})
	re, ke, serr := outcome(err)
	return &kvpb.ScanChangesResponse{RegionError: re, Error: ke, Changes: changesToPB(changes)}, serr
}

// Coprocessor implements kvpb.KVServer.
func (s *Server) Coprocessor(ctx context.Context, req *kvpb.CoprocessorRequest) (*kvpb.CoprocessorResponse, error) {
	resp, err := s.backend.Coprocessor(ctx, &kv.CoprocessorRequest{
		Region: regionCtxFromPB(req.GetRegion()), Start: req.GetStart(), End: req.GetEnd(), Version: req.GetVersion(),
		Program: req.GetProgram(), BypassLocks: req.GetBypassLocks(), Ranges: keyRangesFromPB(req.GetRanges()),
		Reverse: req.GetReverse(),
	})
	re, ke, serr := outcome(err)
	out := &kvpb.CoprocessorResponse{RegionError: re, Error: ke}
	if resp != nil {
		out.Data, out.Done, out.Visited = resp.Data, resp.Done, resp.Visited
		if resp.Resume != nil {
			out.Resume, out.HasResume = resp.Resume, true
		}
	}
	return out, serr
}

// ScanLock implements kvpb.KVServer.
func (s *Server) ScanLock(ctx context.Context, req *kvpb.ScanLockRequest) (*kvpb.ScanLockResponse, error) {
	resp, err := s.backend.ScanLock(ctx, &kv.ScanLockRequest{Region: regionCtxFromPB(req.GetRegion()), Start: req.GetStart(),
		MaxTS: req.GetMaxTs(), Limit: int(req.GetLimit())})
	re, ke, serr := outcome(err)
	out := &kvpb.ScanLockResponse{RegionError: re, Error: ke}
	if resp != nil {
		for _, l := range resp.Locks {
			out.Locks = append(out.Locks, lockToPB(l))
		}
		out.Next, out.HasNext = resp.Next, resp.Next != nil
	}
	return out, serr
}

// GC implements kvpb.KVServer.
func (s *Server) GC(ctx context.Context, req *kvpb.GCRequest) (*kvpb.GCResponse, error) {
	resp, err := s.backend.GC(ctx, &kv.GCRequest{Region: regionCtxFromPB(req.GetRegion()), Start: req.GetStart(),
		SafePoint: req.GetSafePoint(), Limit: int(req.GetLimit())})
	re, ke, serr := outcome(err)
	out := &kvpb.GCResponse{RegionError: re, Error: ke}
	if resp != nil {
		out.Next, out.HasNext, out.Skipped = resp.Next, resp.Next != nil, resp.Skipped
		out.KeysScanned, out.VersionsDeleted, out.BytesDeleted = resp.KeysScanned, resp.VersionsDeleted, resp.BytesDeleted
	}
	return out, serr
}

// UnsafeDestroyRange implements kvpb.KVServer.
func (s *Server) UnsafeDestroyRange(ctx context.Context, req *kvpb.UnsafeDestroyRangeRequest) (*kvpb.UnsafeDestroyRangeResponse, error) {
	resp, err := s.backend.UnsafeDestroyRange(ctx, req.GetStart(), req.GetEnd())
	_, ke, serr := outcome(err)
	out := &kvpb.UnsafeDestroyRangeResponse{Error: ke}
	if resp != nil {
		out.BytesBefore, out.BytesAfter = resp.BytesBefore, resp.BytesAfter
	}
	return out, serr
}

// GetLockWaitInfo implements kvpb.KVServer: the store's waiting lock
// requests (unless only the counts are asked) and its lock-wait counts.
func (s *Server) GetLockWaitInfo(ctx context.Context, req *kvpb.GetLockWaitInfoRequest) (*kvpb.GetLockWaitInfoResponse, error) {
	var waits []kv.LockWait
	st, err := s.backend.LockWaitCounts(ctx)
	if err == nil && !req.GetCountsOnly() {
		waits, err = s.backend.LockWaitInfo(ctx)
	}
	if err != nil {
		if _, _, serr := outcome(err); serr != nil {
			return nil, serr
		}
		return nil, status.Error(codes.Internal, err.Error())
	}
	out := &kvpb.GetLockWaitInfoResponse{Entries: make([]*kvpb.LockWaitEntry, len(waits)), Counts: &kvpb.LockWaitCounts{
		Waiting: st.Waiting, Waits: st.Waits, WaitNanos: uint64(st.WaitTime), Deadlocks: st.Deadlocks}}
	for i, w := range waits {
		out.Entries[i] = &kvpb.LockWaitEntry{Key: w.Key, Txn: w.Txn, LockTs: w.LockTS}
	}
	return out, nil
}

// RegionSplitter is the part of a Backend that splits regions on
// request: a KV node's (the in-process store splits through kv.Splitter
// instead).
type RegionSplitter interface {
	SplitRegion(ctx context.Context, region kv.RegionCtx, key []byte) (left, right kv.RegionInfo, err error)
}

// SplitRegion implements kvpb.KVServer for a Backend that is a
// RegionSplitter.
func (s *Server) SplitRegion(ctx context.Context, req *kvpb.SplitRegionRequest) (*kvpb.SplitRegionResponse, error) {
	sp, ok := s.backend.(RegionSplitter)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "kv store: this store does not split regions")
	}
	left, right, err := sp.SplitRegion(ctx, regionCtxFromPB(req.GetRegion()), req.GetSplitKey())
	re, ke, serr := outcome(err)
	out := &kvpb.SplitRegionResponse{RegionError: re, Error: ke}
	if err == nil {
		out.Left, out.Right = RegionInfoToPB(left), RegionInfoToPB(right)
	}
	return out, serr
}
