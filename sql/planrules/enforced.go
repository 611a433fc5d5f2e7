package planrules

import (
	"math"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS keeps every filter over an index read whose table says its lookups
// are not precise (sql.IndexAddressable.PreciseMatch), as percdb's says:
// a bound that does not convert exactly to its column's type, a string's
// collation key, an exclusive bound, widen the key range read (package
// sql's keyRanges). So k BETWEEN 1000 AND 1100 over an index on k was
// evaluated again on each row the range returned, about a fifth of the
// server's CPU under a GROUP BY over a covered index read. Some bounds
// are exact, though: on an integer column, after index columns each
// pinned to one integer in every range, an inclusive bound that is an
// integer of the column's type (>=, <=, BETWEEN, =, IN) reads exactly the
// rows it admits, NULLs left out by the range's lower end.
// DropEnforcedFilters drops from a filter over a static index read the
// conjuncts that those ranges imply: a comparison of such a column with
// an integer literal (=, >=, <=, >, <), BETWEEN two of them, or IN a list of them, each
// range's interval of the column lying wholly inside the values the
// conjunct admits. An exclusive bound (> and <) on such a column is read
// as the inclusive one next to it (ExclusiveIntBound: k > 3 as k >= 4),
// so it is exact too. ORs, NULL-safe comparisons, values of other types
// (DECIMALs, doubles, strings, whose conversions round), prefix indexes
// and the other columns' types keep their filters.

// DropEnforcedFiltersRule is DropEnforcedFilters as an analyzer rule.
func DropEnforcedFiltersRule(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return DropEnforcedFilters(ctx, n)
}

// DropEnforcedFilters removes from each filter directly over a static
// index read (under a table alias or not) the conjuncts that the read's
// ranges enforce exactly (above), and the filter when none is left.
func DropEnforcedFilters(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	if changesRows(n) {
		// percdb's one-table UPDATE and DELETE derive their index read
		// again from the filter over it (package sql's compat_exec.go):
		// a conjunct dropped here would widen that read to the whole
		// table, and the statement would change rows outside it.
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		read := f.Child
		if a, ok := read.(*plan.TableAlias); ok {
			read = a.Child
		}
		ita, ok := read.(*plan.IndexedTableAccess)
		if !ok || !ita.IsStatic() {
			return n, transform.SameTree, nil
		}
		ex, ok := newExactRanges(ctx, ita)
		if !ok {
			return n, transform.SameTree, nil
		}
		table := strings.ToLower(ita.Name())
		if a, ok := f.Child.(*plan.TableAlias); ok {
			table = strings.ToLower(a.Name())
		}
		conj := expression.SplitConjunction(f.Expression)
		kept := make([]gsql.Expression, 0, len(conj))
		for _, c := range conj {
			if !ex.enforces(c, table) {
				kept = append(kept, c)
			}
		}
		switch len(kept) {
		case len(conj):
			return n, transform.SameTree, nil
		case 0:
			return f.Child, transform.NewTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(kept...), f.Child), transform.NewTree, nil
	})
}

// exactRanges are the ranges of a static index read, by column: for
// each column of the index that every range reads exactly (the columns
// before it pinned to one integer, its own bounds inclusive integers or
// none), the interval each range gives it.
type exactRanges struct {
	cols []string // the index's columns, lower case
	// spans[i] are column i's intervals, one per range; nil when a
	// range does not read column i exactly.
	spans [][]span
}

// span is an interval [lo, hi] of an integer column's values, NULL left
// out; loInf and hiInf mark an end no bound limits.
type span struct {
	lo, hi       int64
	loInf, hiInf bool
}

// newExactRanges reads the ranges of ita's lookup; ok is false when no
// column is read exactly.
func newExactRanges(ctx *gsql.Context, ita *plan.IndexedTableAccess) (*exactRanges, bool) {
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil || lookup.Index == nil || lookup.IsEmptyRange || lookup.IsSpatialLookup || lookup.Index.IsFullText() {
		return nil, false
	}
	for _, l := range lookup.Index.PrefixLengths() {
		if l != 0 {
			return nil, false
		}
	}
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if !ok || len(ranges) == 0 {
		return nil, false
	}
	ex := &exactRanges{cols: indexColumns(lookup.Index)}
	ex.spans = make([][]span, len(ex.cols))
	found := false
	for i := range ex.cols {
		spans := make([]span, 0, len(ranges))
		for _, r := range ranges {
			if !pinnedBefore(ctx, r, i) || i >= len(r) {
				spans = nil
				break
			}
			s, ok := exactSpan(ctx, r[i])
			if !ok {
				spans = nil
				break
			}
			spans = append(spans, s)
		}
		ex.spans[i] = spans
		found = found || spans != nil
	}
	return ex, found
}

// pinnedBefore reports whether the columns of range r before column i
// are each one integer of the column's type, which the key range reads
// as one value.
func pinnedBefore(ctx *gsql.Context, r gsql.MySQLRange, i int) bool {
	if i > len(r) {
		return false
	}
	for j := 0; j < i; j++ {
		v, ok := PointValue(ctx, r[j])
		if !ok || v == nil {
			return false
		}
		if _, ok := exactInt(ctx, v, r[j].Typ); !ok {
			return false
		}
	}
	return true
}

// exactSpan returns the interval of an integer column's range ce when
// the key range reads exactly it: NULL left out (the lower end above
// NULL or a value), each end a value the column's type holds, inclusive
// (Below a lower value, Above an upper one), or none.
func exactSpan(ctx *gsql.Context, ce gsql.MySQLRangeColumnExpr) (span, bool) {
	if !types.IsInteger(ce.Typ) {
		return span{}, false
	}
	var s span
	switch lo := ce.LowerBound.(type) {
	case gsql.AboveNull:
		s.loInf = true
	case gsql.Below:
		n, ok := exactInt(ctx, lo.Key, ce.Typ)
		if !ok {
			return span{}, false
		}
		s.lo = n
	case gsql.Above:
		n, empty, ok := ExclusiveIntBound(ctx, lo.Key, ce.Typ, true)
		if !ok || empty {
			return span{}, false
		}
		s.lo = n
	default:
		return span{}, false
	}
	switch hi := ce.UpperBound.(type) {
	case gsql.AboveAll:
		s.hiInf = true
	case gsql.Above:
		n, ok := exactInt(ctx, hi.Key, ce.Typ)
		if !ok {
			return span{}, false
		}
		s.hi = n
	case gsql.Below:
		n, empty, ok := ExclusiveIntBound(ctx, hi.Key, ce.Typ, false)
		if !ok || empty {
			return span{}, false
		}
		s.hi = n
	default:
		return span{}, false
	}
	return s, true
}

// ExclusiveIntBound returns the inclusive bound that reads exactly the
// values of integer column type typ past an exclusive one at key: key+1
// for a lower bound (above, col > key), key-1 for an upper one (col <
// key), so that a key range need not read the entries at key and a
// filter to drop them (package sql's keyRangeOf reads its ranges so, and
// exactSpan relies on it). empty reports that no value of the type lies
// past key (col > 2147483647 on an INT, col < 0 on an unsigned one). ok
// is false when key is not an integer the type holds (a fraction, a
// string, a value out of its range) or an unsigned BIGINT's values go on
// past int64 (col > 9223372036854775807): the bound is then read
// inclusively and the filter checks it.
func ExclusiveIntBound(ctx *gsql.Context, key any, typ gsql.Type, above bool) (n int64, empty, ok bool) {
	if !types.IsInteger(typ) {
		return 0, false, false
	}
	k, ok := exactInt(ctx, key, typ)
	if !ok {
		return 0, false, false
	}
	switch {
	case above && k == math.MaxInt64:
		if types.IsUnsigned(typ) {
			return 0, false, false
		}
		return 0, true, true
	case !above && k == math.MinInt64:
		return 0, true, true
	case above:
		n = k + 1
	default:
		n = k - 1
	}
	if _, ok := exactInt(ctx, n, typ); !ok {
		// k is the type's edge: nothing lies past it.
		return 0, true, true
	}
	return n, false, true
}

// exactInt returns v, a Go integer that column type typ holds, as an
// int64; ok is false for another value (a fraction, a string, an
// unsigned value past math.MaxInt64, one out of typ's range).
func exactInt(ctx *gsql.Context, v any, typ gsql.Type) (int64, bool) {
	n, ok := goInt(v)
	if !ok {
		return 0, false
	}
	if _, inRange, err := typ.Convert(ctx, n); err != nil || inRange != gsql.InRange {
		return 0, false
	}
	return n, true
}

// goInt returns v as an int64 when it is a Go integer that one holds.
func goInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	}
	return 0, false
}

// maxExactLiteral bounds the literals a dropped conjunct compares with:
// GMS compares integers of mixed signedness as doubles, exact below it.
const maxExactLiteral = 1 << 53

// literalInt returns e as an integer when it is an integer literal
// below maxExactLiteral in magnitude.
func literalInt(e gsql.Expression) (int64, bool) {
	l, ok := e.(*expression.Literal)
	if !ok || !types.IsInteger(l.Type()) {
		return 0, false
	}
	n, ok := goInt(l.Value())
	return n, ok && n > -maxExactLiteral && n < maxExactLiteral
}

// column returns the index column e reads (an integer column of table),
// or -1.
func (ex *exactRanges) column(e gsql.Expression, table string) int {
	gf, ok := e.(*expression.GetField)
	if !ok || !strings.EqualFold(gf.Table(), table) || !types.IsInteger(gf.Type()) {
		return -1
	}
	for i, c := range ex.cols {
		if strings.EqualFold(gf.Name(), c) {
			if ex.spans[i] == nil {
				return -1
			}
			return i
		}
	}
	return -1
}

// enforces reports whether every row of the ranges satisfies conjunct c
// (above): each range's interval of its column lies inside the values c
// admits.
func (ex *exactRanges) enforces(c gsql.Expression, table string) bool {
	// within reports whether each interval of column col lies in [lo,
	// hi] (loSet, hiSet: the bounds c sets).
	within := func(col int, lo, hi int64, loSet, hiSet bool) bool {
		for _, s := range ex.spans[col] {
			if loSet && (s.loInf || s.lo < lo) || hiSet && (s.hiInf || s.hi > hi) {
				return false
			}
		}
		return true
	}
	switch c := c.(type) {
	case *expression.Between:
		col := ex.column(c.Val, table)
		lo, ok1 := literalInt(c.Lower)
		hi, ok2 := literalInt(c.Upper)
		return col >= 0 && ok1 && ok2 && within(col, lo, hi, true, true)
	case *expression.InTuple, *expression.HashInTuple:
		cmp := c.(expression.Comparer)
		col := ex.column(cmp.Left(), table)
		tuple, ok := cmp.Right().(expression.Tuple)
		if col < 0 || !ok {
			return false
		}
		set := make(map[int64]bool, len(tuple))
		for _, e := range tuple {
			if l, ok := e.(*expression.Literal); ok && l.Value() == nil {
				continue // never equal; the others decide
			}
			n, ok := literalInt(e)
			if !ok {
				return false
			}
			set[n] = true
		}
		for _, s := range ex.spans[col] {
			if s.loInf || s.hiInf || s.lo != s.hi || !set[s.lo] {
				return false
			}
		}
		return true
	case *expression.Equals, *expression.GreaterThanOrEqual, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.LessThan:
		cmp := c.(expression.Comparer)
		col := ex.column(cmp.Left(), table)
		v, ok := literalInt(cmp.Right())
		flipped := false
		if col < 0 {
			col = ex.column(cmp.Right(), table)
			v, ok = literalInt(cmp.Left())
			flipped = true
		}
		if col < 0 || !ok {
			return false
		}
		switch c.(type) {
		case *expression.Equals:
			return within(col, v, v, true, true)
		case *expression.GreaterThanOrEqual:
			if flipped {
				return within(col, 0, v, false, true) // v >= col
			}
			return within(col, v, 0, true, false)
		case *expression.GreaterThan:
			// v is below maxExactLiteral in magnitude: v±1 does not
			// overflow.
			if flipped {
				return within(col, 0, v-1, false, true) // v > col
			}
			return within(col, v+1, 0, true, false)
		case *expression.LessThan:
			if flipped {
				return within(col, v+1, 0, true, false) // v < col
			}
			return within(col, 0, v-1, false, true)
		default:
			if flipped {
				return within(col, v, 0, true, false) // v <= col
			}
			return within(col, 0, v, false, true)
		}
	}
	return false
}

// changesRows reports whether n is, or holds, a statement that changes
// rows (UPDATE, DELETE, INSERT, REPLACE).
func changesRows(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		switch n.(type) {
		case *plan.Update, *plan.DeleteFrom, *plan.InsertInto:
			found = true
		}
		return !found
	})
	return found
}
