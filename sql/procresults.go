package sql

import (
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/procedures"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/wire"
)

// A CALL answers, in MySQL, with one result set per SELECT its procedure
// runs (nested CALLs' too), each ended with SERVER_MORE_RESULTS_EXISTS,
// then with its own OK packet, or with the error that ended the body
// after the result sets before it. GMS's interpreter (procedures.Call)
// keeps the rows of each SELECT and returns the last only, and vitess
// writes one result set per statement.
//
// So, for a CALL sent as a query (COM_QUERY):
//   - an analyzer rule gives each CALL node a statement runner of its
//     own (callRunner) that knows which statements of the body are its
//     SELECTs that return rows (not a SELECT ... INTO, nor the SELECTs
//     the interpreter makes of SET and IF);
//   - that runner runs such a SELECT, keeps its columns and rows in the
//     session (procSpool) and gives the interpreter no rows;
//   - the handler (callResults) writes the result sets kept, through
//     percdb's connection (wire.Conn.WriteBeforeAnswer), before vitess's
//     answer to the CALL, which becomes its OK packet (the interpreter's
//     last result set, now empty, is dropped) or the error.
//
// A CALL run as a prepared statement (COM_STMT_EXECUTE, the binary
// protocol) keeps GMS's answer: the last SELECT's rows.

// procSpool keeps the result sets of the SELECTs a CALL's procedures ran,
// in order.
type procSpool struct {
	sets []procResultSet
}

// procResultSet is one SELECT's result: its columns and rows as GMS
// sends them.
type procResultSet struct {
	fields []*querypb.Field
	rows   [][]sqltypes.Value
}

// callRunner runs the statements of one CALL's procedure body: those in
// results (the body's row-returning SELECTs, by their syntax trees, which
// the interpreter hands the runner as they are) have their rows kept in
// the session's procSpool, when the session has one.
type callRunner struct {
	inner   gsql.StatementRunner
	results map[*ast.Select]bool
}

// QueryWithBindings implements gsql.StatementRunner.
func (r *callRunner) QueryWithBindings(ctx *gsql.Context, query string, parsed ast.Statement, bindings map[string]ast.Expr, flags *gsql.QueryFlags) (gsql.Schema, gsql.RowIter, *gsql.QueryFlags, error) {
	sel, isSelect := parsed.(*ast.Select)
	s, _ := ctx.Session.(*Session)
	if !isSelect || !r.results[sel] || s == nil || s.procResults == nil {
		return r.inner.QueryWithBindings(ctx, query, parsed, bindings, flags)
	}
	sch, iter, flags, err := r.inner.QueryWithBindings(ctx, query, parsed, bindings, flags)
	if err != nil {
		return nil, nil, nil, err
	}
	set := procResultSet{fields: resultFields(ctx, sch)}
	for {
		row, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err == nil {
			var vals []sqltypes.Value
			if vals, err = server.RowToSQL(ctx, sch, row, nil, nil); err == nil {
				set.rows = append(set.rows, vals)
				continue
			}
		}
		_ = iter.Close(ctx)
		return nil, nil, nil, err
	}
	if err := iter.Close(ctx); err != nil {
		return nil, nil, nil, err
	}
	s.procResults.sets = append(s.procResults.sets, set)
	return sch, gsql.RowsToRowIter(), flags, nil
}

// callResultsRule gives every CALL node its callRunner (see the top of
// the file); it runs after GMS's interpreter rule, which gives them the
// engine.
func callResultsRule(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(node gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		call, ok := node.(*plan.Call)
		if !ok || call.Runner == nil {
			return node, transform.SameTree, nil
		}
		if _, done := call.Runner.(*callRunner); done {
			return node, transform.SameTree, nil
		}
		results := make(map[*ast.Select]bool)
		for _, op := range call.GetStatements() {
			if sel, ok := op.PrimaryData.(*ast.Select); ok && op.OpCode == procedures.OpCode_Select && sel.Into == nil {
				results[sel] = true
			}
		}
		if len(results) == 0 {
			return node, transform.SameTree, nil
		}
		return call.SetStatementRunner(ctx, &callRunner{inner: call.Runner, results: results}), transform.NewTree, nil
	})
}

// resultFields returns the column definitions of a result of schema sch,
// as GMS's handler makes them for a query's result.
func resultFields(ctx *gsql.Context, sch gsql.Schema) []*querypb.Field {
	results := ctx.GetCharacterSetResults()
	fields := make([]*querypb.Field, len(sch))
	for i, col := range sch {
		charset := uint32(gsql.Collation_Default.CharacterSet())
		if ct, ok := col.Type.(gsql.TypeWithCollation); ok {
			charset = uint32(ct.Collation().CharacterSet())
		}
		switch {
		case types.IsBinaryType(col.Type):
			charset = uint32(gsql.Collation_binary)
		case results != gsql.CharacterSet_Unspecified:
			charset = uint32(results)
		}
		var flags querypb.MySqlFlag
		if !col.Nullable {
			flags |= querypb.MySqlFlag_NOT_NULL_FLAG
		}
		if col.AutoIncrement {
			flags |= querypb.MySqlFlag_AUTO_INCREMENT_FLAG
		}
		if col.PrimaryKey {
			flags |= querypb.MySqlFlag_PRI_KEY_FLAG
		}
		if types.IsUnsigned(col.Type) {
			flags |= querypb.MySqlFlag_UNSIGNED_FLAG
		}
		f := &querypb.Field{Name: col.Name, OrgName: col.Name, Table: col.Source, OrgTable: col.Source,
			Database: col.DatabaseSource, Type: col.Type.Type(), Charset: charset,
			ColumnLength: col.Type.MaxTextResponseByteLength(ctx), Flags: uint32(flags)}
		switch t := col.Type.(type) {
		case gsql.DecimalType:
			f.Decimals = uint32(t.Scale())
		case gsql.DatetimeType:
			f.Decimals = uint32(t.Precision())
		}
		fields[i] = f
	}
	return fields
}

// isCall reports whether query's first statement is a CALL.
func isCall(query string) bool {
	q := trimLeading(query, " \t\r\n")
	return len(q) > 4 && strings.EqualFold(q[:4], "call") && !isWordByte(q[4])
}

// callResults prepares a COM_QUERY's statement, query, when it is a CALL:
// the result sets of its procedures' SELECTs are kept (callRunner) and
// written before the CALL's own answer (see the top of the file). It
// returns the callback the statement's results go to, and end, which the
// statement's error (or nil) goes through when it has run.
func (h *handler) callResults(c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (mysql.ResultSpoolFn, func(error) error) {
	pass := func(err error) error { return err }
	if !isCall(query) {
		return cb, pass
	}
	wc := wireConn(c.Conn)
	s := h.sessions.get(c.ConnectionID)
	if wc == nil || s == nil {
		return cb, pass
	}
	spool := &procSpool{}
	s.procResults = spool
	written, answered := false, false
	flush := func() error {
		s.procResults = nil
		if written || len(spool.sets) == 0 {
			return nil
		}
		written = true
		return h.writeProcResults(c, wc, spool.sets)
	}
	wrapped := func(res *sqltypes.Result, more bool) error {
		if len(spool.sets) == 0 && !written {
			s.procResults = nil
			return cb(res, more)
		}
		if err := flush(); err != nil {
			return err
		}
		if answered {
			return nil
		}
		answered = true
		if res != nil && len(res.Fields) > 0 {
			// The interpreter's last result set, emptied: its rows
			// went with the others.
			res = &sqltypes.Result{}
		}
		return cb(res, more)
	}
	end := func(err error) error {
		if ferr := flush(); err == nil {
			err = ferr
		}
		return err
	}
	return wrapped, end
}

// writeProcResults writes sets, the result sets of a CALL's SELECTs, as
// the start of its answer, each through the handler's result filters and
// ended with SERVER_MORE_RESULTS_EXISTS.
func (h *handler) writeProcResults(c *mysql.Conn, wc *wire.Conn, sets []procResultSet) error {
	h.setStatusFlags(c)
	status := c.StatusFlags | mysql.ServerMoreResultsExists
	deprecateEOF := c.Capabilities&mysql.CapabilityClientDeprecateEOF != 0
	var payloads [][]byte
	for _, set := range sets {
		var fields []*querypb.Field
		var rows [][]sqltypes.Value
		sink := func(res *sqltypes.Result, _ bool) error {
			if res != nil {
				if fields == nil {
					fields = res.Fields
				}
				rows = append(rows, res.Rows...)
			}
			return nil
		}
		res := &sqltypes.Result{Fields: set.fields, Rows: set.rows}
		if err := h.temporalFieldFilter(c, h.resultFilter(c, sink))(res, true); err != nil {
			return err
		}
		p, err := wire.TextResultSet(fields, rows, status, deprecateEOF)
		if err != nil {
			return err
		}
		payloads = append(payloads, p...)
	}
	return wc.WriteBeforeAnswer(payloads)
}
