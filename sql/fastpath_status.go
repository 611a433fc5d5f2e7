package sql

import (
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
)

// percdbStatus returns percdb's status variables with their current
// values.
func (s *Session) percdbStatus() map[string]gsql.StatusVarValue {
	p := s.provider
	out := make(map[string]gsql.StatusVarValue, numReasons+4)
	add := func(name string, v uint64) {
		val := &atomic.Uint64{}
		val.Store(v)
		out[name] = &gsql.MutableStatusVarValue{
			Var: &gsql.MySQLStatusVariable{
				Name:    name,
				Scope:   gsql.StatusVariableScope_Both,
				Type:    types.NewSystemUintType(name, 0, ^uint64(0)),
				Default: uint64(0),
			},
			Val: val,
		}
	}
	add(statusOracleCalls, p.store.OracleCalls())
	if fp := p.fast; fp != nil {
		add(statusFastHits, fp.hits.Load())
		add(statusOracleAvoided, fp.avoided.Load())
		add(statusFastPlansCache, uint64(fp.plans.len()))
		for r := fastReason(0); r < numReasons; r++ {
			add(statusFallPrefix+reasonNames[r], fp.fallthroughs[r].Load())
		}
	}
	return out
}

// GetAllStatusVariables implements sql.Session: GMS's session status
// variables and percdb's.
func (s *Session) GetAllStatusVariables(ctx *gsql.Context) map[string]gsql.StatusVarValue {
	m := s.BaseSession.GetAllStatusVariables(ctx)
	for name, v := range s.percdbStatus() {
		m[name] = v
	}
	return m
}

// GetStatusVariable implements sql.Session, percdb's variables included.
func (s *Session) GetStatusVariable(ctx *gsql.Context, name string) (any, error) {
	if v, ok := s.percdbStatus()[name]; ok {
		return v.Value(), nil
	}
	return s.BaseSession.GetStatusVariable(ctx, name)
}
