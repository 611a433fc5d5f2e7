package sql

import (
	"context"
	"math"
	"sync"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/statistics"
	"github.com/percdb/percdb/sql/tablemeta"
)

// Auto-analyze, as TiDB's: each node counts the rows its committed
// transactions change per table (statistics.Modifications, no KV write)
// and, in the background, analyzes a table once the rows changed since
// its statistics pass tidb_auto_analyze_ratio (default 0.5) of its rows,
// or, for a table never analyzed, once autoAnalyzeMinRows rows changed
// (a table is counted as at least that big, so small tables are not
// analyzed over and over). One table at a time, the one changed the
// most relative to its size, in one walk rather than one per core (low
// priority), and never inside a statement: the planner only reads what
// is stored. tidb_enable_auto_analyze = OFF stops it. Both are global
// variables of the node, not persisted.
const (
	varEnableAutoAnalyze = "tidb_enable_auto_analyze"
	varAutoAnalyzeRatio  = "tidb_auto_analyze_ratio"
	// defaultAutoAnalyzeRatio is TiDB's default.
	defaultAutoAnalyzeRatio = 0.5
	// autoAnalyzeMinRows is the fewest rows a table counts as (TiDB's
	// AutoAnalyzeMinCnt).
	autoAnalyzeMinRows = 1000
	// autoAnalyzeDuty is the fraction of its time an auto-analyze reads
	// (statistics.CollectOptions.Duty): at most half of one core, as
	// TiDB runs it at low priority with one worker.
	autoAnalyzeDuty = 0.5
	// DefaultAutoAnalyzeInterval is how often a node looks for a table to
	// analyze when Config.AutoAnalyzeInterval is zero.
	DefaultAutoAnalyzeInterval = 10 * time.Second
)

// autoAnalyzeSettings are the node's auto-analyze variables.
type autoAnalyzeSettings struct {
	mu      sync.Mutex
	enabled bool
	ratio   float64
}

func (s *autoAnalyzeSettings) get() (bool, float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enabled, s.ratio
}

var registerAutoAnalyzeOnce sync.Once

// registerAutoAnalyze adds the auto-analyze variables to GMS's registry
// (one per process); a SET GLOBAL reaches the session's node through
// NotifyChanged.
func registerAutoAnalyze() {
	registerAutoAnalyzeOnce.Do(func() {
		gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{
			&gsql.MysqlSystemVariable{
				Name:          varEnableAutoAnalyze,
				Scope:         gsql.GetMysqlScope(gsql.SystemVariableScope_Global),
				Dynamic:       true,
				Type:          types.NewSystemBoolType(varEnableAutoAnalyze),
				Default:       int8(1),
				NotifyChanged: notifyAutoAnalyze,
			},
			&gsql.MysqlSystemVariable{
				Name:          varAutoAnalyzeRatio,
				Scope:         gsql.GetMysqlScope(gsql.SystemVariableScope_Global),
				Dynamic:       true,
				Type:          types.NewSystemDoubleType(varAutoAnalyzeRatio, 0, math.MaxFloat64),
				Default:       defaultAutoAnalyzeRatio,
				NotifyChanged: notifyAutoAnalyze,
			},
		})
	})
}

// notifyAutoAnalyze puts a SET GLOBAL of an auto-analyze variable in
// force on the session's node.
func notifyAutoAnalyze(ctx *gsql.Context, scope gsql.SystemVariableScope, v gsql.SystemVarValue) error {
	p := setGlobalProvider(ctx, scope)
	if p == nil {
		return nil
	}
	s := &p.autoAnalyze
	s.mu.Lock()
	defer s.mu.Unlock()
	switch v.Var.GetName() {
	case varEnableAutoAnalyze:
		n, ok := types.CoalesceInt(v.Val)
		if !ok {
			return gsql.ErrInvalidSystemVariableValue.New(varEnableAutoAnalyze, v.Val)
		}
		s.enabled = n != 0
	case varAutoAnalyzeRatio:
		f, ok := v.Val.(float64)
		if !ok {
			return gsql.ErrInvalidSystemVariableValue.New(varAutoAnalyzeRatio, v.Val)
		}
		s.ratio = f
	}
	return nil
}

// runAutoAnalyze analyzes, every interval, the table that most needs it
// (see above), until ctx ends.
func (p *DatabaseProvider) runAutoAnalyze(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := p.autoAnalyzeOnce(ctx); err != nil && ctx.Err() == nil {
			gsql.NewContext(ctx).GetLogger().WithError(err).Warn("auto-analyze")
		}
	}
}

// autoAnalyzeOnce analyzes the table that most needs it, if one does.
func (p *DatabaseProvider) autoAnalyzeOnce(ctx context.Context) error {
	enabled, ratio := p.autoAnalyze.get()
	if !enabled {
		return nil
	}
	var pick int64
	best := 0.0
	p.modified.Each(func(id int64, changed uint64) {
		var rows uint64
		if st := p.stats.Get(ctx, id); st != nil {
			rows = st.RowCount
			changed, _ = p.modified.Since(id, st.Version)
		}
		f := float64(changed) / float64(max(rows, autoAnalyzeMinRows))
		if (rows == 0 && changed >= autoAnalyzeMinRows || rows > 0 && f > ratio) && f > best {
			pick, best = id, f
		}
	})
	if best == 0 {
		return nil
	}
	m, ok, err := p.tableMetaByID(ctx, pick)
	if err != nil {
		return err
	}
	if !ok {
		p.modified.Forget(pick) // dropped, or rewritten under a new ID
		return nil
	}
	err = p.analyze(ctx, m, statistics.CollectOptions{Parallel: 1, Duty: autoAnalyzeDuty})
	if gsql.ErrTableNotFound.Is(err) {
		p.modified.Forget(pick)
		return nil
	}
	return err
}

// tableMetaByID returns the metadata of the table with ID id in the
// newest catalog, and false when there is none.
func (p *DatabaseProvider) tableMetaByID(ctx context.Context, id int64) (*tablemeta.Table, bool, error) {
	k, err := p.store.Begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer k.Rollback(ctx) //nolint:errcheck // read-only
	cat, err := p.catalogs.Load(ctx, k)
	if err != nil {
		return nil, false, err
	}
	def, ok := tableDefByID(cat, id)
	if !ok {
		return nil, false, nil
	}
	for _, db := range cat.Databases {
		if db.ID == def.DBID {
			m, err := p.metas.Get(gsql.NewContext(ctx), db.Name, def)
			return m, err == nil, err
		}
	}
	return nil, false, nil
}
