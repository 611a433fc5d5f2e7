package kv

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// TestScanUnderChurn is a measurement, not a check: the workload of
// bench/cmd/gcbench's churn mode in process, on the store alone (rows of
// about 130 bytes, one-phase updates of random rows at a set rate, GC at
// a safe point a life time behind, the compaction after GC), sampling a
// full scan's time and what it stepped over (ScanCost) and the LSM's
// shape. It runs only with PERCDB_SCAN_CHURN set to its duration, e.g.
//
//	PERCDB_SCAN_CHURN=3m go test ./kv -run TestScanUnderChurn -v -timeout 20m
//
// PERCDB_SCAN_CHURN_{ROWS,RATE,LIFE,INTERVAL,SAMPLE} change the rows
// (100000), updates a second (2865), life time (1m), GC interval (30s) and
// sample period (30s); PERCDB_SCAN_CHURN_READCOMPACT=0 turns the
// read-triggered compaction off; PERCDB_SCAN_CHURN_SPACE=off opens the
// store with the latest space off (the server's default), so that the
// scans walk the write space; PERCDB_SCAN_CHURN_L0 sets Pebble's
// L0CompactionThreshold (its default, 4, when unset);
// PERCDB_SCAN_CHURN_FORMAT=old opens the store at the format of before
// storeFormat (sstables RocksDBv2, no prefix marks or value blocks). The
// last line adds the CPU time of GC's calls (its walk and deletions).
//
// PERCDB_SCAN_CHURN_COMPACT=1 compacts the write space after each
// sample's scans (its LSM figures are after the compaction), so that the
// next one finds the versions written since in the memtable and level 0
// over one compacted level.
//
// The scans walk the store's latest space (latest.go).
// PERCDB_SCAN_CHURN_LATEST=1 measures that shape before the store had it:
// each row's newest value also kept under one key of its own, rewritten in
// place at every update (a key space of the test's, churnLatest, which
// Pebble compacts like any other but GC's compaction does not cover), and
// each sample adds a plain Pebble walk of that space: its CPU time and the
// internal points merged a row (the shadowed copies Pebble drops until a
// compaction removes them). The walk's time against its own at the first
// sample is what such a layout's scans would pay for the churn.
// PERCDB_SCAN_CHURN_LATEST=compact also compacts that space after a
// sample whose walk merged a quarter more points than rows, as the
// read-triggered compaction does for hidden points (scancost.go).
func TestScanUnderChurn(t *testing.T) {
	dur := churnEnv(t, "PERCDB_SCAN_CHURN", 0)
	if dur == 0 {
		t.Skip("a measurement: set PERCDB_SCAN_CHURN to its duration")
	}
	rows := int(churnEnvInt(t, "PERCDB_SCAN_CHURN_ROWS", 100000))
	rate := churnEnvInt(t, "PERCDB_SCAN_CHURN_RATE", 2865)
	life := churnEnv(t, "PERCDB_SCAN_CHURN_LIFE", time.Minute)
	interval := churnEnv(t, "PERCDB_SCAN_CHURN_INTERVAL", 30*time.Second)
	sample := churnEnv(t, "PERCDB_SCAN_CHURN_SAMPLE", 30*time.Second)
	readCompact := os.Getenv("PERCDB_SCAN_CHURN_READCOMPACT") != "0"
	space, spaceName := LatestAuto, "auto"
	if os.Getenv("PERCDB_SCAN_CHURN_SPACE") == "off" {
		space, spaceName = LatestOff, "off"
	}
	l0 := int(churnEnvInt(t, "PERCDB_SCAN_CHURN_L0", 0))
	compactAll := os.Getenv("PERCDB_SCAN_CHURN_COMPACT") == "1"
	var compactions int
	var compactTime time.Duration
	latest := os.Getenv("PERCDB_SCAN_CHURN_LATEST") != ""
	latestCompact := os.Getenv("PERCDB_SCAN_CHURN_LATEST") == "compact"
	var latestCompactions int
	var latestCompactTime time.Duration
	format := storeFormat
	if os.Getenv("PERCDB_SCAN_CHURN_FORMAT") == "old" {
		format = pebble.FormatMostCompatible
	}

	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{SyncWrites: SyncNone, Coprocessor: countCoprocessor{}, testingNoScanReports: !readCompact,
		Latest: space, testingL0CompactionThreshold: l0, testingFormat: format})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc := s.Regions()[0].Ctx()
	clock := &churnClock{}
	key := func(i int) []byte { return []byte(fmt.Sprintf("t\x80\x00\x00\x00\x00\x00\x00\x01_r%08d", i)) }
	value := func(rnd *rand.Rand) []byte {
		v := make([]byte, 130)
		rnd.Read(v)
		return v
	}
	put := func(keys [][]byte, rnd *rand.Rand) error {
		muts := make([]Mutation, len(keys))
		for i, k := range keys {
			muts[i] = Mutation{Op: OpPut, Key: k, Value: value(rnd)}
		}
		startTS := clock.now()
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: startTS, LockTTL: 3000,
			TryOnePC: true, MaxCommitTS: startTS + 1<<30})
		if err != nil {
			return err
		}
		if len(resp.Errors) > 0 {
			return resp.Errors[0]
		}
		if resp.OnePCCommitTS == 0 {
			if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: startTS, CommitTS: clock.now()}); err != nil {
				return err
			}
		}
		if latest {
			wb := s.db.NewBatch()
			for i, k := range keys {
				if err := wb.Set(append([]byte{churnLatest}, k...), muts[i].Value, nil); err != nil {
					return err
				}
			}
			return wb.Commit(pebble.NoSync)
		}
		return nil
	}
	rnd := rand.New(rand.NewSource(1))
	for lo := 0; lo < rows; lo += 1000 {
		var batch [][]byte
		for i := lo; i < min(lo+1000, rows); i++ {
			batch = append(batch, key(i))
		}
		if err := put(batch, rnd); err != nil {
			t.Fatal(err)
		}
	}

	var updates, conflicts atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the writer, paced to rate
		defer wg.Done()
		rnd := rand.New(rand.NewSource(2))
		began := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if due := time.Duration(float64(updates.Load()) / float64(rate) * float64(time.Second)); time.Since(began) < due {
				time.Sleep(due - time.Since(began))
			}
			if err := put([][]byte{key(rnd.Intn(rows))}, rnd); err != nil {
				conflicts.Add(1)
				continue
			}
			updates.Add(1)
		}
	}()
	var deleted atomic.Uint64
	var gcCPU atomic.Int64 // the CPU time of GC's calls (the scan and its deletions, not the compaction after)
	wg.Add(1)
	go func() { // GC, every interval at now - life
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			req := &GCRequest{Region: rc, SafePoint: tsAt(time.Now().Add(-life))}
			for {
				cpu0 := threadCPU(t)
				resp, err := s.GC(ctx, req)
				gcCPU.Add(int64(threadCPU(t) - cpu0))
				if err != nil {
					t.Error(err)
					return
				}
				deleted.Add(resp.VersionsDeleted)
				if resp.Next == nil {
					break
				}
				req.Start = resp.Next
			}
		}
	}()
	// A scan is a Coprocessor request counting the rows, as the server's
	// SELECT SUM(k); its time is the CPU time of its thread (the walk
	// runs in the caller's goroutine), which the machine's load changes
	// less than the wall clock.
	scan := func() (time.Duration, ScanCost) {
		before := s.ScanCost()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0 := threadCPU(t)
		var resp *CoprocessorResponse
		var err error
		pprof.Do(ctx, pprof.Labels("churn", "scan"), func(ctx context.Context) {
			resp, err = s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Start: key(0), Version: clock.now()})
		})
		took := threadCPU(t) - cpu0
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(string(resp.Data)); n != rows || resp.Resume != nil {
			t.Fatalf("scan counted %s rows (resume %q), want %d", resp.Data, resp.Resume, rows)
		}
		after := s.ScanCost()
		return took, ScanCost{Keys: after.Keys - before.Keys, Records: after.Records - before.Records, Points: after.Points - before.Points}
	}
	// walkLatest walks the churnLatest space with a plain Pebble
	// iterator, as the scan walks the write space: its thread CPU time
	// and the internal points it merged.
	walkLatest := func() (time.Duration, int) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0 := threadCPU(t)
		iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{churnLatest}, UpperBound: []byte{churnLatest + 1}})
		if err != nil {
			t.Fatal(err)
		}
		n, size := 0, 0
		for ok := iter.First(); ok; ok = iter.Next() {
			n++
			size += len(iter.Value())
		}
		st := iter.Stats()
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		took := threadCPU(t) - cpu0
		if n != rows || size == 0 {
			t.Fatalf("walk of the latest space met %d rows, want %d", n, rows)
		}
		return took, st.ForwardSeekCount[pebble.InternalIterCall] + st.ForwardStepCount[pebble.InternalIterCall]
	}
	t.Logf("%d rows, %d updates/s, life %v, GC every %v, read-triggered compaction %v, format %s, store's latest space %v, test's latest space %v",
		rows, rate, life, interval, readCompact, format, spaceName, latest)
	t.Logf("| s | scan CPU ms (median of 5) | records/row | hidden points/row | L0 files | L0 sublevels | memtables | updates | deleted | compactions | latest walk CPU ms (median of 5) | latest points/row |")
	began := time.Now()
	sampleNow := func() {
		took, cost := medianOf5(scan)
		latestCPU, latestPoints := "", ""
		if latest {
			walk, points := medianOf5(walkLatest)
			latestCPU, latestPoints = fmt.Sprintf("%.1f", float64(walk.Microseconds())/1000), fmt.Sprintf("%.2f", float64(points)/float64(rows))
			if latestCompact && points >= rows+rows/4 {
				// What the read-triggered compaction (scancost.go) does
				// for hidden points: a quarter more points than rows.
				t0 := time.Now()
				if err := s.db.Compact([]byte{churnLatest}, []byte{churnLatest + 1}, false); err != nil {
					t.Fatal(err)
				}
				latestCompactions++
				latestCompactTime += time.Since(t0)
			}
		}
		if compactAll {
			t0 := time.Now()
			if err := s.db.Compact([]byte{keyspace.Write}, keyspace.SpaceEnd(keyspace.Write), false); err != nil {
				t.Fatal(err)
			}
			compactions++
			compactTime += time.Since(t0)
		}
		m := s.db.Metrics()
		st := s.GCCompactionStats()
		t.Logf("| %.0f | %.1f | %.2f | %.2f | %d | %d | %d | %d | %d | %d | %s | %s |", time.Since(began).Seconds(), float64(took.Microseconds())/1000,
			float64(cost.Records)/float64(rows), float64(cost.Points-cost.Records)/float64(rows),
			m.Levels[0].NumFiles, m.Levels[0].Sublevels, m.MemTable.Count, updates.Load(), deleted.Load(), st.Compactions, latestCPU, latestPoints)
	}
	sampleNow()
	tick := time.NewTicker(sample)
	end := time.After(dur)
loop:
	for {
		select {
		case <-tick.C:
			sampleNow()
		case <-end:
			break loop
		}
	}
	tick.Stop()
	close(stop)
	wg.Wait()
	t.Logf("updates %d, failed %d; versions deleted %d, GC CPU %v; compaction after GC %+v; scans %+v", updates.Load(), conflicts.Load(),
		deleted.Load(), time.Duration(gcCPU.Load()).Round(time.Millisecond), s.GCCompactionStats(), s.ScanCost())
	// What the layout costs the writes: the bytes of the write-ahead log
	// and of the sstables flushes and compactions wrote (the updates'
	// write amplification, which a second key per write adds to).
	m, total := s.db.Metrics(), s.db.Metrics().Total()
	t.Logf("bytes written: WAL %.1f MiB, flushes %.1f MiB, compactions %.1f MiB", float64(m.WAL.BytesWritten)/(1<<20),
		float64(total.BytesFlushed)/(1<<20), float64(total.BytesCompacted)/(1<<20))
	if compactAll {
		t.Logf("compactions of the write space %d, %v", compactions, compactTime.Round(time.Millisecond))
	}
	if latestCompact {
		t.Logf("compactions of the latest space %d, %v", latestCompactions, latestCompactTime.Round(time.Millisecond))
	}
}

// medianOf5 runs f five times and returns the median of the durations it
// returned, with the other result of its last run.
func medianOf5[T any](f func() (time.Duration, T)) (time.Duration, T) {
	var times []time.Duration
	var last T
	for range 5 {
		d, v := f()
		times = append(times, d)
		last = v
	}
	slices.Sort(times)
	return times[2], last
}

// churnLatest prefixes TestScanUnderChurn's copies of each row's newest
// value (PERCDB_SCAN_CHURN_LATEST): a byte no key space of the store's
// uses, above the write space's.
const churnLatest = 'x'

// churnClock hands out increasing timestamps of the oracle's layout.
type churnClock struct {
	mu   sync.Mutex
	last uint64
}

func (c *churnClock) now() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = max(c.last+1, tsAt(time.Now()))
	return c.last
}

// tsAt is the first timestamp of t's millisecond (physical << 18).
func tsAt(t time.Time) uint64 { return uint64(t.UnixMilli()) << 18 }

func churnEnv(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func churnEnvInt(t *testing.T, name string, def int64) int64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// threadCPU is the CPU time of the calling thread so far.
func threadCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countCoprocessor's programs count the pairs they are fed.
type countCoprocessor struct{}

type countProgram struct{ n int }

func (countCoprocessor) Compile([]byte) (CoprocessorProgram, error) { return &countProgram{}, nil }

func (p *countProgram) Feed(_, _ []byte) (full, done bool, err error) {
	p.n++
	return false, false, nil
}

func (p *countProgram) Output() ([]byte, error) { return strconv.AppendInt(nil, int64(p.n), 10), nil }
