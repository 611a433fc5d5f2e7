package fastpath

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// This file reads the shape of a range SELECT (Kind Scan): one table, a
// WHERE clause of conditions over columns and values, and what is done
// with the rows that pass:
//
//	SELECT [DISTINCT] cols | * | aggregates FROM t WHERE cond
//	    [ORDER BY col [ASC|DESC], ...] [LIMIT [offset,] n | LIMIT n OFFSET m]
//	    [FOR UPDATE]
//
// (the WHERE clause may be left out of a SELECT with ORDER BY and LIMIT,
// or of one of MIN and MAX aggregates alone), or grouped by one column:
//
//	SELECT g | aggregates, ... FROM t WHERE cond GROUP BY g
//	    [ORDER BY g [ASC|DESC]] [LIMIT [offset,] n | LIMIT n OFFSET m]
//
// whose select list names no column but g outside an aggregate (MySQL's
// ONLY_FULL_GROUP_BY error 1055 is GMS's to give), without HAVING,
// DISTINCT, WITH ROLLUP or FOR UPDATE.
//
// where cond is built of comparisons (=, <>, !=, <, <=, >, >=, <=>)
// between columns and values, BETWEEN, IN lists, IS [NOT] NULL, AND, OR,
// NOT and parentheses, and the aggregates are COUNT(*), COUNT(col),
// SUM(col), AVG(col), MIN(col) and MAX(col) without DISTINCT. As for the
// other shapes, nothing of the catalog is known here: whether the table
// has a key the conditions bound, and whether the columns are of types
// the fast path evaluates, is decided when the shape is resolved
// (ResolveScan), and the values when it runs.

// CondOp is the operator of a condition of a Scan's WHERE clause.
type CondOp uint8

// The operators of conditions.
const (
	// CondCmp compares Ops[0] with Ops[1] by Cmp.
	CondCmp CondOp = iota + 1
	// CondBetween: Ops[0] BETWEEN Ops[1] AND Ops[2] (NOT BETWEEN when Not).
	CondBetween
	// CondIn: Ops[0] IN (Ops[1:]...) (NOT IN when Not).
	CondIn
	// CondIsNull: Ops[0] IS NULL (IS NOT NULL when Not).
	CondIsNull
	// CondAnd, CondOr: Args[0] AND / OR Args[1]; CondNot: NOT Args[0].
	CondAnd
	CondOr
	CondNot
	// CondRowIn: (Ops[0], ..., Ops[n-1]) IN ((Ops[n], ..., Ops[2n-1]),
	// ...), the n leading operands columns and the others values, tuple
	// by tuple. It is made only of a top-level conjunct, with the
	// columns' own IN lists beside it (rowInConds).
	CondRowIn
)

// CmpOp is a comparison operator of a CondCmp.
type CmpOp uint8

// The comparison operators.
const (
	CmpEQ CmpOp = iota + 1
	CmpNE
	CmpLT
	CmpLE
	CmpGT
	CmpGE
	CmpNullEQ
)

// Operand is a column (Col, as written) or a value.
type Operand struct {
	Col string
	Val Value
}

// IsCol reports whether the operand is a column.
func (o *Operand) IsCol() bool { return o.Col != "" }

// Cond is one condition of a Scan's WHERE clause.
type Cond struct {
	Op   CondOp
	Cmp  CmpOp
	Not  bool
	Ops  []Operand
	Args []Cond
}

// AggFunc is an aggregate function of a Scan's select list.
type AggFunc uint8

// The aggregate functions; AggNone marks a plain column.
const (
	AggNone AggFunc = iota
	AggCountStar
	AggCount
	AggSum
	AggAvg
	AggMin
	AggMax
)

// ScanField is one item of a Scan's select list: a column, or an
// aggregate of one (of none for COUNT(*)). Text is the item as written,
// which GMS names the result column after.
type ScanField struct {
	Agg  AggFunc
	Col  string
	Text string
}

// OrderKey is one key of a Scan's ORDER BY.
type OrderKey struct {
	Col  string
	Desc bool
}

// ScanShape is the part of a range SELECT's shape that the other shapes
// do not have.
type ScanShape struct {
	// Fields is the select list; nil for *.
	Fields   []ScanField
	Distinct bool
	// Where is the conjunction of conditions (the WHERE clause split at
	// its top-level ANDs).
	Where []Cond
	Order []OrderKey
	// Limit and Offset are the LIMIT clause's values, nil when absent.
	Limit, Offset *Value
	// GroupBy is the column of a GROUP BY, as written; "" without one.
	// The select list is then that column and aggregates, and the
	// ORDER BY that column alone or nothing.
	GroupBy string
	// ForUpdate is set for SELECT ... FOR UPDATE (without NOWAIT, SKIP
	// LOCKED or OF): inside a transaction the rows read are locked, as
	// GMS's path locks each row its scan reads. The plan takes it only
	// when the rows read are the rows returned (ScanPlan.LockCols).
	ForUpdate bool
}

// Aggregates reports whether the select list is made of aggregates, or
// of aggregates and the GROUP BY's column: the rows read are aggregated.
func (s *ScanShape) Aggregates() bool {
	return s.GroupBy != "" || len(s.Fields) > 0 && s.Fields[0].Agg != AggNone
}

// scanShape returns the shape of a range SELECT, or nil. The point
// shapes (selectShape) are tried first: a statement of theirs is theirs.
func scanShape(n *ast.SelectStmt) *Shape {
	forUpdate := false
	if l := n.LockInfo; l != nil && l.LockType != ast.SelectLockNone {
		// FOR UPDATE locks the rows read inside a transaction, which
		// the plan allows only where they are the rows returned
		// (ScanShape.ForUpdate); FOR SHARE, NOWAIT, SKIP LOCKED and OF t
		// are GMS's.
		if l.LockType != ast.SelectLockForUpdate || len(l.Tables) > 0 {
			return nil
		}
		forUpdate = true
	}
	if n.Kind != ast.SelectStmtKindSelect || n.Having != nil ||
		len(n.WindowSpecs) > 0 ||
		len(n.TableHints) > 0 || n.IsInBraces || n.SelectIntoOpt != nil || n.AfterSetOperator != nil ||
		len(n.Lists) > 0 || n.With != nil || n.Fields == nil {
		return nil
	}
	if o := n.SelectStmtOpts; o != nil && (o.SQLBigResult || o.SQLBufferResult || o.SQLSmallResult ||
		o.CalcFoundRows || o.StraightJoin || o.Priority != 0 || len(o.TableHints) > 0) {
		return nil
	}
	s := &Shape{Kind: Scan, ForUpdate: forUpdate}
	sc := &ScanShape{Distinct: n.Distinct, ForUpdate: forUpdate}
	s.Scan = sc
	if !s.setTable(n.From) {
		return nil
	}
	aggs := 0
	for _, f := range n.Fields.Fields {
		if f.Auxiliary || f.AuxiliaryColInAgg || f.AuxiliaryColInOrderBy || f.AsName.O != "" {
			return nil
		}
		if f.WildCard != nil {
			if len(n.Fields.Fields) != 1 || f.WildCard.Table.O != "" || f.WildCard.Schema.O != "" {
				return nil
			}
			continue
		}
		field, ok := scanField(f)
		if !ok {
			return nil
		}
		if field.Agg != AggNone {
			aggs++
		}
		sc.Fields = append(sc.Fields, field)
		// GMS names a result column after its item as written.
		s.Cols = append(s.Cols, field.Text)
	}
	if n.GroupBy != nil {
		if !sc.setGroupBy(n) {
			return nil
		}
		return s
	}
	if aggs > 0 && (aggs != len(sc.Fields) || sc.Distinct || n.OrderBy != nil) {
		// Aggregates with columns need GROUP BY (or MySQL's
		// ONLY_FULL_GROUP_BY error); an aggregate's one row is not
		// sorted nor made distinct here.
		return nil
	}
	if n.Where == nil && (n.OrderBy == nil || n.Limit == nil) && !minMaxOnly(sc.Fields) {
		// Without a WHERE, only a key's first or last rows under a
		// LIMIT, or MIN and MAX, are read from one end of a key
		// (ScanPlan); a whole table is GMS's to scan.
		return nil
	}
	if n.Where != nil && !sc.setWhere(n.Where) {
		return nil
	}
	if n.OrderBy != nil {
		for _, item := range n.OrderBy.Items {
			col, ok := plainColumn(item.Expr)
			if !ok {
				return nil
			}
			sc.Order = append(sc.Order, OrderKey{Col: col, Desc: item.Desc})
		}
	}
	if sc.Distinct && !selectsOrderColumns(sc) {
		// DISTINCT ordered by a column it does not select is MySQL's
		// 3065 under ONLY_FULL_GROUP_BY, which GMS's plan answers
		// (sql/compat/fullgroupby.go).
		return nil
	}
	if !sc.setLimit(n.Limit) {
		return nil
	}
	return s
}

// setGroupBy reads the GROUP BY of n (one column, not sorted by ASC or
// DESC, which MySQL 8 refuses, nor WITH ROLLUP), the WHERE clause, the
// ORDER BY (the GROUP BY's column or nothing) and the LIMIT of a grouped
// range SELECT whose select list sc holds. A WHERE clause is wanted: a
// whole table's groups are GMS's to read.
func (sc *ScanShape) setGroupBy(n *ast.SelectStmt) bool {
	g := n.GroupBy
	if len(g.Items) != 1 || g.Rollup || !g.Items[0].NullOrder || sc.Distinct || sc.ForUpdate ||
		len(sc.Fields) == 0 || n.Where == nil {
		return false
	}
	col, ok := plainColumn(g.Items[0].Expr)
	if !ok {
		return false
	}
	for _, f := range sc.Fields {
		if f.Agg == AggNone && !strings.EqualFold(f.Col, col) {
			return false
		}
	}
	sc.GroupBy = col
	if !sc.setWhere(n.Where) {
		return false
	}
	if n.OrderBy != nil {
		if len(n.OrderBy.Items) != 1 {
			return false
		}
		item := n.OrderBy.Items[0]
		o, ok := plainColumn(item.Expr)
		if !ok || !strings.EqualFold(o, col) {
			return false
		}
		sc.Order = []OrderKey{{Col: o, Desc: item.Desc}}
	}
	return sc.setLimit(n.Limit)
}

// setLimit reads the LIMIT clause l (nil: none).
func (sc *ScanShape) setLimit(l *ast.Limit) bool {
	if l == nil {
		return true
	}
	v, ok := valueOf(l.Count)
	if !ok {
		return false
	}
	sc.Limit = &v
	if l.Offset != nil {
		o, ok := valueOf(l.Offset)
		if !ok {
			return false
		}
		sc.Offset = &o
	}
	return true
}

// scanField reads one select item: a column or an aggregate of one.
func scanField(f *ast.SelectField) (ScanField, bool) {
	text := f.Text()
	if col, ok := plainColumn(f.Expr); ok {
		return ScanField{Col: col, Text: text}, true
	}
	a, ok := f.Expr.(*ast.AggregateFuncExpr)
	if !ok || a.Distinct || a.Order != nil || len(a.Args) != 1 || text == "" {
		return ScanField{}, false
	}
	var fn AggFunc
	switch strings.ToLower(a.F) {
	case ast.AggFuncCount:
		fn = AggCount
	case ast.AggFuncSum:
		fn = AggSum
	case ast.AggFuncAvg:
		fn = AggAvg
	case ast.AggFuncMin:
		fn = AggMin
	case ast.AggFuncMax:
		fn = AggMax
	default:
		return ScanField{}, false
	}
	if col, ok := plainColumn(a.Args[0]); ok {
		return ScanField{Agg: fn, Col: col, Text: text}, true
	}
	// COUNT(*) is COUNT(1) to the parser; any integer constant that is
	// not NULL counts every row.
	if fn == AggCount {
		if v, ok := valueOf(a.Args[0]); ok && v.Param < 0 && v.OK && v.Lit != nil {
			switch v.Lit.(type) {
			case int64, uint64:
				return ScanField{Agg: AggCountStar, Text: text}, true
			}
		}
	}
	return ScanField{}, false
}

// setWhere reads the WHERE clause as a conjunction.
func (sc *ScanShape) setWhere(e ast.ExprNode) bool {
	terms := conjuncts(e)
	for _, t := range terms {
		if in, ok := t.(*ast.PatternInExpr); ok {
			if _, isRow := in.Expr.(*ast.RowExpr); isRow {
				cs, ok := rowInConds(in)
				if !ok {
					return false
				}
				sc.Where = append(sc.Where, cs...)
				continue
			}
		}
		c, ok := condOf(t, 0)
		if !ok {
			return false
		}
		sc.Where = append(sc.Where, c)
	}
	return len(sc.Where) > 0
}

// maxRowInTuples is the longest row IN list the fast path reads, as
// GMS's path writes no longer one column by column
// (planrules.MaxRowExpansionTuples).
const maxRowInTuples = 256

// rowInConds reads (c1, ..., cn) IN ((v11, ..., v1n), ...), a conjunct of
// the WHERE clause, as MySQL compares rows, column by column: one IN list
// per column (c1 IN (v11, v21, ...)), which bound the key's ranges as any
// IN list does, to the product of the tuples' values, and the CondRowIn
// that keeps the rows matching one tuple whole ((w, id) IN ((1, 5), (2,
// 7)) reads the points (1, 5), (1, 7), (2, 5), (2, 7) and keeps two).
// For a WHERE clause that is the same: a row that matches a tuple is in
// each column's list. Its parameters are read twice; numberParams gives
// both the one number. NOT IN, subqueries and tuples of another length
// (MySQL's error 1241) are GMS's.
func rowInConds(in *ast.PatternInExpr) ([]Cond, bool) {
	row := in.Expr.(*ast.RowExpr)
	n := len(row.Values)
	if in.Not || in.Sel != nil || len(in.List) == 0 || len(in.List) > maxRowInTuples || n < 2 {
		return nil, false
	}
	lists := make([]Cond, n)
	whole := Cond{Op: CondRowIn}
	for j, e := range row.Values {
		col, ok := plainColumn(e)
		if !ok {
			return nil, false
		}
		lists[j] = Cond{Op: CondIn, Ops: []Operand{{Col: col}}}
		whole.Ops = append(whole.Ops, Operand{Col: col})
	}
	for _, item := range in.List {
		tuple, ok := item.(*ast.RowExpr)
		if !ok || len(tuple.Values) != n {
			return nil, false
		}
		for j, e := range tuple.Values {
			v, ok := valueOf(e)
			if !ok {
				return nil, false
			}
			lists[j].Ops = append(lists[j].Ops, Operand{Val: v})
			whole.Ops = append(whole.Ops, Operand{Val: v})
		}
	}
	return append(lists, whole), true
}

// maxCondDepth bounds the nesting of a condition read (a deeper one is
// GMS's): the evaluation recurses over it.
const maxCondDepth = 32

// condOf reads one condition.
func condOf(e ast.ExprNode, depth int) (Cond, bool) {
	if depth > maxCondDepth {
		return Cond{}, false
	}
	switch e := e.(type) {
	case *ast.ParenthesesExpr:
		return condOf(e.Expr, depth+1)
	case *ast.BinaryOperationExpr:
		var op CondOp
		switch e.Op {
		case opcode.LogicAnd:
			op = CondAnd
		case opcode.LogicOr:
			op = CondOr
		}
		if op != 0 {
			l, ok1 := condOf(e.L, depth+1)
			r, ok2 := condOf(e.R, depth+1)
			return Cond{Op: op, Args: []Cond{l, r}}, ok1 && ok2
		}
		cmp, ok := cmpOps[e.Op]
		if !ok {
			return Cond{}, false
		}
		l, ok1 := operandOf(e.L)
		r, ok2 := operandOf(e.R)
		if !ok1 || !ok2 || !l.IsCol() && !r.IsCol() {
			return Cond{}, false
		}
		return Cond{Op: CondCmp, Cmp: cmp, Ops: []Operand{l, r}}, true
	case *ast.UnaryOperationExpr:
		if e.Op != opcode.Not && e.Op != opcode.Not2 {
			return Cond{}, false
		}
		a, ok := condOf(e.V, depth+1)
		return Cond{Op: CondNot, Args: []Cond{a}}, ok
	case *ast.BetweenExpr:
		x, ok1 := operandOf(e.Expr)
		lo, ok2 := operandOf(e.Left)
		hi, ok3 := operandOf(e.Right)
		if !ok1 || !ok2 || !ok3 || !x.IsCol() {
			return Cond{}, false
		}
		return Cond{Op: CondBetween, Not: e.Not, Ops: []Operand{x, lo, hi}}, true
	case *ast.PatternInExpr:
		if e.Sel != nil || len(e.List) == 0 {
			return Cond{}, false
		}
		x, ok := operandOf(e.Expr)
		if !ok || !x.IsCol() {
			return Cond{}, false
		}
		c := Cond{Op: CondIn, Not: e.Not, Ops: []Operand{x}}
		for _, item := range e.List {
			v, ok := operandOf(item)
			if !ok || v.IsCol() {
				return Cond{}, false
			}
			c.Ops = append(c.Ops, v)
		}
		return c, true
	case *ast.IsNullExpr:
		x, ok := operandOf(e.Expr)
		if !ok || !x.IsCol() {
			return Cond{}, false
		}
		return Cond{Op: CondIsNull, Not: e.Not, Ops: []Operand{x}}, true
	}
	return Cond{}, false
}

// cmpOps are the comparison operators a condition may have.
var cmpOps = map[opcode.Op]CmpOp{
	opcode.EQ: CmpEQ, opcode.NE: CmpNE, opcode.LT: CmpLT, opcode.LE: CmpLE,
	opcode.GT: CmpGT, opcode.GE: CmpGE, opcode.NullEQ: CmpNullEQ,
}

// operandOf reads a column or a value.
func operandOf(e ast.ExprNode) (Operand, bool) {
	if col, ok := plainColumn(e); ok {
		return Operand{Col: col}, true
	}
	v, ok := valueOf(e)
	return Operand{Val: v}, ok
}

// values calls visit with each value of the scan, in no fixed order
// (numberParams orders the parameters by their place in the text).
func (sc *ScanShape) values(visit func(v *Value)) {
	var walk func(c *Cond)
	walk = func(c *Cond) {
		for i := range c.Ops {
			if !c.Ops[i].IsCol() {
				visit(&c.Ops[i].Val)
			}
		}
		for i := range c.Args {
			walk(&c.Args[i])
		}
	}
	for i := range sc.Where {
		walk(&sc.Where[i])
	}
	if sc.Limit != nil {
		visit(sc.Limit)
	}
	if sc.Offset != nil {
		visit(sc.Offset)
	}
}

// selectsOrderColumns reports whether each ORDER BY column of sc is a
// column sc selects (every one is, with *: no fields).
func selectsOrderColumns(sc *ScanShape) bool {
	for _, k := range sc.Order {
		found := len(sc.Fields) == 0
		for _, f := range sc.Fields {
			if f.Agg == AggNone && strings.EqualFold(f.Col, k.Col) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// minMaxOnly reports whether fields are MIN and MAX aggregates alone.
func minMaxOnly(fields []ScanField) bool {
	for _, f := range fields {
		if f.Agg != AggMin && f.Agg != AggMax {
			return false
		}
	}
	return len(fields) > 0
}
