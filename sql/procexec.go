package sql

import (
	"regexp"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/foreignkey"
	"github.com/percdb/percdb/sql/storedproc"
)

// A CALL of a stored procedure runs in percdb's interpreter
// (sql/storedproc), not GMS's (procedures.Call): percdb's row-iterator
// builder takes the CALL node. GMS still resolves the CALL (the procedure,
// its arguments) and plans the body, which it is given without what it
// would refuse (storedproc.ForGMS, in the parser wrapper).

// buildCall runs CALL n: the result sets of the body's SELECTs go to the
// session's procSpool, which the handler writes (procresults.go), or, for
// a client that cannot read several results (no CLIENT_MULTI_RESULTS),
// fail with MySQL's 1312; a CALL run otherwise (from inside GMS) answers
// with the last one, as GMS did.
func (b *compatBuilder) buildCall(ctx *gsql.Context, n *plan.Call, row gsql.Row) (gsql.RowIter, error) {
	s, _ := ctx.Session.(*Session)
	// A constant argument of an OUT or INOUT parameter is MySQL's 1414
	// (the interpreter's, for an argument without Set). A prepared
	// CALL's placeholders reach here as constants too: the handler tells
	// which arguments were placeholders (written, procargs.go). MySQL
	// takes those: bound by EXECUTE ... USING to a user variable, which
	// the parameter then writes; in a binary execution their values go
	// back to a client that reads them (out, procresults.go), and are
	// dropped otherwise. Where the handler did not tell (a CALL run from
	// inside GMS, or a binary one whose text did not parse), a constant
	// is taken and its value dropped, as GMS did.
	var written []callArg
	strict := false
	if s != nil && s.procResults != nil {
		written = s.procResults.args
		strict = !s.procResults.binary || len(written) == len(n.Params)
		if len(written) != len(n.Params) {
			written = nil
		}
	}
	var out *outParams
	if s != nil && s.procResults != nil && s.procResults.outParams && n.Procedure != nil && len(n.Procedure.Params) == len(n.Params) {
		out = &outParams{vals: make([]any, len(n.Params)), types: make([]gsql.Type, len(n.Params)), set: make([]bool, len(n.Params))}
	}
	drop := func(*gsql.Context, any, gsql.Type) error { return nil }
	args := make([]storedproc.Arg, len(n.Params))
	for i, p := range n.Params {
		v, err := p.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		args[i].Value = v
		var w callArg
		if written != nil {
			w = written[i]
		}
		name := w.userVar
		if uv, ok := p.(*expression.UserVar); ok {
			name = uv.Name
		}
		switch {
		case name != "":
			args[i].Set = func(ctx *gsql.Context, v any, t gsql.Type) error { return ctx.SetUserVariable(ctx, name, v, t) }
		case (w.placeholder || written == nil) && out != nil:
			args[i].Set = out.setter(i)
		case w.placeholder || !strict:
			args[i].Set = drop
		}
	}
	var last *procResultSet
	var lastSchema gsql.Schema
	env := &storedproc.Env{
		Runner:       n.Runner,
		Procedure:    b.procedureText,
		Error:        procSQLError,
		NoResultSets: s != nil && s.procResults != nil && s.procResults.noMultiResults,
		Result: func(ctx *gsql.Context, sch gsql.Schema, rows []gsql.Row) error {
			set, err := newProcResultSet(ctx, sch, rows)
			if err != nil {
				return err
			}
			if s != nil && s.procResults != nil {
				s.procResults.sets = append(s.procResults.sets, set)
				return nil
			}
			last, lastSchema = &set, sch
			last.rawRows = rows
			return nil
		},
	}
	// As GMS's CALL: the body's statements start from no transaction
	// object of the context; the session's transaction goes on.
	oldTx := ctx.GetTransaction()
	defer ctx.SetTransaction(oldTx)
	ctx.SetTransaction(nil)
	if err := env.Call(ctx, n.Database().Name(), n.Name, args); err != nil {
		return nil, err
	}
	if out != nil {
		set, ok, err := out.resultSet(ctx, n.Procedure.Params)
		if err != nil {
			return nil, err
		}
		if ok {
			s.procResults.sets = append(s.procResults.sets, set)
		}
	}
	if last != nil {
		n.SetSchema(lastSchema)
		return gsql.RowsToRowIter(last.rawRows...), nil
	}
	n.SetSchema(types.OkResultSchema)
	return gsql.RowsToRowIter(gsql.Row{types.NewOkResult(0)}), nil
}

// outParams collects the values a prepared CALL's OUT and INOUT
// parameters end with, by argument position, for the client.
type outParams struct {
	vals  []any
	types []gsql.Type
	set   []bool
}

// setter is the storedproc.Arg.Set of argument i.
func (o *outParams) setter(i int) func(*gsql.Context, any, gsql.Type) error {
	return func(_ *gsql.Context, v any, t gsql.Type) error {
		o.vals[i], o.types[i], o.set[i] = v, t, true
		return nil
	}
}

// resultSet returns the result set of the parameters collected: one
// column per OUT or INOUT parameter, named after it and of its type, in
// the parameters' order, and one row of their values; ok is false when
// the procedure has none.
func (o *outParams) resultSet(ctx *gsql.Context, params []plan.ProcedureParam) (procResultSet, bool, error) {
	var sch gsql.Schema
	var row gsql.Row
	for i, p := range params {
		if !o.set[i] {
			continue
		}
		typ := o.types[i]
		if typ == nil {
			typ = p.Type
		}
		v, _, err := typ.Convert(ctx, o.vals[i])
		if err != nil {
			return procResultSet{}, false, err
		}
		sch = append(sch, &gsql.Column{Name: p.Name, Type: typ, Nullable: true})
		row = append(row, v)
	}
	if len(sch) == 0 {
		return procResultSet{}, false, nil
	}
	set, err := newProcResultSet(ctx, sch, []gsql.Row{row})
	set.outParams = true
	return set, true, err
}

// procedureText returns the CREATE PROCEDURE text of procedure name of
// database db (storedproc.Env.Procedure).
func (b *compatBuilder) procedureText(ctx *gsql.Context, db, name string) (string, bool, error) {
	d, err := b.a.Catalog.Database(ctx, db)
	if err != nil {
		return "", false, err
	}
	return procedureTextIn(ctx, d, name)
}

// procedureTextIn returns the CREATE PROCEDURE text, as written, of
// procedure name of database d.
func procedureTextIn(ctx *gsql.Context, d gsql.Database, name string) (string, bool, error) {
	spd, ok := d.(gsql.StoredProcedureDatabase)
	if !ok {
		return "", false, nil
	}
	p, ok, err := spd.GetStoredProcedure(ctx, name)
	if err != nil || !ok {
		return "", ok, err
	}
	return storedproc.Restore(p.CreateStatement), true, nil
}

// showCreateProcedure answers SHOW CREATE PROCEDURE with the text as
// written (GMS shows the text it was given, storedproc.GMSText).
func showCreateProcedure(ctx *gsql.Context, n *plan.ShowCreateProcedure, row gsql.Row) (gsql.RowIter, error) {
	if name, ok := isFunctionName(n.ProcedureName); ok {
		return showCreateFunction(ctx, n, name)
	}
	rows, err := compat.DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		if len(r) > 2 {
			if text, ok := r[2].(string); ok {
				rows[i] = append(gsql.Row{}, r...)
				rows[i][2] = storedproc.Restore(text)
			}
		}
	}
	return gsql.RowsToRowIter(rows...), nil
}

// callArgumentsError returns GMS's error for a CALL with the wrong number
// of arguments as MySQL's 1318, naming the procedure in database db (the
// current one: GMS's message names none).
func callArgumentsError(db string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if se, ok := err.(*mysql.SQLError); ok {
		msg = se.Message
	}
	m := callArgumentsMessage.FindStringSubmatch(msg)
	if m == nil {
		return err
	}
	return mysql.NewSQLError(1318, "42000", "Incorrect number of arguments for PROCEDURE %s.%s; expected %s, got %s", db, m[1], m[2], m[3])
}

// callArgumentsMessage is GMS's message of ErrCallIncorrectParameterCount.
var callArgumentsMessage = regexp.MustCompile("^`(.+)` expected `(\\d+)` parameters but got `(\\d+)`$")

// procSQLError returns err as the MySQL error the handler would send for
// it (storedproc.Env.Error): a procedure's handlers are chosen by it.
func procSQLError(ctx *gsql.Context, err error) *mysql.SQLError {
	err = toSQLError(err)
	if s, ok := ctx.Session.(*Session); ok {
		err = foreignkey.Error(s.provider.catalogs.Cached(), s.GetCurrentDatabase(), err)
	}
	se := gsql.CastSQLError(err)
	if fe, ok := finishSQLError(se).(*mysql.SQLError); ok {
		return fe
	}
	return se
}
