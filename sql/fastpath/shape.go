package sql

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

// This file turns a statement parsed by the TiDB parser into a fastShape:
// the statement reduced to what the fast path runs, with nothing of the
// catalog yet. A statement with anything the fast path does not model (a
// join, an alias, a function, ORDER BY, a hint, FOR SHARE, ...) has no
// shape and goes to GMS. The decision depends only on the statement's
// structure, never on its literal values, so that it can be cached per
// normalized digest (which erases literals).

// fastKind is the kind of statement a shape describes.
type fastKind uint8

const (
	// fastSelect: SELECT cols FROM t WHERE c = v, or WHERE c IN (v, ...),
	// where c is the primary key or a unique column, or WHERE c1 = v1 AND
	// c2 = v2 ... over every column of a composite primary key; FOR
	// UPDATE allowed.
	fastSelect fastKind = iota + 1
	// fastUpdate: UPDATE t SET col = expr, ... WHERE pk = v (or the
	// conjunction over a composite primary key).
	fastUpdate
	// fastDelete: DELETE FROM t WHERE pk = v (or the conjunction).
	fastDelete
	// fastInsert: INSERT INTO t (cols) VALUES (...), (...).
	fastInsert
	// fastBegin, fastCommit, fastRollback: BEGIN / START TRANSACTION,
	// COMMIT, ROLLBACK with no options.
	fastBegin
	fastCommit
	fastRollback
)

// fastValue is one value of a statement: a parameter of a prepared
// statement, or a literal. ok is false for a literal the fast path does not
// evaluate exactly as GMS does (a decimal, a float, a hex or bit literal, a
// boolean keyword, a string with a character set introducer): the statement
// then goes to GMS.
type fastValue struct {
	// param is the parameter's position (0-based) in a prepared
	// statement, or -1 for a literal.
	param int
	// lit is the literal: int64, uint64, string or nil (NULL).
	lit any
	ok  bool
}

// fastSet is one assignment of an UPDATE: col = val, or col = src + val
// (src - val when neg), src being an integer column.
type fastSet struct {
	col string
	src string
	neg bool
	val fastValue
}

// fastShape is a statement the fast path can run, before name resolution.
type fastShape struct {
	kind fastKind
	// db and table name the table as written; db is empty when the
	// statement does not qualify it (the session's current database).
	db, table string
	// cols are the selected columns of a SELECT (nil for *) or the column
	// list of an INSERT, as written.
	cols []string
	// where is the column of the WHERE condition and keys its values (one
	// for =, several for IN).
	where string
	keys  []fastValue
	// in is set for WHERE c IN (...).
	in bool
	// keyCols are the columns of a WHERE c1 = v1 AND c2 = v2 ... of two
	// or more distinct columns, in the order written; keys[i] is the value
	// of keyCols[i], and where is empty.
	keyCols []string
	// forUpdate is set for SELECT ... FOR UPDATE (without NOWAIT, SKIP
	// LOCKED or OF).
	forUpdate bool
	// sets are an UPDATE's assignments, in order.
	sets []fastSet
	// rows are an INSERT's VALUES tuples.
	rows [][]fastValue
	// params is how many parameters a prepared statement has.
	params int
}

// fastShapeOf returns the shape of stmt, or nil if the fast path does not
// run statements like it. normalized is the statement's normalized text,
// which tells the transaction statements' exact wording apart.
func fastShapeOf(stmt ast.StmtNode, normalized string) *fastShape {
	var s *fastShape
	switch n := stmt.(type) {
	case *ast.SelectStmt:
		s = selectShape(n)
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
			s = &fastShape{kind: fastBegin}
		}
	case *ast.CommitStmt:
		if normalized == "commit" {
			s = &fastShape{kind: fastCommit}
		}
	case *ast.RollbackStmt:
		if normalized == "rollback" {
			s = &fastShape{kind: fastRollback}
		}
	}
	if s == nil {
		return nil
	}
	s.numberParams()
	return s
}

func selectShape(n *ast.SelectStmt) *fastShape {
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
	s := &fastShape{kind: fastSelect}
	if l := n.LockInfo; l != nil {
		// FOR UPDATE locks the rows read inside a transaction; the
		// other forms (FOR SHARE, NOWAIT, SKIP LOCKED, OF t) are GMS's.
		if l.LockType != ast.SelectLockForUpdate || len(l.Tables) > 0 {
			return nil
		}
		s.forUpdate = true
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
		s.cols = append(s.cols, col)
	}
	if !s.setWhere(n.Where, true) {
		return nil
	}
	return s
}

func updateShape(n *ast.UpdateStmt) *fastShape {
	if n.Order != nil || n.Limit != nil || n.Priority != 0 || n.IgnoreErr || n.MultipleTable ||
		len(n.TableHints) > 0 || n.With != nil || n.Where == nil || len(n.List) == 0 {
		return nil
	}
	s := &fastShape{kind: fastUpdate}
	if !s.setTable(n.TableRefs) || !s.setWhere(n.Where, false) {
		return nil
	}
	for _, a := range n.List {
		col, ok := columnName(a.Column)
		if !ok {
			return nil
		}
		set := fastSet{col: col}
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
			set.src, set.neg, set.val = src, e.Op == opcode.Minus, v
		default:
			v, ok := valueOf(a.Expr)
			if !ok {
				return nil
			}
			set.val = v
		}
		s.sets = append(s.sets, set)
	}
	return s
}

func deleteShape(n *ast.DeleteStmt) *fastShape {
	if n.Tables != nil || n.Order != nil || n.Limit != nil || n.Priority != 0 || n.IgnoreErr ||
		n.Quick || n.IsMultiTable || n.BeforeFrom || len(n.TableHints) > 0 || n.With != nil || n.Where == nil {
		return nil
	}
	s := &fastShape{kind: fastDelete}
	if !s.setTable(n.TableRefs) || !s.setWhere(n.Where, false) {
		return nil
	}
	return s
}

func insertShape(n *ast.InsertStmt) *fastShape {
	if n.IsReplace || n.IgnoreErr || n.Setlist || n.Priority != 0 || len(n.OnDuplicate) > 0 ||
		n.Select != nil || len(n.TableHints) > 0 || len(n.PartitionNames) > 0 ||
		len(n.Columns) == 0 || len(n.Lists) == 0 {
		return nil
	}
	s := &fastShape{kind: fastInsert}
	if !s.setTable(n.Table) {
		return nil
	}
	for _, c := range n.Columns {
		col, ok := columnName(c)
		if !ok {
			return nil
		}
		s.cols = append(s.cols, col)
	}
	for _, list := range n.Lists {
		if len(list) != len(s.cols) {
			return nil
		}
		row := make([]fastValue, len(list))
		for i, e := range list {
			v, ok := valueOf(e)
			if !ok {
				return nil
			}
			row[i] = v
		}
		s.rows = append(s.rows, row)
	}
	return s
}

// setTable records the single, unaliased table of refs.
func (s *fastShape) setTable(refs *ast.TableRefsClause) bool {
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
	s.db, s.table = tn.Schema.O, tn.Name.O
	return true
}

// setWhere records a condition c = v, v = c, (when in is allowed)
// c IN (v, ...), or a conjunction c1 = v1 AND c2 = v2 ... of distinct
// columns.
func (s *fastShape) setWhere(e ast.ExprNode, in bool) bool {
	switch e := e.(type) {
	case *ast.BinaryOperationExpr:
		if e.Op == opcode.LogicAnd {
			return s.setConjunction(e)
		}
		col, v, ok := equality(e)
		if !ok {
			return false
		}
		s.where, s.keys = col, []fastValue{v}
		return true
	case *ast.PatternInExpr:
		if !in || e.Not || e.Sel != nil || len(e.List) == 0 {
			return false
		}
		col, ok := plainColumn(e.Expr)
		if !ok {
			return false
		}
		s.where, s.in = col, true
		for _, x := range e.List {
			v, ok := valueOf(x)
			if !ok {
				return false
			}
			s.keys = append(s.keys, v)
		}
		return true
	}
	return false
}

// setConjunction records c1 = v1 AND c2 = v2 ..., each column once
// (compared as MySQL compares column names, without regard to case).
func (s *fastShape) setConjunction(e *ast.BinaryOperationExpr) bool {
	var terms []ast.ExprNode
	var flatten func(x ast.ExprNode)
	flatten = func(x ast.ExprNode) {
		if b, ok := x.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
			flatten(b.L)
			flatten(b.R)
			return
		}
		terms = append(terms, x)
	}
	flatten(e)
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
		s.keyCols = append(s.keyCols, col)
		s.keys = append(s.keys, v)
	}
	return true
}

// equality returns the column and value of c = v or v = c.
func equality(e *ast.BinaryOperationExpr) (string, fastValue, bool) {
	if e.Op != opcode.EQ {
		return "", fastValue{}, false
	}
	col, ok := plainColumn(e.L)
	val := e.R
	if !ok {
		col, ok = plainColumn(e.R)
		val = e.L
	}
	if !ok {
		return "", fastValue{}, false
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
func valueOf(e ast.ExprNode) (fastValue, bool) {
	switch e := e.(type) {
	case *driver.ParamMarkerExpr:
		// Numbered by numberParams once the statement is read.
		return fastValue{param: e.Offset}, true
	case *driver.ValueExpr:
		return literalValue(e, false), true
	case *ast.UnaryOperationExpr:
		// -5 is a minus applied to the literal 5.
		v, ok := e.V.(*driver.ValueExpr)
		if !ok || e.Op != opcode.Minus {
			return fastValue{}, false
		}
		return literalValue(v, true), true
	}
	return fastValue{}, false
}

// literalValue converts a literal, negated when neg.
func literalValue(e *driver.ValueExpr, neg bool) fastValue {
	bad := fastValue{param: -1}
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
		return fastValue{param: -1, ok: true}
	case driver.KindInt64:
		v := e.GetInt64()
		if neg {
			if v == math.MinInt64 {
				return bad
			}
			v = -v
		}
		return fastValue{param: -1, lit: v, ok: true}
	case driver.KindUint64:
		if neg {
			// -9223372036854775808 and beyond: GMS types it as a
			// decimal.
			return bad
		}
		return fastValue{param: -1, lit: e.GetUint64(), ok: true}
	case driver.KindString:
		if neg {
			return bad
		}
		return fastValue{param: -1, lit: e.GetString(), ok: true}
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
func (s *fastShape) numberParams() {
	var ptrs []*fastValue
	visit := func(v *fastValue) {
		if v.param >= 0 {
			ptrs = append(ptrs, v)
		}
	}
	for i := range s.keys {
		visit(&s.keys[i])
	}
	for i := range s.sets {
		visit(&s.sets[i].val)
	}
	for _, row := range s.rows {
		for i := range row {
			visit(&row[i])
		}
	}
	sort.Slice(ptrs, func(i, j int) bool { return ptrs[i].param < ptrs[j].param })
	for i, p := range ptrs {
		p.param = i
	}
	s.params = len(ptrs)
}

// paramName returns the name vitess gives the bind variable of parameter
// i (v1, v2, ...).
func paramName(i int) string {
	return "v" + strconv.Itoa(i+1)
}
