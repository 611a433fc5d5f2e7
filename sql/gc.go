package sql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/nodemetrics"
	"github.com/percdb/percdb/sql/safepoint"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/gcworker"
)

// MVCC garbage collection as the SQL layer sees it (package gcworker does
// the work): the global variables percdb_gc_life_time,
// percdb_gc_run_interval and percdb_gc_max_wait_time (how long a running
// transaction may hold the safe point back: TiDB's
// tidb_gc_max_wait_time), in Go's duration syntax ('10m0s', '1h', '90s'),
// kept in the store so that they survive a restart:
//
//	m:gc:life_time      the life time as set, normalized ("10m0s")
//	m:gc:run_interval   the run interval, likewise
//	m:gc:max_wait_time  the longest wait for a running transaction
//
// and the GC's counters in SHOW STATUS and /metrics (counters.go).
const (
	varGCLifeTime    = "percdb_gc_life_time"
	varGCRunInterval = "percdb_gc_run_interval"
	varGCMaxWaitTime = "percdb_gc_max_wait_time"
	// minGCDuration is the smallest life time and run interval accepted:
	// TiDB refuses a life time below 10 minutes, percdb lets tests and
	// benchmarks go to a second.
	minGCDuration = time.Second
	// maxGCDuration is the largest, a year (TiDB's bound).
	maxGCDuration = 8760 * time.Hour
)

// gcSettingKeys are the store keys of the GC variables.
var gcSettingKeys = map[string][]byte{
	varGCLifeTime:    []byte("m:gc:life_time"),
	varGCRunInterval: []byte("m:gc:run_interval"),
	varGCMaxWaitTime: []byte("m:gc:max_wait_time"),
}

// gcSettings are the node's GC variables in force, read by the worker at
// each run.
type gcSettings struct {
	lifeTime, runInterval atomic.Int64 // time.Duration
	// maxTxnWait is gcworker's MaxTxnWait.
	maxTxnWait atomic.Int64
}

func newGCSettings() *gcSettings {
	g := &gcSettings{}
	g.lifeTime.Store(int64(gcworker.DefaultLifeTime))
	g.runInterval.Store(int64(gcworker.DefaultRunInterval))
	g.maxTxnWait.Store(int64(gcworker.DefaultMaxTxnWait))
	return g
}

// get returns the settings for a run.
func (g *gcSettings) get() gcworker.Settings {
	return gcworker.Settings{
		LifeTime:    time.Duration(g.lifeTime.Load()),
		RunInterval: time.Duration(g.runInterval.Load()),
		MaxTxnWait:  time.Duration(g.maxTxnWait.Load()),
	}
}

// set changes the setting of a variable.
func (g *gcSettings) set(name string, d time.Duration) {
	switch name {
	case varGCLifeTime:
		g.lifeTime.Store(int64(d))
	case varGCRunInterval:
		g.runInterval.Store(int64(d))
	case varGCMaxWaitTime:
		g.maxTxnWait.Store(int64(d))
	}
}

// parseGCDuration parses a value of a GC variable: a Go duration from a
// second to a year.
func parseGCDuration(name string, v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, gsql.ErrInvalidSystemVariableValue.New(name, v)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < minGCDuration || d > maxGCDuration {
		return 0, gsql.ErrInvalidSystemVariableValue.New(name, v)
	}
	return d, nil
}

// gcDurationType is the type of the GC variables: a string that must be a
// duration in range (else MySQL error 1231), kept normalized ('10m' is
// shown as '10m0s', as TiDB does).
type gcDurationType struct {
	gsql.SystemVariableType
	name string
}

// Convert implements gsql.Type.
func (t gcDurationType) Convert(ctx context.Context, v any) (any, gsql.ConvertInRange, error) {
	d, err := parseGCDuration(t.name, v)
	if err != nil {
		return nil, gsql.OutOfRange, err
	}
	return d.String(), gsql.InRange, nil
}

var registerGCVariablesOnce sync.Once

// registerGCVariables adds the GC variables to GMS's registry (one per
// process). A SET GLOBAL reaches the session's node through
// NotifyChanged, which persists the value and hands it to the worker;
// GMS's global value is only what SELECT @@ shows (several nodes in one
// process, as in tests, show the last one set: docs/compatibility.md).
func registerGCVariables() {
	registerGCVariablesOnce.Do(func() {
		var vars []gsql.SystemVariable
		defaults := map[string]time.Duration{
			varGCLifeTime:    gcworker.DefaultLifeTime,
			varGCRunInterval: gcworker.DefaultRunInterval,
			varGCMaxWaitTime: gcworker.DefaultMaxTxnWait,
		}
		for _, name := range []string{varGCLifeTime, varGCRunInterval, varGCMaxWaitTime} {
			vars = append(vars, &gsql.MysqlSystemVariable{
				Name:          name,
				Scope:         gsql.GetMysqlScope(gsql.SystemVariableScope_Global),
				Dynamic:       true,
				Type:          gcDurationType{SystemVariableType: types.NewSystemStringType(name), name: name},
				Default:       defaults[name].String(),
				NotifyChanged: notifyGCVariable,
			})
		}
		gsql.SystemVariables.AddSystemVariables(vars)
	})
}

// notifyGCVariable persists a SET GLOBAL of a GC variable on the node of
// the session that ran it and hands the value to its worker.
func notifyGCVariable(ctx *gsql.Context, scope gsql.SystemVariableScope, v gsql.SystemVarValue) error {
	p := setGlobalProvider(ctx, scope)
	if p == nil || p.gc == nil {
		return nil // loading values at start (AssignValues)
	}
	name := v.Var.GetName()
	d, err := parseGCDuration(name, v.Val)
	if err != nil {
		return err
	}
	return p.gc.set(ctx, name, d)
}

// nodeGC is a node's garbage collector and its settings.
type nodeGC struct {
	p        *DatabaseProvider
	settings *gcSettings
	worker   *gcworker.Worker
	// report tells a cluster this node's oldest running start_ts and
	// answers whether the node is the GC leader (nil on a single node);
	// leader is the last answer.
	report func(ctx context.Context, ts uint64) (bool, error)
	leader atomic.Bool
	logger *slog.Logger
}

// newNodeGC makes the garbage collector of a node: over ks on a single
// node, where the safe point is the store's; over the cluster's KV nodes
// on a SQL node of a cluster (ks nil), where pd decides and keeps the
// safe point from every SQL node's candidate and reports, and the node
// reports its oldest running start_ts (docs/cluster.md). The running
// transactions are p's store's.
func newNodeGC(p *DatabaseProvider, ks *kv.Store, cluster *ClusterBackend, oracle txn.Oracle, logger *slog.Logger) (*nodeGC, error) {
	g := &nodeGC{p: p, settings: newGCSettings(), logger: logger}
	var client kv.GCClient
	var safePoints gcworker.SafePointSource
	switch {
	case ks != nil:
		client, safePoints = kv.NewLocalGCClient(ks), &gcworker.LocalSafePoint{Store: ks}
	case cluster != nil && cluster.GCSafePoints != nil && cluster.ReportMinStartTS != nil:
		gc, ok := cluster.KV.(kv.GCClient)
		if !ok {
			return g, nil
		}
		client, safePoints, g.report = gc, cluster.GCSafePoints, cluster.ReportMinStartTS
	default:
		return g, nil
	}
	var isLeader func() bool
	if g.report != nil {
		isLeader = g.leader.Load
	}
	w, err := gcworker.New(gcworker.Config{
		Client:     client,
		Txns:       p.store,
		Oracle:     oracle,
		SafePoints: safePoints,
		Active:     p.store,
		Ranges:     ddljob.GCRanges{Store: p.store},
		Services:   safepoint.Source{Store: p.store},
		Settings:   g.settings.get,
		Sweep:      p.sweepAcks,
		IsLeader:   isLeader,
		Logger:     logger,
	})
	if err != nil {
		return nil, err
	}
	g.worker = w
	return g, nil
}

// set persists a GC variable and puts it in force.
func (g *nodeGC) set(ctx context.Context, name string, d time.Duration) error {
	k, err := g.p.store.Begin(ctx)
	if err != nil {
		return err
	}
	// Shortening the life time is how an operator gets a dropped table's
	// space back sooner, so it must work on a full disk (a few bytes).
	k.AllowWhenDiskFull()
	if err := k.Set(gcSettingKeys[name], []byte(d.String())); err != nil {
		_ = k.Rollback(ctx)
		return err
	}
	if err := k.Commit(ctx); err != nil {
		return toSQLError(fmt.Errorf("save %s: %w", name, err))
	}
	g.settings.set(name, d)
	g.worker.Kick()
	return nil
}

// load reads the persisted GC variables into the settings and GMS's
// global values.
func (g *nodeGC) load(ctx context.Context) error {
	k, err := g.p.store.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = k.Rollback(ctx) }()
	vals := map[string]any{}
	for name, key := range gcSettingKeys {
		v, ok, err := k.Get(ctx, key)
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if !ok {
			continue
		}
		d, err := parseGCDuration(name, string(v))
		if err != nil {
			return fmt.Errorf("stored %s %q: %w", name, v, err)
		}
		g.settings.set(name, d)
		vals[name] = d.String()
	}
	if len(vals) == 0 {
		return nil
	}
	if err := gsql.SystemVariables.AssignValues(vals); err != nil {
		return fmt.Errorf("load the GC variables: %w", err)
	}
	return nil
}

// gcCounters are the GC's rows of SHOW STATUS and families of /metrics.
func (g *nodeGC) counters() []nodemetrics.Counter {
	var st gcworker.Stats
	if g.worker != nil {
		st = g.worker.Stats()
	}
	var lastRun uint64
	if !st.LastRun.IsZero() {
		lastRun = uint64(st.LastRun.Unix())
	}
	return []nodemetrics.Counter{
		{Status: "Percdb_gc_last_run", Metric: "percdb_gc_last_run_timestamp_seconds", Help: "When the last complete GC run ended (Unix seconds; 0: none since start).", Gauge: true, Value: lastRun},
		{Status: "Percdb_gc_safe_point", Metric: "percdb_gc_safe_point", Help: "The GC safe point of the last complete run (a timestamp of the oracle).", Gauge: true, Value: st.SafePoint},
		{Status: "Percdb_gc_runs", Metric: "percdb_gc_runs_total", Help: helpGCRuns, Label: "result", LabelValue: "ok", Value: st.Runs},
		{Status: "Percdb_gc_failed_runs", Metric: "percdb_gc_runs_total", Help: helpGCRuns, Label: "result", LabelValue: "failed", Value: st.FailedRuns},
		{Status: "Percdb_gc_locks_resolved", Metric: "percdb_gc_locks_resolved_total", Help: "Locks below the safe point settled by GC.", Value: st.LocksResolved},
		{Status: "Percdb_gc_keys_deleted", Metric: "percdb_gc_versions_deleted_total", Help: "Old versions (write records) deleted by GC.", Value: st.VersionsDeleted},
		{Status: "Percdb_gc_bytes_reclaimed", Metric: "percdb_gc_bytes_reclaimed_total", Help: "Bytes of keys and values deleted by GC: old versions, and the disk space of destroyed delete ranges.", Value: st.BytesDeleted + st.RangeBytesReclaimed},
		{Status: "Percdb_gc_ranges_destroyed", Metric: "percdb_gc_ranges_destroyed_total", Help: "Ranges of dropped tables and indexes destroyed by GC.", Value: st.RangesDestroyed},
		{Status: "Percdb_gc_keys_scanned", Metric: "percdb_gc_keys_scanned_total", Help: "Keys examined by GC.", Value: st.KeysScanned},
		{Status: "Percdb_gc_regions_skipped", Metric: "percdb_gc_regions_skipped_total", Help: "Region passes GC skipped: nothing written since a pass that left nothing to collect.", Value: st.RegionsSkipped},
	}
}

const helpGCRuns = "GC runs, by result."

// errGCNotStarted is returned by runGC before the worker exists, and on
// a SQL node of a cluster, which has none yet.
var errGCNotStarted = errors.New("the garbage collector is not started")

// run runs the worker (and on a SQL node of a cluster the report of its
// oldest running start_ts) until ctx ends; without a worker it returns at
// once.
func (g *nodeGC) run(ctx context.Context) {
	if g.worker == nil {
		return
	}
	if g.report != nil {
		done := make(chan struct{})
		go func() {
			defer close(done)
			gcworker.ReportActive(ctx, g.p.store, g.settings.get, g.report, &g.leader, g.logger)
		}()
		defer func() { <-done }()
	}
	g.worker.Run(ctx)
}

// runGC runs the node's garbage collector once (tests, benchmarks).
func (p *DatabaseProvider) runGC(ctx context.Context) (uint64, error) {
	if p.gc == nil || p.gc.worker == nil {
		return 0, errGCNotStarted
	}
	return p.gc.worker.RunOnce(ctx)
}
