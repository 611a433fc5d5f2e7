package sql

import (
	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// A range SELECT whose rows need nothing but the SQL node's conditions,
// OFFSET and LIMIT (no ORDER BY, DISTINCT or aggregate: rows in key
// order, as GMS sends them) is not bounded by maxScanRows: once it has
// read that many rows it sends what it has and goes on, a batch of at
// most maxScanRows rows at a time, as GMS streams its own result. After
// the first batch is sent the statement can no longer go to GMS: an
// error then ends the result as an error in GMS's stream does (the
// client sees the connection's 2013).

// scanStream sends a streamed range SELECT's rows batch by batch.
type scanStream struct {
	r      *fastRun
	b      *scanBinder
	fields []*querypb.Field
	buf    *gsql.ByteBuffer
	// skip is the OFFSET's rows still to skip, left the LIMIT's still
	// to send (-1: no LIMIT).
	skip, left int64
	// sent counts the rows sent; started is set once a batch went out.
	sent    int64
	started bool
	// lock is the transaction whose SELECT ... FOR UPDATE locks the
	// rows read before any is sent (nil: nothing locked); lockErr is
	// the statement's error when locking failed.
	lock    *Transaction
	lockErr error
	// hold keeps every row until the read ends (runScanLatest): a
	// longer result is refused, not streamed.
	hold bool
}

// done reports whether the LIMIT has been reached.
func (st *scanStream) done() bool { return st.left == 0 }

// take applies the SQL node's conditions, the projection, OFFSET and
// LIMIT to the next rows in key order.
func (st *scanStream) take(rows []gsql.Row, local []gsql.Expression) ([]gsql.Row, error) {
	rows, err := st.b.keepLocal(rows, local)
	if err != nil {
		return nil, err
	}
	if rows, err = st.b.finish(rows, false); err != nil {
		return nil, err
	}
	n := int64(len(rows))
	skip := min(st.skip, n)
	st.skip -= skip
	rows = rows[skip:]
	if st.left >= 0 && st.left < int64(len(rows)) {
		rows = rows[:st.left]
	}
	if st.left >= 0 {
		st.left -= int64(len(rows))
	}
	return rows, nil
}

// flush sends rows as one batch (the first with the column definitions).
func (st *scanStream) flush(rows []gsql.Row) error {
	if len(rows) == 0 {
		return nil
	}
	res := &sqltypes.Result{Fields: st.fields, Rows: make([][]sqltypes.Value, 0, len(rows))}
	for _, row := range rows {
		vals, err := server.RowToSQL(st.r.ctx, st.b.pl.Schema, row, nil, st.buf)
		if err != nil {
			return err
		}
		res.Rows = append(res.Rows, vals)
	}
	res.RowsAffected = uint64(len(rows))
	st.started = true
	st.sent += int64(len(rows))
	err := st.r.send(res)
	// The values were written to the connection: their bytes are free.
	st.buf.Reset()
	return err
}
