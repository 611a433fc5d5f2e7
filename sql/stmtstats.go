package sql

import (
	"fmt"
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The statement statistics can be turned off, as MySQL's
// performance_schema (at start) and TiDB's tidb_enable_stmt_summary (at
// any time) turn off theirs: the global variable percdb_statement_stats
// (default ON; the flag --statement-stats sets it at start, SET GLOBAL
// changes it for the statements that begin afterwards). OFF, the node
// keeps no per-statement statistics: the statement counters and duration
// histograms of /metrics (percdb_queries_total,
// percdb_query_duration_seconds) and the console's charts drawn from them
// stand still, performance_schema.events_statements_summary_by_digest
// gains nothing, and no statement is written to the slow log or the
// console's slow list. What is not statistics goes on: SHOW PROCESSLIST
// and KILL, the connection gauges, GLOBAL STATUS (Questions, Com_*) and
// the other metrics, which count work below the statement.
//
// It exists so that an operator can take the statistics' cost off the
// hot path, and so that the cost can be measured against the same
// server (docs/benchmarks.md, issue 17). Not persisted: a node starts
// with the flag's value.
const varStatementStats = "percdb_statement_stats"

var registerStatementStatsOnce sync.Once

// registerStatementStats adds percdb_statement_stats to GMS's registry
// (one per process); a SET GLOBAL reaches the session's node through
// NotifyChanged.
func registerStatementStats() {
	registerStatementStatsOnce.Do(func() {
		gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{&gsql.MysqlSystemVariable{
			Name:          varStatementStats,
			Scope:         gsql.GetMysqlScope(gsql.SystemVariableScope_Global),
			Dynamic:       true,
			Type:          types.NewSystemBoolType(varStatementStats),
			Default:       int8(1),
			NotifyChanged: notifyStatementStats,
		}})
	})
}

// startStatementStats sets percdb_statement_stats at the node's start
// (GMS keeps the variable per process, so the last node opened sets what
// SELECT @@percdb_statement_stats shows; each node keeps its own switch).
func startStatementStats(p *DatabaseProvider, off bool) error {
	registerStatementStats()
	p.statsOff.Store(off)
	v := int8(1)
	if off {
		v = 0
	}
	if err := gsql.SystemVariables.AssignValues(map[string]any{varStatementStats: v}); err != nil {
		return fmt.Errorf("set %s: %w", varStatementStats, err)
	}
	return nil
}

// notifyStatementStats puts a SET GLOBAL percdb_statement_stats in force
// on the session's node.
func notifyStatementStats(ctx *gsql.Context, scope gsql.SystemVariableScope, v gsql.SystemVarValue) error {
	p := setGlobalProvider(ctx, scope)
	if p == nil {
		return nil
	}
	n, ok := types.CoalesceInt(v.Val)
	if !ok {
		return gsql.ErrInvalidSystemVariableValue.New(varStatementStats, v.Val)
	}
	p.statsOff.Store(n == 0)
	return nil
}
