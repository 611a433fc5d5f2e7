package sql

import (
	"reflect"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/foreignkey"
)

// compatBuilder builds the row iterators of percdb's own plan nodes and
// leaves every other node to GMS's builder.
type compatBuilder struct {
	// gms is the builder that calls this one first; children are built
	// through it.
	gms gsql.NodeExecBuilder
	// a is the analyzer whose ExecBuilder this is (see
	// finalizeSubqueries).
	a *analyzer.Analyzer
}

// newExecBuilder returns GMS's row iterator builder with percdb's nodes
// added.
func newExecBuilder(a *analyzer.Analyzer) gsql.NodeExecBuilder {
	b := &compatBuilder{a: a}
	b.gms = rowexec.NewOverrideBuilder(b)
	return b.gms
}

// Build implements sql.NodeExecBuilder. It returns no iterator and no
// error for the nodes GMS builds.
func (b *compatBuilder) Build(ctx *gsql.Context, n gsql.Node, row gsql.Row) (gsql.RowIter, error) {
	if stats := statsOf(ctx); stats != nil && stats.startBuild(n) {
		// EXPLAIN ANALYZE: every operator timed (explainanalyze.go).
		return b.buildTimed(ctx, stats, n, row)
	}
	switch n := n.(type) {
	case *coprScan:
		return b.buildCopr(ctx, n, row)
	case *plan.Call:
		// percdb's interpreter runs stored procedures (procexec.go);
		// GMS's runs the procedures of its own (ExternalProc).
		if n.Procedure == nil || n.Procedure.ExternalProc == nil {
			return b.buildCall(ctx, n, row)
		}
	case *plan.ShowCreateProcedure:
		return showCreateProcedure(ctx, n, row)
	case *plan.CreateUser:
		// ACCOUNT LOCK, which GMS drops (accountlock.go).
		if iter, err := createUserLocked(ctx, b.a.Catalog.MySQLDb, n, row); iter != nil || err != nil {
			return iter, err
		}
	case *plan.SetOp:
		// INTERSECT and EXCEPT by percdb's row keys (sql/compat/setops.go).
		if k, ok := compat.KeyedSetOpPlan(n); ok {
			return b.gms.Build(ctx, k, row)
		}
	case *compat.KeyedSetOp:
		left, err := b.gms.Build(ctx, n.SetOp().Left(), row)
		if err != nil {
			return nil, err
		}
		right, err := b.gms.Build(ctx, n.SetOp().Right(), row)
		if err != nil {
			left.Close(ctx)
			return nil, err
		}
		return compat.NewKeyedSetOpIter(n, left, right), nil
	case *plan.Sort:
		// Strings compared without map lookups (collatedsort.go).
		return b.buildCollatedSort(ctx, n, row)
	case *plan.RecursiveCte:
		// UNION (DISTINCT) by the columns' collations
		// (sql/compat/recursivecte.go).
		if compat.CollatedRecursiveCte(n) {
			return compat.NewRecursiveCteIter(ctx, n, func(part gsql.Node) (gsql.RowIter, error) {
				return b.gms.Build(ctx, part, row)
			})
		}
	case *compat.CollatedDistinct:
		child, err := b.gms.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return compat.NewCollatedDistinctIter(ctx, n.Schema(), child), nil
	case *plan.DescribeQuery:
		return b.describe(ctx, n, row)
	case *plan.ShowColumns:
		iter, err := compat.ShowColumns(ctx, n, row)
		if err != nil {
			return nil, err
		}
		return floatScaleShowColumnsIter(ctx, n, iter)
	case *bytewiseUpdatable:
		return b.gms.Build(ctx, n.Child, row)
	case *lockUnchangedRows:
		child, err := b.gms.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return n.build(child), nil
	case *bytewiseRows:
		return b.gms.Build(ctx, n.Child, row)
	case *plan.UpdateSource:
		// An UPDATE of several tables reads its join before its
		// first write (joinwrites.go).
		if s, ok := updateSourceReadFirst(n); ok {
			return b.gms.Build(ctx, s, row)
		}
	case *readAllFirst:
		child, err := b.gms.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return &readAllFirstIter{child: child}, nil
	case *compat.FitRows:
		child, err := b.gms.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return compat.NewFitRowsIter(ctx, n, child), nil
	case *plan.LockTables:
		// Locks GMS does not take (tablelocks.go).
		if err := lockTablesStatement(ctx); err != nil {
			return nil, err
		}
		return gsql.RowsToRowIter(), nil
	case *plan.UnlockTables:
		if s, err := sessionOf(ctx); err == nil {
			s.provider.tableLocks.Release(s.ID())
			// UNLOCK TABLES ends each table of a dump (grantreload.go).
			if err := s.applyReload(ctx); err != nil {
				return nil, err
			}
		}
		return gsql.RowsToRowIter(), nil
	case *plan.LoadData:
		// MySQL's file format (package loaddata).
		return buildLoadData(ctx, n)
	case *plan.DropTable:
		// On a cluster the tables are fenced first; GMS drops them
		// (dropfence.go).
		if err := fenceDropTables(ctx, n); err != nil {
			return nil, err
		}
	case *plan.DropDB:
		if err := fenceDropDatabase(ctx, n.DbName); err != nil {
			return nil, err
		}
		// MySQL's DROP DATABASE reports the tables it dropped as the
		// rows affected; GMS's reports 1.
		tables := -1
		if tx, err := transactionOf(ctx); err == nil {
			if c := tx.provider.catalogs.Cached(); c != nil {
				if db, ok := c.Database(n.DbName); ok {
					tables = len(c.SortedTables(db.ID))
				}
			}
		}
		if tables < 0 {
			return nil, nil
		}
		// GMS's own builder, which does not call this one back: a
		// DROP DATABASE has no children to build.
		it, err := rowexec.DefaultBuilder.Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		return &droppedTablesIter{RowIter: it, tables: tables}, nil
	case *plan.TableCopier:
		// CREATE TABLE IF NOT EXISTS … SELECT of a table there is:
		// note 1050 and no row copied (compat_ifexists.go).
		if ct, ok := n.Destination.(*plan.CreateTable); ok {
			if iter, err := existingTableNote(ctx, ct); iter != nil || err != nil {
				return iter, err
			}
		}
	case *plan.CreateTable:
		// Note 1050 for IF NOT EXISTS of a table there is
		// (compat_ifexists.go).
		if iter, err := existingTableNote(ctx, n); iter != nil || err != nil {
			return iter, err
		}
		// A zero date default under NO_ZERO_DATE: 1067
		// (sql/compat/zerodates.go).
		if err := compat.ZeroDateDefault(ctx, n.PkSchema().Schema); err != nil {
			return nil, err
		}
	case *plan.RenameTable:
		if err := fenceRenameTables(ctx, n); err != nil {
			return nil, err
		}
	case *compat.SelectedRows:
		child, err := b.gms.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return compat.NewSelectedRowsIter(n, child), nil
	case *countedSource:
		iter, err := b.gms.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return &countingRowIter{child: iter, counts: n.counts}, nil
	case *plan.InsertInto:
		// ON DUPLICATE KEY UPDATE reading the SELECT's columns, bound
		// to this execution's rows (sql/compat/odku.go).
		if m, ok, err := compat.BindSelectedColumns(n); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		if m, ok, err := compat.ScopedUpsertSubqueries(n, b.gms); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		warnIgnoredGenerated(ctx) // compat_genvalues.go
		if err := foreignkey.CheckShadowed(ctx, n); err != nil {
			return nil, err
		}
		if m, ok, err := withGeneratedOnDup(n); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// An upsert counts a change of letter case (compat_replace.go).
		if m, ok := bytewiseUpsert(n); ok {
			return b.gms.Build(ctx, m, row)
		}
		// Numbers a column does not hold: 1264, 1366, 1265 as MySQL
		// (sql/compat/fit.go).
		if m, ok := compat.FitInsert(n); ok {
			return b.gms.Build(ctx, m, row)
		}
		if m, ok := compat.FitUpsert(ctx, n); ok {
			return b.gms.Build(ctx, m, row)
		}
		// GMS analyzes an INSERT of VALUES with its short list of
		// rules: integer arithmetic, -x, ABS and DIV of its rows and its
		// ON DUPLICATE KEY UPDATE are put in here (sql/compat/arith.go).
		if m, same, err := compat.IntegerArithmetic(ctx, nil, n, nil, nil, nil); err != nil || !same {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// The OK packet's "Records: …  Duplicates: …" (compat_insertinfo.go),
		// outside REPLACE's count of the rows it deletes.
		if m, counts, ok := withInsertInfo(n); ok {
			iter, err := b.gms.Build(ctx, m, row)
			if err != nil {
				return nil, err
			}
			return &insertInfoIter{child: iter, ii: m, counts: counts, load: loadsData(n)}, nil
		}
		// REPLACE counts every row it deletes (compat_replace.go).
		ii, count, ok := countedReplace(n)
		if !ok {
			return nil, nil
		}
		iter, err := b.gms.Build(ctx, ii, row)
		if err != nil {
			return nil, err
		}
		return &rowsAffectedIter{child: iter, fix: func(n uint64) uint64 { return uint64(int64(n) + int64(count.missed)) }}, nil
	case *plan.ShowCreateTable:
		return showCreateTable(ctx, n, row) // showcreatenull.go
	case *plan.ShowIndexes:
		// The indexes of a table with VIRTUAL columns (generated.go).
		if m, ok, err := withGeneratedShowIndexes(ctx, n); err != nil {
			return nil, err
		} else if ok {
			n = m
		}
		// Cardinality from ANALYZE TABLE's statistics (statsinfo.go).
		return b.buildShowIndexes(ctx, n, row)
	case *plan.AnalyzeTable:
		return b.buildAnalyze(ctx, n)
	case *plan.Filter:
		// DECIMAL columns compared exactly (sql/compat/decimal.go), and
		// DECIMALs of one type compared without GMS's conversions of
		// every row's values where they hold them exactly
		// (sql/compat/fastdecimal.go).
		c, exact := compat.ExactDecimalColumns(n.Expression)
		c, fast := compat.FastDecimalComparisons(c)
		if exact || fast {
			return b.gms.Build(ctx, plan.NewFilter(c, n.Child), row)
		}
	case *plan.Limit:
		// A batched lookup join right under a LIMIT reads no more outer
		// rows than the LIMIT is expected to take (lookupjoin.go).
		if j, rows, ok := limitedLookupJoin(ctx, n); ok && batchedJoin(ctx, j) {
			if lctx, ok := withLookupLimit(ctx, j, rows); ok {
				return b.gms.Build(lctx, n, row)
			}
		}
	case *plan.GroupBy:
		// Partial aggregates per join key under a lookup join, in the
		// coprocessor (lookupagg.go).
		if iter, ok, err := b.buildLookupAgg(ctx, n, row); ok || err != nil {
			return iter, err
		}
	case *plan.JoinNode:
		// DECIMAL columns compared exactly (sql/compat/decimal.go), before
		// the merge key's wrapper below is put on.
		if n.Filter != nil {
			if c, ok := compat.ExactDecimalColumns(n.Filter); ok {
				j, err := n.WithExpressions(c)
				if err != nil {
					return nil, err
				}
				return b.gms.Build(ctx, j, row)
			}
		}
		// Merge joins reject NULL keys (sql/compat/rows.go). Done here, not
		// in an analyzer rule: GMS validates the plan of a derived
		// table again inside the outer query, and its operand check
		// does not know the wrapped comparison.
		j, same, err := compat.NullRejectingMergeKeys(n)
		if err != nil || !same {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, j, row)
		}
		// Lookups on a whole primary key, a batch of outer rows at a
		// time (lookupjoin.go).
		if in, ok := batchedLookup(n); ok && userVarOn(ctx, lookupBatchUserVar) {
			return newBatchedLookupIter(ctx, b.gms, n, in, row)
		}
		return nil, nil
	case *plan.Update, *plan.DeleteFrom:
		if err := foreignkey.CheckShadowed(ctx, n); err != nil {
			return nil, err
		}
		if err := targetInSubquery(n); err != nil {
			return nil, err
		}
		// A table without a primary key joined to others: its equal
		// rows are changed and counted together (keylessjoin.go).
		if u, ok := n.(*plan.Update); ok {
			if ku, extra, ok := withKeylessCopies(u); ok {
				iter, err := b.gms.Build(ctx, ku, row)
				if err != nil {
					return nil, err
				}
				return &rowsAffectedIter{child: iter, fix: func(n uint64) uint64 { return n + uint64(extra()) }}, nil
			}
		}
		// A string that is not a number compared with a number is
		// error 1292 under a strict sql_mode (sql/compat/strict.go).
		if m, same, err := compat.StrictComparisons(ctx, n); err != nil || !same {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// Numbers a column does not hold: 1264, 1366, 1265 as MySQL
		// (sql/compat/fit.go).
		if u, ok := n.(*plan.Update); ok {
			if m, ok, err := compat.FitUpdatePlan(ctx, u); ok || err != nil {
				if err != nil {
					return nil, err
				}
				return b.gms.Build(ctx, m, row)
			}
		}
		if d, ok := n.(*plan.DeleteFrom); ok {
			// A DELETE of several tables deletes and counts each row
			// once (compat_replace.go).
			if cd, count, ok := countedJoinDelete(d); ok {
				iter, err := b.gms.Build(ctx, cd, row)
				if err != nil {
					return nil, err
				}
				return &rowsAffectedIter{child: iter, fix: func(uint64) uint64 { return uint64(count.deleted) }}, nil
			}
			// And reads its join before its first delete
			// (joinwrites.go).
			if rf, ok := deleteReadFirst(d); ok {
				return b.gms.Build(ctx, rf, row)
			}
		}
		if d, ok, err := b.finalizeSubqueries(ctx, n); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, d, row)
		}
		// Row constructors on a key (writeaccess.go).
		if m, ok, err := b.planWriteAccess(ctx, n); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		if u, ok := n.(*plan.Update); ok {
			if w, ok := withBytewiseChanges(u); ok {
				return b.gms.Build(ctx, w, row)
			}
			if w, ok := withBytewiseJoinChanges(u); ok {
				return b.gms.Build(ctx, w, row)
			}
		}
		// TIME values in arithmetic, string functions and with an
		// INTERVAL (sql/compat/timevalues.go): SET t = t - INTERVAL 2 HOUR
		// wrapped into the day.
		if m, same, err := compat.TimeValues(ctx, nil, n, nil, nil, nil); err != nil || !same {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// Row comparisons, LIKE's escape, <=> on strings and the other
		// expression rewrites of sql/compat/rows.go, which GMS's short
		// path for one table does not run either.
		if m, same, err := compat.RowComparisonsIn(ctx, n); err != nil || !same {
			if err != nil {
				return nil, err
			}
			// Index reads from the rewritten WHERE (compat_writelookup.go).
			if m, err = relookupWrites(ctx, m); err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// A NOT NULL date IS NULL finds the zero date
		// (sql/compat/zerodateisnull.go), which GMS's short path for one
		// table does not run either; its index read is derived again.
		if m, same, err := compat.ZeroDateIsNull(ctx, nil, n, nil, nil, nil); err != nil || !same {
			if err != nil {
				return nil, err
			}
			if m, err = relookupWrites(ctx, m); err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// Strings under PAD SPACE collations (sql/compat/padspace.go),
		// which GMS's short path for one table does not run either: the
		// literals compared with them first, from which the index reads
		// are derived again, then the comparisons over the rows read.
		if m, same, err := compat.PadSpaceLiterals(ctx, nil, n, nil, nil, nil); err != nil || !same {
			if err != nil {
				return nil, err
			}
			if m, err = relookupWrites(ctx, m); err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		if m, same, err := compat.PadSpaceComparisons(ctx, nil, n, nil, nil, nil); err != nil || !same {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// Dates moved by months or long intervals (sql/compat/dateshift.go),
		// which GMS's short path for one table does not run either.
		if m, same, err := compat.DateShifts(ctx, nil, n, nil, nil, nil); err != nil || !same {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, m, row)
		}
		// GMS analyzes an UPDATE or DELETE of one table with a short
		// list of rules of its own (analyzer.getBatchesForNode), not
		// the analyzer's batches where percdb puts its rules: integer
		// arithmetic is put in here, once the plan is final. The second
		// time here the plan is the same, and GMS builds it.
		m, same, err := compat.IntegerArithmetic(ctx, nil, n, nil, nil, nil)
		if err != nil {
			return nil, err
		}
		if !same {
			return b.gms.Build(ctx, m, row)
		}
		// Last, once the plan is final: a pessimistic UPDATE locks the
		// rows it leaves unchanged (pessimistic_update.go).
		if u, ok := n.(*plan.Update); ok {
			if w, ok := withUnchangedRowsLocked(ctx, u); ok {
				return b.gms.Build(ctx, w, row)
			}
		}
		return nil, nil
	}
	return nil, nil
}

// finalizeSubqueries works around a GMS defect: GMS analyzes an UPDATE
// or DELETE of one table with a short list of rules of its own when its
// planner found no subquery in it, and the planner does not count an
// EXISTS: the subquery is never analyzed, and the statement failed with
// "attempted to evaluate uninitialized subquery". The subqueries GMS has
// not prepared to run are analyzed here, as GMS's finalizeSubqueries
// would (in the scope of the node that holds them), and the statement is
// built with them.
func (b *compatBuilder) finalizeSubqueries(ctx *gsql.Context, n gsql.Node) (gsql.Node, bool, error) {
	if b.a == nil || !hasUnpreparedSubquery(n) {
		return n, false, nil
	}
	qFlags := &gsql.QueryFlags{}
	qFlags.Set(gsql.QFlagRelSubquery)
	ret, _, err := transform.Node(n, func(node gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		return transform.OneNodeExprsWithNode(node, func(node gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			return transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
				sq, ok := e.(*plan.Subquery)
				if !ok || !unprepared(sq) {
					return e, transform.SameTree, nil
				}
				scope := (*plan.Scope)(nil).NewScopeFromSubqueryExpression(node, sq.Correlated())
				q, err := b.a.Analyze(ctx, sq.Query, scope, qFlags)
				if err != nil {
					return e, transform.SameTree, err
				}
				return sq.WithQuery(q).WithExecBuilder(b.a.ExecBuilder), transform.NewTree, nil
			})
		})
	})
	if err != nil {
		return nil, false, err
	}
	return ret, true, nil
}

// hasUnpreparedSubquery reports whether a subquery expression of n's tree
// is unprepared.
func hasUnpreparedSubquery(n gsql.Node) bool {
	found := false
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if sq, ok := e.(*plan.Subquery); ok && unprepared(sq) {
			found = true
		}
		return !found
	})
	return found
}

// unprepared reports whether sq has no row iterator builder: the analyzer
// sets one when it finalizes the subquery, and GMS's Subquery does not
// export it, so it is read by reflection.
func unprepared(sq *plan.Subquery) bool {
	b := reflect.ValueOf(sq).Elem().FieldByName("b")
	return b.IsValid() && b.IsNil()
}

// GMS's UPDATE writes a row only when the new row differs from the old
// one, and compares them under the columns' collations: under a
// case-insensitive collation SET s = 'A' on a row holding 'a' wrote
// nothing and counted no change, where MySQL writes 'A' (it compares the
// bytes). withBytewiseChanges puts a bytewiseUpdatable over the rows of
// such an UPDATE: GMS takes the table's schema from it, in which string
// columns have their character set's binary collation, for that check
// (and for counting changed rows).
func withBytewiseChanges(u *plan.Update) (gsql.Node, bool) {
	if _, done := u.Child.(*bytewiseUpdatable); done || u.IsJoin || hasUpdateJoin(u) {
		return u, false
	}
	t, err := plan.GetUpdatable(u.Child)
	if err != nil {
		return u, false
	}
	sch, changed := bytewiseSchema(t.Schema())
	if !changed {
		return u, false
	}
	ret, err := u.WithChildren(&bytewiseUpdatable{UnaryNode: plan.UnaryNode{Child: u.Child}, UpdatableTable: t, sch: sch})
	if err != nil {
		return u, false
	}
	return ret, true
}

// withBytewiseJoinChanges does for an UPDATE of several tables what
// withBytewiseChanges does for one: GMS's UPDATE ... JOIN tells changed
// rows of each table from unchanged ones under the schema of the joined
// rows, so SET a.s = 'A' over 'a' wrote nothing. It puts a bytewiseRows
// under the UPDATE's source of joined rows.
func withBytewiseJoinChanges(u *plan.Update) (gsql.Node, bool) {
	if !u.IsJoin && !hasUpdateJoin(u) {
		return u, false
	}
	changed := false
	ret, _, err := transform.Node(u, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		src, ok := n.(*plan.UpdateSource)
		if !ok {
			return n, transform.SameTree, nil
		}
		if _, done := src.Child.(*bytewiseRows); done {
			return n, transform.SameTree, nil
		}
		sch, ok := bytewiseSchema(src.Child.Schema())
		if !ok {
			return n, transform.SameTree, nil
		}
		out, err := src.WithChildren(&bytewiseRows{UnaryNode: plan.UnaryNode{Child: src.Child}, sch: sch})
		if err != nil {
			return n, transform.SameTree, err
		}
		changed = true
		return out, transform.NewTree, nil
	})
	if err != nil || !changed {
		return u, false
	}
	return ret, true
}

// bytewiseRows is its child's rows, under a schema whose strings compare
// by their bytes (the joined rows of an UPDATE of several tables).
type bytewiseRows struct {
	plan.UnaryNode
	sch gsql.Schema
}

var _ gsql.Node = (*bytewiseRows)(nil)

// Schema implements sql.Node.
func (n *bytewiseRows) Schema() gsql.Schema { return n.sch }

// String implements sql.Node.
func (n *bytewiseRows) String() string { return n.Child.String() }

// IsReadOnly implements sql.Node.
func (n *bytewiseRows) IsReadOnly() bool { return n.Child.IsReadOnly() }

// WithChildren implements sql.Node.
func (n *bytewiseRows) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	ret := *n
	ret.Child = children[0]
	return &ret, nil
}

// bytewiseSchema returns sch with every string column under its
// character set's binary collation, and whether one was not.
func bytewiseSchema(sch gsql.Schema) (gsql.Schema, bool) {
	var out gsql.Schema
	for i, c := range sch {
		st, ok := c.Type.(gsql.StringType)
		if !ok || st.Collation() == st.Collation().CharacterSet().BinaryCollation() {
			continue
		}
		tc, ok := c.Type.(gsql.TypeWithCollation)
		if !ok {
			continue
		}
		t, err := tc.WithNewCollation(st.Collation().CharacterSet().BinaryCollation())
		if err != nil {
			continue
		}
		if out == nil {
			out = sch.Copy()
		}
		col := *out[i]
		col.Type = t
		out[i] = &col
	}
	return out, out != nil
}

// bytewiseUpdatable is the source of an UPDATE's rows, and its table,
// whose schema compares strings by their bytes.
type bytewiseUpdatable struct {
	plan.UnaryNode
	gsql.UpdatableTable
	sch gsql.Schema
}

var _ gsql.Node = (*bytewiseUpdatable)(nil)

// Schema implements sql.Node and sql.Table: the table's, strings
// compared by their bytes (the node's rows are the child's).
func (n *bytewiseUpdatable) Schema() gsql.Schema { return n.sch }

// String implements sql.Node.
func (n *bytewiseUpdatable) String() string { return n.Child.String() }

// Children implements sql.Node.
func (n *bytewiseUpdatable) Children() []gsql.Node { return []gsql.Node{n.Child} }

// Resolved implements sql.Node.
func (n *bytewiseUpdatable) Resolved() bool { return n.Child.Resolved() }

// IsReadOnly implements sql.Node.
func (n *bytewiseUpdatable) IsReadOnly() bool { return false }

// WithChildren implements sql.Node.
func (n *bytewiseUpdatable) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	ret := *n
	ret.Child = children[0]
	return &ret, nil
}

// bytewiseEqual reports whether rows a and b of schema sch are equal,
// strings compared by their bytes (as withBytewiseChanges makes GMS's
// UPDATE compare them); the fast path's UPDATE uses it.
func bytewiseEqual(ctx *gsql.Context, a, b gsql.Row, sch gsql.Schema) (bool, error) {
	if len(a) != len(b) || len(a) != len(sch) {
		return false, nil
	}
	for i := range a {
		if _, ok := sch[i].Type.(gsql.StringType); ok {
			as, aok := a[i].(string)
			bs, bok := b[i].(string)
			if aok && bok {
				if as != bs {
					return false, nil
				}
				continue
			}
		}
		cmp, err := sch[i].Type.Compare(ctx, a[i], b[i])
		if err != nil {
			return false, err
		}
		if cmp != 0 {
			return false, nil
		}
	}
	return true, nil
}

// codeUpdateTableUsed is MySQL's ER_UPDATE_TABLE_USED.
const codeUpdateTableUsed = 1093

// targetInSubquery returns MySQL's error 1093 for an UPDATE or DELETE
// whose subquery reads a table it changes (outside a derived table,
// which MySQL materializes first): a one-table UPDATE or DELETE, or a
// DELETE of several tables (DELETE t FROM t JOIN o ...). GMS runs such a
// statement, and its subquery sees the rows the statement has already
// changed: a DELETE WHERE EXISTS (SELECT ... FROM the same table) stopped
// deleting once the rows the subquery found were gone; and for an UPDATE
// GMS runs as a join (of several tables, or with a subquery it unnested),
// whose targets are the tables it updates.
func targetInSubquery(n gsql.Node) error {
	var targets []gsql.Table
	switch n := n.(type) {
	case *plan.DeleteFrom:
		for _, t := range n.GetDeleteTargets() {
			d, err := plan.GetDeletable(t)
			if err != nil {
				return nil
			}
			targets = append(targets, d)
		}
	case *plan.Update:
		if n.IsJoin || hasUpdateJoin(n) {
			targets = updateJoinTargets(n)
			break
		}
		t, err := plan.GetUpdatable(n.Child)
		if err != nil {
			return nil
		}
		targets = append(targets, t)
	default:
		return nil
	}
	for _, target := range targets {
		if subqueryReads(n, target) {
			return mysql.NewSQLError(codeUpdateTableUsed, stateGeneral, "You can't specify target table '%s' for update in FROM clause", target.Name())
		}
	}
	return nil
}

// targetInSubqueryRule is the analyzer rule that gives an UPDATE's or
// a DELETE's 1093 (targetInSubquery) before GMS's analysis turns an
// uncorrelated subquery into a constant or a join: DELETE t FROM t JOIN
// o ON ... WHERE EXISTS (SELECT 1 FROM t s ...) reached the row-iterator
// builder's check with no subquery left, and ran, and UPDATE t JOIN o
// ... WHERE EXISTS (SELECT 1 FROM t s ...) failed in GMS's update-join
// rule with 1235 "keyless tables unsupported" (it took the subquery's
// pruned t for the target); both found by the difftest's data-change
// run, and MySQL 8 refuses both with 1093 (MariaDB runs them).
func targetInSubqueryRule(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	var err error
	transform.Inspect(n, func(n gsql.Node) bool {
		switch c := n.(type) {
		case *plan.DeleteFrom, *plan.Update:
			if err == nil {
				err = targetInSubquery(c)
			}
		}
		return err == nil
	})
	return n, transform.SameTree, err
}

// updateJoinTargets returns the tables an UPDATE that GMS runs as a join
// updates: those its UpdateJoin has an updater for (before GMS makes the
// UpdateJoin, those its SET clause assigns to), by the name (or alias)
// the statement gives them.
func updateJoinTargets(u *plan.Update) []gsql.Table {
	names := map[string]bool{}
	transform.Inspect(u, func(n gsql.Node) bool {
		if uj, ok := n.(*plan.UpdateJoin); ok {
			for name := range uj.Updaters {
				names[strings.ToLower(name)] = true
			}
		}
		return true
	})
	if len(names) == 0 {
		// Before GMS's analysis makes the UpdateJoin: the tables the
		// SET clause assigns to, as GMS then finds them.
		names = assignedTables(u)
	}
	var targets []gsql.Table
	seen := map[string]bool{}
	transform.Inspect(u, func(n gsql.Node) bool {
		nn, ok := n.(gsql.NameableNode)
		if !ok || !names[strings.ToLower(nn.Name())] || seen[strings.ToLower(nn.Name())] {
			return true
		}
		var t gsql.Table
		switch q := n.(type) {
		case *plan.TableAlias:
			if tn, ok := q.Child.(gsql.TableNode); ok {
				t = tn.UnderlyingTable()
			}
		case gsql.TableNode:
			t = q.UnderlyingTable()
		}
		if t != nil {
			seen[strings.ToLower(nn.Name())] = true
			targets = append(targets, t)
		}
		return true
	})
	return targets
}

// assignedTables returns the names (or aliases) of the tables whose
// columns the SET clause of n assigns, lower-cased, as GMS finds an
// UPDATE's targets.
func assignedTables(n gsql.Node) map[string]bool {
	names := map[string]bool{}
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if sf, ok := e.(*expression.SetField); ok {
			if gf, ok := sf.LeftChild.(*expression.GetField); ok {
				names[strings.ToLower(gf.Table())] = true
			}
			return false
		}
		return true
	})
	return names
}

// subqueryReads reports whether a subquery of n reads target (outside a
// derived table): a subquery expression, or the inner side of a semi or
// anti join GMS made of one.
func subqueryReads(n gsql.Node, target gsql.Table) bool {
	name := strings.ToLower(target.Name())
	db := ""
	if d, ok := target.(gsql.Databaseable); ok {
		db = strings.ToLower(d.Database())
	}
	reads := func(q gsql.Node) bool {
		found := false
		transform.Inspect(q, func(q gsql.Node) bool {
			switch q := q.(type) {
			case *plan.SubqueryAlias:
				return false
			case gsql.TableNode:
				// A table read whole or through an index.
				if strings.ToLower(q.UnderlyingTable().Name()) != name {
					break
				}
				d, ok := q.(gsql.Databaser)
				found = db == "" || !ok || d.Database() == nil || strings.ToLower(d.Database().Name()) == db
			}
			return !found
		})
		return found
	}
	var found bool
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if sq, ok := e.(*plan.Subquery); ok && !found {
			found = reads(sq.Query)
		}
		return !found
	})
	transform.Inspect(n, func(q gsql.Node) bool {
		if j, ok := q.(*plan.JoinNode); ok && !found && (j.Op.IsSemi() || j.Op.IsAnti()) {
			found = reads(j.Right())
		}
		return !found
	})
	return found
}

// hasUpdateJoin reports whether an UPDATE is one GMS runs as a join (an
// UPDATE with a subquery it unnested, or of several tables), whose table
// is a stand-in that panics when asked its name.
func hasUpdateJoin(u *plan.Update) bool {
	found := false
	transform.Inspect(u.Child, func(n gsql.Node) bool {
		if _, ok := n.(*plan.UpdateJoin); ok {
			found = true
		}
		return !found
	})
	return found
}

// droppedTablesIter answers a DROP DATABASE with the number of tables it
// dropped as its rows affected, as MySQL does (GMS: 1).
type droppedTablesIter struct {
	gsql.RowIter
	tables int
}

// Next implements sql.RowIter.
func (it *droppedTablesIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	r, err := it.RowIter.Next(ctx)
	if err != nil || len(r) != 1 {
		return r, err
	}
	if ok, isOK := r[0].(types.OkResult); isOK && ok.RowsAffected == 1 {
		ok.RowsAffected = uint64(it.tables)
		return gsql.Row{ok}, nil
	}
	return r, nil
}
