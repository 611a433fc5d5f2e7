package sql

import (
	"context"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Status variables of the fast path and the oracle, served by SHOW
// STATUS (session scope, which in GMS shows global counters too). They
// are the server's counters, not the session's: GMS keeps its global
// status variables in a process-wide registry, which percdb leaves alone
// so that servers in one process do not share counters.
const (
	statusFastHits       = "Percdb_fastpath_hits"
	statusFallPrefix     = "Percdb_fastpath_fallthrough_"
	statusOracleCalls    = "Percdb_oracle_calls"
	statusOracleAvoided  = "Percdb_oracle_calls_avoided"
	statusFastPlansCache = "Percdb_fastpath_plans_cached"
	statusFastTextPlans  = "Percdb_fastpath_text_plan_hits"
)

// percdbStatus returns percdb's status variables with their current
// values: the node's counters (counters.go), which /metrics shows too.
func (s *Session) percdbStatus(ctx context.Context) map[string]gsql.StatusVarValue {
	counters := s.provider.nodeCounters(ctx)
	out := make(map[string]gsql.StatusVarValue, len(counters))
	for _, c := range counters {
		val := &atomic.Uint64{}
		val.Store(c.Value)
		out[c.Status] = &gsql.MutableStatusVarValue{
			Var: &gsql.MySQLStatusVariable{
				Name:    c.Status,
				Scope:   gsql.StatusVariableScope_Both,
				Type:    types.NewSystemUintType(c.Status, 0, ^uint64(0)),
				Default: uint64(0),
			},
			Val: val,
		}
	}
	return out
}

// GetAllStatusVariables implements sql.Session: GMS's session status
// variables and percdb's.
func (s *Session) GetAllStatusVariables(ctx *gsql.Context) map[string]gsql.StatusVarValue {
	m := s.BaseSession.GetAllStatusVariables(ctx)
	for name, v := range s.percdbStatus(ctx) {
		m[name] = v
	}
	return m
}

// GetStatusVariable implements sql.Session, percdb's variables included.
func (s *Session) GetStatusVariable(ctx *gsql.Context, name string) (any, error) {
	if v, ok := s.percdbStatus(ctx)[name]; ok {
		return v.Value(), nil
	}
	return s.BaseSession.GetStatusVariable(ctx, name)
}
