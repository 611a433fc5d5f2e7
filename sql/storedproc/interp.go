package storedproc

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Env is what the interpreter needs of the server it runs in.
type Env struct {
	// Runner runs a statement of a body (GMS's engine).
	Runner gsql.StatementRunner
	// Procedure returns the text of the CREATE PROCEDURE statement of
	// procedure name of database db, as the user wrote it; ok is false
	// when there is no such procedure.
	Procedure func(ctx *gsql.Context, db, name string) (create string, ok bool, err error)
	// Error returns err as the MySQL error a client would get for it.
	Error func(ctx *gsql.Context, err error) *mysql.SQLError
	// Result receives the rows of each SELECT of a body that returns them
	// to the client, in order.
	Result func(ctx *gsql.Context, sch gsql.Schema, rows []gsql.Row) error
	// NoResultSets says the client cannot read result sets (it did not
	// announce CLIENT_MULTI_RESULTS): a CALL of a procedure with a SELECT
	// that returns rows fails before it runs, with MySQL's 1312.
	NoResultSets bool
}

// Arg is an argument of a CALL: its value, and for an argument that is a
// variable, how to write it (an OUT or INOUT parameter's value at the end).
type Arg struct {
	Value any
	// Set writes the variable; nil when the argument is not a variable.
	Set func(ctx *gsql.Context, v any, t gsql.Type) error
}

// Call runs procedure name of database db with args, in ctx's session.
func (e *Env) Call(ctx *gsql.Context, db, name string, args []Arg) error {
	err := e.call(ctx, db, name, args, nil)
	var r *raised
	if errors.As(err, &r) {
		return r.err
	}
	return err
}

// call runs a procedure; active names the procedures the CALL is inside of
// (MySQL's max_sp_recursion_depth is 0: none may call itself).
func (e *Env) call(ctx *gsql.Context, db, name string, args []Arg, active []string) error {
	if db == "" {
		db = ctx.GetCurrentDatabase()
	}
	if db == "" {
		return mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected")
	}
	text, ok, err := e.Procedure(ctx, db, name)
	if err != nil {
		return err
	}
	if !ok {
		return mysql.NewSQLError(mysql.ERSPDoesNotExist, "42000", "PROCEDURE %s.%s does not exist", db, name)
	}
	key := strings.ToLower(db + "." + name)
	if slices.Contains(active, key) {
		return mysql.NewSQLError(1456, "HY000", "Recursive limit 0 (as set by the max_sp_recursion_depth variable) was exceeded for routine %s", name)
	}
	spec, err := parseProcedure(text)
	if err != nil {
		return err
	}
	if e.NoResultSets && returnsRows(spec.Body) {
		return mysql.NewSQLError(1312, "0A000", "PROCEDURE %s.%s can't return a result set in the given context", db, name)
	}
	if len(args) != len(spec.Params) {
		return mysql.NewSQLError(1318, "42000", "Incorrect number of arguments for PROCEDURE %s.%s; expected %d, got %d", db, name, len(spec.Params), len(args))
	}
	f := &frame{env: e, ctx: ctx, active: append(active, key), diag: &diagArea{}}
	root := newScope(nil)
	for i, p := range spec.Params {
		t, err := types.ColumnTypeToType(&p.Type)
		if err != nil {
			return err
		}
		v := &variable{typ: t}
		if p.Direction != ast.ProcedureParamDirection_In && args[i].Set == nil {
			return mysql.NewSQLError(1414, "42000", "OUT or INOUT argument %d for routine %s.%s is not a variable or NEW pseudo-variable in BEFORE trigger", i+1, db, name)
		}
		if p.Direction != ast.ProcedureParamDirection_Out {
			if err := v.set(ctx, args[i].Value); err != nil {
				return err
			}
		}
		root.vars[strings.ToLower(p.Name)] = v
	}
	if err := f.run([]ast.Statement{spec.Body}, root); err != nil {
		var x *exitBlock
		if !errors.As(err, &x) || x.scope != root {
			return err
		}
	}
	for i, p := range spec.Params {
		if p.Direction == ast.ProcedureParamDirection_In {
			continue
		}
		v := root.vars[strings.ToLower(p.Name)]
		if err := args[i].Set(ctx, v.val, v.typ); err != nil {
			return err
		}
	}
	return nil
}

// returnsRows reports whether statement st of a body is or has a SELECT
// that returns rows to the client (MySQL's test for 1312, made of the
// procedure's text, not of what a CALL runs).
func returnsRows(st ast.Statement) bool {
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.Select:
			if n.Into == nil && !isMarker(n) {
				found = true
			}
			return false, nil
		case *ast.SetOp, *ast.ParenSelect:
			found = true
			return false, nil
		case *ast.Declare:
			// A cursor's SELECT answers FETCH; a handler's statement
			// may return rows.
			if n.Handler != nil {
				found = found || returnsRows(n.Handler.Statement)
			}
			return false, nil
		case ast.Statement:
			switch n.(type) {
			case *ast.BeginEndBlock, *ast.IfStatement, *ast.CaseStatement, *ast.While, *ast.Repeat, *ast.Loop:
				return true, nil
			}
			// Other statements (INSERT ... SELECT, SET with a
			// subquery) return no rows.
			return false, nil
		}
		return true, nil
	}, st)
	return found
}

// parseProcedure parses a CREATE PROCEDURE statement's text.
func parseProcedure(text string) (*ast.ProcedureSpec, error) {
	rewritten, _ := Rewrite(text)
	stmt, err := ast.Parse(rewritten)
	if err != nil {
		return nil, fmt.Errorf("stored procedure: %w", err)
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ProcedureSpec == nil || ddl.ProcedureSpec.Body == nil {
		return nil, fmt.Errorf("stored procedure: not a CREATE PROCEDURE statement: %.40q", text)
	}
	return ddl.ProcedureSpec, nil
}

// frame is one running CALL.
type frame struct {
	env    *Env
	ctx    *gsql.Context
	active []string
	// diag is the diagnostics area: the conditions of the last statement
	// run (GET [CURRENT] DIAGNOSTICS).
	diag *diagArea
	// handling are the conditions of the handlers running, innermost
	// last (RESIGNAL, GET STACKED DIAGNOSTICS).
	handling []*diagArea
}

// scope is one BEGIN ... END block's declarations (or a CALL's
// parameters).
type scope struct {
	parent   *scope
	vars     map[string]*variable
	conds    map[string]*condition
	cursors  map[string]*cursor
	handlers []*handler
	// suspended is the number of this block's handlers running: a
	// handler's statement is not handled by its own block's handlers.
	suspended int
}

func newScope(parent *scope) *scope {
	return &scope{parent: parent, vars: map[string]*variable{}}
}

// variable is a local variable or parameter.
type variable struct {
	typ gsql.Type
	val any
}

// set gives the variable v, converted to its type.
func (v *variable) set(ctx *gsql.Context, val any) error {
	if val == nil {
		v.val = nil
		return nil
	}
	c, _, err := v.typ.Convert(ctx, val)
	if err != nil {
		return err
	}
	v.val = c
	return nil
}

// condition is a DECLARE ... CONDITION: an error number or an SQLSTATE.
type condition struct {
	errno int
	state string
}

// handler is a DECLARE ... HANDLER.
type handler struct {
	scope *scope
	exit  bool
	conds []handlerCond
	stmt  ast.Statement
}

// handlerCond is one condition a handler is for.
type handlerCond struct {
	kind  ast.DeclareHandlerConditionValue // MysqlErrorCode, SqlState, or a class
	errno int
	state string
}

// matches reports how specifically hc matches c: 0 not at all, 3 by
// error number, 2 by SQLSTATE, 1 by class.
func (hc handlerCond) matches(c *mysql.SQLError) int {
	class := c.State
	if len(class) > 2 {
		class = class[:2]
	}
	switch hc.kind {
	case ast.DeclareHandlerCondition_MysqlErrorCode:
		if c.Num == hc.errno {
			return 3
		}
	case ast.DeclareHandlerCondition_SqlState:
		if c.State == hc.state {
			return 2
		}
	case ast.DeclareHandlerCondition_SqlWarning:
		if class == "01" {
			return 1
		}
	case ast.DeclareHandlerCondition_NotFound:
		if class == "02" {
			return 1
		}
	case ast.DeclareHandlerCondition_SqlException:
		if class != "00" && class != "01" && class != "02" {
			return 1
		}
	}
	return 0
}

// Control flow travels up the Go stack as errors of these types.
type (
	// leaveLabel is LEAVE label.
	leaveLabel struct{ label string }
	// iterateLabel is ITERATE label.
	iterateLabel struct{ label string }
	// exitBlock ends the block of scope after an EXIT handler ran.
	exitBlock struct{ scope *scope }
	// raised is an error raised by a handler's statement of block scope:
	// only the handlers of the blocks around scope are for it.
	raised struct {
		err   *mysql.SQLError
		scope *scope
	}
	// warning is a condition that is no error unless a handler takes it
	// (a SIGNAL of class 01, a SELECT ... INTO without rows).
	warning struct{ c *mysql.SQLError }
)

func (l *leaveLabel) Error() string   { return "LEAVE " + l.label + " outside its block" }
func (l *iterateLabel) Error() string { return "ITERATE " + l.label + " outside its loop" }
func (x *exitBlock) Error() string    { return "exit handler" }
func (r *raised) Error() string       { return r.err.Error() }
func (r *raised) Unwrap() error       { return r.err }
func (w *warning) Error() string      { return w.c.Error() }

// isControl reports whether err is a LEAVE, ITERATE, EXIT handler's or
// RETURN's jump.
func isControl(err error) bool {
	switch err.(type) {
	case *leaveLabel, *iterateLabel, *exitBlock, *returned:
		return true
	}
	return false
}

// run runs stmts in block sc: the error of a statement goes to a handler
// of sc or of the blocks around it when one is for it.
func (f *frame) run(stmts []ast.Statement, sc *scope) error {
	for _, st := range stmts {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		leaf := !isCompound(st)
		if leaf {
			// A statement's warnings are its own (the engine clears them
			// at each statement it runs, as MySQL at each statement).
			f.ctx.ClearWarnings()
		}
		err := f.exec(st, sc)
		if err == nil {
			if !leaf {
				continue
			}
			if h, c := f.warningHandler(sc); h != nil {
				if err := f.runHandler(h, c); err != nil {
					return err
				}
				if h.exit {
					return &exitBlock{scope: h.scope}
				}
			}
			continue
		}
		if isControl(err) {
			return err
		}
		if f.ctx.Err() != nil {
			return err
		}
		from, c, isWarning := sc, (*mysql.SQLError)(nil), false
		var r *raised
		var w *warning
		switch {
		case errors.As(err, &r):
			from, c = r.scope.parent, r.err
		case errors.As(err, &w):
			c, isWarning = w.c, true
		default:
			c = f.env.Error(f.ctx, err)
			err = c
		}
		f.diag = &diagArea{conds: []*mysql.SQLError{c}}
		h := findHandler(from, c)
		if h == nil {
			if isWarning {
				f.ctx.Warn(c.Num, "%s", c.Message)
				continue
			}
			return err
		}
		if err := f.runHandler(h, c); err != nil {
			return err
		}
		if h.exit {
			return &exitBlock{scope: h.scope}
		}
	}
	return nil
}

// warningHandler returns, for the warnings a statement of block sc
// raised, the handler of the first that one is for, and that warning; the
// warnings become the diagnostics area's conditions. A warning's SQLSTATE
// is MySQL's general 01000: a handler is for it by its number, SQLSTATE
// '01000' or SQLWARNING, never SQLEXCEPTION (MySQL chooses by the level).
// Notes run no handler.
func (f *frame) warningHandler(sc *scope) (*handler, *mysql.SQLError) {
	if f.ctx.Session.WarningCount() == 0 {
		return nil, nil
	}
	var conds []*mysql.SQLError
	var h *handler
	var hc *mysql.SQLError
	for _, w := range f.ctx.Session.Warnings() {
		if !strings.EqualFold(w.Level, "Warning") {
			continue
		}
		c := &mysql.SQLError{Num: w.Code, State: "01000", Message: w.Message}
		conds = append(conds, c)
		if h == nil {
			h, hc = findHandler(sc, c), c
		}
	}
	if len(conds) > 0 {
		f.diag.conds = conds
	}
	return h, hc
}

// isCompound reports whether st is a statement made of others, or a
// declaration or jump, whose own conditions are its statements'.
func isCompound(st ast.Statement) bool {
	switch st.(type) {
	case *ast.BeginEndBlock, *ast.IfStatement, *ast.CaseStatement, *ast.While, *ast.Repeat, *ast.Loop,
		*ast.Declare, *ast.Leave, *ast.Iterate:
		return true
	}
	return false
}

// findHandler returns the handler for c of the innermost block from sc
// outwards that has one, the most specific of that block's.
func findHandler(sc *scope, c *mysql.SQLError) *handler {
	for ; sc != nil; sc = sc.parent {
		if sc.suspended > 0 {
			continue
		}
		var best *handler
		bestScore := 0
		for _, h := range sc.handlers {
			for _, hc := range h.conds {
				if s := hc.matches(c); s > bestScore {
					best, bestScore = h, s
				}
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// runHandler runs h's statement for condition c.
func (f *frame) runHandler(h *handler, c *mysql.SQLError) error {
	h.scope.suspended++
	da := &diagArea{conds: []*mysql.SQLError{c}}
	f.handling = append(f.handling, da)
	f.diag = &diagArea{conds: da.conds}
	err := f.run([]ast.Statement{h.stmt}, h.scope)
	f.handling = f.handling[:len(f.handling)-1]
	h.scope.suspended--
	if err == nil || isControl(err) {
		var x *exitBlock
		if errors.As(err, &x) && x.scope == h.scope {
			// An EXIT handler of the handler's own block: that block
			// ends, as the handler's EXIT would end it.
			return err
		}
		return err
	}
	var r *raised
	if errors.As(err, &r) {
		return err
	}
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return &raised{err: se, scope: h.scope}
	}
	return err
}

// query runs stmt (its variables bound) through the runner and returns its
// schema and all its rows.
func (f *frame) query(stmt ast.Statement) (gsql.Schema, []gsql.Row, error) {
	// A context of its own, as GMS's interpreter gives each statement:
	// the engine ends a statement's query in the process list, which
	// cancels the context of the query (the CALL's) it was run in. With
	// the session given (NewContext makes a session of its own without
	// it: a third of the CPU of a loop of SETs).
	ctx := gsql.NewContext(f.ctx.Context, gsql.WithSession(f.ctx.Session), gsql.WithMemoryManager(f.ctx.Memory))
	sch, iter, _, err := f.env.Runner.QueryWithBindings(ctx, "", stmt, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	rows, err := gsql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, nil, err
	}
	return sch, rows, nil
}

// eval returns the value of expression e in block sc, and its type.
func (f *frame) eval(sc *scope, e ast.Expr) (any, gsql.Type, error) {
	f.bind(sc, e)
	sel := &ast.Select{SelectExprs: ast.SelectExprs{&ast.AliasedExpr{Expr: e}}}
	sch, rows, err := f.query(sel)
	if err != nil {
		return nil, nil, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return nil, nil, fmt.Errorf("stored procedure: expression %s gave %d rows", ast.String(e), len(rows))
	}
	return rows[0][0], sch[0].Type, nil
}

// truth evaluates condition e as IF and WHILE do: true when it is a
// number other than 0 (NULL is false).
func (f *frame) truth(sc *scope, e ast.Expr) (bool, error) {
	v, _, err := f.eval(sc, e)
	if err != nil || v == nil {
		return false, err
	}
	b, _, err := types.Boolean.Convert(f.ctx, v)
	if err != nil || b == nil {
		return false, err
	}
	return b.(int8) != 0, nil
}

// lookup returns the local variable or parameter name visible in sc.
func lookup(sc *scope, name string) *variable {
	return declared(sc, name, func(s *scope) map[string]*variable { return s.vars })
}

// declared returns what block sc or a block around it, innermost first,
// declared by name in the declarations of one kind (of).
func declared[T any](sc *scope, name string, of func(*scope) map[string]*T) *T {
	name = strings.ToLower(name)
	for ; sc != nil; sc = sc.parent {
		if d, ok := of(sc)[name]; ok {
			return d
		}
	}
	return nil
}

// assign writes target, a local variable or parameter or a user variable
// (@name), with v of type t.
func (f *frame) assign(sc *scope, target string, v any, t gsql.Type) error {
	if strings.HasPrefix(target, "@") {
		return f.ctx.SetUserVariable(f.ctx, strings.ToLower(strings.TrimPrefix(target, "@")), v, t)
	}
	lv := lookup(sc, target)
	if lv == nil {
		return mysql.NewSQLError(1327, "42000", "Undeclared variable: %s", target)
	}
	return lv.set(f.ctx, v)
}

// bind gives every column reference of node that names a local variable or
// parameter visible in sc that variable's value (and clears it from those
// that do not, since a body's statements run again in loops).
func (f *frame) bind(sc *scope, node ast.SQLNode) {
	var visit ast.Visit
	visit = func(n ast.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *ast.ColName:
			n.StoredProcVal = nil
			if n.Qualifier.IsEmpty() {
				if v := lookup(sc, n.Name.String()); v != nil {
					n.StoredProcVal = literal(v.val)
				}
			}
			return false, nil
		case *ast.AssignmentExpr:
			// The column assigned is a column, whatever variables say.
			_ = ast.Walk(visit, n.Expr)
			return false, nil
		case *ast.SetVarExpr:
			_ = ast.Walk(visit, n.Expr)
			return false, nil
		case *ast.AliasedExpr:
			// A variable selected alone names its column, as MySQL's.
			if col, ok := n.Expr.(*ast.ColName); ok && n.As.IsEmpty() && col.Qualifier.IsEmpty() && lookup(sc, col.Name.String()) != nil {
				n.As = col.Name
			}
		}
		return true, nil
	}
	_ = ast.Walk(visit, node)
}
