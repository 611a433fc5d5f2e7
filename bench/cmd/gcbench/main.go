// Command gcbench measures percdb's MVCC garbage collection (issue 16) on
// a private server started from a percdb binary. Two modes:
//
// Sizes are of the data directory without the disk protection's ballast
// file.
//
//	-mode drop: loads s.t (id INT PRIMARY KEY, k INT NOT NULL, pad
//	VARCHAR(120)) with -rows rows, times DROP TABLE, then sets
//	percdb_gc_life_time and percdb_gc_run_interval to 1s and reports how
//	long until GC destroyed the table's range and the data directory's
//	size before the drop, after it, and after GC.
//
//	-mode churn: loads -rows rows, then -writers connections run
//	autocommit UPDATE s.t SET k = k + 1 WHERE id = <random> for
//	-duration, with percdb_gc_life_time -life and percdb_gc_run_interval
//	-interval (-gc=false: both 8760h, no collection); every -sample it
//	reports the data directory's size, the time of a full scan (the median of five; SELECT
//	SUM(k) FROM s.t) and the GC's counters. -pause stops the writers
//	while a sample's scans run, so that the server's CPU over a scan (the
//	sum of its threads' run time, /proc/PID/task/*/schedstat) is the
//	scan's and not the writers'; the CPU column is then the median of the
//	five. -optimize compacts the loaded table before the first sample
//	(the load can leave level-0 files over it, which a fresh table's scan
//	would otherwise merge). -reference also loads s.f, the same rows
//	nobody updates, and scans it right after each scan of s.t: the
//	ratio of their CPU medians compares the churned table with a fresh
//	one in one process at one moment, which a comparison with the first
//	sample, minutes earlier on a shared machine, does not (the two alternate
//	which goes first, since the first scans after the writers pause also
//	pay for what the writes left to do). With
//	-status-port and -profile DIR, each sample also takes a CPU profile
//	of the server (DIR/second-S.prof, S seconds into the churn) over
//	-profile-time of back-to-back scans, writers paused, and prints how
//	many scans it covered.
//
// Run it from the root of the checkout:
//
//	go build -o /tmp/percdb ./cmd/percdb
//	go run ./bench/cmd/gcbench -binary /tmp/percdb -mode drop -rows 1000000
//	go run ./bench/cmd/gcbench -binary /tmp/percdb -mode churn -rows 20000 -duration 5m -life 1m -interval 30s
//	go run ./bench/cmd/gcbench -binary /tmp/percdb -mode churn -rows 20000 -duration 5m -gc=false
//	go run ./bench/cmd/gcbench -binary /tmp/percdb -mode churn -reference -optimize -rows 100000 -duration 8m -sample 1m
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/percdb/percdb/bench"
	"github.com/percdb/percdb/kv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gcbench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	mode               string
	rows, writers      int
	duration, sample   time.Duration
	life, interval     string
	gc                 bool
	destroyWaitTimeout time.Duration
	pause              bool
	statusPort         int
	profileDir         string
	profileTime        time.Duration
	pid                int
	optimize           bool
	compactEach        bool
	autoAnalyze        bool
	reference          bool
}

func run() error {
	var o options
	binary := flag.String("binary", "", "percdb server binary to measure (required)")
	flag.StringVar(&o.mode, "mode", "drop", "drop or churn")
	flag.IntVar(&o.rows, "rows", 1000000, "rows to load")
	flag.IntVar(&o.writers, "writers", 4, "churn: connections updating rows")
	flag.DurationVar(&o.duration, "duration", 5*time.Minute, "churn: how long the writers run")
	flag.DurationVar(&o.sample, "sample", time.Minute, "churn: time between measurements")
	flag.StringVar(&o.life, "life", "1m", "churn: percdb_gc_life_time")
	flag.StringVar(&o.interval, "interval", "30s", "churn: percdb_gc_run_interval")
	flag.BoolVar(&o.gc, "gc", true, "churn: collect (false: life time and interval 8760h)")
	flag.DurationVar(&o.destroyWaitTimeout, "destroy-timeout", 10*time.Minute, "drop: how long to wait for GC to destroy the table")
	flag.BoolVar(&o.optimize, "optimize", false, "churn: OPTIMIZE TABLE (a compaction of the table) after the load, so that the fresh table's scan is over one compacted level")
	flag.BoolVar(&o.compactEach, "compact-each", false, "churn: OPTIMIZE TABLE s.t at each sample, writers paused, before its scans (an experiment: what the churned table's scan costs with its versions compacted into one level)")
	flag.BoolVar(&o.autoAnalyze, "auto-analyze", true, "churn: leave the server's auto-analyze on (false: SET GLOBAL tidb_enable_auto_analyze = OFF, so that no analyze of the churned table, a walk of it at half a core, runs beside a sample's scans and counts in their CPU)")
	flag.BoolVar(&o.reference, "reference", false, "churn: also load s.f, a copy of the table nobody updates, and scan it beside s.t at each sample (implies -pause): the ratio of the two scans' CPU, taken in the same process at the same moment, is what the churn costs")
	flag.BoolVar(&o.pause, "pause", false, "churn: pause the writers during a sample's scans (the server's CPU for a scan is then the scan's)")
	flag.IntVar(&o.statusPort, "status-port", 0, "the server's --status-port (0: none), for -profile")
	flag.StringVar(&o.profileDir, "profile", "", "churn: directory for a CPU profile of the server's scans at each sample (needs -status-port; implies -pause)")
	flag.DurationVar(&o.profileTime, "profile-time", 3*time.Second, "churn: how long each sample's profile runs scans")
	latestSpace := flag.String("latest-space", "auto", "the server's --latest-space (empty: the binary's default, off since session 42; churn is what the latest space is for)")
	flag.Parse()
	if *binary == "" {
		return errors.New("give -binary")
	}
	if o.reference {
		o.pause = true
	}
	if o.profileDir != "" {
		if o.statusPort == 0 {
			return errors.New("-profile needs -status-port")
		}
		o.pause = true
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	ctx := context.Background()
	args := []string{"--status-port=" + strconv.Itoa(o.statusPort)}
	if *latestSpace != "" {
		args = append(args, "--latest-space="+*latestSpace)
	}
	srv, err := bench.StartPercdb(ctx, bench.PercdbOptions{Binary: *binary, Args: args})
	if err != nil {
		return err
	}
	defer srv.Stop()
	o.pid = srv.PID()
	db, err := srv.OpenDB()
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(o.writers + 4)
	dataDir := filepath.Join(srv.Dir(), "data")
	loadStart := time.Now()
	if err := bench.CreateAndLoad(db, o.rows); err != nil {
		return err
	}
	if o.mode == "churn" && o.reference {
		if _, err := db.Exec("CREATE TABLE s.f (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(120))"); err != nil {
			return fmt.Errorf("create s.f: %w", err)
		}
		if err := bench.LoadRows(db, "s.f", o.rows); err != nil {
			return err
		}
	}
	fmt.Printf("loaded %d rows in %v, data directory %s\n", o.rows, time.Since(loadStart).Round(time.Millisecond), size(dataDir))
	switch o.mode {
	case "drop":
		return drop(db, dataDir, o)
	case "churn":
		return churn(db, dataDir, o)
	}
	return fmt.Errorf("unknown mode %q", o.mode)
}

// drop times DROP TABLE and the GC's destruction of the table's range.
func drop(db *sql.DB, dataDir string, o options) error {
	before := dirSize(dataDir)
	fmt.Printf("before the drop: %s\n", files(dataDir))
	start := time.Now()
	if _, err := db.Exec("DROP TABLE s.t"); err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("DROP TABLE of %d rows: %v; data directory %s before, %s after the drop\n", o.rows, took.Round(time.Microsecond), mib(before), size(dataDir))
	for _, q := range []string{"SET GLOBAL percdb_gc_life_time = '1s'", "SET GLOBAL percdb_gc_run_interval = '1s'"} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	deadline := time.Now().Add(o.destroyWaitTimeout)
	for {
		var destroyed int
		if err := statusInt(db, "Percdb_gc_ranges_destroyed", &destroyed); err != nil {
			return err
		}
		if destroyed > 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the range was not destroyed in %v", o.destroyWaitTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("GC destroyed the range %v after the DROP; data directory %s (%s)\n", time.Since(start).Round(time.Millisecond), size(dataDir), files(dataDir))
	return printStatus(db)
}

// churn runs the update-heavy workload and samples size and scan time.
func churn(db *sql.DB, dataDir string, o options) error {
	life, interval := o.life, o.interval
	if !o.gc {
		life, interval = "8760h", "8760h"
	}
	for _, q := range []string{
		"SET GLOBAL percdb_gc_life_time = '" + life + "'",
		"SET GLOBAL percdb_gc_run_interval = '" + interval + "'",
	} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if !o.autoAnalyze {
		if _, err := db.Exec("SET GLOBAL tidb_enable_auto_analyze = OFF"); err != nil {
			return fmt.Errorf("turn auto-analyze off: %w", err)
		}
	}
	if o.optimize {
		q := "OPTIMIZE TABLE s.t"
		if o.reference {
			q += ", s.f"
		}
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	fmt.Printf("GC %v: life time %s, run interval %s, %d writers for %v\n", o.gc, life, interval, o.writers, o.duration)
	fmt.Println("| minute | data directory | full scan | server CPU a scan | fresh table's scan: CPU | ratio | updates | versions deleted by GC |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var updates, errs atomic.Int64
	stop := make(chan struct{})
	// paused is held for reading over every writer's statement and for
	// writing while a sample scans, when -pause (a waiting sample keeps
	// new statements out: sync.RWMutex lets a pending Lock go first).
	var paused sync.RWMutex
	var wg sync.WaitGroup
	for w := 0; w < o.writers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(seed))
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Held over the statement, so that a sample's scans
				// start once every update in flight has finished.
				paused.RLock()
				_, err := db.Exec("UPDATE s.t SET k = k + 1 WHERE id = ?", 1+rnd.Intn(o.rows))
				paused.RUnlock()
				if err != nil {
					errs.Add(1)
					continue
				}
				updates.Add(1)
			}
		}(int64(w) + time.Now().UnixNano())
	}
	start := time.Now()
	sampleAt := func() error {
		// pauseWait is how long the sample waited for the updates in
		// flight to finish: a sample that comes late (session 42's
		// first samples came minutes late) says here whether the
		// writers held it up.
		var pauseWait time.Duration
		if o.pause {
			waitStart := time.Now()
			paused.Lock()
			pauseWait = time.Since(waitStart)
			defer paused.Unlock()
		}
		if o.compactEach {
			if _, err := db.Exec("OPTIMIZE TABLE s.t"); err != nil {
				return fmt.Errorf("OPTIMIZE TABLE s.t: %w", err)
			}
		}
		// The median of five scans: on a shared machine one scan's time
		// jumps with the load.
		scans := make([]time.Duration, 5)
		cpus := make([]time.Duration, 5)
		refs := make([]time.Duration, 5)
		var walked, walkedBefore storeWalks
		scanFresh := func(i int) error {
			cpuStart := serverCPU(o.pid)
			if err := scan(db, "s.f"); err != nil {
				return err
			}
			refs[i] = serverCPU(o.pid) - cpuStart
			return nil
		}
		for i := range scans {
			// With -reference, the fresh table is scanned right before
			// the churned one in every other pair, right after it in
			// the others: the work the writers left behind when they
			// paused (a memtable's flush, the compactions it brings, a
			// GC pass) runs during the first scans of a sample, and the
			// server's CPU over a scan counts it, so a fixed order
			// charged it to the churned table.
			freshFirst := o.reference && i%2 == 1
			if freshFirst {
				if err := scanFresh(i); err != nil {
					return err
				}
			}
			walkedBefore = readStoreWalks(o.statusPort)
			cpuStart := serverCPU(o.pid)
			scanStart := time.Now()
			if err := scan(db, "s.t"); err != nil {
				return err
			}
			scans[i] = time.Since(scanStart)
			cpus[i] = serverCPU(o.pid) - cpuStart
			walked.addSince(walkedBefore, readStoreWalks(o.statusPort))
			if o.reference && !freshFirst {
				if err := scanFresh(i); err != nil {
					return err
				}
			}
		}
		slices.Sort(scans)
		slices.Sort(cpus)
		slices.Sort(refs)
		minute := time.Since(start).Minutes()
		cpu, ref, ratio := "-", "-", "-"
		if o.pause {
			cpu = cpus[len(cpus)/2].Round(100 * time.Microsecond).String()
		}
		if o.reference {
			ref = refs[len(refs)/2].Round(100 * time.Microsecond).String()
			ratio = fmt.Sprintf("%.2fx", float64(cpus[len(cpus)/2])/float64(refs[len(refs)/2]))
		}
		if o.profileDir != "" {
			if err := profileScans(db, o, filepath.Join(o.profileDir, fmt.Sprintf("second-%04.0f.prof", minute*60))); err != nil {
				return err
			}
		}
		var deleted int
		if err := statusInt(db, "Percdb_gc_keys_deleted", &deleted); err != nil {
			return err
		}
		if o.statusPort != 0 {
			now := readStoreWalks(o.statusPort)
			fmt.Printf("<!-- minute %.1f: latest space on %v, ranges on %v (switched on %v, off %v times, compacted %v times); the churned table's scans: %.3f hidden points a record; the pause waited %v for the writers; compactions after GC %v (%s) -->\n",
				minute, now.latestOn, now.rangesOn, now.switchedOn, now.switchedOff, now.latestCompactions, walked.hiddenShare(), pauseWait.Round(time.Millisecond), now.gcCompactions, mib(int64(now.gcCompactedBytes)))
		}
		fmt.Printf("| %.1f | %s | %v | %s | %s | %s | %d | %d |\n", minute, size(dataDir), scans[len(scans)/2].Round(time.Millisecond), cpu, ref, ratio, updates.Load(), deleted)
		return nil
	}
	if err := sampleAt(); err != nil {
		return err
	}
	tick := time.NewTicker(o.sample)
	defer tick.Stop()
	end := time.After(o.duration)
	var err error
loop:
	for {
		select {
		case <-tick.C:
			if err = sampleAt(); err != nil {
				break loop
			}
		case <-end:
			break loop
		}
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	fmt.Printf("writers: %d updates, %d errors\n", updates.Load(), errs.Load())
	return printStatus(db)
}

// scan runs the full scan a sample times of table.
func scan(db *sql.DB, table string) error {
	var sum int64
	return db.QueryRow("SELECT SUM(k) FROM " + table).Scan(&sum)
}

// profileScans writes a CPU profile of the server, taken from its status
// port over o.profileTime, to path while scans run back to back.
func profileScans(db *sql.DB, o options, path string) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", o.statusPort, max(1, int(o.profileTime.Seconds())))
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	for scans := 0; ; scans++ {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("profile %s: %w", url, err)
			}
			// The count divides the profile's samples into a scan's.
			fmt.Printf("<!-- %s: %d scans -->\n", path, scans)
			return nil
		default:
		}
		if err := scan(db, "s.t"); err != nil {
			return err
		}
	}
}

// serverCPU is the run time of the process's threads so far, from
// /proc/PID/task/*/schedstat (nanoseconds, unlike /proc/PID/stat's clock
// ticks, which are too coarse for a scan of tens of milliseconds). A
// thread that exited no longer counts; the Go runtime keeps its threads.
func serverCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited meanwhile
		}
		var run int64
		if _, err := fmt.Sscan(string(b), &run); err == nil {
			ns += run
		}
	}
	return time.Duration(ns)
}

// statusInt reads an integer row of SHOW STATUS.
func statusInt(db *sql.DB, name string, v *int) error {
	var n string
	if err := db.QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(&n, v); err != nil {
		return fmt.Errorf("SHOW STATUS LIKE %s: %w", name, err)
	}
	return nil
}

// printStatus prints the GC's rows of SHOW STATUS.
func printStatus(db *sql.DB) error {
	rows, err := db.Query("SHOW STATUS LIKE 'Percdb_gc%'")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			return err
		}
		fmt.Printf("  %s = %s\n", n, v)
	}
	return rows.Err()
}

// files describes the store's files by kind: tables, logs, others.
func files(dir string) string {
	var sst, wal, other int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == kv.BallastFile {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		switch filepath.Ext(path) {
		case ".sst":
			sst += info.Size()
		case ".log":
			wal += info.Size()
		default:
			other += info.Size()
		}
		return nil
	})
	return fmt.Sprintf("tables %s, logs %s, other %s", mib(sst), mib(wal), mib(other))
}

// dirSize is the total size of the files under dir but the disk
// protection's ballast (kv.BallastFile), which is reserved space, not
// data.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file Pebble removed meanwhile
		}
		if d.Name() == kv.BallastFile {
			return nil
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

func size(dir string) string { return mib(dirSize(dir)) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// storeWalks are the server's store figures that say what its scans
// walked (its status port's /metrics): the latest space's state, the
// range reads' records and the internal points merged for them, and the
// compactions after GC.
type storeWalks struct {
	latestOn, switchedOn, switchedOff, latestCompactions float64
	// rangesOn: the ranges whose copies scans read (kv/latestranges.go).
	rangesOn        float64
	records, points float64
	// gcCompactions and gcCompactedBytes are the compactions after GC
	// (kv/gccompact.go) and the sstable bytes they rewrote.
	gcCompactions, gcCompactedBytes float64
}

// readStoreWalks reads them from the status port (zero: no port, or the
// read failed).
func readStoreWalks(port int) storeWalks {
	var w storeWalks
	if port == 0 {
		return w
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return w
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return w
	}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "percdb_kv_latest_space_on":
			w.latestOn = v
		case "percdb_kv_latest_space_ranges_on":
			w.rangesOn = v
		case `percdb_kv_latest_space_switches_total{to="on"}`:
			w.switchedOn = v
		case `percdb_kv_latest_space_switches_total{to="off"}`:
			w.switchedOff = v
		case "percdb_kv_latest_space_compactions_total":
			w.latestCompactions = v
		case "percdb_kv_scan_records_total":
			w.records = v
		case "percdb_kv_scan_points_total":
			w.points = v
		case "percdb_kv_gc_compactions_total":
			w.gcCompactions = v
		case "percdb_kv_gc_compacted_bytes_total":
			w.gcCompactedBytes = v
		}
	}
	return w
}

// addSince adds what the scans walked between before and after.
func (w *storeWalks) addSince(before, after storeWalks) {
	w.records += after.records - before.records
	w.points += after.points - before.points
}

// hiddenShare is the internal points merged beyond the records, a record.
func (w *storeWalks) hiddenShare() float64 {
	if w.records == 0 {
		return 0
	}
	return (w.points - w.records) / w.records
}
