package kv

import (
	"context"
	"time"
)

// Command names a kv.Client request kind, for metrics and the key-space
// heatmap.
type Command uint8

// The commands of Client, in its order. CommandCount is their number.
const (
	CmdGet Command = iota
	CmdBatchGet
	CmdScan
	CmdPrewrite
	CmdCommit
	CmdBatchRollback
	CmdCleanup
	CmdCheckTxnStatus
	CmdResolveLock
	CmdTxnHeartBeat
	CmdAcquirePessimisticLock
	CmdPessimisticRollback
	CmdValidateReads
	CmdScanNotify
	CmdClearNotify
	CmdScanChanges
	CmdCoprocessor
	CommandCount
)

var commandNames = [CommandCount]string{
	CmdGet: "get", CmdBatchGet: "batch_get", CmdScan: "scan", CmdPrewrite: "prewrite",
	CmdCommit: "commit", CmdBatchRollback: "batch_rollback", CmdCleanup: "cleanup",
	CmdCheckTxnStatus: "check_txn_status", CmdResolveLock: "resolve_lock",
	CmdTxnHeartBeat: "txn_heart_beat", CmdAcquirePessimisticLock: "acquire_pessimistic_lock",
	CmdPessimisticRollback: "pessimistic_rollback", CmdValidateReads: "validate_reads",
	CmdScanNotify: "scan_notify", CmdClearNotify: "clear_notify", CmdScanChanges: "scan_changes",
	CmdCoprocessor: "coprocessor",
}

// String returns the command's name in snake case ("batch_get"), as the
// metrics label it.
func (c Command) String() string {
	if c < CommandCount {
		return commandNames[c]
	}
	return "unknown"
}

// RequestStats describes one request a Client served.
type RequestStats struct {
	Command Command
	// Region is the id of the region the request was sent to (the
	// request's RegionCtx).
	Region uint64
	// Key is where in the key space the request went: its first key or
	// the start of its range (nil when it names none).
	Key []byte
	// Keys and Bytes are the pairs the request read or wrote and the
	// bytes of their keys and values (for a coprocessor request: the pairs
	// it visited and the bytes of its output).
	Keys, Bytes int
	// Write says the request wrote user data (prewrite, and the commits
	// and rollbacks that settle it count as writes too; their Bytes are
	// their keys').
	Write    bool
	Duration time.Duration
	Err      error
}

// RequestObserver is told of every request an instrumented Client
// served. ObserveRequest is called on the request's goroutine after the
// request returned, so it must be cheap and safe for concurrent use; it
// must not keep r.Key. r is passed by value, which allocates nothing.
type RequestObserver interface {
	ObserveRequest(r RequestStats)
}

// Instrument returns a Client that serves every request through c and
// tells o of it (metrics by command, the key-space heatmap). Region
// lookups (LocateKey, InvalidateRegion) are not requests to a store and
// are not observed.
func Instrument(c Client, o RequestObserver) Client {
	return &instrumented{c: c, o: o}
}

// instrumented is the Client Instrument returns.
type instrumented struct {
	c Client
	o RequestObserver
}

// observe tells the observer of a request that started at start.
func (i *instrumented) observe(cmd Command, region RegionCtx, start time.Time, key []byte, keys, bytes int, write bool, err error) {
	i.o.ObserveRequest(RequestStats{Command: cmd, Region: region.RegionID, Key: key, Keys: keys, Bytes: bytes, Write: write, Duration: time.Since(start), Err: err})
}

func pairBytes(pairs []KvPair) int {
	n := 0
	for _, p := range pairs {
		n += len(p.Key) + len(p.Value)
	}
	return n
}

func keysBytes(keys [][]byte) int {
	n := 0
	for _, k := range keys {
		n += len(k)
	}
	return n
}

func firstKey(keys [][]byte) []byte {
	if len(keys) == 0 {
		return nil
	}
	return keys[0]
}

func (i *instrumented) LocateKey(ctx context.Context, key []byte) (RegionInfo, error) {
	return i.c.LocateKey(ctx, key)
}

func (i *instrumented) InvalidateRegion(regionID uint64) { i.c.InvalidateRegion(regionID) }

func (i *instrumented) Get(ctx context.Context, region RegionCtx, key []byte, version uint64) ([]byte, error) {
	start := time.Now()
	v, err := i.c.Get(ctx, region, key, version)
	i.observe(CmdGet, region, start, key, 1, len(key)+len(v), false, err)
	return v, err
}

func (i *instrumented) BatchGet(ctx context.Context, region RegionCtx, keys [][]byte, version uint64) ([]KvPair, error) {
	start := time.Now()
	pairs, err := i.c.BatchGet(ctx, region, keys, version)
	i.observe(CmdBatchGet, region, start, firstKey(keys), len(keys), pairBytes(pairs), false, err)
	return pairs, err
}

func (i *instrumented) Scan(ctx context.Context, req *ScanRequest) ([]KvPair, error) {
	start := time.Now()
	pairs, err := i.c.Scan(ctx, req)
	key := req.Start
	switch {
	case len(req.Ranges) > 0:
		key = req.Ranges[0].Start
	case req.Reverse:
		key = req.End
	}
	i.observe(CmdScan, req.Region, start, key, len(pairs), pairBytes(pairs), false, err)
	return pairs, err
}

func (i *instrumented) Prewrite(ctx context.Context, req *PrewriteRequest) (*PrewriteResponse, error) {
	start := time.Now()
	resp, err := i.c.Prewrite(ctx, req)
	n := 0
	var key []byte
	for j, m := range req.Mutations {
		if j == 0 {
			key = m.Key
		}
		n += len(m.Key) + len(m.Value)
	}
	i.observe(CmdPrewrite, req.Region, start, key, len(req.Mutations), n, true, err)
	return resp, err
}

func (i *instrumented) Commit(ctx context.Context, req *CommitRequest) error {
	start := time.Now()
	err := i.c.Commit(ctx, req)
	i.observe(CmdCommit, req.Region, start, firstKey(req.Keys), len(req.Keys), keysBytes(req.Keys), true, err)
	return err
}

func (i *instrumented) BatchRollback(ctx context.Context, region RegionCtx, keys [][]byte, startTS uint64) error {
	start := time.Now()
	err := i.c.BatchRollback(ctx, region, keys, startTS)
	i.observe(CmdBatchRollback, region, start, firstKey(keys), len(keys), keysBytes(keys), true, err)
	return err
}

func (i *instrumented) Cleanup(ctx context.Context, region RegionCtx, key []byte, startTS, currentTS uint64) error {
	start := time.Now()
	err := i.c.Cleanup(ctx, region, key, startTS, currentTS)
	i.observe(CmdCleanup, region, start, key, 1, len(key), true, err)
	return err
}

func (i *instrumented) CheckTxnStatus(ctx context.Context, req *CheckTxnStatusRequest) (*CheckTxnStatusResponse, error) {
	start := time.Now()
	resp, err := i.c.CheckTxnStatus(ctx, req)
	i.observe(CmdCheckTxnStatus, req.Region, start, req.PrimaryKey, 1, len(req.PrimaryKey), false, err)
	return resp, err
}

func (i *instrumented) ResolveLock(ctx context.Context, req *ResolveLockRequest) error {
	start := time.Now()
	err := i.c.ResolveLock(ctx, req)
	i.observe(CmdResolveLock, req.Region, start, firstKey(req.Keys), len(req.Keys), keysBytes(req.Keys), true, err)
	return err
}

func (i *instrumented) TxnHeartBeat(ctx context.Context, region RegionCtx, primary []byte, startTS, adviseTTL uint64) (uint64, error) {
	start := time.Now()
	ttl, err := i.c.TxnHeartBeat(ctx, region, primary, startTS, adviseTTL)
	i.observe(CmdTxnHeartBeat, region, start, primary, 1, len(primary), false, err)
	return ttl, err
}

func (i *instrumented) AcquirePessimisticLock(ctx context.Context, req *AcquirePessimisticLockRequest) (*AcquirePessimisticLockResponse, error) {
	start := time.Now()
	resp, err := i.c.AcquirePessimisticLock(ctx, req)
	n := 0
	var key []byte
	for j, k := range req.Keys {
		if j == 0 {
			key = k.Key
		}
		n += len(k.Key)
	}
	i.observe(CmdAcquirePessimisticLock, req.Region, start, key, len(req.Keys), n, true, err)
	return resp, err
}

func (i *instrumented) PessimisticRollback(ctx context.Context, region RegionCtx, keys [][]byte, startTS, forUpdateTS uint64) error {
	start := time.Now()
	err := i.c.PessimisticRollback(ctx, region, keys, startTS, forUpdateTS)
	i.observe(CmdPessimisticRollback, region, start, firstKey(keys), len(keys), keysBytes(keys), true, err)
	return err
}

func (i *instrumented) ValidateReads(ctx context.Context, req *ValidateReadsRequest) (*ValidateReadsResponse, error) {
	start := time.Now()
	resp, err := i.c.ValidateReads(ctx, req)
	key := firstKey(req.Keys)
	if key == nil && len(req.Ranges) > 0 {
		key = req.Ranges[0].Start
	}
	i.observe(CmdValidateReads, req.Region, start, key, len(req.Keys)+len(req.Ranges), keysBytes(req.Keys), false, err)
	return resp, err
}

func (i *instrumented) ScanNotify(ctx context.Context, req *ScanNotifyRequest) (*ScanNotifyResponse, error) {
	start := time.Now()
	resp, err := i.c.ScanNotify(ctx, req)
	n := 0
	if resp != nil {
		n = len(resp.Entries)
	}
	i.observe(CmdScanNotify, req.Region, start, req.Start, n, 0, false, err)
	return resp, err
}

func (i *instrumented) ClearNotify(ctx context.Context, region RegionCtx, entries []NotifyEntry) error {
	start := time.Now()
	err := i.c.ClearNotify(ctx, region, entries)
	i.observe(CmdClearNotify, region, start, nil, len(entries), 0, false, err)
	return err
}

func (i *instrumented) ScanChanges(ctx context.Context, req *ScanChangesRequest) ([]Change, error) {
	start := time.Now()
	changes, err := i.c.ScanChanges(ctx, req)
	n := 0
	for _, ch := range changes {
		n += len(ch.Key) + len(ch.Value)
	}
	i.observe(CmdScanChanges, req.Region, start, req.Start, len(changes), n, false, err)
	return changes, err
}

func (i *instrumented) Coprocessor(ctx context.Context, req *CoprocessorRequest) (*CoprocessorResponse, error) {
	start := time.Now()
	resp, err := i.c.Coprocessor(ctx, req)
	keys, n := 0, 0
	if resp != nil {
		keys, n = int(resp.Visited), len(resp.Data)
	}
	key := req.Start
	if len(req.Ranges) > 0 {
		key = req.Ranges[0].Start
	}
	i.observe(CmdCoprocessor, req.Region, start, key, keys, n, false, err)
	return resp, err
}

// LockWaitInfo implements Client. It is not counted: an operator's view
// of the stores, not the transaction layer's traffic.
func (i *instrumented) LockWaitInfo(ctx context.Context) ([]LockWait, error) {
	return i.c.LockWaitInfo(ctx)
}

func (i *instrumented) LockWaitCounts(ctx context.Context) (LockWaitStats, error) {
	return i.c.LockWaitCounts(ctx)
}

var _ Client = (*instrumented)(nil)
