package kv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/percdb/percdb/kv/internal/latch"
)

// SyncMode says whether a command waits for its writes to reach stable
// storage before it returns.
type SyncMode uint8

const (
	// SyncAlways (the zero value, the default) syncs the write-ahead log
	// before a command returns: a transaction whose Commit returned
	// survives kill -9 and power loss.
	SyncAlways SyncMode = iota
	// SyncNone returns as soon as the writes are in the WAL's buffer: much
	// faster, but the last writes before a crash may be lost, including
	// commits already acknowledged to clients. For tests and benchmarks.
	SyncNone
)

// Options configures a Store. The zero value is a durable on-disk store.
type Options struct {
	// InMemory keeps everything in memory (pebble's vfs.NewMem); dir is
	// ignored and nothing survives Close. For tests. Default false.
	InMemory bool
	// SyncWrites: see SyncMode. Default SyncAlways.
	SyncWrites SyncMode
	// Latest says when the store keeps the latest space, the copies of
	// each key's newest record that forward walks read instead of its
	// versions (latestswitch.go). Default LatestAuto.
	Latest LatestMode
	// CacheSize is the size in bytes of Pebble's block cache. Default
	// 64 MiB.
	CacheSize int64
	// LatchSlots is the number of slots in the per-key latch table (rounded
	// up to a power of two). Default 4096.
	LatchSlots int
	// ReserveSpace is the disk protection's reserve in bytes (space.go):
	// below this much free space on the store's file system, writes that
	// add data fail with *DiskFullError while reads, commits, rollbacks
	// and deletes go on. Default 0: 2% of the file system, at least
	// MinDefaultReserveSpace, at most MaxDefaultReserveSpace and a
	// quarter of the file system. Negative: no protection. A positive
	// value below what Pebble needs to flush once the disk is full
	// (minReserveSpace, 12.4 MiB with Pebble's default memtables) is
	// raised to it. Ignored with InMemory.
	ReserveSpace int64
	// Logger receives the store's messages: disk protection, and Pebble's
	// own lines (at debug) and background errors (rate limited). Default
	// slog.Default().
	Logger *slog.Logger
	// LockWaitSlice bounds one wait of an AcquirePessimisticLock for
	// another transaction's lock; after it the store answers
	// *KeyIsLockedError and the client checks that the owner is alive
	// before asking again. Default DefaultLockWaitSlice.
	LockWaitSlice time.Duration
	// DeadlockDetector is the wait-for graph the store's lock waits join.
	// Stores of one process that serve one key space share one; nil gives
	// the store its own embedded detector.
	DeadlockDetector DeadlockDetector
	// Coprocessor compiles the programs of Coprocessor requests (package
	// executor/copr's); nil: such requests fail with ErrNoCoprocessor.
	Coprocessor Coprocessor
	// GCCompactTombstones is how many versions GC deletes before the store
	// compacts the key ranges it deleted them in, so that reads stop
	// stepping over their tombstones (gccompact.go). Default
	// DefaultGCCompactTombstones; negative: never.
	GCCompactTombstones int
	// ScannerLease is how long an observer scanner's position and claims
	// outlive the page that set them (ScanNotifyRequest.Scanner). Default
	// DefaultScannerLease.
	ScannerLease time.Duration

	// testingNoAutoCompactions, set by tests only, turns Pebble's own
	// compactions off, so that what is left uncompacted is up to the test.
	testingNoAutoCompactions bool
	// testingNoScanReports, set by tests only, keeps range reads from
	// reporting what they stepped over to the compactor (scancost.go).
	testingNoScanReports bool
	// testingWriteSpaceWalks, set by tests only, keeps forward walks on
	// the write space (the latest space is still written when on).
	testingWriteSpaceWalks bool
	// testingBlockSize, set by benchmarks only, replaces blockSize.
	testingBlockSize int
	// testingWholeKeySplit, set by tests only, writes sstables as a
	// comparer without the version split would (each whole key its own
	// prefix, no bloom filters), to check that reads do not trust prefix
	// bits (comparer.go).
	testingWholeKeySplit bool
	// testingL0CompactionThreshold, set by tests only, replaces
	// Pebble's L0CompactionThreshold (its default when zero).
	testingL0CompactionThreshold int
	// testingFormat, set by tests only, is the Pebble format the store
	// opens with (Pebble's default when zero).
	testingFormat pebble.FormatMajorVersion
	// testingOwnWrites, set by tests only, makes every write with a
	// context that can end an owned write (inflight.go), as when the disk
	// is close to full.
	testingOwnWrites bool
	// testingFS, set by tests only, wraps the file system the store opens
	// Pebble on (a pointer: Options stays comparable).
	testingFS *testingFS
}

// testingFS is Options.testingFS.
type testingFS struct{ wrap func(vfs.FS) vfs.FS }

// blockSize is the size of the sstables' data blocks (Pebble's default is
// 4 KiB; CockroachDB's and TiKV's 32 KiB). A scan steps from block to
// block, each a block-cache lookup (a file read on a miss, as after every
// compaction, which writes new files), and under updates a scan merges
// the blocks of several levels at once, stepping over every version
// younger than the GC safe point: with three versions of each key
// spread over three levels, a full scan took 15-18% less CPU with 32 KiB
// blocks, 5-6% less with one version (BenchmarkScanSpreadVersions). A
// point read still reads one block of each level its bloom filters let
// through, from the cache; its CPU did not measurably change (random
// reads of 100,000 keys, 3.2 against 3.0 us, within the noise).
const blockSize = 32 << 10

// DefaultCacheSize is Options.CacheSize when left zero.
const DefaultCacheSize = 64 << 20

// Store is a single node's Percolator store: Pebble underneath, the
// commands of the Client contract on top, and the regions it serves. All
// methods are safe for concurrent use.
type Store struct {
	// latest is the switch of the latest space (latestswitch.go).
	latest *latestSpace
	// noLatestWalks keeps forward walks on the write space (tests).
	noLatestWalks bool
	// life is read-held by every command that touches db and write-held by
	// Close, so that Close waits for commands in flight and later commands
	// get ErrClosed instead of using a closed Pebble.
	life   sync.RWMutex
	closed bool
	// closing is closed when Close begins (closingOnce), and isClosing
	// set: new commands get ErrClosed without queueing on life, and the
	// callers of owned writes stop waiting (inflight.go). closeDone is
	// closed once Pebble is closed, by Close or, when Close gave up
	// waiting for a write the storage holds, by finishClose later.
	closing     chan struct{}
	closingOnce sync.Once
	isClosing   atomic.Bool
	closeDone   chan struct{}
	// closeWait bounds Close's wait for the commands in flight
	// (closeWriteWait; replaced in tests).
	closeWait time.Duration

	db    *pebble.DB
	cache *pebble.Cache
	// dir is the store's directory ("" in memory).
	dir string
	// space refuses writes that add data when the disk is nearly full
	// (nil: no protection).
	space *spaceGuard
	// gate holds Pebble's compactions back until the disk has room for
	// them (compactgate.go; nil without disk protection).
	gate *compactionGate
	// stall counts the writes Pebble holds in its write stall.
	stall *writeStall
	// ownAll makes every write an owned write (inflight.go; tests).
	ownAll bool
	// inflight counts the writes whose callers stopped waiting
	// (inflight.go).
	inflight inflightWrites
	// unsynced counts the batches visible, and their keys released,
	// while their WAL sync is under way (writeBatch.visible).
	unsynced atomic.Int64
	latches  *latch.Table
	applier  applier
	regions  *regionMap
	memLocks *memLockTable
	// scanners knows where the observers' scanners read and which
	// notifications they were given (notifyscanners.go).
	scanners *scanners
	// locks records which keys hold a lock; the applier maintains it.
	locks *lockSet
	// lockedRangeReads counts the range reads that read the lock space
	// (LockSetStats).
	lockedRangeReads atomic.Uint64
	// scans counts what range reads stepped over (scancost.go).
	scans scanCounters
	// iters keeps write-space iterators for latch-free reads; the applier
	// tells it of every batch.
	iters *iterCache
	// waiters queues the lock requests waiting for locks to go; detector
	// refuses the waits that would deadlock; a wait lasts at most
	// lockWaitSlice.
	waiters       *waiterTable
	detector      DeadlockDetector
	lockWaitSlice time.Duration
	// gcSafePoint is the highest GC safe point the store collected at
	// (gc.go), kept in the meta space: reads below it and prewrites at or
	// below it are refused.
	gcSafePoint atomic.Uint64
	// copr compiles coprocessor programs (nil: none).
	copr Coprocessor
	// compactor compacts the ranges GC cleaned (gccompact.go).
	compactor *gcCompactor
	// logger is Options.Logger.
	logger *slog.Logger
	// events takes Pebble's messages and background errors.
	events *pebbleEvents
	// testingAfterProbe, set by tests only, runs in a latch-free read
	// between its lock-set probe and its Pebble reads.
	testingAfterProbe func()
}

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	if opts.SyncWrites > SyncNone {
		return nil, fmt.Errorf("open store %q: unknown SyncWrites mode %d", dir, opts.SyncWrites)
	}
	if opts.CacheSize < 0 || opts.LatchSlots < 0 || opts.LockWaitSlice < 0 {
		return nil, fmt.Errorf("open store %q: negative CacheSize %d, LatchSlots %d or LockWaitSlice %v", dir, opts.CacheSize, opts.LatchSlots, opts.LockWaitSlice)
	}
	if opts.LockWaitSlice == 0 {
		opts.LockWaitSlice = DefaultLockWaitSlice
	}
	if opts.ScannerLease <= 0 {
		opts.ScannerLease = DefaultScannerLease
	}
	if opts.DeadlockDetector == nil {
		opts.DeadlockDetector = NewDeadlockDetector()
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.GCCompactTombstones == 0 {
		opts.GCCompactTombstones = DefaultGCCompactTombstones
	}
	if !opts.InMemory && dir == "" {
		return nil, errors.New("open store: empty directory (set Options.InMemory for a memory store)")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	var space *spaceGuard
	if !opts.InMemory {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open store %q: %w", dir, err)
		}
		reserve := opts.ReserveSpace
		if floor := minReserveSpace(); reserve > 0 && reserve < floor {
			opts.Logger.Info("reserve space raised to what the storage needs to flush its memory once the disk is full", "dir", dir, "asked", formatBytes(uint64(reserve)), "reserve", formatBytes(uint64(floor)))
			reserve = floor
		}
		var err error
		if space, err = newSpaceGuard(dir, reserve, statfsUsage, opts.Logger); err != nil && !errors.Is(err, errUsageUnsupported) {
			return nil, fmt.Errorf("open store %q: %w", dir, err)
		}
	}
	events := newPebbleEvents(opts.Logger)
	events.onDiskFull = space.storageFull
	cache := pebble.NewCache(opts.CacheSize)
	popts := &pebble.Options{Cache: cache, Logger: events, Comparer: newComparer()}
	if opts.testingWholeKeySplit {
		popts.Comparer.Split = func(key []byte) int { return len(key) }
		popts.Comparer.ImmediateSuccessor = pebble.DefaultComparer.ImmediateSuccessor
	}
	popts.EventListener = &pebble.EventListener{BackgroundError: events.backgroundError, FlushEnd: events.flushEnd}
	popts.DisableAutomaticCompactions = opts.testingNoAutoCompactions
	popts.L0CompactionThreshold = opts.testingL0CompactionThreshold
	popts.L0StopWritesThreshold = l0StopWritesThreshold
	// Bloom filters on every level: most point lookups are of locks that
	// are not there (committed keys), and a filter answers those without
	// reading a block. They hold version prefixes (comparer.go).
	popts.Levels = make([]pebble.LevelOptions, 7)
	for i := range popts.Levels {
		if !opts.testingWholeKeySplit {
			popts.Levels[i].FilterPolicy = newVersionBloom()
		}
		popts.Levels[i].BlockSize = blockSize
		if opts.testingBlockSize != 0 {
			popts.Levels[i].BlockSize = opts.testingBlockSize
		}
	}
	// Pebble's format: sstables of format Pebblev3, whose data blocks mark
	// each key that shares its version prefix with the key before and keep
	// such older versions' values in value blocks, so that a walk leaving
	// a key's older versions (NextPrefix) skips them by a bit in the
	// block, without comparing keys, over blocks that hold little more
	// than the newest versions (comparer.go says why this is safe for
	// tables written before the version split).
	popts.FormatMajorVersion = storeFormat
	popts.Experimental.EnableValueBlocks = func() bool { return true }
	if opts.testingFormat != 0 {
		popts.FormatMajorVersion = opts.testingFormat
	}
	stall := newWriteStall()
	stall.listen(popts.EventListener)
	var gate *compactionGate
	// opened is the database once pebble.Open returned (the gate's
	// figures of the store's files; a compaction may start before).
	var opened atomic.Pointer[pebble.DB]
	if opts.InMemory {
		popts.FS = vfs.NewMem()
		dir = ""
	} else if space != nil {
		d := popts.Clone().EnsureDefaults()
		flushRoom := d.MemTableSize * uint64(d.MemTableStopWritesThreshold)
		gate = newCompactionGate(dir, statfsUsage, space, flushRoom, opts.Logger)
		gate.listen(popts.EventListener)
		gate.live = func() (uint64, int, bool) {
			db := opened.Load()
			if db == nil {
				return 0, 0, false
			}
			m := db.Metrics()
			n := m.WAL.PhysicalSize
			for _, l := range m.Levels {
				n += uint64(l.Size)
			}
			return n, m.ReadAmp(), true
		}
		popts.FS = gateFS{FS: vfs.Default, gate: gate}
	}
	if opts.testingFS != nil {
		if popts.FS == nil {
			popts.FS = vfs.Default
		}
		popts.FS = opts.testingFS.wrap(popts.FS)
	}
	iters := newIterCache()
	iters.listen(popts.EventListener)
	db, err := pebble.Open(dir, popts)
	if err != nil {
		cache.Unref()
		return nil, fmt.Errorf("open store %q: %w", dir, err)
	}
	if err := checkFormat(db); err != nil {
		_ = db.Close()
		cache.Unref()
		return nil, fmt.Errorf("open store %q: %w", dir, err)
	}
	locks, err := loadLockSet(db)
	if err != nil {
		_ = db.Close()
		cache.Unref()
		return nil, fmt.Errorf("open store %q: %w", dir, err)
	}
	// Before the regions start: nothing else writes while it is built.
	latest, err := openLatest(context.Background(), db, opts.Latest)
	if err != nil {
		_ = db.Close()
		cache.Unref()
		return nil, fmt.Errorf("open store %q: %w", dir, err)
	}
	if space != nil {
		space.pending = func() uint64 { return db.Metrics().MemTable.Size }
	}
	opened.Store(db)
	iters.start(db)
	applier := newPebbleApplier(db, opts.SyncWrites == SyncAlways, locks, iters)
	compactor := newGCCompactor(db, opts.GCCompactTombstones, opts.Logger)
	applier.collected = compactor.collected
	applier.latest = latest
	s := &Store{
		db:       db,
		cache:    cache,
		dir:      dir,
		space:    space,
		gate:     gate,
		stall:    stall,
		ownAll:   opts.testingOwnWrites,
		latches:  latch.New(opts.LatchSlots),
		applier:  applier,
		memLocks: newMemLockTable(),
		scanners: newScanners(opts.ScannerLease),
		locks:    locks,
		iters:    iters,

		waiters:       newWaiterTable(opts.DeadlockDetector),
		detector:      opts.DeadlockDetector,
		lockWaitSlice: opts.LockWaitSlice,
		copr:          opts.Coprocessor,
		latest:        latest,
		noLatestWalks: opts.testingWriteSpaceWalks,
		compactor:     compactor,
		logger:        opts.Logger,
		events:        events,

		closing:   make(chan struct{}),
		closeDone: make(chan struct{}),
		closeWait: closeWriteWait,
	}
	s.scans.off = opts.testingNoScanReports
	// From now on a stall's watcher may ask the store whether it refuses
	// writes (writestall.go).
	stall.setRefusal(s.stallRefusal)
	compactor.before, compactor.enter, compactor.exit = iters.release, s.enter, s.exit
	compactor.start()
	if s.regions, err = loadRegions(context.Background(), db, s.applier); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open store %q: %w", dir, err)
	}
	if err := s.loadGCSafePoint(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open store %q: %w", dir, err)
	}
	latest.switchTo = s.switchLatest
	latest.ranges.switchTo = s.switchLatestRange
	if opts.GCCompactTombstones >= 0 {
		span := latestSpan()
		latest.size = func() uint64 { return compactor.usage(span.lo, span.hi) }
		latest.compact = compactor.compactLatest
	}
	return s, nil
}

// ErrClosed is returned by commands on a closed store.
var ErrClosed = errors.New("store closed")

// ErrCloseInDoubt is wrapped by Close's error when it stopped waiting for
// writes the storage holds (a write stall on a full disk): their callers
// got *WriteInDoubtError, and the store finishes closing if they end.
var ErrCloseInDoubt = errors.New("store closed with writes in doubt")

// closeWriteWait bounds how long Close waits for the commands in flight
// while the storage holds writes: a write Pebble holds in its write stall
// on a full disk lasts until space is freed, and no context ends it;
// Close then stops waiting, so that a node stops in every state. The
// process's --shutdown-timeout (10 s by default) is longer.
const closeWriteWait = 3 * time.Second

// closePoll is how soon Close looks again whether the commands in flight
// ended, doubling up to closeRetry; finishClose looks every closeRetry.
const (
	closePoll  = time.Millisecond
	closeRetry = 100 * time.Millisecond
)

// Close waits for the commands in flight and closes the store; later
// commands return ErrClosed.
//
// A write Pebble holds (its write stall on a full disk, which nothing
// but freed space ends) does not hold Close for good: an owned write's
// caller (inflight.go) gets *WriteInDoubtError wrapping ErrClosed as
// soon as Close begins, and once closeWait has passed while the storage
// holds a write (an owned write not yet applied, or Pebble's write
// stall) Close returns an error wrapping ErrCloseInDoubt with Pebble
// left open under the held writes (closing it under them would crash
// them). Other commands end by themselves, and Close waits for them.
// Nothing acknowledged is lost: every write acknowledged went through
// Pebble's log (synced under SyncAlways), and a restart replays the log,
// which decides whether each write in doubt happened. Should the held
// writes end, finishClose closes Pebble then.
func (s *Store) Close() error {
	first := false
	s.closingOnce.Do(func() {
		first = true
		s.isClosing.Store(true)
		close(s.closing)
	})
	if !first {
		return ErrClosed
	}
	// The compactor stops first; Close waits for a compaction in flight,
	// as for any command.
	s.compactor.close()
	if s.gate != nil {
		// Pebble's Close waits for compactions, one of which may wait
		// for room.
		s.gate.close()
	}
	deadline := time.Now().Add(s.closeWait)
	for poll := closePoll; !s.life.TryLock(); poll = min(2*poll, closeRetry) {
		// Commands end by themselves (a long scan too), unless the
		// storage holds their writes: then Close stops waiting.
		held, stalled := s.inflight.pending.Load(), s.stall.stalled.Load() > 0
		if (held > 0 || stalled) && !time.Now().Before(deadline) {
			go s.finishClose()
			return fmt.Errorf("close store: %w: the storage still holds writes after %v (%d of them told their callers they are in doubt; Pebble's write stall: %v); the store closes if they end, and the log decides at the next start",
				ErrCloseInDoubt, s.closeWait, held, stalled)
		}
		time.Sleep(poll)
	}
	return s.closeLocked()
}

// finishClose closes the store once the commands Close stopped waiting
// for have ended, if they do.
func (s *Store) finishClose() {
	for !s.life.TryLock() {
		time.Sleep(closeRetry)
	}
	if err := s.closeLocked(); err != nil {
		s.logger.Warn("closing the store after its writes in doubt ended", "dir", s.dir, "err", err)
	}
}

// closeLocked closes Pebble; s.life is write-held and is released.
func (s *Store) closeLocked() error {
	defer close(s.closeDone)
	s.closed = true
	s.iters.close()
	err := s.db.Close()
	s.cache.Unref()
	s.life.Unlock()
	s.compactor.wait()
	if err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// enter marks a command in flight; it fails with ErrClosed after Close
// began (the caller names the command in the error; enter takes no name
// so that the common path formats and boxes nothing). The caller calls
// s.exit when done with the database.
func (s *Store) enter() error {
	if s.isClosing.Load() {
		// Not RLock: a Close that gave up waiting leaves finishClose
		// polling, and a command must not queue behind it.
		return ErrClosed
	}
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return ErrClosed
	}
	return nil
}

// exit ends what enter began.
func (s *Store) exit() { s.life.RUnlock() }

// mutate runs one write command: it checks the region, takes the latches
// of keys, lets decide read the keys' records and fill a batch, and applies
// the batch. Everything decide reads of keys stays as it read it until the
// batch is applied, which makes the command atomic per key.
func (s *Store) mutate(ctx context.Context, rc RegionCtx, what string, keys [][]byte, decide func(r *mvccReader, wb *writeBatch) error) error {
	return s.mutateThen(ctx, rc, what, keys, decide, nil)
}

// mutateThen is mutate with a follow-up: settled (nil: none) runs once,
// when the command's write is applied or has failed (with the latches
// still held), or the command failed before it wrote. When ctx ends while the write is inside the
// storage, mutateThen returns a *WriteInDoubtError and the write's own
// goroutine keeps the latches, the store's life and the follow-up until
// the write settles (inflight.go).
func (s *Store) mutateThen(ctx context.Context, rc RegionCtx, what string, keys [][]byte, decide func(r *mvccReader, wb *writeBatch) error, settled func()) error {
	if settled == nil {
		settled = func() {}
	}
	reg, err := s.regions.check(rc, 0, keys...)
	if err != nil {
		settled()
		return err
	}
	if err := s.enter(); err != nil {
		settled()
		return fmt.Errorf("%s: %w", what, err)
	}
	g, err := s.acquireLatches(ctx, keys)
	if err != nil {
		settled()
		s.exit()
		return fmt.Errorf("%s: %w", what, err)
	}
	r := newMVCCReader(s.db)
	// Under the latches the lock set is exact on keys: a key it lacks has
	// no lock, and the reader skips the lookup; and a cached write-space
	// iterator reads them as a fresh one would (borrowIters).
	r.lockSet = s.locks
	r.borrowIters(s.iters, keys)
	wb := &writeBatch{}
	err = decide(r, wb)
	r.close()
	if err != nil {
		settled()
		g.Release()
		s.exit()
		return wrapInternal(what, err)
	}
	// release gives up what the command holds of the keys once its batch
	// is visible (wb.visible, before the sync ends) or settled, whichever
	// comes first. Both run on the goroutine that writes, visible first,
	// so early needs no lock.
	early := false
	release := func(err error) {
		if err == nil {
			if !wb.collects && !wb.empty() {
				reg.gc.wrote()
			}
			s.waiters.released(wb.lockDels)
		}
		settled()
		g.Release()
	}
	wb.visible = func() {
		early = true
		s.unsynced.Add(1)
		release(nil)
	}
	err = s.writeOwned(ctx, wb, func(err error) {
		if early {
			s.unsynced.Add(-1)
		} else {
			release(err)
		}
		s.exit()
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if wb.empty() && wb.ackDurable && s.unsynced.Load() > 0 {
		// The command's answer may rest on a batch another command made
		// visible before its sync ended: answer once that is durable
		// too. Other answers (a transaction's status, a read) may rest
		// on it as on any visible batch: what a resolver writes from
		// them is synced after it in the one WAL.
		if err := s.Sync(ctx); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// acquireLatches takes the latches of keys for a command. A holder may be
// a write the storage holds in a stall on a full disk, which lets go only
// once space is freed: while the store refuses writes for such a stall
// (writestall.go) the wait ends with the *DiskFullError instead.
func (s *Store) acquireLatches(ctx context.Context, keys [][]byte) (*latch.Guard, error) {
	for {
		g, err := s.latches.AcquireOr(ctx, keys, s.stall.refusing())
		if !errors.Is(err, latch.ErrAborted) {
			return g, err
		}
		if full := s.stallRefusal(); full != nil {
			s.space.countStalled()
			return nil, full
		}
		// The store took writes again as the wait ended: wait anew.
	}
}

// LocateKey returns the region that holds key.
func (s *Store) LocateKey(key []byte) (RegionInfo, error) { return s.regions.locate(key) }

// Regions returns the regions the store serves, by start key.
func (s *Store) Regions() []RegionInfo { return s.regions.all() }

// SplitRegion splits the region holding splitKey into [start, splitKey)
// (keeping its id) and [splitKey, end) (a new id). Both halves get the
// next epoch version, so requests routed by the old descriptor get a
// *RegionError, and both inherit the region's max_read_ts.
func (s *Store) SplitRegion(ctx context.Context, splitKey []byte) (left, right RegionInfo, err error) {
	if err := s.enter(); err != nil {
		return left, right, fmt.Errorf("split at %q: %w", splitKey, err)
	}
	defer s.exit()
	return s.regions.split(ctx, s.applier, splitKey)
}

// UpdateMaxReadTS raises the max_read_ts of every region to ts. A restarted
// node does not know the reads served before the restart, so it must call
// this with a fresh timestamp from the oracle before serving one-phase
// commits: every read before the restart used a timestamp below that one.
func (s *Store) UpdateMaxReadTS(ts uint64) { s.regions.observeAll(ts) }
