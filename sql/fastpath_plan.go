package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/fastpath"
)

// fastEntry is a digest's cached decision (fastpath.Entry), with package
// sql's plans.
type fastEntry = fastpath.Entry[fastPlan, *fastPlan]

// fastPlanCache is the server's cache of decisions and plans by digest
// (fastpath.Cache).
type fastPlanCache = fastpath.Cache[fastPlan, *fastPlan]

// A fastPlan is a shape's plan (fastpath.Plan) with the table package sql
// writes it through: GMS's table, whose editors and AUTO_INCREMENT
// handling the fast path's writes share with GMS's.
type fastPlan struct {
	*fastpath.Plan
	table *Table
	// scanProg is a range SELECT's coprocessor program without the
	// filter and the limit each execution gives it (fastpath_scan.go).
	scanProg *copr.Program
}

// Base implements fastpath.Planned: the plan pl was made from.
func (pl *fastPlan) Base() *fastpath.Plan { return pl.Plan }

// newFastPlan resolves shape in database dbName of cat (fastpath.Resolve).
func newFastPlan(ctx *gsql.Context, p *DatabaseProvider, cat *catalog.Catalog, dbName string, shape *fastpath.Shape) (*fastPlan, fastpath.Reason, bool) {
	sp, reason, ok := fastpath.Resolve(ctx, p.metas, cat, dbName, shape, scanAggType)
	if !ok {
		return nil, reason, false
	}
	db, _ := cat.Database(dbName)
	pl := &fastPlan{Plan: sp, table: &Table{db: &Database{provider: p, def: db}, meta: sp.Meta}}
	if sp.Scan != nil {
		if pl.scanProg, ok = scanProgram(pl); !ok {
			return nil, fastpath.ReasonTable, false
		}
	}
	return pl, 0, true
}

// planFor returns the run's plan for catalog cat (fastpath.Entry.PlanFor),
// resolved by newFastPlan when the cached one is for another version.
func (r *fastRun) planFor(cat *catalog.Catalog) (*fastPlan, fastpath.Reason, bool) {
	ctx, p := r.ctx, r.s.provider
	return r.entry.PlanFor(cat, r.dbName(), func(cat *catalog.Catalog, dbName string, shape *fastpath.Shape) (*fastPlan, fastpath.Reason, bool) {
		return newFastPlan(ctx, p, cat, dbName, shape)
	})
}
