package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/internal/statusserver"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
	"github.com/percdb/percdb/kv/node"
	"github.com/percdb/percdb/kv/raftstore"
	"github.com/percdb/percdb/pd"
	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/txn/gcworker"
)

// The cluster roles of the binary: pd, kv, sql (runServer with a
// ClusterBackend) and playground.

// newLogger returns the role's logger at the --log-level given.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// splitAddrs reads a comma-separated list of host:port.
func splitAddrs(flagName, s string) ([]string, error) {
	out := splitList(s)
	for _, a := range out {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("--%s %q: %w", flagName, a, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--%s is required", flagName)
	}
	return out, nil
}

// runPD runs a pd member until SIGINT or SIGTERM.
func runPD(args []string) error {
	fs := flag.NewFlagSet("percdb pd", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "percdb-pd-data", "directory of the pd member's etcd data")
	addr := fs.String("addr", "127.0.0.1:2379", "host:port of pd's gRPC service (placement and timestamps)")
	name := fs.String("name", "pd", "this member's name in the etcd cluster")
	peerURL := fs.String("peer-url", "", "URL of the embedded etcd's peer listener (default http://host:port+1 of --addr)")
	clientURL := fs.String("client-url", "", "URL of the embedded etcd's client listener (default http://host:port+2 of --addr)")
	initial := fs.String("initial-cluster", "", "the etcd members as name=peer-url,... (default this member alone)")
	replicas := fs.Int("replicas", 3, "replicas of each region, each on its own kv node; the cluster starts serving once this many kv nodes registered")
	downTime := fs.Duration("max-store-down-time", 30*time.Minute, "how long a kv node may go without a heartbeat before its replicas are re-created on other kv nodes")
	lowSpace := fs.Float64("low-space-ratio", 0.8, "share of a kv node's capacity in use above which pd places no replica on it and moves replicas off it")
	maxMoves := fs.Int("max-replica-moves", 4, "replica moves (balance, drain, low space) under way at once in the cluster")
	locationLabels := fs.String("location-labels", "", "comma-separated store label keys that place a store, outermost first (e.g. zone,host): a region's replicas go to stores whose labels differ at the highest level they can")
	moveTimeout := fs.Duration("replica-move-timeout", pd.DefaultMoveTimeout, "how long pd keeps asking for a replica move before it gives the move up")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	statusFlag := addStatusFlags(fs, pdStatusOffset)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	statusAddr, err := statusFlag.addr(*addr, pdStatusOffset)
	if err != nil {
		return err
	}
	if *downTime <= 0 {
		return fmt.Errorf("--max-store-down-time %v: want a positive duration", *downTime)
	}
	if *lowSpace <= 0 || *lowSpace > 1 {
		return fmt.Errorf("--low-space-ratio %v: want a ratio above 0, at most 1", *lowSpace)
	}
	if *maxMoves < 1 {
		return fmt.Errorf("--max-replica-moves %d: want at least 1", *maxMoves)
	}
	if *moveTimeout <= 0 {
		return fmt.Errorf("--replica-move-timeout %v: want a positive duration", *moveTimeout)
	}
	logger, err := newLogger(*logLevel)
	if err != nil {
		return err
	}
	status, err := listenStatus(logger, statusAddr, "/pd/api/")
	if err != nil {
		return err
	}
	defer status.close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := pd.Open(ctx, pd.Config{DataDir: *dataDir, Addr: *addr, Name: *name, PeerURL: *peerURL, ClientURL: *clientURL,
		InitialCluster: *initial, Replicas: *replicas, MaxStoreDownTime: *downTime, LowSpaceRatio: *lowSpace, MaxMoves: *maxMoves,
		MoveTimeout: *moveTimeout, LocationLabels: splitList(*locationLabels), Logger: logger})
	if err != nil {
		return err
	}
	logger.Info("pd listening", "addr", srv.Addr().String(), "data_dir", *dataDir)
	status.attach(srv.Handler(), srv.Collector())
	<-ctx.Done()
	logger.Info("shutting down")
	status.close()
	return srv.Close()
}

// runKV runs a KV node until SIGINT or SIGTERM.
func runKV(args []string) error {
	fs := flag.NewFlagSet("percdb kv", flag.ContinueOnError)
	dataDir := fs.String("data-dir", "percdb-kv-data", "directory of the store's data")
	addr := fs.String("addr", "127.0.0.1:20160", "host:port to serve the kv protocol on, as registered with pd")
	pdFlag := fs.String("pd", "", "comma-separated host:port of the pd members (required)")
	reserveSpace := fs.String("reserve-space", "auto", "free disk space kept in reserve, as the single node's --reserve-space")
	blockCache := fs.String("block-cache-size", "256MiB", "the size of the store's block cache, as the single node's --block-cache-size")
	latestSpace := fs.String("latest-space", "auto", "when the store keeps the latest space, as the single node's --latest-space")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	logCompact := fs.Int("raft-log-compact", 1024, "applied entries a region's raft log holds before its leader truncates it to what every follower has; at 4 times as many it truncates past a follower that lags, which then catches up by snapshot")
	splitSize := fs.String("region-split-size", "96MiB", "size (bytes, or with a KiB, MiB or GiB suffix) above which a region this node leads is split in two")
	clockDrift := fs.Duration("raft-max-clock-drift", 100*time.Millisecond, "how much less time a follower's clock may measure than its leader's over an election timeout (1 s); leader leases are shortened by it, and a drift of 800ms or more disables lease reads (each read then waits for a heartbeat round)")
	statusFlag := addStatusFlags(fs, kvStatusOffset)
	labelsFlag := fs.String("labels", "", "the store's labels, key=value,... (e.g. zone=z1,host=h1): pd keeps a region's replicas apart by the keys of its --location-labels")
	capacity := fs.String("capacity", "0", "disk space this node may fill (bytes, or with a KiB, MiB or GiB suffix; 0: its file system's size): pd counts it low on space past --low-space-ratio of this")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	statusAddr, err := statusFlag.addr(*addr, kvStatusOffset)
	if err != nil {
		return err
	}
	capBytes, err := parseByteSize(*capacity)
	if err != nil || capBytes < 0 {
		return fmt.Errorf("--capacity %q: want 0 or a size such as 512MiB or 100GiB", *capacity)
	}
	if *clockDrift <= 0 {
		return fmt.Errorf("--raft-max-clock-drift %v: want a positive duration", *clockDrift)
	}
	if *logCompact < 1 {
		return fmt.Errorf("--raft-log-compact %d: want at least 1", *logCompact)
	}
	labels, err := parseLabels(*labelsFlag)
	if err != nil {
		return err
	}
	splitBytes, err := parseByteSize(*splitSize)
	if err != nil || splitBytes < 1 {
		return fmt.Errorf("--region-split-size %q: want a positive size such as 1048576, 64KiB or 96MiB", *splitSize)
	}
	pdAddrs, err := splitAddrs("pd", *pdFlag)
	if err != nil {
		return err
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
	logger, err := newLogger(*logLevel)
	if err != nil {
		return err
	}
	status, err := listenStatus(logger, statusAddr, "/store", statusserver.StoreSizesPath, "/regions", "/regions/")
	if err != nil {
		return err
	}
	defer status.close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := node.Open(ctx, node.Config{DataDir: *dataDir, Addr: *addr, StatusAddr: status.advertised(*addr), PD: pdAddrs,
		KV: kv.Options{ReserveSpace: reserve, Latest: latest, CacheSize: cacheSize, Logger: logger, Coprocessor: copr.Evaluator{}}, Logger: logger,
		Raft: raftstore.Config{LogCompactThreshold: *logCompact, MaxClockDrift: *clockDrift}, SplitSize: splitBytes, Capacity: capBytes,
		Labels: labels})
	if err != nil {
		return err
	}
	status.attach(n.Handler(), append(statusserver.StoreCollectors(n.Store()), n.Collector())...)
	<-ctx.Done()
	logger.Info("shutting down")
	status.close()
	return n.Close()
}

// dialCluster connects a SQL node to the cluster of the pd members in
// list: the remote kv client routed by pd, and pd's oracle, each retrying
// an unreachable node up to its timeout.
func dialCluster(list string, kvTimeout, pdTimeout, schemaLease time.Duration) (*percsql.ClusterBackend, func(), error) {
	addrs, err := splitAddrs("pd", list)
	if err != nil {
		return nil, nil, err
	}
	pdc, err := pd.NewClient(addrs, pd.ClientOptions{Timeout: pdTimeout})
	if err != nil {
		return nil, nil, err
	}
	kc := kvrpc.NewClient(pd.NewRegionCache(pdc), kvrpc.Options{UnavailableTimeout: kvTimeout})
	// The name under which pd keeps this SQL node's oldest running
	// start_ts and its schema lease: unique per process.
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, nil, err
	}
	node := "sql-" + hex.EncodeToString(id[:])
	return &percsql.ClusterBackend{KV: kc, Oracle: pdc, OracleTimeout: pdTimeout, GCSafePoints: pd.GCSafePoints{Client: pdc},
			SchemaPD: pdc, Node: node, SchemaLease: schemaLease,
			ReportMinStartTS: func(ctx context.Context, ts uint64) (bool, error) {
				return pdc.ReportMinStartTS(ctx, node, ts, gcworker.ReportTTL)
			},
			RegionDetail: func(ctx context.Context, id uint64) (percsql.RegionDetail, error) {
				resp, err := pdc.RegionRecord(ctx, id)
				if err != nil {
					return percsql.RegionDetail{}, err
				}
				r := resp.GetRegion()
				return percsql.RegionDetail{ConfVer: r.GetConfVer(), Leader: resp.GetStore().GetId(), Peers: r.GetPeers(),
					ApproximateSize: resp.GetApproximateSize(), Load: pd.APILoad(resp.GetLoad())}, nil
			}}, func() {
			_ = kc.Close()
			_ = pdc.Close()
		}, nil
}

// runPlayground starts a pd, --kv kv nodes and a sql node as child
// processes of this binary on 127.0.0.1, prints where each listens and
// its PID, and stops them all on SIGINT or SIGTERM.
func runPlayground(args []string) error {
	fs := flag.NewFlagSet("percdb playground", flag.ContinueOnError)
	kvs := fs.Int("kv", 3, "number of kv nodes")
	dataDir := fs.String("data-dir", "percdb-playground", "directory for the members' data (pd/, kv1/, ..., sql/)")
	port := fs.Int("port", 4000, "MySQL port of the sql node")
	basePort := fs.Int("base-port", 23790, "first of the ports the members use: pd (3 ports), one per kv node, then the status ports of pd and of each kv node")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kvs < 1 || *kvs > 64 {
		return fmt.Errorf("--kv %d: want 1 to 64", *kvs)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pdAddr := "127.0.0.1:" + strconv.Itoa(*basePort)
	// Ports: pd's (base, etcd's base+1 and base+2), the kv nodes' (from
	// base+3), then the status ports: pd's, then the kv nodes'.
	statusBase := *basePort + 3 + *kvs
	members := [][]string{{"pd", "--data-dir", filepath.Join(*dataDir, "pd"), "--addr", pdAddr,
		"--replicas", strconv.Itoa(min(3, *kvs)), "--status-port", strconv.Itoa(statusBase)}}
	for i := 1; i <= *kvs; i++ {
		members = append(members, []string{"kv", "--data-dir", filepath.Join(*dataDir, fmt.Sprintf("kv%d", i)),
			"--addr", "127.0.0.1:" + strconv.Itoa(*basePort+2+i), "--pd", pdAddr, "--status-port", strconv.Itoa(statusBase + i)})
	}
	members = append(members, []string{"sql", "--data-dir", filepath.Join(*dataDir, "sql"), "--port", strconv.Itoa(*port),
		"--pd", pdAddr, "--pd-status", "127.0.0.1:" + strconv.Itoa(statusBase), "--status-port", strconv.Itoa(statusBase + *kvs + 1)})
	// exited receives each member's pid when it exits (its error is
	// printed then).
	exited := make(chan int, len(members))
	var procs []*exec.Cmd
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			_ = procs[i].Process.Signal(syscall.SIGTERM)
		}
		for range procs {
			<-exited
		}
	}()
	for _, m := range members {
		cmd := exec.Command(self, m...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", m[0], err)
		}
		procs = append(procs, cmd)
		go func() {
			err := cmd.Wait()
			fmt.Fprintf(os.Stderr, "percdb playground: %s (pid %d) exited: %v\n", m[0], cmd.Process.Pid, err)
			exited <- cmd.Process.Pid
		}()
		fmt.Printf("%-4s pid %-7d %s\n", m[0], cmd.Process.Pid, strings.Join(m[1:], " "))
	}
	fmt.Printf("connect with: mariadb -h 127.0.0.1 -P %d -u root    (Ctrl-C stops every member)\n", *port)
	// A member that exits is reported and left down (kill and restart
	// members by hand to see the cluster cope); Ctrl-C stops the rest.
	for running := len(procs); running > 0; running-- {
		select {
		case <-ctx.Done():
			return nil
		case pid := <-exited:
			procs = slices.DeleteFunc(procs, func(c *exec.Cmd) bool { return c.Process.Pid == pid })
		}
	}
	return errors.New("every member has exited")
}

// parseLabels parses --labels: key=value pairs separated by commas, each
// key once, neither side empty ("": none).
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range splitList(s) {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("--labels %q: want key=value,... (e.g. zone=z1,host=h1)", s)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--labels %q: label %q given twice", s, k)
		}
		out[k] = v
	}
	return out, nil
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
