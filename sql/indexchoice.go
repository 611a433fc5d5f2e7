package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// GMS v0.20.0 chooses among a table's indexes by estimated rows. Without
// histograms (no ANALYZE TABLE) every index gets the same uniform
// estimate, and its tie-breaking rules then prefer a unique key, the
// primary key included, even when the WHERE clause binds only a prefix of
// it: for
//
//	SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?
//
// on PRIMARY KEY (c_w_id, c_d_id, c_id) and INDEX (c_w_id, c_d_id, c_last,
// c_first) it reads every customer of the district through the primary
// key (3,000 rows in TPC-C's Payment and Order-Status) rather than the
// few of that name through the index. MySQL's range optimizer, without
// statistics too, prefers the index whose equalities pin the longer
// prefix (its records-in-range estimate shrinks with each column pinned).
//
// Table implements sql.IndexSearchable, which GMS asks before its own
// costing, to make that choice: a unique secondary key bound whole by
// col = constant (at most one row, where GMS may prefer a prefix of the
// primary key) or else, when the primary key is not bound whole (GMS then
// reads at most one row through it, as MySQL would), the index with
// strictly the most leading columns bound, if it is not unique; the
// lookup is on that index, its bound columns as point ranges built by
// GMS's own range builder. Every other case, and every table with
// histograms, is GMS's to cost as before. The filter stays whole above
// the lookup (the lookup narrows the rows read, never the answer):
// TestIndexChoiceLongestPrefix shows the plan.

// SkipIndexCosting implements sql.IndexSearchable: when
// LookupForExpressions declines, GMS costs the indexes as usual.
func (t *Table) SkipIndexCosting() bool { return false }

// LookupForExpressions implements sql.IndexSearchable: the lookup on the
// index whose equality-bound prefix is strictly the longest, when no
// unique index is bound whole and the table has no histograms; ok is
// false otherwise. exprs are the conjuncts of a filter over the table.
func (t *Table) LookupForExpressions(ctx *gsql.Context, exprs ...gsql.Expression) (gsql.IndexLookup, *gsql.FuncDepSet, gsql.Expression, bool, error) {
	var none gsql.IndexLookup
	bound, ok := equalityBound(ctx, t.Name(), exprs)
	if !ok || len(bound) < 2 || t.db == nil || t.hasHistograms(ctx) {
		// One bound column: a longer prefix needs two.
		return none, nil, nil, false, nil
	}
	indexes, err := t.GetIndexes(ctx)
	if err != nil {
		return none, nil, nil, false, err
	}
	var best, unique gsql.Index
	bestN, tie := 0, false
	for _, idx := range indexes {
		cols := idx.Expressions()
		n := 0
		for _, c := range cols {
			if _, ok := bound[strings.ToLower(columnOf(c))]; !ok {
				break
			}
			n++
		}
		switch {
		case idx.IsUnique() && n == len(cols):
			if idx.ID() == "PRIMARY" {
				// At most one row by the primary key: GMS
				// chooses it.
				return none, nil, nil, false, nil
			}
			if unique == nil {
				unique = idx
			}
		case n > bestN:
			best, bestN, tie = idx, n, false
		case n == bestN:
			tie = true
		}
	}
	switch {
	case unique != nil:
		// At most one row through a unique key, where GMS's rules
		// may prefer a prefix of the primary key.
		best, bestN = unique, len(unique.Expressions())
	case best == nil || tie || best.IsUnique():
		// No index stands out, or the best is a unique key's prefix,
		// which GMS's rules already prefer.
		return none, nil, nil, false, nil
	}
	b := gsql.NewMySQLIndexBuilder(best)
	for _, c := range best.Expressions()[:bestN] {
		b.Equals(ctx, strings.ToLower(c), bound[strings.ToLower(columnOf(c))])
	}
	lookup, err := b.Build(ctx)
	if err != nil || lookup.IsEmpty() {
		return none, nil, nil, false, nil
	}
	return lookup, nil, expression.JoinAnd(exprs...), true, nil
}

// columnOf returns the column of an index expression "table.column".
func columnOf(expr string) string {
	if i := strings.LastIndexByte(expr, '.'); i >= 0 {
		return expr[i+1:]
	}
	return expr
}

// equalityBound returns the columns exprs bind by col = constant, with
// their values (lower-case names): an integer column to an integer, a
// VARCHAR or TEXT column to a string. Other pairs compare by rules (a string
// column equal to the number 5 holds '05' and '5.0' too) that a point
// range on the index would not follow. NULL binds nothing (col = NULL is never
// true; GMS's range builder handles it), and a column bound twice is left
// out (GMS's builder intersects the two).
//
// ok is false when a bound column is named through an alias of the table:
// GMS v0.20.0 puts a lookup from LookupForExpressions in place of the
// table without its alias (analyzer.indexSearchableLookup), so an aliased
// table is left to GMS's costing.
func equalityBound(ctx *gsql.Context, table string, exprs []gsql.Expression) (map[string]any, bool) {
	bound := map[string]any{}
	twice := map[string]bool{}
	for _, e := range exprs {
		eq, ok := e.(*expression.Equals)
		if !ok {
			continue
		}
		gf, lit := eq.Left(), eq.Right()
		if _, ok := gf.(*expression.GetField); !ok {
			gf, lit = lit, gf
		}
		f, ok := gf.(*expression.GetField)
		l, isLit := lit.(*expression.Literal)
		if !ok || !isLit {
			continue
		}
		if !strings.EqualFold(f.Table(), table) {
			return nil, false
		}
		if !sameKind(f.Type(), l.Type()) {
			continue
		}
		v, err := l.Eval(ctx, nil)
		if err != nil || v == nil {
			continue
		}
		name := strings.ToLower(f.Name())
		if _, dup := bound[name]; dup {
			twice[name] = true
		}
		bound[name] = v
	}
	for name := range twice {
		delete(bound, name)
	}
	return bound, true
}

// sameKind reports whether a column of type col compared with a constant
// of type lit is a comparison of two integers or of two strings.
func sameKind(col, lit gsql.Type) bool {
	switch {
	case types.IsInteger(col):
		return types.IsInteger(lit)
	case types.IsText(col):
		// CHAR keys are made without trailing spaces, which a literal
		// may have (docs/compatibility.md): such a column is left to
		// GMS's choice.
		return types.IsText(lit) && col.Type() != sqltypes.Char
	}
	return false
}

// hasHistograms reports whether ANALYZE TABLE left statistics of the
// table for GMS's costing, which then decides.
func (t *Table) hasHistograms(ctx *gsql.Context) bool {
	st := t.db.provider.planStats
	if st == nil {
		return false
	}
	stats, err := st.GetTableStats(ctx, strings.ToLower(t.meta.dbName), t)
	return err != nil || len(stats) > 0
}
