package storedproc

import (
	"errors"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL's errors of stored programs the interpreter raises itself.
var (
	errCaseNotFound = func() error {
		return mysql.NewSQLError(1339, "20000", "Case not found for CASE statement")
	}
	errNoData = func() *mysql.SQLError {
		return mysql.NewSQLError(1329, "02000", "No data - zero rows fetched, selected, or processed")
	}
)

// exec runs one statement of a body in block sc.
func (f *frame) exec(st ast.Statement, sc *scope) error {
	if !isCompound(st) && !isMarker(st) {
		// Every statement but GET DIAGNOSTICS starts a new diagnostics
		// area; control statements leave it as it is (a handler's
		// BEGIN ... END reads its condition).
		f.diag = &diagArea{}
	}
	switch st := st.(type) {
	case *ast.BeginEndBlock:
		inner := newScope(sc)
		err := f.run(st.Statements, inner)
		var x *exitBlock
		var l *leaveLabel
		switch {
		case errors.As(err, &x) && x.scope == inner:
			return nil
		case errors.As(err, &l) && st.Label != "" && strings.EqualFold(l.label, st.Label):
			return nil
		}
		return err
	case *ast.Declare:
		return f.declare(st, sc)
	case *ast.Set:
		return f.set(st, sc)
	case *ast.Select:
		if text, ok := markerText(st); ok {
			return f.marked(text, sc)
		}
		if st.Into != nil {
			return f.selectInto(st, sc)
		}
		return f.result(st, sc)
	case *ast.SetOp:
		return f.result(st, sc)
	case *ast.ParenSelect:
		return f.result(st, sc)
	case *ast.IfStatement:
		for _, c := range st.Conditions {
			ok, err := f.truth(sc, c.Expr)
			if err != nil {
				return err
			}
			if ok {
				return f.run(c.Statements, sc)
			}
		}
		return f.run(st.Else, sc)
	case *ast.CaseStatement:
		for _, c := range st.Cases {
			cond := c.Case
			if st.Expr != nil {
				cond = &ast.ComparisonExpr{Operator: ast.EqualStr, Left: st.Expr, Right: c.Case}
			}
			ok, err := f.truth(sc, cond)
			if err != nil {
				return err
			}
			if ok {
				return f.run(c.Statements, sc)
			}
		}
		if st.Else == nil {
			return errCaseNotFound()
		}
		return f.run(st.Else, sc)
	case *ast.While:
		return f.loop(st.Label, sc, st.Statements, func() (bool, error) { return f.truth(sc, st.Condition) }, nil)
	case *ast.Repeat:
		return f.loop(st.Label, sc, st.Statements, nil, func() (bool, error) {
			done, err := f.truth(sc, st.Condition)
			return !done, err
		})
	case *ast.Loop:
		return f.loop(st.Label, sc, st.Statements, nil, nil)
	case *ast.Leave:
		return &leaveLabel{label: st.Label}
	case *ast.Iterate:
		return &iterateLabel{label: st.Label}
	case *ast.OpenCursor:
		return f.open(st.Name, sc)
	case *ast.FetchCursor:
		return f.fetch(st, sc)
	case *ast.CloseCursor:
		c, err := openCursor(sc, st.Name)
		if err != nil {
			return err
		}
		c.rows, c.open = nil, false
		return nil
	case *ast.Signal:
		return f.signal(st, sc, nil)
	case *ast.Resignal:
		if len(f.handling) == 0 {
			return mysql.NewSQLError(1645, "0K000", "RESIGNAL when handler not active")
		}
		da := f.handling[len(f.handling)-1]
		return f.signal(&st.Signal, sc, da.conds[len(da.conds)-1])
	case *ast.Call:
		return f.callStmt(st, sc)
	case *ast.Return:
		// A stored function's value (CallFunction takes it).
		val, _, err := f.eval(sc, st.Expr)
		if err != nil {
			return err
		}
		return &returned{val: val}
	}
	f.bind(sc, st)
	_, rows, err := f.query(st)
	if err != nil {
		return err
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		if ok, isOK := rows[0][0].(types.OkResult); isOK {
			f.diag.rowCount = int64(ok.RowsAffected)
		}
	}
	return nil
}

// loop runs a WHILE (before: its condition), REPEAT (after: its UNTIL, as
// "go on") or LOOP labelled label, in block sc.
func (f *frame) loop(label string, sc *scope, body []ast.Statement, before, after func() (bool, error)) error {
	for {
		if before != nil {
			ok, err := before()
			if err != nil || !ok {
				return err
			}
		}
		err := f.run(body, sc)
		var l *leaveLabel
		var it *iterateLabel
		switch {
		case err == nil:
		case label != "" && errors.As(err, &l) && strings.EqualFold(l.label, label):
			return nil
		case label != "" && errors.As(err, &it) && strings.EqualFold(it.label, label):
			// The next iteration; REPEAT checks its condition first.
		default:
			return err
		}
		if after != nil {
			ok, err := after()
			if err != nil || !ok {
				return err
			}
		}
	}
}

// declare runs a DECLARE of a variable, condition, cursor or handler.
func (f *frame) declare(d *ast.Declare, sc *scope) error {
	switch {
	case d.Variables != nil:
		t, err := types.ColumnTypeToType(&d.Variables.VarType)
		if err != nil {
			return err
		}
		var val any
		if def := d.Variables.VarType.Default; def != nil {
			if val, _, err = f.eval(sc, def); err != nil {
				return err
			}
		}
		for _, name := range d.Variables.Names {
			v := &variable{typ: t}
			if err := v.set(f.ctx, val); err != nil {
				return err
			}
			sc.vars[name.Lowered()] = v
		}
	case d.Condition != nil:
		c := &condition{state: d.Condition.SqlStateValue}
		if d.Condition.MysqlErrorCode != nil {
			n, err := strconv.Atoi(string(d.Condition.MysqlErrorCode.Val))
			if err != nil || n == 0 {
				return mysql.NewSQLError(1150, "HY000", "Incorrect CONDITION value: '%s'", d.Condition.MysqlErrorCode.Val)
			}
			c.errno = n
		}
		if sc.conds == nil {
			sc.conds = map[string]*condition{}
		}
		sc.conds[strings.ToLower(d.Condition.Name)] = c
	case d.Cursor != nil:
		if sc.cursors == nil {
			sc.cursors = map[string]*cursor{}
		}
		sc.cursors[strings.ToLower(d.Cursor.Name)] = &cursor{query: d.Cursor.SelectStmt}
	case d.Handler != nil:
		if d.Handler.Action == ast.DeclareHandlerAction_Undo {
			return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support 'UNDO HANDLER'")
		}
		h := &handler{scope: sc, exit: d.Handler.Action == ast.DeclareHandlerAction_Exit, stmt: d.Handler.Statement}
		for _, cv := range d.Handler.ConditionValues {
			hc := handlerCond{kind: cv.ValueType}
			switch cv.ValueType {
			case ast.DeclareHandlerCondition_MysqlErrorCode:
				n, err := strconv.Atoi(string(cv.MysqlErrorCode.Val))
				if err != nil || n == 0 {
					return mysql.NewSQLError(1150, "HY000", "Incorrect CONDITION value: '%s'", cv.MysqlErrorCode.Val)
				}
				hc.errno = n
			case ast.DeclareHandlerCondition_SqlState:
				hc.state = cv.String
			case ast.DeclareHandlerCondition_ConditionName:
				c := lookupCondition(sc, cv.String)
				if c == nil {
					return mysql.NewSQLError(1319, "42000", "Undefined CONDITION: %s", cv.String)
				}
				hc.kind, hc.errno, hc.state = ast.DeclareHandlerCondition_SqlState, 0, c.state
				if c.errno != 0 {
					hc.kind, hc.errno = ast.DeclareHandlerCondition_MysqlErrorCode, c.errno
				}
			}
			h.conds = append(h.conds, hc)
		}
		sc.handlers = append(sc.handlers, h)
	}
	return nil
}

// lookupCondition returns the condition name declared in sc or around it.
func lookupCondition(sc *scope, name string) *condition {
	return declared(sc, name, func(s *scope) map[string]*condition { return s.conds })
}

// set runs a SET: local variables and parameters are the interpreter's,
// anything else (user and system variables) the runner's.
func (f *frame) set(st *ast.Set, sc *scope) error {
	for _, e := range st.Exprs {
		if e.Scope == ast.SetScope_None && e.Name != nil && e.Name.Qualifier.IsEmpty() {
			if v := lookup(sc, e.Name.Name.String()); v != nil {
				val, _, err := f.eval(sc, e.Expr)
				if err != nil {
					return err
				}
				if err := v.set(f.ctx, val); err != nil {
					return err
				}
				continue
			}
		}
		one := &ast.Set{Exprs: ast.SetVarExprs{e}}
		f.bind(sc, one)
		if _, _, err := f.query(one); err != nil {
			return err
		}
	}
	return nil
}

// result runs a SELECT whose rows go to the client.
func (f *frame) result(st ast.SelectStatement, sc *scope) error {
	f.bind(sc, st)
	sch, rows, err := f.query(st)
	if err != nil {
		return err
	}
	f.diag.rowCount = -1
	return f.env.Result(f.ctx, sch, rows)
}

// selectInto runs SELECT ... INTO variables.
func (f *frame) selectInto(st *ast.Select, sc *scope) error {
	targets := st.Into.Variables
	if st.Into.Outfile != "" || st.Into.Dumpfile != "" {
		f.bind(sc, st)
		_, _, err := f.query(st)
		return err
	}
	q := *st
	q.Into = nil
	f.bind(sc, &q)
	sch, rows, err := f.query(&q)
	if err != nil {
		return err
	}
	switch {
	case len(sch) != len(targets):
		return mysql.NewSQLError(mysql.ERWrongNumberOfColumnsInSelect, "21000", "The used SELECT statements have a different number of columns")
	case len(rows) == 0:
		return &warning{c: errNoData()}
	case len(rows) > 1:
		return mysql.NewSQLError(mysql.ERTooManyRows, "42000", "Result consisted of more than one row")
	}
	for i, t := range targets {
		if err := f.assign(sc, t.String(), rows[0][i], sch[i].Type); err != nil {
			return err
		}
	}
	f.diag.rowCount = 1
	return nil
}

// callStmt runs a CALL of the body: an argument that is a local variable
// or parameter, or a user variable, is written back when the procedure's
// parameter is OUT or INOUT.
func (f *frame) callStmt(st *ast.Call, sc *scope) error {
	args := make([]Arg, len(st.Params))
	for i, p := range st.Params {
		if col, ok := p.(*ast.ColName); ok && col.Qualifier.IsEmpty() {
			name := col.Name.String()
			if v := lookup(sc, name); v != nil {
				args[i] = Arg{Value: v.val, Set: func(ctx *gsql.Context, val any, _ gsql.Type) error { return v.set(ctx, val) }}
				continue
			}
			if strings.HasPrefix(name, "@") && !strings.HasPrefix(name, "@@") {
				user := strings.ToLower(name[1:])
				_, val, err := f.ctx.GetUserVariable(f.ctx, user)
				if err != nil {
					return err
				}
				args[i] = Arg{Value: val, Set: func(ctx *gsql.Context, val any, t gsql.Type) error {
					return ctx.SetUserVariable(ctx, user, val, t)
				}}
				continue
			}
		}
		val, _, err := f.eval(sc, p)
		if err != nil {
			return err
		}
		args[i] = Arg{Value: val}
	}
	err := f.env.call(f.ctx, st.ProcName.Qualifier.String(), st.ProcName.Name.String(), args, f.active)
	var r *raised
	if errors.As(err, &r) {
		return r.err
	}
	return err
}

// signal makes the error of a SIGNAL, or of a RESIGNAL of condition base.
func (f *frame) signal(st *ast.Signal, sc *scope, base *mysql.SQLError) error {
	state, errno, msg := "", 0, ""
	if base != nil {
		state, errno, msg = base.State, base.Num, base.Message
	}
	switch {
	case st.ConditionName != "":
		c := lookupCondition(sc, st.ConditionName)
		if c == nil {
			return mysql.NewSQLError(1319, "42000", "Undefined CONDITION: %s", st.ConditionName)
		}
		if c.errno != 0 {
			// MySQL: SIGNAL of a condition of an error number.
			return mysql.NewSQLError(1646, "HY000", "SIGNAL/RESIGNAL can only use a CONDITION defined with SQLSTATE")
		}
		state, errno, msg = c.state, 0, ""
	case st.SqlStateValue != "":
		state, errno, msg = st.SqlStateValue, 0, ""
	}
	if len(state) != 5 || strings.HasPrefix(state, "00") {
		return mysql.NewSQLError(1407, "42000", "Bad SQLSTATE: '%s'", state)
	}
	for _, item := range st.Info {
		v, _, err := f.eval(sc, item.Value)
		if err != nil {
			return err
		}
		switch item.ConditionItemName {
		case ast.SignalConditionItemName_MysqlErrno:
			n, _, err := types.Int64.Convert(f.ctx, v)
			if err != nil || n == nil || n.(int64) <= 0 || n.(int64) > 65535 {
				return mysql.NewSQLError(1231, "42000", "Variable 'MYSQL_ERRNO' can't be set to the value of '%v'", v)
			}
			errno = int(n.(int64))
		case ast.SignalConditionItemName_MessageText:
			s, _, err := types.LongText.Convert(f.ctx, v)
			if err != nil || s == nil {
				return mysql.NewSQLError(1231, "42000", "Variable 'MESSAGE_TEXT' can't be set to the value of '%v'", v)
			}
			msg = s.(string)
		}
	}
	if errno == 0 {
		switch state[:2] {
		case "01":
			errno = 1642
		case "02":
			errno = 1643
		default:
			errno = 1644
		}
	}
	if msg == "" {
		switch state[:2] {
		case "01":
			msg = "Unhandled user-defined warning condition"
		case "02":
			msg = "Unhandled user-defined not found condition"
		default:
			msg = "Unhandled user-defined exception condition"
		}
	}
	se := &mysql.SQLError{Num: errno, State: state, Message: msg}
	if state[:2] == "01" {
		return &warning{c: se}
	}
	return se
}
