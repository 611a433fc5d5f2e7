package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/fastpath"
)

// The conditions of a range SELECT on columns the coprocessor does not
// compare (fastpath.LocalType: strings, DECIMALs, dates and times) are
// evaluated in the SQL node, over the kept columns of the rows the
// coprocessor returns, by GMS's own expressions: the comparison GMS's
// Filter makes over the same rows (GMS's pushdown leaves these conjuncts
// in a Filter above its coprocessor scan too), with the values typed as
// GMS's planner types them (a quoted value, text or bound, is a LONGTEXT
// literal of the connection's collation, so that the column's collation
// decides; an integer is an integer literal). Only values whose
// comparison converts nothing that could warn or fail are taken: strings
// against strings, integers against DECIMALs, strings that are valid
// DATETIMEs against dates and times. Anything else goes to GMS
// (ReasonValue).

// padSpaced returns x with its comparisons of strings under PAD SPACE
// collations made without trailing spaces, as the analyzer makes GMS's
// (sql/compat/padspace.go).
func (b *scanBinder) padSpaced(x gsql.Expression) gsql.Expression {
	ret, _, err := compat.PadSpaceCompared(b.r.ctx, x)
	if err != nil {
		// Only an IN list GMS hashes is rebuilt, and local conditions
		// build none.
		return x
	}
	return ret
}

// local compiles the local condition c (resolved as pc) with this
// execution's values into a GMS expression over the kept row.
func (b *scanBinder) local(c *fastpath.Cond, pc *fastpath.PlanCond) (gsql.Expression, bool) {
	if len(c.Args) != len(pc.Args) || c.Op != fastpath.CondIn && len(c.Ops) != len(pc.Cols) {
		return nil, false
	}
	col := func(i int) int {
		if i < len(pc.Cols) {
			return pc.Cols[i]
		}
		return -1 // an IN list's value beyond the plan's shape's
	}
	// operand compiles operand i, compared with a column of type other
	// when it is a value.
	operand := func(i int, other gsql.Type) (gsql.Expression, bool) {
		if p := col(i); p >= 0 {
			return expression.NewGetField(p, b.colType(p), "", true), true
		}
		return b.localValue(c.Ops[i].Val, other)
	}
	// pair compiles operands i and j.
	pair := func(i, j int) (gsql.Expression, gsql.Expression, bool) {
		var ti, tj gsql.Type
		if p := col(i); p >= 0 {
			ti = b.colType(p)
		}
		if p := col(j); p >= 0 {
			tj = b.colType(p)
		}
		x, ok1 := operand(i, tj)
		y, ok2 := operand(j, ti)
		return x, y, ok1 && ok2
	}
	var x gsql.Expression
	switch c.Op {
	case fastpath.CondCmp:
		l, r, ok := pair(0, 1)
		if !ok {
			return nil, false
		}
		switch c.Cmp {
		case fastpath.CmpEQ:
			return expression.NewEquals(l, r), true
		case fastpath.CmpNE:
			// GMS's planner builds != as NOT (=).
			return expression.NewNot(expression.NewEquals(l, r)), true
		case fastpath.CmpLT:
			return expression.NewLessThan(l, r), true
		case fastpath.CmpLE:
			return expression.NewLessThanOrEqual(l, r), true
		case fastpath.CmpGT:
			return expression.NewGreaterThan(l, r), true
		case fastpath.CmpGE:
			return expression.NewGreaterThanOrEqual(l, r), true
		case fastpath.CmpNullEQ:
			return expression.NewNullSafeEquals(l, r), true
		}
		return nil, false
	case fastpath.CondBetween:
		v, lo, ok1 := pair(0, 1)
		_, hi, ok2 := pair(0, 2)
		if !ok1 || !ok2 {
			return nil, false
		}
		x = expression.NewBetween(v, lo, hi)
	case fastpath.CondIn:
		if col(0) < 0 {
			return nil, false
		}
		v, _ := operand(0, nil)
		list := make([]gsql.Expression, 0, len(c.Ops)-1)
		for i := 1; i < len(c.Ops); i++ {
			_, e, ok := pair(0, i)
			if !ok {
				return nil, false
			}
			list = append(list, e)
		}
		x = expression.NewInTuple(v, expression.NewTuple(list...))
	case fastpath.CondIsNull:
		if col(0) < 0 {
			return nil, false
		}
		v, _ := operand(0, nil)
		x = expression.NewIsNull(v)
	case fastpath.CondAnd, fastpath.CondOr, fastpath.CondNot:
		args := make([]gsql.Expression, len(c.Args))
		for i := range c.Args {
			a, ok := b.local(&c.Args[i], &pc.Args[i])
			if !ok {
				return nil, false
			}
			args[i] = a
		}
		switch c.Op {
		case fastpath.CondAnd:
			return expression.NewAnd(args[0], args[1]), true
		case fastpath.CondOr:
			return expression.NewOr(args[0], args[1]), true
		}
		return expression.NewNot(args[0]), true
	default:
		return nil, false
	}
	if c.Not {
		x = expression.NewNot(x)
	}
	return x, true
}

// localValue returns value v, compared with a column of type typ, as
// GMS's planner types it, or false when its comparison with the column
// converts something (GMS's to warn about).
func (b *scanBinder) localValue(v fastpath.Value, typ gsql.Type) (gsql.Expression, bool) {
	val, ok := b.r.value(v)
	if !ok || typ == nil {
		return nil, false
	}
	ctx := b.r.ctx
	switch n := val.(type) {
	case nil:
		return expression.NewLiteral(nil, types.Null), true
	case int64, uint64:
		switch {
		case fastpath.IntKindOf(typ) != fastpath.NotInt:
		case types.IsDecimal(typ):
			// One the DECIMAL holds exactly, which percdb's planner
			// makes a literal of the column's type (compat's
			// decimalComparison): compared alike either way.
			if _, inRange, err := typ.Convert(ctx, n); err != nil || inRange != gsql.InRange {
				return nil, false
			}
		default:
			return nil, false
		}
		if _, isU := n.(uint64); isU {
			return expression.NewLiteral(n, types.Uint64), true
		}
		return expression.NewLiteral(n, types.Int64), true
	case string:
		switch {
		case types.IsTextOnly(typ):
		case types.IsDateType(typ) || types.IsDatetimeType(typ) || types.IsTimestampType(typ):
			if _, inRange, err := types.DatetimeMaxPrecision.Convert(ctx, n); err != nil || inRange != gsql.InRange {
				return nil, false
			}
		default:
			return nil, false
		}
		return expression.NewLiteral(n, types.CreateLongText(ctx.GetCollation())), true
	}
	return nil, false
}

// keepLocal keeps the rows every local condition holds for, in place.
func (b *scanBinder) keepLocal(rows []gsql.Row, conds []gsql.Expression) ([]gsql.Row, error) {
	if len(conds) == 0 {
		return rows, nil
	}
	kept := rows[:0]
	for _, row := range rows {
		pass := true
		for _, c := range conds {
			v, err := gsql.EvaluateCondition(b.r.ctx, c, row)
			if err != nil {
				return nil, err
			}
			if !gsql.IsTrue(v) {
				pass = false
				break
			}
		}
		if pass {
			kept = append(kept, row)
		}
	}
	return kept, nil
}
