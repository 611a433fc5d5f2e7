package sql

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/wire"
)

// A CALL answers, in MySQL, with one result set per SELECT its procedure
// runs (nested CALLs' too), each ended with SERVER_MORE_RESULTS_EXISTS,
// then with its own OK packet, or with the error that ended the body
// after the result sets before it. vitess writes one result set per
// statement.
//
// So, for a CALL sent as a query (COM_QUERY), percdb's interpreter
// (procexec.go, sql/storedproc) keeps the rows of each SELECT of the body
// in the session (procSpool), and the handler (callResults) writes them,
// through percdb's connection (wire.Conn.WriteBeforeAnswer), before
// vitess's answer to the CALL, which becomes its OK packet or the error.
//
// A CALL run as a prepared statement (COM_STMT_EXECUTE) answers the same
// way, its result sets in the binary protocol; when the client announced
// CLIENT_PS_MULTI_RESULTS (MariaDB Connector/J, libmysqlclient), the
// values of the OUT and INOUT parameters given by placeholders follow as
// one more result set of one row, flagged SERVER_PS_OUT_PARAMS, before the
// OK packet (MySQL's send_out_parameters).

// Capability and status flags of the OUT parameters' result set, which
// vitess does not name.
const (
	// clientPSMultiResults is CLIENT_PS_MULTI_RESULTS: the client reads
	// a prepared CALL's OUT parameters.
	clientPSMultiResults = 1 << 18
	// serverPSOutParams is SERVER_PS_OUT_PARAMS: this result set holds
	// the OUT parameters.
	serverPSOutParams = 0x1000
)

// procSpool keeps the result sets of the SELECTs a CALL's procedures ran,
// in order.
type procSpool struct {
	sets []procResultSet
	// noMultiResults says the client did not announce
	// CLIENT_MULTI_RESULTS: a CALL of a procedure with a SELECT fails
	// (MySQL's 1312).
	noMultiResults bool
	// binary says the CALL is a prepared statement's execution.
	binary bool
	// outParams says the values of the OUT and INOUT parameters given
	// by placeholders are sent back (binary, and the client announced
	// CLIENT_PS_MULTI_RESULTS).
	outParams bool
	// args are the prepared CALL's arguments as written, one per
	// argument (procargs.go); nil for a CALL sent as a query, or when
	// they are not known.
	args []callArg
}

// procResultSet is one SELECT's result: its columns and rows as GMS
// sends them (and, for a prepared CALL's last one, its rows as GMS's).
type procResultSet struct {
	fields  []*querypb.Field
	rows    [][]sqltypes.Value
	rawRows []gsql.Row
	// outParams says the set holds a prepared CALL's OUT parameters
	// (flagged SERVER_PS_OUT_PARAMS).
	outParams bool
}

// newProcResultSet returns the result set of rows of schema sch.
func newProcResultSet(ctx *gsql.Context, sch gsql.Schema, rows []gsql.Row) (procResultSet, error) {
	set := procResultSet{fields: resultFields(ctx, sch)}
	for _, row := range rows {
		vals, err := server.RowToSQL(ctx, sch, row, nil, nil)
		if err != nil {
			return procResultSet{}, err
		}
		set.rows = append(set.rows, vals)
	}
	return set, nil
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
	q := lexical.TrimLeading(query, " \t\r\n")
	return len(q) > 4 && strings.EqualFold(q[:4], "call") && !lexical.IsWordByte(q[4])
}

// mayBeExecute reports whether query's first statement may be an SQL
// EXECUTE (a cheap test before it is parsed).
func mayBeExecute(query string) bool {
	return lexical.LeadingWordIs(query, "execute")
}

// executeOfCall returns, when query's first statement is an SQL EXECUTE
// of a statement s prepared as a CALL, what each argument of that CALL
// was (procargs.go).
func (h *handler) executeOfCall(s *Session, query string) ([]callArg, bool) {
	if h.engine == nil {
		return nil, false
	}
	return executeOfCall(context.Background(), query, func(name string) (ast.Statement, bool) {
		return h.engine.PreparedDataCache.GetCachedStmt(s.ID(), name)
	})
}

// callResults prepares a COM_QUERY's or COM_STMT_EXECUTE's (binary)
// statement, query, when it is a CALL: the result sets of its procedures'
// SELECTs are kept (procexec.go) and written before the CALL's own answer
// (see the top of the file). It returns the callback the statement's
// results go to, and end, which the statement's error (or nil) goes
// through when it has run.
func (h *handler) callResults(c *mysql.Conn, query string, binary bool, cb mysql.ResultSpoolFn) (mysql.ResultSpoolFn, func(error) error) {
	pass := func(err error) error { return err }
	call := isCall(query)
	if !call && (binary || !mayBeExecute(query)) {
		return cb, pass
	}
	wc := wireConn(c.Conn)
	s := h.sessions.get(c.ConnectionID)
	if wc == nil || s == nil {
		return cb, pass
	}
	// A prepared CALL's arguments as written (procargs.go).
	var args []callArg
	switch {
	case call && binary:
		args = binaryCallArgs(context.Background(), query)
	case !call:
		var ok bool
		if args, ok = h.executeOfCall(s, query); !ok {
			return cb, pass
		}
	}
	caps := wc.ClientCapabilities()
	spool := &procSpool{noMultiResults: caps&mysql.CapabilityClientMultiResults == 0, binary: binary,
		outParams: binary && caps&clientPSMultiResults != 0, args: args}
	s.procResults = spool
	written, answered := false, false
	flush := func() error {
		s.procResults = nil
		if written || len(spool.sets) == 0 {
			return nil
		}
		written = true
		return h.writeProcResults(c, wc, spool.sets, binary)
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
// ended with SERVER_MORE_RESULTS_EXISTS (and the OUT parameters' with
// SERVER_PS_OUT_PARAMS too), in the binary protocol when binary says so.
func (h *handler) writeProcResults(c *mysql.Conn, wc *wire.Conn, sets []procResultSet, binary bool) error {
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
		encode := wire.TextResultSet
		if binary {
			zeroDatesEmpty(&sqltypes.Result{Fields: fields, Rows: rows})
			encode = wire.BinaryResultSet
		}
		setStatus := status
		if set.outParams {
			setStatus |= serverPSOutParams
		}
		p, err := encode(fields, rows, setStatus, deprecateEOF)
		if err != nil {
			return err
		}
		payloads = append(payloads, p...)
	}
	return wc.WriteBeforeAnswer(payloads)
}
