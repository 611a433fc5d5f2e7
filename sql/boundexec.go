package sql

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/sql/plancache"
)

// Running a cached plan in the connection's goroutine. GMS's handler runs
// every plan (ComExecuteBound, as any query) through four goroutines of an
// errgroup made for the statement: one reads the rows and passes them one
// by one over a channel to a second, which converts and batches them under
// a timer reset per row, a third polls the socket and a fourth closes the
// iterator. For a 100-row range read of sysbench's oltp_read_only that
// machinery cost about a tenth of the server's CPU: the fresh goroutines'
// stacks grow to the depth of the read (runtime.newstack, copystack 4-7%
// of the CPU), a channel select per row (selectgo 4%), the scheduler's
// handoffs between them. A plan from the plan cache runs here instead, one
// goroutine, with the answer GMS's handler would give:
//
//   - the same iterators: GMS's engine builds them
//     (PrepQueryPlanForExecution: the transaction, the read-only check, the
//     committing and tracking iterators), in a context of the session's
//     with a statement ID of its own (the scan cache, scancache.go, tells
//     statements apart by it);
//   - the same result: each row converted by GMS's RowToSQL, sent in
//     batches of rowsBatch rows as GMS's handler does, the last batch
//     after the iterator is closed (an autocommit read's commit), under
//     the column definitions GMS sent for the plan's first execution,
//     which went through GMS's handler to learn them (plancache.ResultFields);
//   - the same errors (CastSQLError).
//
// GMS's process list does not list these executions; percdb's own
// (processlist.go) does, as for the fast path's statements, and KILL
// reaches them through the statement context (stmtctx.go), which is the
// context they run under.

// rowsBatch is the number of rows GMS's handler sends a result in
// (server.rowsBatch, unexported).
const rowsBatch = 128

// boundPids hands out the statement IDs of cached executions: far above
// the ones GMS's session manager counts up from 1, so that the two never
// meet while both run.
var boundPids atomic.Uint64

func init() { boundPids.Store(1 << 62) }

// learnFields returns callback wrapped so that the column definitions of
// the first result it passes are kept in *into (a copy: the callbacks
// downstream may change them).
func learnFields(into **plancache.ResultFields, callback func(*sqltypes.Result) error) func(*sqltypes.Result) error {
	return func(res *sqltypes.Result) error {
		if *into == nil && res != nil && res.Fields != nil {
			fields := make([]*querypb.Field, len(res.Fields))
			for i, f := range res.Fields {
				fields[i] = proto.Clone(f).(*querypb.Field)
			}
			*into = &plancache.ResultFields{Fields: fields}
		}
		return callback(res)
	}
}

// execBound runs the analysed plan n of a cached statement of session s
// and sends its result, with the column definitions bf, to callback.
func (h *handler) execBound(ctx context.Context, s *Session, query string, n gsql.Node, bf *plancache.ResultFields, callback func(*sqltypes.Result) error) error {
	qctx := gsql.NewContext(ctx, gsql.WithSession(s), gsql.WithQuery(query), gsql.WithMemoryManager(h.memory), gsql.WithPid(boundPids.Add(1)))
	schema, iter, _, err := h.engine.PrepQueryPlanForExecution(qctx, query, n, nil)
	if err != nil {
		return gsql.CastSQLError(err)
	}
	if len(schema) != len(bf.Fields) {
		// Not the plan whose result GMS described.
		_ = iter.Close(qctx)
		return errPlanFields
	}
	buf := gsql.ByteBufPool.Get().(*gsql.ByteBuffer)
	defer func() {
		buf.Reset()
		gsql.ByteBufPool.Put(buf)
	}()
	res := &sqltypes.Result{Fields: bf.Fields}
	sent := false
	for {
		if qctx.Err() != nil {
			// KILL QUERY, the client gone, max_execution_time: GMS's
			// handler checks between rows too.
			_ = iter.Close(qctx)
			return gsql.CastSQLError(context.Cause(qctx))
		}
		row, err := iter.Next(qctx)
		if err == io.EOF {
			break
		}
		if err == nil && len(res.Rows) == rowsBatch {
			err = callback(res)
			res, sent = &sqltypes.Result{Fields: bf.Fields}, true
		}
		var out []sqltypes.Value
		if err == nil {
			out, err = server.RowToSQL(qctx, schema, row, nil, buf)
		}
		if err != nil {
			_ = iter.Close(qctx)
			return gsql.CastSQLError(err)
		}
		res.Rows = append(res.Rows, out)
		res.RowsAffected++
	}
	if err := iter.Close(qctx); err != nil {
		return gsql.CastSQLError(err)
	}
	if sent && len(res.Rows) == 0 {
		return nil
	}
	return callback(res)
}

// errPlanFields is a cached plan whose result does not have the columns
// its first execution had: a defect, reported rather than sent wrongly.
var errPlanFields = mysql.NewSQLError(mysql.ERUnknownError, stateGeneral, "cached plan's result columns changed")
