package fastpath

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	// The TiDB parser builds literals through a driver that its users
	// supply; test_driver is its self-contained one (no TiDB types).
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// This file turns a statement parsed by the TiDB parser into a Shape:
// the statement reduced to what the fast path runs, with nothing of the
// catalog yet. A statement with anything the fast path does not model (a
// join, an alias, a function, a GROUP BY scanShape does not read, a
// hint, FOR SHARE, ...) has no
// shape and goes to GMS. The decision depends only on the statement's
// structure, never on its literal values, so that it can be cached per
// normalized digest (which erases literals).

// Kind is the kind of statement a shape describes.
type Kind uint8

const (
	// Select: SELECT cols FROM t WHERE c = v, or WHERE c IN (v, ...),
	// where c is the primary key or a unique column, or WHERE c1 = v1 AND
	// c2 = v2 ... over every column of a composite primary key; FOR
	// UPDATE allowed.
	Select Kind = iota + 1
	// Update: UPDATE t SET col = expr, ... WHERE pk = v (or the
	// conjunction over a composite primary key).
	Update
	// Delete: DELETE FROM t WHERE pk = v (or the conjunction).
	Delete
	// Insert: INSERT INTO t (cols) VALUES (...), (...).
	Insert
	// Begin, Commit, Rollback: BEGIN / START TRANSACTION,
	// COMMIT, ROLLBACK with no options.
	Begin
	Commit
	Rollback
	// Scan: a range SELECT (scanshape.go): conditions over a table's
	// columns, ORDER BY, LIMIT, DISTINCT or aggregates, or a GROUP BY of
	// one column.
	Scan
)

// Value is one value of a statement: a parameter of a prepared
// statement, or a literal. ok is false for a literal the fast path does not
// evaluate exactly as GMS does (a decimal, a float, a hex or bit literal, a
// boolean keyword, a string with a character set introducer): the statement
// then goes to GMS.
type Value struct {
	// param is the parameter's position (0-based) in a prepared
	// statement, or -1 for a literal.
	Param int
	// lit is the literal: int64, uint64, string or nil (NULL).
	Lit any
	OK  bool
}

// Set is one assignment of an UPDATE: col = val, or col = src + val
// (src - val when neg), src being an integer column.
type Set struct {
	Col string
	Src string
	Neg bool
	Val Value
}

// Shape is a statement the fast path can run, before name resolution.
type Shape struct {
	Kind Kind
	// db and table name the table as written; db is empty when the
	// statement does not qualify it (the session's current database).
	DB, Table string
	// cols are the selected columns of a SELECT (nil for *) or the column
	// list of an INSERT, as written.
	Cols []string
	// where is the column of the WHERE condition and keys its values (one
	// for =, several for IN).
	Where string
	Keys  []Value
	// in is set for WHERE c IN (...).
	In bool
	// keyCols are the columns of a WHERE c1 = v1 AND c2 = v2 ... of two
	// or more distinct columns, in the order written; keys[i] is the value
	// of keyCols[i], and where is empty.
	KeyCols []string
	// forUpdate is set for SELECT ... FOR UPDATE (without NOWAIT, SKIP
	// LOCKED or OF).
	ForUpdate bool
	// sets are an UPDATE's assignments, in order.
	Sets []Set
	// rows are an INSERT's VALUES tuples.
	Rows [][]Value
	// Scan is a range SELECT's conditions and clauses (Kind Scan).
	Scan *ScanShape
	// Alt is a SELECT's shape read as a range SELECT (Kind Scan, the
	// same names selected), for a table whose keys do not make its WHERE
	// a point read: a prefix of a composite primary key, or a column that
	// leads a secondary index that is not unique (Resolve); set by
	// AddAlt.
	Alt *Shape
	// params is how many parameters a prepared statement has.
	Params int
}

// ShapeOf returns the shape of stmt, or nil if the fast path does not
// run statements like it. normalized is the statement's normalized text,
// which tells the transaction statements' exact wording apart.
func ShapeOf(stmt ast.StmtNode, normalized string) *Shape {
	var s *Shape
	switch n := stmt.(type) {
	case *ast.SelectStmt:
		if s = selectShape(n); s == nil {
			s = scanShape(n)
		}
	case *ast.UpdateStmt:
		s = updateShape(n)
	case *ast.DeleteStmt:
		s = deleteShape(n)
	case *ast.InsertStmt:
		s = insertShape(n)
	case *ast.BeginStmt:
		// Only the plain forms: READ ONLY, AS OF, WITH CONSISTENT
		// SNAPSHOT and TiDB's modes change what GMS does or are not
		// MySQL.
		if normalized == "begin" || normalized == "start transaction" {
			s = &Shape{Kind: Begin}
		}
	case *ast.CommitStmt:
		if normalized == "commit" {
			s = &Shape{Kind: Commit}
		}
	case *ast.RollbackStmt:
		if normalized == "rollback" {
			s = &Shape{Kind: Rollback}
		}
	}
	if s == nil {
		return nil
	}
	s.numberParams()
	return s
}

// AddAlt sets s.Alt, the range SELECT a point SELECT's shape s (of
// stmt) may be: left to the caller, which knows when it is wanted, as
// it costs a point select's every execution a second reading of its AST.
func AddAlt(s *Shape, stmt ast.StmtNode) {
	n, ok := stmt.(*ast.SelectStmt)
	if s == nil || s.Kind != Select || s.Alt != nil || !ok {
		return
	}
	if alt := scanShape(n); alt != nil {
		alt.Cols = s.Cols
		alt.numberParams()
		s.Alt = alt
	}
}

func selectShape(n *ast.SelectStmt) *Shape {
	if n.Kind != ast.SelectStmtKindSelect || n.Distinct || n.GroupBy != nil || n.Having != nil ||
		len(n.WindowSpecs) > 0 || n.OrderBy != nil || n.Limit != nil ||
		len(n.TableHints) > 0 || n.IsInBraces || n.SelectIntoOpt != nil || n.AfterSetOperator != nil ||
		len(n.Lists) > 0 || n.With != nil || n.Fields == nil || n.Where == nil {
		return nil
	}
	if o := n.SelectStmtOpts; o != nil && (o.Distinct || o.SQLBigResult || o.SQLBufferResult || o.SQLSmallResult ||
		o.CalcFoundRows || o.StraightJoin || o.Priority != 0 || len(o.TableHints) > 0) {
		return nil
	}
	s := &Shape{Kind: Select}
	if l := n.LockInfo; l != nil {
		// FOR UPDATE locks the rows read inside a transaction; the
		// other forms (FOR SHARE, NOWAIT, SKIP LOCKED, OF t) are GMS's.
		if l.LockType != ast.SelectLockForUpdate || len(l.Tables) > 0 {
			return nil
		}
		s.ForUpdate = true
	}
	if !s.setTable(n.From) {
		return nil
	}
	for _, f := range n.Fields.Fields {
		if f.Auxiliary || f.AuxiliaryColInAgg || f.AuxiliaryColInOrderBy {
			return nil
		}
		if f.WildCard != nil {
			if len(n.Fields.Fields) != 1 || f.WildCard.Table.O != "" || f.WildCard.Schema.O != "" {
				return nil
			}
			continue
		}
		col, ok := plainColumn(f.Expr)
		if !ok || f.AsName.O != "" {
			return nil
		}
		s.Cols = append(s.Cols, col)
	}
	if !s.setWhere(n.Where, true) {
		return nil
	}
	return s
}

func updateShape(n *ast.UpdateStmt) *Shape {
	if n.Order != nil || n.Limit != nil || n.Priority != 0 || n.IgnoreErr || n.MultipleTable ||
		len(n.TableHints) > 0 || n.With != nil || n.Where == nil || len(n.List) == 0 {
		return nil
	}
	s := &Shape{Kind: Update}
	if !s.setTable(n.TableRefs) || !s.setWhere(n.Where, false) {
		return nil
	}
	for _, a := range n.List {
		col, ok := columnName(a.Column)
		if !ok {
			return nil
		}
		set := Set{Col: col}
		switch e := a.Expr.(type) {
		case *ast.BinaryOperationExpr:
			if e.Op != opcode.Plus && e.Op != opcode.Minus {
				return nil
			}
			src, ok := plainColumn(e.L)
			if !ok {
				return nil
			}
			v, ok := valueOf(e.R)
			if !ok {
				return nil
			}
			set.Src, set.Neg, set.Val = src, e.Op == opcode.Minus, v
		default:
			v, ok := valueOf(a.Expr)
			if !ok {
				return nil
			}
			set.Val = v
		}
		s.Sets = append(s.Sets, set)
	}
	return s
}

func deleteShape(n *ast.DeleteStmt) *Shape {
	if n.Tables != nil || n.Order != nil || n.Limit != nil || n.Priority != 0 || n.IgnoreErr ||
		n.Quick || n.IsMultiTable || n.BeforeFrom || len(n.TableHints) > 0 || n.With != nil || n.Where == nil {
		return nil
	}
	s := &Shape{Kind: Delete}
	if !s.setTable(n.TableRefs) || !s.setWhere(n.Where, false) {
		return nil
	}
	return s
}

func insertShape(n *ast.InsertStmt) *Shape {
	if n.IsReplace || n.IgnoreErr || n.Setlist || n.Priority != 0 || len(n.OnDuplicate) > 0 ||
		n.Select != nil || len(n.TableHints) > 0 || len(n.PartitionNames) > 0 ||
		len(n.Columns) == 0 || len(n.Lists) == 0 {
		return nil
	}
	s := &Shape{Kind: Insert}
	if !s.setTable(n.Table) {
		return nil
	}
	for _, c := range n.Columns {
		col, ok := columnName(c)
		if !ok {
			return nil
		}
		s.Cols = append(s.Cols, col)
	}
	for _, list := range n.Lists {
		if len(list) != len(s.Cols) {
			return nil
		}
		row := make([]Value, len(list))
		for i, e := range list {
			v, ok := valueOf(e)
			if !ok {
				return nil
			}
			row[i] = v
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

// setTable records the single, unaliased table of refs.
func (s *Shape) setTable(refs *ast.TableRefsClause) bool {
	if refs == nil || refs.TableRefs == nil {
		return false
	}
	j := refs.TableRefs
	if j.Right != nil || j.On != nil || len(j.Using) > 0 || j.NaturalJoin || j.StraightJoin || j.ExplicitParens {
		return false
	}
	ts, ok := j.Left.(*ast.TableSource)
	if !ok || ts.AsName.O != "" || ts.Lateral || len(ts.ColumnNames) > 0 {
		return false
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok || len(tn.IndexHints) > 0 || len(tn.PartitionNames) > 0 || tn.TableSample != nil || tn.AsOf != nil || tn.IsAlias {
		return false
	}
	s.DB, s.Table = tn.Schema.O, tn.Name.O
	return true
}

// setWhere records a condition c = v, v = c, (when in is allowed)
// c IN (v, ...), or a conjunction c1 = v1 AND c2 = v2 ... of distinct
// columns.
func (s *Shape) setWhere(e ast.ExprNode, in bool) bool {
	switch e := e.(type) {
	case *ast.BinaryOperationExpr:
		if e.Op == opcode.LogicAnd {
			return s.setConjunction(e)
		}
		col, v, ok := equality(e)
		if !ok {
			return false
		}
		s.Where, s.Keys = col, []Value{v}
		return true
	case *ast.PatternInExpr:
		if !in || e.Not || e.Sel != nil || len(e.List) == 0 {
			return false
		}
		col, ok := plainColumn(e.Expr)
		if !ok {
			return false
		}
		s.Where, s.In = col, true
		for _, x := range e.List {
			v, ok := valueOf(x)
			if !ok {
				return false
			}
			s.Keys = append(s.Keys, v)
		}
		return true
	}
	return false
}

// setConjunction records c1 = v1 AND c2 = v2 ..., each column once
// (compared as MySQL compares column names, without regard to case).
func (s *Shape) setConjunction(e *ast.BinaryOperationExpr) bool {
	terms := conjuncts(e)
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		b, ok := t.(*ast.BinaryOperationExpr)
		if !ok {
			return false
		}
		col, v, ok := equality(b)
		if !ok || seen[strings.ToLower(col)] {
			return false
		}
		seen[strings.ToLower(col)] = true
		s.KeyCols = append(s.KeyCols, col)
		s.Keys = append(s.Keys, v)
	}
	return true
}

// conjuncts returns the terms of e split at its ANDs, parentheses around
// them removed.
func conjuncts(e ast.ExprNode) []ast.ExprNode {
	var terms []ast.ExprNode
	var flatten func(x ast.ExprNode)
	flatten = func(x ast.ExprNode) {
		for {
			p, ok := x.(*ast.ParenthesesExpr)
			if !ok {
				break
			}
			x = p.Expr
		}
		if b, ok := x.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
			flatten(b.L)
			flatten(b.R)
			return
		}
		terms = append(terms, x)
	}
	flatten(e)
	return terms
}

// equality returns the column and value of c = v or v = c.
func equality(e *ast.BinaryOperationExpr) (string, Value, bool) {
	if e.Op != opcode.EQ {
		return "", Value{}, false
	}
	col, ok := plainColumn(e.L)
	val := e.R
	if !ok {
		col, ok = plainColumn(e.R)
		val = e.L
	}
	if !ok {
		return "", Value{}, false
	}
	v, ok := valueOf(val)
	return col, v, ok
}

// plainColumn returns the name of an unqualified column reference.
func plainColumn(e ast.ExprNode) (string, bool) {
	c, ok := e.(*ast.ColumnNameExpr)
	if !ok {
		return "", false
	}
	return columnName(c.Name)
}

func columnName(c *ast.ColumnName) (string, bool) {
	if c == nil || c.Schema.O != "" || c.Table.O != "" {
		return "", false
	}
	return c.Name.O, true
}

// valueOf returns the value of a parameter marker or a literal. A literal
// the fast path does not evaluate is returned with ok unset but is still a
// value: whether the statement runs fast depends on its values only at
// execution, so that the shape of a digest does not depend on them.
func valueOf(e ast.ExprNode) (Value, bool) {
	switch e := e.(type) {
	case *driver.ParamMarkerExpr:
		// Numbered by numberParams once the statement is read.
		return Value{Param: e.Offset}, true
	case *driver.ValueExpr:
		return literalValue(e, false), true
	case *ast.UnaryOperationExpr:
		// -5 is a minus applied to the literal 5.
		v, ok := e.V.(*driver.ValueExpr)
		if !ok || e.Op != opcode.Minus {
			return Value{}, false
		}
		return literalValue(v, true), true
	}
	return Value{}, false
}

// literalValue converts a literal, negated when neg.
func literalValue(e *driver.ValueExpr, neg bool) Value {
	bad := Value{Param: -1}
	// Boolean keywords and charset introducers carry flags: GMS types
	// them differently from plain numbers and strings.
	if e.Type.GetFlag()&^(flagBinary|flagUnsigned) != 0 {
		return bad
	}
	switch e.Kind() {
	case driver.KindNull:
		if neg {
			return bad
		}
		return Value{Param: -1, OK: true}
	case driver.KindInt64:
		v := e.GetInt64()
		if neg {
			if v == math.MinInt64 {
				return bad
			}
			v = -v
		}
		return Value{Param: -1, Lit: v, OK: true}
	case driver.KindUint64:
		if neg {
			// -9223372036854775808 and beyond: GMS types it as a
			// decimal.
			return bad
		}
		return Value{Param: -1, Lit: e.GetUint64(), OK: true}
	case driver.KindString:
		if neg {
			return bad
		}
		return Value{Param: -1, Lit: e.GetString(), OK: true}
	}
	return bad
}

// TiDB parser field flags a plain numeric or string literal may carry.
const (
	flagBinary   = 128 // BinaryFlag
	flagUnsigned = 32  // UnsignedFlag
)

// numberParams turns the parameters' positions in the statement's text
// (param holds the byte offset of each ? until then) into their numbers
// in order of appearance, which is how vitess names their bind variables
// (v1, v2, ...). The TiDB parser leaves that numbering to TiDB's planner.
func (s *Shape) numberParams() {
	var ptrs []*Value
	s.visitValues(func(v *Value) {
		if v.Param >= 0 {
			ptrs = append(ptrs, v)
		}
	})
	sort.Slice(ptrs, func(i, j int) bool { return ptrs[i].Param < ptrs[j].Param })
	// A marker read twice (a row IN's, rowInConds) keeps one number.
	n, last := 0, -1
	for _, p := range ptrs {
		if p.Param != last {
			last, n = p.Param, n+1
		}
		p.Param = n - 1
	}
	s.Params = n
}

// visitValues calls visit with each value of s (not of s.Alt), in no
// fixed order.
func (s *Shape) visitValues(visit func(v *Value)) {
	for i := range s.Keys {
		visit(&s.Keys[i])
	}
	for i := range s.Sets {
		visit(&s.Sets[i].Val)
	}
	for _, row := range s.Rows {
		for i := range row {
			visit(&row[i])
		}
	}
	if s.Scan != nil {
		s.Scan.values(visit)
	}
}

// paramName returns the name vitess gives the bind variable of parameter
// i (v1, v2, ...).
func ParamName(i int) string {
	return "v" + strconv.Itoa(i+1)
}
