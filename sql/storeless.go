package sql

import (
	"context"
	"reflect"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/plancache"
)

// Statements that read nothing from the store: SELECT 1 (a pool's
// validation query), DO 1, SELECT DATABASE(), SELECT @x. A Transaction
// begins its Percolator transaction lazily so that such a statement never
// fetches a timestamp (transaction.go), but the plan caches' lookup keys
// plans by the catalog at the statement's snapshot (templateContext), and
// reading it took a start_ts from the oracle and a read of the schema
// version key: a fifth of SELECT 1's server CPU (docs/benchmarks.md,
// branch fixed8). A plan that reads nothing needs no snapshot, so an
// autocommit execution of one finds its plan under the node's cached
// catalog, which the fast path's SchemaGuard vouches is the latest, as the
// fast path's autocommit reads do. A statement that reads takes its
// start_ts, and the same guard spares it the read of the version key at
// it (guardedCatalog).

// expressionPackages are the import paths of the packages whose
// expressions read nothing from the store: GMS's built-ins (expression,
// expression/function and its subpackages) and package compat's MySQL
// semantics over them, which imports nothing that reads and holds no
// plan outside its children (a subquery below one is walked to).
var expressionPackages = []string{
	"github.com/dolthub/go-mysql-server/sql/expression",
	"github.com/percdb/percdb/sql/compat",
}

// readsNothing reports whether the plan n (bound or analysed) reads
// nothing from the store: its nodes are among those that only shape rows,
// over the dual table only, and its expressions are of expressionPackages
// (no subquery, no stored function call, nothing of this package's). A
// plan it does not know reads something.
func readsNothing(n gsql.Node) bool {
	ok := true
	transform.Inspect(n, func(n gsql.Node) bool {
		switch n := n.(type) {
		case nil:
			// (Inspect's call after a node's children.)
			return ok
		case *plan.ResolvedTable:
			ok = ok && plan.IsDualTable(n.Table)
		case *plan.Project, *plan.Limit, *plan.Offset, *plan.Filter, *plan.Having, *plan.Sort, *plan.TopN,
			*plan.Distinct, *plan.OrderedDistinct, *plan.GroupBy:
		default:
			ok = false
		}
		if ex, isEx := n.(gsql.Expressioner); ok && isEx {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(e, func(e gsql.Expression) bool {
					ok = ok && (e == nil || storelessExpression(e))
					return !ok
				})
			}
		}
		return ok
	})
	return ok
}

// storelessExpression reports whether e is an expression of
// expressionPackages (a plan.Subquery is not: it lives in package plan).
func storelessExpression(e gsql.Expression) bool {
	t := reflect.TypeOf(e)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, p := range expressionPackages {
		if strings.HasPrefix(t.PkgPath(), p) {
			return true
		}
	}
	return false
}

// storelessCatalog returns a templateContext's choice of catalog for an
// autocommit statement that may need no snapshot: the node's cached
// catalog when the SchemaGuard vouches it is the latest and plans hold a
// plan that reads nothing cached under it for the session's database,
// epoch and statistics. (Such a plan says the statement's text reads no
// table, whatever its parameters' values and types: a plan that reads
// nothing is cached only when its bound statement, before the analysis,
// read nothing either.)
func storelessCatalog(s *Session, plans []*plancache.Plan, db string, epoch, statsGen uint64) func() (*catalog.Catalog, bool) {
	return func() (*catalog.Catalog, bool) {
		fp := s.provider.fast
		if fp == nil {
			return nil, false
		}
		ddls, ok := fp.schema.Begin()
		if !ok || !fp.schema.Trusted(ddls) {
			return nil, false
		}
		cat := s.provider.catalogs.Cached()
		if cat == nil {
			return nil, false
		}
		for _, p := range plans {
			if p.Storeless && p.Catalog == cat && p.DB == db && p.Epoch == epoch && p.Stats == statsGen {
				return cat, true
			}
		}
		return nil, false
	}
}

// guardedCatalog gives a fresh transaction t the node's cached catalog
// without the read of the schema version key its catalog method makes at
// the start_ts (one kv get a statement), when the fast path's SchemaGuard
// proves it the catalog at that start_ts: the guard, whose count ddls was
// taken before (ok: no DDL in progress then), vouches for the cache at
// that count, and still counts ddls, with none in progress, once the
// start_ts is taken. A DDL committed below the start_ts fetched its
// commit_ts after marking itself in progress (SchemaGuard.Changing), so
// before the start_ts was fetched: it is counted, or in progress, when the
// guard is asked again. This is the fast path's argument for its
// autocommit reads (fastpath.SchemaGuard), for a snapshot read.
func guardedCatalog(ctx context.Context, s *Session, t *Transaction, ddls uint64, ok bool) (*catalog.Catalog, bool) {
	fp := s.provider.fast
	if !ok || !fp.schema.Trusted(ddls) {
		return nil, false
	}
	cat := s.provider.catalogs.Cached()
	if cat == nil {
		return nil, false
	}
	// The transaction's schema use is registered (txn) before its start_ts.
	k, err := t.txn(ctx)
	if err != nil {
		return nil, false
	}
	if _, err := k.StartTS(ctx); err != nil {
		return nil, false
	}
	if !fp.schema.Unchanged(ddls) {
		// (The catalog method reads the version at this start_ts.)
		return nil, false
	}
	if t.use != nil {
		t.use.Observe(cat.Version)
	}
	t.cat = cat
	return cat, true
}
