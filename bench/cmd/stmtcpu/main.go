// Command stmtcpu measures what one statement costs a server: it runs each
// given statement N times on one connection, as text (COM_QUERY) or, with
// -prepared, as one prepared statement executed N times (COM_STMT_EXECUTE),
// and reports the server's CPU per statement (utime+stime of -pid from
// /proc/PID/stat around the loop, so the server must run on this machine)
// and the client's median latency.
//
//	go run ./bench/cmd/stmtcpu -addr 127.0.0.1:4000 -pid PID -n 20000 \
//	    -q 'SELECT 1' -q 'SELECT w, id FROM t WHERE w = 1 AND id = 5'
//
// With -load N it first creates database -db and the scan table t of
// package bench/scan with N rows (and analyzes it). With -for D each
// statement loops for D instead of -n times (to profile the server
// meanwhile: /debug/pprof/profile on its status port).
//
// CPU is counted in the kernel's clock ticks (10 ms): run enough
// statements for the ticks to be many (20,000 statements of 30 us are 60
// ticks).
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/bench/scan"
)

// queries is the repeatable -q flag.
type queries []string

func (q *queries) String() string     { return strings.Join(*q, "; ") }
func (q *queries) Set(s string) error { *q = append(*q, s); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "stmtcpu:", err)
		os.Exit(1)
	}
}

func run() error {
	var qs queries
	addr := flag.String("addr", "127.0.0.1:4000", "server address")
	user := flag.String("user", "root", "user")
	db := flag.String("db", "stmtcpu", "database")
	pid := flag.Int("pid", 0, "the server's process id (for its CPU time)")
	n := flag.Int("n", 20000, "statements per query")
	warm := flag.Int("warm", 500, "statements before counting")
	forDur := flag.Duration("for", 0, "loop each statement this long instead of -n times")
	prepared := flag.Bool("prepared", false, "prepare each statement once and execute it")
	load := flag.Int("load", 0, "create and load the scan table t with this many rows first")
	flag.Var(&qs, "q", "a statement (repeatable)")
	flag.Parse()
	ctx := context.Background()

	if *load > 0 {
		root, err := sql.Open("mysql", *user+"@tcp("+*addr+")/")
		if err != nil {
			return err
		}
		if _, err := root.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+*db); err != nil {
			return err
		}
		root.Close()
	}
	pool, err := sql.Open("mysql", *user+"@tcp("+*addr+")/"+*db+"?interpolateParams=false")
	if err != nil {
		return err
	}
	defer pool.Close()
	if *load > 0 {
		if err := scan.CreateTable(ctx, pool, "t"); err != nil {
			return err
		}
		if err := scan.Load(ctx, pool, "t", *load, 2, 1); err != nil {
			return err
		}
		if _, err := pool.ExecContext(ctx, "ANALYZE TABLE t"); err != nil {
			return err
		}
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, q := range qs {
		once, closeStmt, err := statement(ctx, conn, q, *prepared)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		for range *warm {
			if err := once(); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		lat := make([]time.Duration, 0, *n)
		cpu0, err := cpuTicks(*pid)
		if err != nil {
			return err
		}
		start := time.Now()
		for i := 0; ; i++ {
			if *forDur > 0 && time.Since(start) >= *forDur || *forDur == 0 && i >= *n {
				break
			}
			t0 := time.Now()
			if err := once(); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			lat = append(lat, time.Since(t0))
		}
		cpu1, err := cpuTicks(*pid)
		if err != nil {
			return err
		}
		closeStmt()
		slices.Sort(lat)
		ticks := cpu1 - cpu0
		fmt.Printf("%-70s n=%d cpu=%.1fus/stmt (%d ticks) p50=%.1fus p10=%.1fus\n", q, len(lat),
			float64(ticks)*10000/float64(len(lat)), ticks,
			float64(lat[len(lat)/2].Nanoseconds())/1000, float64(lat[len(lat)/10].Nanoseconds())/1000)
	}
	return nil
}

// statement returns a function that runs q once on conn and reads its
// rows, and one that releases what it holds.
func statement(ctx context.Context, conn *sql.Conn, q string, prepared bool) (func() error, func(), error) {
	drain := func(rows *sql.Rows, err error) error {
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return rows.Close()
	}
	if !prepared {
		return func() error { return drain(conn.QueryContext(ctx, q)) }, func() {}, nil
	}
	st, err := conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	return func() error { return drain(st.QueryContext(ctx)) }, func() { st.Close() }, nil
}

// cpuTicks returns the utime+stime of process pid in clock ticks, 0
// when pid is 0.
func cpuTicks(pid int) (int64, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may hold spaces: count fields
	// after its closing parenthesis (utime and stime are fields 14 and 15).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	u, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, err
	}
	st, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, err
	}
	return u + st, nil
}
