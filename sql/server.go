package sql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/internal/statusserver"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/console"
	"github.com/percdb/percdb/sql/nodemetrics"
	"github.com/percdb/percdb/sql/perfschema"
	"github.com/percdb/percdb/sql/schemalease"
	"github.com/percdb/percdb/sql/slowlog"
	"github.com/percdb/percdb/sql/wire"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/gcworker"
)

// Defaults of Config.
const (
	DefaultAddr    = "127.0.0.1:4000"
	DefaultDataDir = "percdb-data"
	// DefaultVersion is what the server reports as its version: MySQL 8's
	// numbering, so that clients enable MySQL 8 behaviour, and our name.
	DefaultVersion = "8.0.36-percdb"
	// DefaultCollation is MySQL 8's default collation, used for new
	// databases and for string literals (GMS's own default is
	// utf8mb4_0900_bin, under which 'a' = 'A' is false).
	DefaultCollation = "utf8mb4_0900_ai_ci"
	versionComment   = "percdb: MySQL-compatible SQL on Percolator transactions"
)

// Config configures a Server. The zero value serves ./percdb-data on
// 127.0.0.1:4000.
type Config struct {
	// Addr is the host:port to listen on. Port 0 picks a free port (see
	// Server.Addr). Default DefaultAddr.
	Addr string
	// Listener, when set, is where the server accepts connections
	// instead: Addr is not used, and the server owns it from Open on
	// (Close, or an Open that fails, closes it). A process that
	// runs its own server can serve it connections that are not TCP
	// sockets (an in-memory net.Pipe listener, as tests/sqllogic's
	// in-process mode does), which also spares every statement GMS's
	// check that a TCP client is still connected (a dup, a readlink of
	// /proc and a close per statement; a KILL QUERY still stops a
	// statement whose client went away). Default nil: listen on Addr.
	Listener net.Listener
	// DataDir holds the key-value store (DataDir/kv) and the timestamp
	// oracle's window (DataDir/tso). Created if missing. Default
	// DefaultDataDir, relative to the working directory.
	DataDir string
	// RootPassword is root's password (mysql_native_password). A fresh
	// data directory gets the superusers root@localhost and root@% with
	// this password, none when empty; on later starts a non-empty
	// RootPassword sets root's password again, an empty one keeps the
	// stored accounts (users.go, docs/security.md). Default "".
	RootPassword string
	// SSLCert and SSLKey are the PEM files of the server's TLS certificate
	// and private key; clients may switch to TLS in the handshake.
	// Default "": the certificate and key generated in DataDir at the
	// first start (ca.pem, server-cert.pem, server-key.pem; package
	// autocerts), unless DisableAutoCerts.
	SSLCert, SSLKey string
	// DisableAutoCerts, with no SSLCert and SSLKey, offers no TLS instead
	// of generating a certificate. Default false.
	DisableAutoCerts bool
	// DisableLocalInfile starts the server with the global variable
	// local_infile off, so that LOAD DATA LOCAL INFILE fails with error
	// 3948 until SET GLOBAL local_infile = 1. Default false: on, as in
	// MariaDB (MySQL 8 starts with it off). See loaddata.go.
	DisableLocalInfile bool
	// RequireSecureTransport refuses connections that do not switch to
	// TLS. Default false.
	RequireSecureTransport bool
	// MaxConnections bounds the open client connections; one more is
	// refused with MySQL error 1040. Default 0: no bound.
	MaxConnections int
	// MaxQueryBufferedRows bounds the rows one query may hold in GMS's
	// in-memory buffers (sort, GROUP BY, DISTINCT, set operations,
	// subquery caches); beyond it the query fails with MySQL error 1038
	// and the server goes on (limits.go). Default 0 means
	// DefaultMaxQueryBufferedRows; negative means no bound.
	MaxQueryBufferedRows int64
	// Version is the version string reported to clients. Default
	// DefaultVersion.
	Version string
	// KV tunes the key-value store. Default: durable, synced writes.
	KV kv.Options
	// Txn tunes the transaction layer. Default: txn.Options{} defaults.
	Txn txn.Options
	// DisableFastPath sends every statement through GMS, even those the
	// fast path runs directly on the executor (see fastpath_handler.go).
	// Default false: the fast path is on.
	DisableFastPath bool
	// DDLWaitTimeout is how long each step of a schema change waits for
	// this node's transactions that still use the schema before it, so
	// that at most two schema versions are in use (sql/schemalease).
	// Transactions still open after it fail with error 8028 if they
	// commit writes. Default 0 means DefaultDDLWaitTimeout.
	DDLWaitTimeout time.Duration
	// AutoAnalyzeInterval is how often the node looks for a table whose
	// statistics are stale (autoanalyze.go). Default
	// DefaultAutoAnalyzeInterval.
	AutoAnalyzeInterval time.Duration
	// StatusAddr is the host:port of the status port (package
	// statusserver: /status, /metrics, /debug/pprof/); port 0 picks a
	// free one (see Server.StatusAddr). Default "": no status port. The
	// metrics are counted either way.
	StatusAddr string
	// StatusBestEffort makes a status port that cannot listen (the port
	// is taken) a logged warning rather than a failure of Open: percdb's
	// default port is best effort, so that several nodes on one machine
	// start with their defaults; a port an operator asked for must listen.
	StatusBestEffort bool
	// SlowQueryLog, when set, turns the slow query log on at start
	// (the global slow_query_log ON, slow_query_log_file this file,
	// relative to DataDir unless absolute; package slowlog). Default "": the
	// log stays off until SET GLOBAL slow_query_log = ON.
	SlowQueryLog string
	// DigestsSize bounds the statement digests the node keeps statistics
	// of (performance_schema.events_statements_summary_by_digest;
	// statements of digests beyond it are counted in one overflow row).
	// Default 0 means stmtsummary.DefaultSize (10000, MySQL's default
	// performance_schema_digests_size); negative collects no statement
	// statistics.
	DigestsSize int
	// NoStatementStats starts the node with percdb_statement_stats OFF
	// (stmtstats.go): no statement metrics, digests or slow log until SET
	// GLOBAL percdb_statement_stats = ON. Default false: collected.
	NoStatementStats bool
	// Cluster, when set, makes the server a SQL node of a cluster: it
	// opens no store and no oracle of its own, and its transactions go
	// through Cluster.KV (a kvrpc.Client routed by pd) and Cluster.Oracle
	// (pd's oracle). DataDir then holds only the node's own files (TLS
	// certificates, the slow log). Default nil: the single node, with
	// DataDir/kv and DataDir/tso.
	Cluster *ClusterBackend
	// unobserved leaves out the outermost handler (observe.go: the
	// statement metrics, digests, slow log and the process list's
	// statement record), so that a benchmark can measure what observing
	// statements costs (export_test.go's WithoutObservation).
	unobserved bool
}

// ClusterBackend is what a SQL node of a cluster runs on. The server does
// not close them: their owner does, after Close.
type ClusterBackend struct {
	KV     kv.Client
	Oracle tso.Source
	// OracleTimeout bounds one call for timestamps (tso.ClientOptions'
	// Timeout): a SQL node's --pd-timeout, which the pd client's own
	// retries of unreachable members also stop at, so that a statement
	// rides out a pd restart as long as the operator allows, as TiDB
	// retries its timestamp requests for 15 s before error 9001. 0: tso's
	// default, 3 s.
	OracleTimeout time.Duration
	// GCSafePoints keeps the cluster's GC safe point (pd.GCSafePoints)
	// and ReportMinStartTS tells the cluster this node's oldest running
	// start_ts (0: none) and answers whether the node is the GC leader.
	// With both, and KV a kv.GCClient, the node runs the garbage
	// collector (gcworker) over the cluster while it is the GC leader.
	GCSafePoints     gcworker.SafePointSource
	ReportMinStartTS func(ctx context.Context, ts uint64) (gcLeader bool, err error)
	// PDStatus lists the host:port of the pd members' status ports,
	// whose read-only API (pd/status.go) the console's Cluster page
	// reads; empty: the page says pd's API is unknown.
	PDStatus []string
	// SchemaPD keeps the node's schema lease in pd (a pd.Client) under
	// the name Node, unique among the cluster's SQL nodes; SchemaLease is
	// the lease's length (default schemalease.DefaultLeaseTTL). With it,
	// schema changes wait for every SQL node (ddllease.go); nil leaves the
	// node without a lease, which is safe only while it is the cluster's
	// one SQL node.
	SchemaPD    schemalease.PD
	Node        string
	SchemaLease time.Duration
	// RegionDetail returns pd's record of a region (its stores, conf_ver
	// and size) for information_schema.TIKV_REGION_STATUS; nil leaves
	// those columns NULL.
	RegionDetail func(ctx context.Context, region uint64) (RegionDetail, error)
}

// DefaultDDLWaitTimeout is Config.DDLWaitTimeout's default: long enough
// for ordinary transactions to finish, short enough that a forgotten open
// transaction does not hold a schema change for long.
const DefaultDDLWaitTimeout = 10 * time.Second

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.MaxQueryBufferedRows == 0 {
		c.MaxQueryBufferedRows = DefaultMaxQueryBufferedRows
	}
	if c.KV.Logger == nil {
		// kv's own default; the status port and the slow log log there too.
		c.KV.Logger = slog.Default()
	}
	return c
}

// Server is a percdb node: the key-value store and timestamp oracle of one
// data directory, the transaction layer over them, and a MySQL server
// running go-mysql-server on top. Open starts listening; Serve accepts
// connections until Close.
type Server struct {
	cfg      Config
	kvStore  *kv.Store
	oracle   *tso.Oracle
	tsClient *tso.BatchClient
	// stmts gives statements their contexts and watches their clients.
	stmts    *stmtContexts
	store    *txn.Store
	provider *DatabaseProvider
	engine   *sqle.Engine
	mysql    *server.Server
	listener net.Listener
	// metrics are the node's Prometheus metrics, slow its slow query log
	// (observe.go); status is the status port, nil without one, and
	// statusDone is closed when its Serve has returned.
	metrics    *nodemetrics.Metrics
	slow       *slowlog.Log
	status     *statusserver.Server
	statusDone chan struct{}
	openConns  atomic.Int64
	// started is when Open began: COM_STATISTICS's uptime.
	started time.Time
	// sessions are the sessions by connection; recentSlow the latest
	// slow statements and history the sampled metrics, for the console
	// (consolesource.go).
	sessions   *sessionRegistry
	recentSlow *console.SlowRing
	history    *console.History
	// clusterHeat is the whole cluster's heatmap, on a SQL node of a
	// cluster with a status port (clusterheat.go).
	clusterHeat *clusterHeat

	closeOnce sync.Once
	closeErr  error
	// stopBackground ends the node's background work (the range
	// deleter, the console's sampler), which background waits for.
	// kvMetrics times the transaction layer's KV requests by command.
	kvMetrics      *nodemetrics.KV
	stopBackground context.CancelFunc
	background     sync.WaitGroup
	// actions runs the built-in actions of observers (observeractions.go).
	actions *actionRunner
	// stopLease ends the schema lease's renewals (a SQL node of a
	// cluster; ddllease.go), leaseDone is closed once they have ended.
	stopLease context.CancelFunc
	leaseDone chan struct{}
}

// embeddedOracleTimeout bounds one request of the single node's oracle
// client (tso.ClientOptions.Timeout; see Open).
const embeddedOracleTimeout = 30 * time.Second

// Open opens the data directory and starts listening. The caller must call
// Serve to accept connections and Close to release everything.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, listener: cfg.Listener, started: time.Now()}
	if err := s.open(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// open is Open's work. The background goroutines and connection handlers
// it starts keep s, which nothing reassigns: when they captured Open's
// named result instead, a failing return set it to nil under a goroutine
// that had not yet read it (a nil dereference seen once in CI).
func (s *Server) open(ctx context.Context) (err error) {
	cfg := s.cfg

	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	s.kvMetrics = nodemetrics.NewKV(cfg.Cluster != nil)
	var lease *schemalease.Lease
	var loadSchema schemalease.Loader // set once the provider exists
	if cfg.Cluster != nil {
		if cfg.Cluster.SchemaPD != nil {
			ddlWait := cfg.DDLWaitTimeout
			if ddlWait <= 0 {
				ddlWait = DefaultDDLWaitTimeout
			}
			lease = schemalease.NewLease(schemalease.LeaseConfig{Node: cfg.Cluster.Node, TTL: cfg.Cluster.SchemaLease,
				PD: cfg.Cluster.SchemaPD, Tracker: schemalease.New(), Wait: ddlWait, Grace: ddlGrace, Logger: cfg.KV.Logger,
				Load: func(ctx context.Context) (uint64, []int64, error) { return loadSchema(ctx) }})
			// Every commit of the node, the DDLs' and the ID
			// allocators' included, takes effect only under the lease.
			cfg.Txn.CommitGuard = lease
		}
		s.tsClient = tso.NewBatchClient(cfg.Cluster.Oracle, tso.ClientOptions{Timeout: cfg.Cluster.OracleTimeout})
		s.store = txn.NewStore(kv.Instrument(cfg.Cluster.KV, s.kvMetrics), s.tsClient, cfg.Txn)
	} else {
		if cfg.KV.Coprocessor == nil {
			cfg.KV.Coprocessor = copr.Evaluator{}
		}
		s.kvStore, err = kv.Open(filepath.Join(cfg.DataDir, "kv"), cfg.KV)
		if err != nil {
			return fmt.Errorf("open kv store: %w", err)
		}
		windows, err := tso.OpenFileWindowStore(filepath.Join(cfg.DataDir, "tso"))
		if err != nil {
			return fmt.Errorf("open oracle window: %w", err)
		}
		s.oracle, err = tso.Open(ctx, windows, tso.Options{})
		if err != nil {
			return fmt.Errorf("open oracle: %w", err)
		}
		// The embedded oracle stalls only on its own disk: when a window
		// runs out, callers wait for the next window's fsync, which a
		// saturated disk has been seen to take several seconds over. The
		// default 3 s bound (for a remote oracle that stopped answering)
		// then failed statements with 1105 that needed only to wait.
		s.tsClient = tso.NewBatchClient(s.oracle, tso.ClientOptions{Timeout: embeddedOracleTimeout})
		s.store = txn.NewStore(kv.Instrument(kv.NewLocalClient(s.kvStore), s.kvMetrics), s.tsClient, cfg.Txn)
	}
	s.provider = newDatabaseProvider(s.store)
	registerSQLMode() // sqlmode.go: before the fast path reads its default
	s.provider.fast = newFastPath(!cfg.DisableFastPath)
	if s.provider.digests, err = perfschema.StartDigests(cfg.DigestsSize); err != nil {
		return err
	}
	s.metrics = nodemetrics.New(s.provider.nodeCounters, s.kvStore, s.kvMetrics, s.tsClient)
	if err := slowlog.Start(cfg.SlowQueryLog); err != nil {
		return err
	}
	if err := startStatementStats(s.provider, cfg.NoStatementStats); err != nil {
		return err
	}
	s.slow = slowlog.New(cfg.DataDir, cfg.Version, versionComment)
	s.recentSlow = console.NewSlowRing(console.DefaultSlowRingSize)
	if err := setLocalInfile(!cfg.DisableLocalInfile); err != nil {
		return err
	}
	s.provider.lockWaits.store, s.provider.lockWaits.client = s.kvStore, s.store.Client()
	s.provider.localKV = s.kvStore
	if cfg.Cluster != nil {
		s.provider.regionDetail = cfg.Cluster.RegionDetail
	}
	if cfg.DDLWaitTimeout > 0 {
		s.provider.ddlWait = cfg.DDLWaitTimeout
	}
	if lease != nil {
		// Before anything commits, recoverSchemaChanges' steps included.
		if err := s.startLease(ctx, lease, &loadSchema); err != nil {
			return err
		}
	}
	if err := s.provider.recoverSchemaChanges(ctx); err != nil {
		return err
	}
	if err := s.provider.dropLeftoverTempTables(ctx); err != nil {
		return fmt.Errorf("drop temporary tables left by a previous process: %w", err)
	}
	if s.provider.gc, err = newNodeGC(s.provider, s.kvStore, cfg.Cluster, s.tsClient, cfg.KV.Logger); err != nil {
		return err
	}
	bg, stop := context.WithCancel(context.Background())
	s.stopBackground = stop
	s.background.Go(func() { s.provider.ranges.Run(bg) })
	s.background.Go(func() { s.provider.gc.run(bg) })
	analyzeEvery := cfg.AutoAnalyzeInterval
	if analyzeEvery <= 0 {
		analyzeEvery = DefaultAutoAnalyzeInterval
	}
	s.background.Go(func() { s.provider.runAutoAnalyze(bg, analyzeEvery) })
	s.provider.ranges.Kick() // what a previous process left

	registerTxnVariables()
	registerDiagnosticsVariables() // compat_diagarea.go
	registerGCVariables()
	registerTxnSizeLimit()
	registerAutoAnalyze()
	if err := s.provider.gc.load(ctx); err != nil {
		return err
	}
	s.engine = sqle.New(newAnalyzer(s.provider), &sqle.Config{})
	s.provider.runner = s.engine                                                                                       // stored functions' bodies (storedfunc.go)
	s.engine.Parser = compat.SyntaxParser{Parser: s.engine.Parser, Columns: catalogColumns(s.engine.Analyzer.Catalog)} // sql/compat/syntax.go
	s.engine.Parser = literalParser{Parser: s.engine.Parser, provider: s.provider}                                     // parser.go
	s.engine.Parser = planParser{Parser: s.engine.Parser}                                                              // compat_viewdb.go
	accounts := s.engine.Analyzer.Catalog.MySQLDb
	s.provider.accounts = accounts // CURRENT_ROLE() (roles.go)
	s.sessions = newSessionRegistry()
	sessions := s.sessions
	s.engine.Analyzer.Catalog.InfoSchema = &infoSchema{Database: s.engine.Analyzer.Catalog.InfoSchema, provider: s.provider, sessions: sessions}
	if err := openAccounts(ctx, accounts, s.store, cfg.RootPassword); err != nil {
		return err
	}
	tlsConfig, err := serverTLS(cfg)
	if err != nil {
		return err
	}

	if s.listener == nil {
		s.listener, err = net.Listen("tcp", cfg.Addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
		}
	}
	// Every connection is wrapped (countedConn), also without a limit:
	// GMS polls the socket of a bare *net.TCPConn during every query it
	// runs (pollForClosedConnection: a dup of the descriptor and a
	// readlink under /proc each time, 7% of the CPU of a short range
	// query), where percdb's own watcher (stmtContexts.watch) checks the
	// clients of long statements only.
	maxConns := int64(math.MaxInt64)
	if cfg.MaxConnections > 0 {
		maxConns = int64(cfg.MaxConnections)
	}
	s.listener = &connLimitListener{Listener: s.listener, max: maxConns}
	// percdb, not vitess, terminates TLS and reads the client's commands
	// first (package wire): vitess misreads some of them before any
	// handler method runs (compat_wire.go).
	s.listener = wire.NewListener(s.listener, wire.Config{
		TLS:                    tlsConfig,
		RequireSecureTransport: cfg.RequireSecureTransport,
		RewritePrepare:         rewritePrepare,
		MaxPacket:              maxAllowedPacket,
		Statistics:             s.statisticsLine,
	})
	s.stmts = newStmtContexts()
	// Before the server is made: its session manager keeps the list.
	s.engine.ProcessList = &killList{ProcessList: s.engine.ProcessList, stmts: s.stmts}
	s.mysql, err = server.NewServerWithHandler(server.Config{
		Protocol: "tcp",
		Address:  s.listener.Addr().String(),
		Listener: s.listener,
		Version:  cfg.Version,

		ProtocolListenerFactory: protocolListener(accounts),
	}, s.engine, queryContextFactory(cfg.MaxQueryBufferedRows), s.sessionBuilder(sessions), nil, func(h mysql.Handler) (mysql.Handler, error) {
		inner := &handler{Handler: h, sessions: sessions, accounts: accounts, processes: s.engine.ProcessList,
			engine: s.engine, memory: gsql.NewMemoryManager(nil)}
		limits := &limitHandler{handler: inner, maxRows: cfg.MaxQueryBufferedRows, stmts: s.stmts}
		if cfg.unobserved {
			return limits, nil
		}
		return &observedHandler{limitHandler: limits, metrics: s.metrics, slow: s.slow, statsOff: &s.provider.statsOff,
			logger: cfg.KV.Logger, openConns: &s.openConns, recentSlow: s.recentSlow}, nil
	})
	if err != nil {
		s.stmts.close()
		s.stmts = nil
		return fmt.Errorf("start mysql server: %w", err)
	}
	if cfg.StatusAddr != "" {
		if err := s.startStatus(); err != nil {
			if !cfg.StatusBestEffort {
				return err
			}
			cfg.KV.Logger.Warn("no status port", "err", err)
		}
	}
	if s.status != nil {
		s.background.Go(func() { s.history.Run(bg) })
		if cfg.Cluster != nil && len(cfg.Cluster.PDStatus) > 0 {
			s.clusterHeat = newClusterHeat(cfg.Cluster.PDStatus)
			s.background.Go(func() { s.clusterHeat.run(bg) })
		}
	}
	s.actions = newActionRunner(s)
	s.provider.actions = s.actions
	s.actions.start()
	return nil
}

// leaveTimeout bounds the shutdown's last report to pd (Lease.Leave).
const leaveTimeout = 2 * time.Second

// startLease takes the node's schema lease with the provider's tracker
// and catalog, and keeps it in the background until Close.
func (s *Server) startLease(ctx context.Context, lease *schemalease.Lease, load *schemalease.Loader) error {
	s.provider.schemas = lease.Tracker()
	s.provider.lease = lease
	*load = s.provider.leaseLoader()
	if err := lease.Start(ctx); err != nil {
		return err
	}
	lctx, stop := context.WithCancel(context.Background())
	s.stopLease, s.leaseDone = stop, make(chan struct{})
	go func() {
		defer close(s.leaseDone)
		lease.Run(lctx)
	}()
	return nil
}

// startStatus starts the status port on cfg.StatusAddr.
func (s *Server) startStatus() error {
	s.history = console.NewHistory(s.metrics.Registry(), consoleSampleInterval, consoleSamples)
	st, err := statusserver.Listen(statusserver.Config{
		Addr:        s.cfg.StatusAddr,
		Version:     s.cfg.Version,
		Gatherer:    s.metrics.Registry(),
		Connections: func() int { return int(s.openConns.Load()) },
		Console:     console.Handler(consoleSource{s}, s.history),
	})
	if err != nil {
		return err
	}
	s.status, s.statusDone = st, make(chan struct{})
	go func() {
		defer close(s.statusDone)
		if err := st.Serve(); err != nil {
			s.cfg.KV.Logger.Error("status port stopped", "err", err)
		}
	}()
	return nil
}

// StatusAddr returns the address of the status port, nil without one.
func (s *Server) StatusAddr() net.Addr {
	if s.status == nil {
		return nil
	}
	return s.status.Addr()
}

// statusCloseTimeout bounds how long Close waits for the status port's
// answers in flight (a CPU profile runs for as long as it was asked to).
const statusCloseTimeout = 2 * time.Second

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Serve accepts connections until Close. It returns nil after Close.
func (s *Server) Serve() error {
	return s.mysql.Start()
}

// Close stops accepting connections, closes open ones, and closes the data
// directory. Committed data is durable; open transactions are abandoned.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.actions != nil {
			// Before the engine closes: runs execute statements there.
			s.actions.close()
		}
		if s.status != nil {
			// First, so that load balancers stop sending clients.
			ctx, cancel := context.WithTimeout(context.Background(), statusCloseTimeout)
			errs = append(errs, s.status.Close(ctx))
			cancel()
			<-s.statusDone
		}
		if s.mysql != nil {
			errs = append(errs, s.mysql.Close())
			// Running queries are cancelled and open connections closed, so
			// that nothing uses the store once it is closed below.
			sm := s.mysql.SessionManager()
			for _, p := range s.engine.ProcessList.Processes() {
				_ = sm.KillConnection(p.Connection)
			}
		} else if s.listener != nil {
			errs = append(errs, s.listener.Close())
		}
		if s.engine != nil {
			// Engine.Close reports the cancellation of its own background
			// context as an error; it is the expected outcome.
			if err := s.engine.Close(); !errors.Is(err, context.Canceled) {
				errs = append(errs, err)
			}
		}
		if s.mysql != nil {
			s.mysql.SessionManager().WaitForClosedConnections()
		}
		if s.stmts != nil {
			s.stmts.close()
		}
		if s.stopBackground != nil {
			s.stopBackground()
			s.background.Wait()
		}
		if s.stopLease != nil {
			// Sessions and background work are over: nothing commits.
			s.stopLease()
			<-s.leaseDone
			ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
			if err := s.provider.lease.Leave(ctx); err != nil {
				// Its lease ends by itself: schema changes wait that long.
				s.cfg.KV.Logger.Warn("schema lease not given up", "err", err)
			}
			cancel()
		}
		if s.store != nil {
			errs = append(errs, s.store.Close())
		}
		if s.tsClient != nil {
			s.tsClient.Close()
		}
		if s.oracle != nil {
			s.oracle.Close()
		}
		if s.kvStore != nil {
			errs = append(errs, s.kvStore.Close())
		}
		if s.slow != nil {
			errs = append(errs, s.slow.Close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// handshakeCollation returns the session variables the collation a
// client names in its handshake sets, as in MySQL: character_set_client,
// character_set_connection and character_set_results to its character
// set, collation_connection to it. GMS ignores it. nil for 0 or an ID
// GMS does not know (the server's defaults stay).
func handshakeCollation(id uint8) map[string]any {
	if id == 0 {
		return nil
	}
	name := gsql.CollationID(id).Name()
	c, err := gsql.ParseCollation("", name, false)
	if name == "" || err != nil || c != gsql.CollationID(id) {
		return nil
	}
	cs := c.CharacterSet().Name()
	return map[string]any{
		"character_set_client":     cs,
		"character_set_connection": cs,
		"character_set_results":    cs,
		"collation_connection":     name,
	}
}

// sessionVars are the session variables every session of the node starts
// with, where GMS's defaults differ from MySQL 8's.
func (s *Server) sessionVars() map[string]any {
	return map[string]any{
		"version":              s.cfg.Version,
		"version_comment":      versionComment,
		"collation_connection": DefaultCollation,
		"collation_server":     DefaultCollation,
		"collation_database":   DefaultCollation,
	}
}

// sessionBuilder returns GMS's session factory: a percdb Session per
// connection, with MySQL 8's defaults where GMS's differ, and the
// character set and collation the client asked for in its handshake.
func (s *Server) sessionBuilder(reg *sessionRegistry) server.SessionBuilder {
	vars := s.sessionVars()
	return func(ctx context.Context, conn *mysql.Conn, addr string) (gsql.Session, error) {
		base, err := gsql.BaseSessionFromConnection(ctx, conn, addr)
		if err != nil {
			return nil, err
		}
		sessVars := vars
		if cs := handshakeCollation(conn.CharacterSet); cs != nil {
			sessVars = make(map[string]any, len(vars)+len(cs))
			for _, m := range []map[string]any{vars, cs} {
				for k, v := range m {
					sessVars[k] = v
				}
			}
		}
		sess, err := newSession(base, s.provider, sessVars)
		if err != nil {
			return nil, err
		}
		if err := setTLSStatus(sess, conn.Conn); err != nil {
			return nil, err
		}
		reg.add(conn.ConnectionID, sess)
		return sess, nil
	}
}

// The Store's start_ts after a one-phase commit costs one oracle call
// only through an AboveOracle (txn's startTimestamp).
var _ txn.AboveOracle = (*tso.BatchClient)(nil)
