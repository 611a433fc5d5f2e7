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
//	SUM(k) FROM s.t) and the GC's counters.
//
// Run it from the root of the checkout:
//
//	go build -o /tmp/percdb ./cmd/percdb
//	go run ./bench/cmd/gcbench -binary /tmp/percdb -mode drop -rows 1000000
//	go run ./bench/cmd/gcbench -binary /tmp/percdb -mode churn -rows 20000 -duration 5m -life 1m -interval 30s
//	go run ./bench/cmd/gcbench -binary /tmp/percdb -mode churn -rows 20000 -duration 5m -gc=false
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
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
	flag.Parse()
	if *binary == "" {
		return errors.New("give -binary")
	}
	ctx := context.Background()
	srv, err := bench.StartPercdb(ctx, bench.PercdbOptions{Binary: *binary})
	if err != nil {
		return err
	}
	defer srv.Stop()
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
	fmt.Printf("GC %v: life time %s, run interval %s, %d writers for %v\n", o.gc, life, interval, o.writers, o.duration)
	fmt.Println("| minute | data directory | full scan | updates | versions deleted by GC |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: |")
	var updates, errs atomic.Int64
	stop := make(chan struct{})
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
				if _, err := db.Exec("UPDATE s.t SET k = k + 1 WHERE id = ?", 1+rnd.Intn(o.rows)); err != nil {
					errs.Add(1)
					continue
				}
				updates.Add(1)
			}
		}(int64(w) + time.Now().UnixNano())
	}
	start := time.Now()
	sampleAt := func() error {
		// The median of five scans: on a shared machine one scan's time
		// jumps with the load.
		scans := make([]time.Duration, 5)
		for i := range scans {
			scanStart := time.Now()
			var sum int64
			if err := db.QueryRow("SELECT SUM(k) FROM s.t").Scan(&sum); err != nil {
				return err
			}
			scans[i] = time.Since(scanStart)
		}
		slices.Sort(scans)
		scan := scans[len(scans)/2]
		var deleted int
		if err := statusInt(db, "Percdb_gc_keys_deleted", &deleted); err != nil {
			return err
		}
		fmt.Printf("| %.1f | %s | %v | %d | %d |\n", time.Since(start).Minutes(), size(dataDir), scan.Round(time.Millisecond), updates.Load(), deleted)
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
