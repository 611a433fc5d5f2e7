// Command percdb runs a single percdb node: the key-value store, the
// timestamp oracle and the MySQL server, all in one process, with data in
// one directory. With a role as first argument it runs one member of a
// cluster instead (cluster.go, docs/cluster.md):
//
//	percdb pd --data-dir D --addr 127.0.0.1:2379 [--initial-cluster name=url,...]
//	percdb kv --data-dir D --addr 127.0.0.1:20160 --pd 127.0.0.1:2379[,...]
//	percdb sql --host H --port P --pd 127.0.0.1:2379[,...] [--status-port S] [--schema-lease 10s]
//	percdb playground --kv 3 --data-dir D --port P
//
// The single node's flags:
//
//	percdb [--host 127.0.0.1] [--port 4000] [--data-dir ./percdb-data]
//	       [--root-password ""] [--ssl-cert file --ssl-key file] [--auto-generate-certs=false]
//	       [--require-secure-transport] [--max-connections 0]
//	       [--max-query-buffered-rows 4194304] [--ddl-wait-timeout 10s]
//	       [--reserve-space auto] [--block-cache-size 256MiB]
//	       [--shutdown-timeout 10s] [--log-level info]
//	       [--status-host 127.0.0.1] [--status-port 10080] [--slow-query-log FILE]
//	       [--gc-percent 400] [--memory-limit auto] [--statement-stats=off]
//
// Connect with any MySQL client, for example:
//
//	mariadb -h 127.0.0.1 -P 4000 -u root
//
// SIGINT or SIGTERM shuts the node down cleanly; everything committed is
// kept in the data directory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
	"github.com/percdb/percdb/pd"
	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/sql/schemalease"
)

// defaultStatusPort is --status-port's default, TiDB's status port.
const defaultStatusPort = 10080

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "percdb:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "pd":
			return runPD(args[1:])
		case "kv":
			return runKV(args[1:])
		case "sql":
			return runServer("sql", args[1:])
		case "playground":
			return runPlayground(args[1:])
		case "ctl":
			return runCtl(args[1:], os.Stdout)
		}
	}
	return runServer("", args)
}

// runServer runs the MySQL server: the single node (role "") with its own
// store and oracle, or a SQL node of a cluster (role "sql") over the KV
// nodes and the oracle that --pd leads to.
func runServer(role string, args []string) error {
	name := "percdb"
	if role != "" {
		name += " " + role
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var pdAddrs, pdStatus *string
	var kvTimeout, pdTimeout, schemaLease *time.Duration
	if role == "sql" {
		pdAddrs = fs.String("pd", "", "comma-separated host:port of the cluster's pd members (required)")
		kvTimeout = fs.Duration("kv-timeout", kvrpc.DefaultUnavailableTimeout, "how long a request retries a kv node it cannot reach before the statement fails with error 9002")
		pdStatus = fs.String("pd-status", "", "comma-separated host:port of the pd members' status ports, whose read-only API the console's Cluster page reads (default: each --pd address's port + 3, pd's default)")
		pdTimeout = fs.Duration("pd-timeout", pd.DefaultTimeout, "how long a request to pd (for timestamps, regions, the schema lease) retries the pd members before the statement fails with error 9001")
		schemaLease = fs.Duration("schema-lease", schemalease.DefaultLeaseTTL, "the node's schema lease in pd, renewed every half lease: a schema change on any SQL node waits for this node to load each new schema version, or for its lease to end if it stops answering; a node that cannot renew its lease in time fails commits with error 8027")
	}
	host := fs.String("host", "127.0.0.1", "address to listen on")
	port := fs.Int("port", 4000, "port to listen on (0 picks a free one)")
	dataDirDefault, dataDirHelp := percsql.DefaultDataDir, "directory of the node's data (kv/ and tso/)"
	if role == "sql" {
		dataDirDefault, dataDirHelp = "percdb-sql-data", "directory of the SQL node's own files (TLS certificates, slow log); the data is in the cluster's kv nodes"
	}
	dataDir := fs.String("data-dir", dataDirDefault, dataDirHelp)
	rootPassword := fs.String("root-password", "", "password of root; set at every start when given (a fresh node's root has none when empty)")
	sslCert := fs.String("ssl-cert", "", "PEM file of the server's TLS certificate (with --ssl-key)")
	sslKey := fs.String("ssl-key", "", "PEM file of the server's TLS private key (with --ssl-cert)")
	autoCerts := fs.Bool("auto-generate-certs", true, "without --ssl-cert/--ssl-key, offer TLS with a CA, certificate and key generated in the data directory at the first start (ca.pem, server-cert.pem, server-key.pem)")
	localInfile := fs.Bool("local-infile", true, "allow LOAD DATA LOCAL INFILE (the global variable local_infile at start; SET GLOBAL local_infile changes it)")
	requireTLS := fs.Bool("require-secure-transport", false, "refuse connections without TLS")
	maxConns := fs.Int("max-connections", 0, "most open client connections, one more gets error 1040 (0: no limit)")
	maxBuffered := fs.Int64("max-query-buffered-rows", percsql.DefaultMaxQueryBufferedRows, "most rows one query may buffer for sort, GROUP BY, DISTINCT (negative: no limit)")
	ddlWait := fs.Duration("ddl-wait-timeout", percsql.DefaultDDLWaitTimeout, "how long each step of a schema change waits for transactions that wrote the table under the older schema; those still open after it fail to commit with error 8028")
	latestSpace := fs.String("latest-space", "auto", "when the store keeps the latest space, a copy of each key's newest committed version that scans at the present read instead of stepping over the versions GC has yet to collect: auto (the default: range by range, a table's rows or its indexes, while the range's scans step over more old versions than eight for each version the range's own writes make, off again when they stop using it, so a write-heavy table beside a scanned one pays nothing), off (never) or on (always, the whole store: every commit writes the copy)")
	blockCache := fs.String("block-cache-size", "256MiB", "the size of the store's block cache (Pebble's cache of uncompressed blocks of its files, filled as blocks are read), bytes with an optional KiB/MiB/GiB suffix: reads of rows through an index, one block a row, miss it when a table's files outgrow it")
	reserveSpace := fs.String("reserve-space", "auto", "free disk space kept in reserve (a ballast file in the data directory): below it, writes fail with error 1021 while reads, DELETE, TRUNCATE and DROP go on; bytes with an optional KiB/MiB/GiB suffix, 'auto' (2% of the file system, 32 MiB to 2 GiB) or 0 (no reserve)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 10*time.Second, "how long a SIGINT or SIGTERM waits for the node to close cleanly before the process exits anyway (what is committed is in the synced log either way)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	statusHost := fs.String("status-host", "127.0.0.1", "address the status port listens on")
	statusPort := fs.Int("status-port", defaultStatusPort, "HTTP status port: /status, /metrics (Prometheus), /debug/pprof/; 0 disables it. The default port is best effort (a warning when taken); a port given explicitly must listen")
	gcPercent := fs.Int("gc-percent", defaultGCPercent, "the Go garbage collector's target (GOGC: collect when the heap has grown by this percentage since the last collection; -1 turns it off); when not given, GOGC from the environment wins")
	memoryLimit := fs.String("memory-limit", "auto", "the Go runtime's soft memory limit: the collector works harder as the heap nears it; 'auto' (3/4 of the machine's memory), 0 (none) or a size such as 4GiB; when not given, GOMEMLIMIT from the environment wins")
	slowLog := fs.String("slow-query-log", "", "write statements slower than long_query_time (SET GLOBAL long_query_time, default 10 s) to this file in MySQL's slow log format; the log can also be turned on later with SET GLOBAL slow_query_log = ON")
	stmtStats := onOff(true)
	fs.Var(&stmtStats, "statement-stats", "keep statement statistics: the statement counters and latency histograms of /metrics, performance_schema.events_statements_summary_by_digest and the slow query log (the global percdb_statement_stats at start; SET GLOBAL percdb_statement_stats changes it); off takes their cost off every statement")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if pdAddrs != nil && *pdAddrs == "" {
		return errors.New("percdb sql: --pd is required")
	}
	if *maxConns < 0 {
		return fmt.Errorf("--max-connections %d is negative", *maxConns)
	}
	if *maxBuffered == 0 {
		return errors.New("--max-query-buffered-rows 0 would refuse every sort; give a negative value for no limit")
	}
	if *ddlWait <= 0 {
		return fmt.Errorf("--ddl-wait-timeout %v must be positive", *ddlWait)
	}
	reserve, err := parseReserveSpace(*reserveSpace)
	if err != nil {
		return err
	}
	cacheSize, err := parseBlockCacheSize(*blockCache)
	if err != nil {
		return err
	}
	latest, err := parseLatestSpace(*latestSpace)
	if err != nil {
		return err
	}
	if *shutdownTimeout <= 0 {
		return fmt.Errorf("--shutdown-timeout %v must be positive", *shutdownTimeout)
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("--port %d is not a TCP port", *port)
	}
	if *statusPort < 0 || *statusPort > 65535 {
		return fmt.Errorf("--status-port %d is not a TCP port", *statusPort)
	}
	statusAddr := ""
	if *statusPort != 0 {
		statusAddr = net.JoinHostPort(*statusHost, strconv.Itoa(*statusPort))
	}
	statusExplicit, gcGiven, limitGiven := false, false, false
	fs.Visit(func(f *flag.Flag) {
		statusExplicit = statusExplicit || f.Name == "status-port" || f.Name == "status-host"
		gcGiven = gcGiven || f.Name == "gc-percent"
		limitGiven = limitGiven || f.Name == "memory-limit"
	})
	gc, err := gcFromFlags(*gcPercent, gcGiven, *memoryLimit, limitGiven, os.Getenv, machineMemory())
	if err != nil {
		return err
	}
	gc.apply()
	slowFile := *slowLog
	if slowFile != "" {
		// Relative to the working directory, as a command-line user
		// means it (Config would take it relative to the data directory).
		abs, err := filepath.Abs(slowFile)
		if err != nil {
			return fmt.Errorf("--slow-query-log: %w", err)
		}
		slowFile = abs
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	// go-mysql-server logs through logrus (a connection per line at info);
	// it follows the same level, two steps quieter.
	logrus.SetLevel(logrusLevel(level))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var backend *percsql.ClusterBackend
	if role == "sql" {
		if *kvTimeout <= 0 || *pdTimeout <= 0 {
			return errors.New("percdb sql: --kv-timeout and --pd-timeout must be positive")
		}
		if *schemaLease < 100*time.Millisecond || *schemaLease > 10*time.Minute {
			return fmt.Errorf("percdb sql: --schema-lease %v: want 100ms to 10m", *schemaLease)
		}
		b, closeBackend, err := dialCluster(*pdAddrs, *kvTimeout, *pdTimeout, *schemaLease)
		if err != nil {
			return err
		}
		if b.PDStatus, err = pdStatusAddrs(*pdAddrs, *pdStatus); err != nil {
			closeBackend()
			return err
		}
		defer closeBackend()
		backend = b
	}
	srv, err := percsql.Open(ctx, percsql.Config{
		Cluster:      backend,
		Addr:         net.JoinHostPort(*host, strconv.Itoa(*port)),
		DataDir:      *dataDir,
		RootPassword: *rootPassword,

		SSLCert:                *sslCert,
		SSLKey:                 *sslKey,
		DisableAutoCerts:       !*autoCerts,
		DisableLocalInfile:     !*localInfile,
		RequireSecureTransport: *requireTLS,
		MaxConnections:         *maxConns,
		MaxQueryBufferedRows:   *maxBuffered,
		DDLWaitTimeout:         *ddlWait,
		KV:                     kv.Options{ReserveSpace: reserve, Latest: latest, CacheSize: cacheSize, Logger: logger},
		StatusAddr:             statusAddr,
		StatusBestEffort:       !statusExplicit,
		SlowQueryLog:           slowFile,
		NoStatementStats:       !bool(stmtStats),
	})
	if err != nil {
		return err
	}
	logger.Info("percdb listening", "addr", srv.Addr().String(), "data_dir", *dataDir, "version", percsql.DefaultVersion)
	if a := srv.StatusAddr(); a != nil {
		logger.Info("status port listening", "addr", "http://"+a.String()+"/status")
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
		// A node whose storage is stuck (a full or failing disk) must
		// still stop: past the timeout the process exits without a clean
		// close. Every acknowledged commit is already in the synced log.
		time.AfterFunc(*shutdownTimeout, func() {
			logger.Error("shutdown did not finish in time; exiting without a clean close", "timeout", *shutdownTimeout)
			os.Exit(1)
		})
	case err = <-served:
	}
	if cerr := srv.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err == nil {
		logger.Info("stopped")
	}
	return err
}

// parseReserveSpace reads --reserve-space: "auto" (kv's default), 0 (no
// reserve) or a size in bytes with an optional KiB, MiB or GiB suffix (K,
// M, G and KB, MB, GB read the same, as powers of 1024).
func parseReserveSpace(s string) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		return 0, nil
	}
	n, err := parseByteSize(s)
	if err != nil {
		return 0, fmt.Errorf("--reserve-space %q: want auto, 0 or a size such as 512MiB", s)
	}
	if n == 0 {
		return -1, nil // kv: negative is no protection
	}
	return n, nil
}

// parseBlockCacheSize reads --block-cache-size: a positive size in bytes
// with an optional KiB, MiB or GiB suffix (kv.Options.CacheSize).
func parseBlockCacheSize(s string) (int64, error) {
	n, err := parseByteSize(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("--block-cache-size %q: want a size such as 256MiB", s)
	}
	return n, nil
}

// parseLatestSpace reads --latest-space: auto (kv.Options' zero value and
// the flag's default), on or off.
func parseLatestSpace(s string) (kv.LatestMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto":
		return kv.LatestAuto, nil
	case "on":
		return kv.LatestAlways, nil
	case "off":
		return kv.LatestOff, nil
	}
	return 0, fmt.Errorf("--latest-space %q: want auto, on or off", s)
}

// parseByteSize reads a size in bytes with an optional KiB, MiB or GiB
// suffix (K, KB, M, MB, G and GB mean the same; case does not matter).
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: want bytes with an optional KiB, MiB or GiB suffix", s)
	}
	return n * mult, nil
}

// logrusLevel maps a slog level to logrus two steps quieter:
// go-mysql-server logs every connection at info and every failed query at
// warning.
func logrusLevel(l slog.Level) logrus.Level {
	switch {
	case l < slog.LevelInfo:
		return logrus.InfoLevel
	case l < slog.LevelWarn:
		return logrus.ErrorLevel
	default:
		return logrus.FatalLevel
	}
}
