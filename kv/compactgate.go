package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// Compactions wait for disk room (issue 22).
//
// A compaction writes its output tables before it deletes its inputs, so
// it needs free space of the order of its inputs. Pebble v1.1.5 bounds
// the expansion of a compaction by half the free space, but not the
// compaction it first picks (a level-0 compaction takes every overlapping
// file of level 0 and the base level), and it does not stop compacting
// on a full disk: a compaction larger than the space left fails for
// space, is picked again at once and fails again, and every memtable
// flush that runs beside it fails too, since the compaction's partial
// outputs hold the space the flush needs. Writes then wait in Pebble's
// write stall for good. Nothing in Pebble's options stops automatic
// compactions once the store is open (DisableAutomaticCompactions is read
// from a private copy of the options; MaxConcurrentCompactions must not
// return 0, the picker divides by it).
//
// compactionGate is the lever: the store's file system (gateFS) hands
// Pebble files whose first write asks the gate, and the gate knows from
// Pebble's events which files are a compaction's outputs
// (TableCreated, reason "compacting") and how large the compaction's
// inputs are (CompactionBegin). A compaction's first write waits until
// the free space holds its inputs plus flushRoom (what the memtables
// that may queue for a flush need), polling every compactionPoll, for at
// most compactionMaxWait; then it fails with *compactionRoomError
// (ENOSPC) and Pebble picks again, which lets delete-only compactions
// (which write nothing and free space) run in between. The wait holds no
// Pebble lock: flushes go on beside it and get the space. While a
// compaction waits the space guard counts the store as full (writes that
// add data are refused, the ballast is released) and stays so until the
// disk has room for the compaction as well as the reserve; memtable
// flushes and delete-only, move and elision compactions are never held.
//
// A compaction can need more than the disk could ever give the store: a
// level-0 compaction takes every level-0 file it overlaps, and its need
// (inputs plus flushRoom) can exceed the file system's size less the
// store's live files, which is what the store would have if every other
// file were deleted (its ceiling, read from Pebble's metrics at each poll).
// Pebble v1.1.5 cannot be made to pick such a compaction in smaller
// pieces: its level-0 pick stacks the overlapping files of every sublevel
// and bounds them only past 100 MiB, and files written across the whole
// key space (each memtable holds the three Percolator spaces) overlap
// every other. Holding the store full for it, as above, would refuse
// writes for good: the disk can never reach its need. So a compaction
// that can never fit is given up on: it still waits, as above, and fails
// with *compactionRoomError after compactionMaxWait (Pebble picks it
// again, and the gate looks again: the ceiling grows if the store's files
// shrink or the file system grows), but it does not count the store full;
// the store takes writes while the disk has room for them (the reserve
// rules of space.go), and flushes go on, so level 0 grows and reads
// consult more files (Pebble's read amplification, logged here and
// exported as percdb_pebble_read_amplification). It is safe: the
// compaction never writes, so it takes none of the room flushes need; no
// data moves, so nothing is lost; and the writes that fill the disk meet
// the reserve as on any disk.
type compactionGate struct {
	dir   string
	usage func(dir string) (diskUsage, error)
	// space is told the room a waiting compaction needs (nil: no disk
	// protection; the gate still holds compactions back).
	space *spaceGuard
	// live returns the bytes of the store's live files (tables and log)
	// and its read amplification, ok false while the store cannot tell
	// (pebble.Open has not returned; a compaction then waits without
	// counting the store full). nil: the ceiling is unknown and no
	// compaction is given up on. Set before Pebble opens.
	live func() (bytes uint64, readAmp int, ok bool)
	// flushRoom is the free space kept for memtable flushes: Pebble's
	// memtable size times the memtables that may queue.
	flushRoom uint64
	log       *slog.Logger
	// closing is closed by Store.Close: a waiting compaction gives up,
	// so that Pebble's Close, which waits for compactions, returns.
	closing   chan struct{}
	closeOnce sync.Once
	// poll and maxWait are compactionPoll and compactionMaxWait;
	// replaced in tests.
	poll, maxWait time.Duration

	mu sync.Mutex
	// jobs holds the input bytes of each compaction running, by job id.
	jobs map[int]uint64
	// outputs maps an output table's path to its compaction's job id.
	outputs map[string]int
	// admitted holds the jobs whose outputs may be written.
	admitted map[int]bool
	// waited counts the compactions that waited for room, failed the
	// count of those that gave up, neverFit those that needed more than
	// the disk could ever give the store (given up on, not waited for).
	waited, failed, neverFit uint64
	// neverFitAt is when a compaction was last found never to fit, in
	// Unix nanoseconds (0: never); read without mu on every write
	// (Store.mayStall).
	neverFitAt atomic.Int64
}

const (
	// compactionPoll is how often a waiting compaction reads the free
	// space.
	compactionPoll = 100 * time.Millisecond
	// compactionMaxWait is how long a compaction waits for room before it
	// fails and Pebble picks again.
	compactionMaxWait = 2 * time.Second
)

// minReserveSpace is the smallest reserve Open accepts: what Pebble
// needs to write what it accepted once the ballast is released, the
// memtables that may queue for a flush (their table files) and a new
// log file (Pebble preallocates 110% of a memtable). Below it, a store
// that stops taking writes at the reserve can still fail its flushes for
// want of space, and then every write waits in Pebble's write stall
// until space is freed (issue 22). Pebble panics when it cannot create
// the log file.
func minReserveSpace() int64 {
	d := (&pebble.Options{}).EnsureDefaults()
	return int64(d.MemTableSize*uint64(d.MemTableStopWritesThreshold) + d.MemTableSize*11/10)
}

// l0StopWritesThreshold is Pebble's L0StopWritesThreshold for the store:
// the depth of level 0 (its sublevels) at which Pebble holds every write
// until a compaction makes it shallower. Pebble's default, 12, is reached
// at once by a store whose level 0 filled while its compactions could not
// run (a full disk; each memtable holds the three Percolator spaces, so
// each flush is a sublevel of its own), and a stall on it then lasts as
// long as the compaction cannot run, for good when it can never fit
// (compactionGate). 36 is RocksDB's level0_stop_writes_trigger; with it,
// writes go on while level 0 deepens (reads consult more files) and the
// disk's reserve, not the stall, stops them first. CockroachDB goes
// further (1000), behind admission control percdb does not have.
const l0StopWritesThreshold = 36

// compactionRoomError: a compaction waited compactionMaxWait for room on
// the disk and gave up. It wraps ENOSPC, so that Pebble's background
// error is counted as the disk being full.
type compactionRoomError struct {
	Dir               string
	Needed, Available uint64
}

func (e *compactionRoomError) Error() string {
	return fmt.Sprintf("compaction in %s needs %s free (its inputs and room for flushes), %s are: %v", e.Dir, formatBytes(e.Needed), formatBytes(e.Available), syscall.ENOSPC)
}

// Unwrap makes the error an ENOSPC.
func (e *compactionRoomError) Unwrap() error { return syscall.ENOSPC }

func newCompactionGate(dir string, usage func(string) (diskUsage, error), space *spaceGuard, flushRoom uint64, log *slog.Logger) *compactionGate {
	return &compactionGate{
		dir: dir, usage: usage, space: space, flushRoom: flushRoom, log: log,
		closing: make(chan struct{}), poll: compactionPoll, maxWait: compactionMaxWait,
		jobs: make(map[int]uint64), outputs: make(map[string]int), admitted: make(map[int]bool),
	}
}

// listen adds the gate's handlers to Pebble's event listener.
func (g *compactionGate) listen(l *pebble.EventListener) {
	l.CompactionBegin = g.compactionBegin
	l.CompactionEnd = g.compactionEnd
	l.TableCreated = g.tableCreated
}

// compactionBegin records the compaction's input bytes. Pebble calls it
// holding its DB mutex: it takes only the gate's.
func (g *compactionGate) compactionBegin(info pebble.CompactionInfo) {
	var n uint64
	for _, l := range info.Input {
		for _, t := range l.Tables {
			n += t.Size
		}
	}
	g.mu.Lock()
	g.jobs[info.JobID] = n
	g.mu.Unlock()
}

// compactionEnd forgets the compaction, whether it succeeded or not.
func (g *compactionGate) compactionEnd(info pebble.CompactionInfo) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.jobs, info.JobID)
	delete(g.admitted, info.JobID)
	for path, job := range g.outputs {
		if job == info.JobID {
			delete(g.outputs, path)
		}
	}
}

// tableCreated notes a compaction's output table, before its first write.
func (g *compactionGate) tableCreated(info pebble.TableCreateInfo) {
	if info.Reason != "compacting" {
		return // a flush's: never held
	}
	g.mu.Lock()
	g.outputs[info.Path] = info.JobID
	g.mu.Unlock()
}

// close makes every waiting compaction give up, at once and later.
func (g *compactionGate) close() { g.closeOnce.Do(func() { close(g.closing) }) }

// wait is called before the first write to the file at path: it returns
// at once unless path is the output of a compaction not yet admitted,
// which waits for room as the type's comment says.
func (g *compactionGate) wait(path string) error {
	g.mu.Lock()
	job, ok := g.outputs[path]
	if !ok || g.admitted[job] {
		g.mu.Unlock()
		return nil
	}
	need := g.jobs[job] + g.flushRoom
	for other := range g.admitted {
		need += g.jobs[other] // running beside it: count its inputs too
	}
	g.mu.Unlock()

	deadline := time.Now().Add(g.maxWait)
	// stated: the space guard counts the store full for this compaction;
	// counted: it is in waited, neverFits in neverFit.
	stated, counted, neverFits := false, false, false
	for {
		u, err := g.usage(g.dir)
		if err != nil || u.avail >= need {
			// Room, or no way to tell: let the compaction run.
			g.mu.Lock()
			g.admitted[job] = true
			g.mu.Unlock()
			if stated {
				g.space.compactionWaiting(0)
				g.log.Info("compaction has room on the disk again", "dir", g.dir, "needed", formatBytes(need), "available", formatBytes(u.avail))
			}
			return nil
		}
		// Unknown while Pebble is opening: look again at the next poll.
		ceiling, readAmp, known := g.ceiling(u)
		if known && need > ceiling {
			// It can never fit: give up on it (the type's comment),
			// and clear what an earlier pick that seemed to fit
			// stated, which would hold the store full a while longer.
			if !neverFits {
				neverFits = true
				g.neverFits(need, ceiling, readAmp)
				stated = true
			}
			if stated {
				stated = false
				g.space.compactionWaiting(0)
			}
		} else if known && !stated {
			stated = true
			if !counted {
				counted = true
				g.mu.Lock()
				g.waited++
				g.mu.Unlock()
			}
			// The store is full for what it must do: refuse writes
			// that add data and release the ballast, then look again.
			g.space.compactionWaiting(need)
			continue
		}
		if !time.Now().Before(deadline) {
			g.mu.Lock()
			g.failed++
			g.mu.Unlock()
			return &compactionRoomError{Dir: g.dir, Needed: need, Available: u.avail}
		}
		select {
		case <-g.closing:
			return &compactionRoomError{Dir: g.dir, Needed: need, Available: u.avail}
		case <-time.After(g.poll):
		}
	}
}

// ceiling returns the most free space the store could have: the file
// system's size, less its blocks only root may use and the store's live
// files (the ballast, dead tables and other programs' files could all be
// deleted). known is false while the store's figures are unknown; without
// a live function the ceiling is unbounded.
func (g *compactionGate) ceiling(u diskUsage) (ceiling uint64, readAmp int, known bool) {
	if g.live == nil {
		return math.MaxUint64, 0, true
	}
	bytes, readAmp, ok := g.live()
	if !ok {
		return 0, 0, false
	}
	used := bytes + u.rootOnly
	if used >= u.total {
		return 0, readAmp, true
	}
	return u.total - used, readAmp, true
}

// neverFits counts a compaction that needs more than the ceiling, and
// logs it unless one was logged within the last few picks.
func (g *compactionGate) neverFits(need, ceiling uint64, readAmp int) {
	g.mu.Lock()
	g.neverFit++
	g.mu.Unlock()
	now := time.Now().UnixNano()
	last := g.neverFitAt.Swap(now)
	quiet := last != 0 && time.Duration(now-last) < 3*g.maxWait
	if !quiet {
		g.log.Warn("a compaction needs more room than the disk can ever give the store: it is given up on and writes go on while the disk has room; level 0 grows and reads slow down until the file system grows or data is deleted",
			"dir", g.dir, "needed", formatBytes(need), "most_the_disk_can_free", formatBytes(ceiling), "read_amplification", readAmp)
	}
}

// neverFitting reports whether a compaction was found never to fit within
// the last few picks (false on a nil gate): level 0 cannot be compacted,
// so a write stall on its depth does not end by itself.
func (g *compactionGate) neverFitting() bool {
	if g == nil {
		return false
	}
	at := g.neverFitAt.Load()
	return at != 0 && time.Duration(time.Now().UnixNano()-at) < 3*g.maxWait
}

// counts returns how many compactions waited for room, how many gave up
// and how many could never fit.
func (g *compactionGate) counts() (waited, failed, neverFit uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waited, g.failed, g.neverFit
}

// isCompactionRoomError reports whether err is a compaction that waited
// for room and gave up (Pebble's background error need not back off: the
// gate waited).
func isCompactionRoomError(err error) bool {
	var e *compactionRoomError
	return errors.As(err, &e)
}

// gateFS is the store's file system: files it creates ask the gate before
// their first write.
type gateFS struct {
	vfs.FS
	gate *compactionGate
}

// Create implements vfs.FS.
func (fs gateFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &gateFile{File: f, gate: fs.gate, path: name}, nil
}

// gateFile is a file of gateFS: its first write asks the gate.
type gateFile struct {
	vfs.File
	gate   *compactionGate
	path   string
	passed atomic.Bool
}

// Write implements io.Writer.
func (f *gateFile) Write(p []byte) (int, error) {
	if !f.passed.Load() {
		if err := f.gate.wait(f.path); err != nil {
			return 0, err
		}
		f.passed.Store(true)
	}
	return f.File.Write(p)
}

// WriteAt implements io.WriterAt.
func (f *gateFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.passed.Load() {
		if err := f.gate.wait(f.path); err != nil {
			return 0, err
		}
		f.passed.Store(true)
	}
	return f.File.WriteAt(p, off)
}
