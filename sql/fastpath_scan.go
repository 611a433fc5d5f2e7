package sql

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/fastpath"
	"github.com/percdb/percdb/sql/planrules"
	"github.com/percdb/percdb/sql/statistics"
	"github.com/percdb/percdb/txn"
)

// Running a range SELECT on the fast path (fastpath.Scan; its shape and
// plan, and why its answers are GMS's, are described in package
// fastpath's scanshape.go and scanplan.go). GMS's path for such a
// statement analyses it (or, prepared, binds a cached plan and derives its
// ranges again), pushes its filter or aggregates down (sql/copr.go),
// builds its iterators and pulls the rows through them one by one as
// interface values. Here the statement's values are bound into a
// coprocessor program over the primary key's range, the program runs
// behind the kv.Client contract as GMS's pushdown does (in process over
// the transaction's own writes when it has some in the range), and the
// rows it returns are sorted, made distinct, cut by OFFSET and LIMIT and
// converted in one pass.
//
// What the fast path does not reproduce goes to GMS before anything is
// sent: a value that is not an integer in its column's range
// (ReasonValue), more rows than maxScanRows to sort or make distinct
// (ReasonSize; longer results that need neither are streamed,
// fastpath_scanstream.go), an error (ReasonError, GMS reports it). A
// SELECT writes nothing, so GMS can run it again from the start.

// maxScanRows bounds the rows a range SELECT on the fast path keeps
// (read for a sort or DISTINCT, or for one batch of a streamed result):
// a larger sort or DISTINCT is GMS's, whose buffers the query's memory
// bound counts.
const maxScanRows = copr.DefaultPageRows

// maxExactInDouble is the largest magnitude of an integer that a double
// holds exactly: GMS compares integers of mixed signedness as doubles,
// which is exact up to it.
const maxExactInDouble = 1 << 53

// scanAggType is MySQL's type of SUM (avg false) or AVG over a column of
// type arg, as percdb's GMS path types it (compat.MySQLAggregate).
func scanAggType(avg bool, arg gsql.Type) (gsql.Type, bool) {
	gf := expression.NewGetField(0, arg, "x", true)
	var agg gsql.Aggregation = aggregation.NewSum(gf)
	if avg {
		agg = aggregation.NewAvg(gf)
	}
	_, typ, ok := compat.MySQLAggregate(agg)
	return typ, ok
}

// runScan runs a range SELECT in the session's transaction, or in
// autocommit mode in a read-only one of its own, ended before the answer
// is sent (its status flags say no transaction is open): at the latest
// state under the cached catalog when the schema guard allows it
// (runScanLatest), else as GMS does, at a start_ts from the oracle with
// the catalog read at it.
func (r *fastRun) runScan() fastOutcome {
	s := r.s
	// The result's values are cut from one buffer, returned once sent.
	buf := gsql.ByteBufPool.Get().(*gsql.ByteBuffer)
	defer func() {
		buf.Reset()
		gsql.ByteBufPool.Put(buf)
	}()
	if r.explicit() {
		if s.forUpdate != r.shape.ForUpdate {
			// The handler's lexical test and the parser disagree:
			// GMS's path does what the handler says.
			return fallThrough(fastpath.ReasonSession)
		}
		t, reason, ok := r.transaction()
		if !ok {
			return fallThrough(reason)
		}
		res, out := r.scan(t, buf)
		if !out.handled {
			return out
		}
		return r.answer(res, out.err)
	}
	if s.GetTransaction() != nil {
		return fallThrough(fastpath.ReasonSession)
	}
	if out, ok := r.runScanLatest(buf); ok {
		return out
	}
	ddls, guarded := r.fp.schema.Begin()
	tx, err := s.StartTransaction(r.ctx, gsql.ReadWrite)
	if err != nil {
		return fallThrough(fastpath.ReasonError)
	}
	t := tx.(*Transaction)
	s.SetTransaction(t)
	res, out := r.scan(t, buf)
	// A read: nothing to commit.
	_ = t.rollback(r.ctx)
	s.SetTransaction(nil)
	if guarded && t.cat != nil && t.cat == s.provider.catalogs.Cached() {
		// The schema version read at the snapshot is the cached
		// catalog's: later autocommit reads may trust it
		// (runScanLatest), as after a point read's check.
		r.fp.schema.Verify(ddls)
	}
	if !out.handled {
		return out
	}
	return r.answer(res, out.err)
}

// runScanLatest runs an autocommit range SELECT as the point reads run:
// under the cached catalog, which the SchemaGuard vouches for, without
// reading the schema version; and, when its read is one request to the
// store, at the latest committed state without a start_ts
// (txn.Store.BeginLatest: one request at kv.MaxTS when it serves the
// whole read and meets no lock; otherwise txn takes a start_ts and reads
// at it). Other reads (an index and then its rows) take a start_ts. ok
// is false when the catalog is not vouched for, or when the read turned
// out to need more than one request after it had used its one
// (txn.ErrLatestSpent), or failed, or its result was too long to hold:
// nothing was sent, and the caller runs it as before.
func (r *fastRun) runScanLatest(buf *gsql.ByteBuffer) (fastOutcome, bool) {
	s := r.s
	ddls, ok := r.fp.schema.Begin()
	if !ok || !r.fp.schema.Trusted(ddls) {
		return fastOutcome{}, false
	}
	cat := s.provider.catalogs.Cached()
	if cat == nil {
		return fastOutcome{}, false
	}
	pl, _, ok := r.planFor(cat)
	if !ok || pl.Scan == nil || !s.provider.cacheCurrentFor(pl.Meta.Def) {
		return fastOutcome{}, false
	}
	begin := s.provider.store.Begin
	if oneRequestScan(pl) {
		begin = s.provider.store.BeginLatest
	}
	k, err := begin(r.ctx)
	if err != nil {
		return fastOutcome{}, false
	}
	tx, err := s.StartTransaction(r.ctx, gsql.ReadWrite)
	if err != nil {
		_ = k.Rollback(r.ctx)
		return fastOutcome{}, false
	}
	t := tx.(*Transaction)
	t.cat, t.kv = cat, k
	s.SetTransaction(t)
	res, out := r.scanHeld(t, buf)
	_ = t.rollback(r.ctx)
	s.SetTransaction(nil)
	switch {
	case !out.handled && (out.reason == fastpath.ReasonError || out.reason == fastpath.ReasonSize):
		return fastOutcome{}, false
	case !r.fp.schema.Unchanged(ddls):
		// A DDL committed while the rows were read: GMS's path reads
		// them again under the new catalog.
		return fallThrough(fastpath.ReasonLearning), true
	case !out.handled:
		return out, true
	}
	if k.ReadLatest() {
		// Read without a timestamp: GMS's path would have fetched one.
		r.fp.avoided.Add(1)
	}
	return r.answer(res, out.err), true
}

// oneRequestScan reports whether a range SELECT planned as pl reads with
// one request to the store when its range lies in one region: the rows
// by primary key, or the entries of an index that holds every column the
// statement reads (a covering read, covering.go: ORDER BY k DESC LIMIT
// 10 of SELECT id, k, MIN(k)); each aggregate of an Ends plan is a read
// of its own. A lookup that reads the index and then the rows makes two
// requests. Statements whose values make more (several ranges read one
// after another, a first page of NULLs under MIN) find out at run time
// (txn.ErrLatestSpent).
//
// A covering read at the latest state is a snapshot for the reason a
// read of rows is (txn/latest.go): the answer is made of what one
// request read from one consistent view of one region's store, and an
// entry of a transaction still committing is under its lock, which sends
// the read to a start_ts.
func oneRequestScan(pl *fastPlan) bool {
	sp := pl.Scan
	if sp == nil || sp.Ends && len(sp.Out) != 1 {
		return false
	}
	return sp.Index == nil || coveredScan(pl)
}

// coveredScan reports whether a lookup through the plan's index takes
// every column its program reads from the index's entries
// (scanBinder.lookupOptions, copr.LookupOptions.Convert): integer columns
// that the entries hold exactly.
func coveredScan(pl *fastPlan) bool {
	sp := pl.Scan
	if sp.Index == nil || sp.Index.Exec == nil || sp.Index.Prefixed || pl.Meta.Exec == nil {
		return false
	}
	sch := pl.Meta.Schema.Schema
	for _, ord := range sp.Reads {
		if ord < 0 || ord >= len(sch) || integerOf(sch[ord].Type) == nil {
			return false
		}
	}
	return pl.Meta.Exec.Covers(sp.Index.Exec, sp.Reads)
}

// scan computes the result of a range SELECT in t, its values in buf;
// handled is false, with the reason, when it goes to GMS.
func (r *fastRun) scan(t *Transaction, buf *gsql.ByteBuffer) (*sqltypes.Result, fastOutcome) {
	return r.scanWith(t, buf, false)
}

// scanHeld is scan for a read that may yet be refused (a latest
// transaction's): no rows are sent before the read ends, a result
// longer than maxScanRows goes back with ReasonSize.
func (r *fastRun) scanHeld(t *Transaction, buf *gsql.ByteBuffer) (*sqltypes.Result, fastOutcome) {
	return r.scanWith(t, buf, true)
}

// scanWith is scan, holding the rows back when hold is set.
func (r *fastRun) scanWith(t *Transaction, buf *gsql.ByteBuffer, hold bool) (*sqltypes.Result, fastOutcome) {
	s, ctx := r.s, r.ctx
	cat, err := t.catalog(ctx)
	if err != nil {
		return nil, fallThrough(fastpath.ReasonError)
	}
	k, err := t.txn(ctx)
	if err != nil {
		return nil, fallThrough(fastpath.ReasonError)
	}
	pl, reason, ok := r.planFor(cat)
	if !ok {
		return nil, fallThrough(reason)
	}
	fields := pl.FieldsText.Load()
	if r.binary {
		fields = pl.FieldsBinary.Load()
	}
	if fields == nil || fields.Charset != r.vars.charsetResults || !fields.Matches(r.shape) {
		return nil, fastOutcome{reason: fastpath.ReasonLearning, learn: pl}
	}
	st := &scanStream{r: r, fields: fields.Fields, buf: buf, hold: hold}
	if r.shape.ForUpdate && r.explicit() {
		// In autocommit mode FOR UPDATE locks nothing, in GMS's path
		// too.
		st.lock = t
	}
	rows, examined, reason, ok := r.scanRows(pl, k, st)
	if st.lockErr != nil {
		return nil, handled(st.lockErr)
	}
	if !ok {
		if st.started {
			// Rows were sent: GMS cannot answer it any more.
			return nil, handled(errScanStream)
		}
		return nil, fallThrough(reason)
	}
	res := &sqltypes.Result{Fields: fields.Fields, RowsAffected: uint64(len(rows))}
	res.Rows = make([][]sqltypes.Value, 0, len(rows))
	for _, row := range rows {
		vals, err := server.RowToSQL(ctx, pl.Schema, row, nil, buf)
		if err != nil {
			return nil, fallThrough(fastpath.ReasonError)
		}
		res.Rows = append(res.Rows, vals)
	}
	s.rowsExamined.Add(uint64(examined))
	if pl.Scan.Whole {
		// GMS's path reads the whole key (from one end), which it
		// reports as a full scan.
		markFullScan(ctx)
	}
	gsql.IncrementStatusVariable(ctx, "Com_select", 1)
	ctx.SetLastQueryInfoInt(gsql.RowCount, -1)
	ctx.SetLastQueryInfoInt(gsql.FoundRows, st.sent+int64(len(rows)))
	return res, fastOutcome{handled: true}
}

// errScanStream ends a streamed range SELECT that failed after it sent
// rows.
var errScanStream = errorString("range SELECT failed while its rows were being sent")

// scanRows computes the result rows of the plan's range SELECT with the
// statement's values, reading through k, and how many rows the store
// examined. A result that needs no sort, DISTINCT or aggregate may be
// longer than maxScanRows: its rows are sent through st in batches, and
// those returned are the last.
func (r *fastRun) scanRows(pl *fastPlan, k *txn.Txn, st *scanStream) ([]gsql.Row, int64, fastpath.Reason, bool) {
	sp, sc := pl.Scan, r.shape.Scan
	offset, limit, ok := r.limits(sc)
	if !ok {
		return nil, 0, fastpath.ReasonValue, false
	}
	b := &scanBinder{r: r, pl: pl}
	st.b, st.skip, st.left = b, offset, limit
	ranges, filter, local, reason, ok := b.bind(sc)
	if !ok {
		return nil, 0, reason, false
	}
	prog, ok := b.program(filter)
	if !ok {
		return nil, 0, fastpath.ReasonTable, false
	}
	if limit == 0 {
		ranges = nil
	}
	if sp.Ends {
		if limit == 0 {
			return nil, 0, 0, true
		}
		row, examined, err := b.scanEnds(k, ranges, prog, filter)
		if err != nil {
			return nil, examined, fastpath.ReasonError, false
		}
		return cut([]gsql.Row{row}, offset, limit), examined, 0, true
	}
	// Rows in key order that need nothing but the SQL node's
	// conditions, OFFSET and LIMIT are streamed, and read only as far as
	// they are wanted.
	stream := !prog.Aggregate && len(sp.Order) == 0 && !sc.Distinct && !sp.LocalAgg
	if st.lock != nil && (prog.Aggregate || sc.Distinct || sp.LocalAgg || len(sp.Order) > 0 && sc.Limit != nil || len(local) > 0 || len(filter) > rowIns(sc)) {
		// Rows read that the answer would not hold would go unlocked:
		// the plan does not allow it (ScanPlan.LockCols), GMS's path
		// would lock them. A row IN's filter keeps the rows of its
		// tuples out of the product of their values, which are the
		// rows GMS reads (fastpath.readsReturned). A sort without a
		// LIMIT returns every row read: they are locked before it.
		return nil, 0, fastpath.ReasonTable, false
	}
	want := int64(-1)
	if stream && len(local) == 0 && limit > 0 {
		want = offset + limit
		if want < 0 {
			want = -1 // overflowed: no bound
		}
	}
	var (
		rows     []gsql.Row
		merger   *copr.Merger
		examined int64
	)
	if prog.Aggregate {
		var reserve func() error
		if sp.Grouped {
			groups := 0
			reserve = func() error {
				if groups++; groups > maxScanGroups {
					return errScanTooLarge
				}
				return nil
			}
		}
		merger = copr.NewMerger(prog, reserve)
	}
	read := int64(0) // rows read into earlier batches
	reads := ranges
	// Ranges of the rows (an IN list or an OR of ranges on a prefix of
	// the primary key) are one program over all of them, one
	// coprocessor request per region (copr.RunRanges); ranges of an
	// index are one lookup, whose batches of rows span the ranges
	// (copr.RunLookupRanges).
	together := !b.points && len(ranges) > 1 && copr.Disjoint(ranges)
	if b.points && len(ranges) > 0 || together {
		// One batched point read of every row's key, or one walk of
		// the ranges; one evaluation.
		reads = ranges[:1]
	} else if sp.Reverse {
		// Read backwards: the last range first.
		reads = slices.Clone(ranges)
		slices.Reverse(reads)
	}
	for _, kr := range reads {
		if st.done() {
			break
		}
		if want >= 0 {
			if read+int64(len(rows)) >= want {
				break
			}
			prog.Limit = want - read - int64(len(rows))
		}
		var out copr.Outputs
		var err error
		switch {
		case b.points:
			keys := make([][]byte, len(ranges))
			for i := range ranges {
				keys[i] = ranges[i].Start
			}
			if sp.Reverse {
				slices.Reverse(keys)
			}
			if st.lock != nil && len(prog.Filter) == 0 && (want < 0 || int64(len(keys)) <= want) {
				// Every point is read and returned (no filter drops a
				// row: the points of a row IN list are the product of
				// its columns' values, which the filter narrows to the
				// tuples named): lock those with rows first, and the
				// read takes the rows with their locks (lockScanned
				// then asks for nothing).
				if err := r.lockPointsReading(st.lock, k, keys); err != nil {
					st.lockErr = err
					return nil, examined, fastpath.ReasonError, false
				}
			}
			out, err = copr.RunPoints(r.ctx, k, pl.Meta.Exec, keys, prog)
		case sp.Reverse && sp.Index != nil:
			rs := ranges
			if !together {
				rs = []executor.KeyRange{kr}
			}
			out, err = copr.RunLookupWith(r.ctx, k, pl.Meta.Exec, sp.Index.Exec, rs, prog, b.lookupOptions(true))
		case sp.Reverse:
			rs := ranges
			if !together {
				rs = []executor.KeyRange{kr}
			}
			out, err = copr.RunReverse(r.ctx, k, pl.Meta.Exec, rs, prog)
		case together && sp.Index != nil:
			out, err = copr.RunLookupWith(r.ctx, k, pl.Meta.Exec, sp.Index.Exec, ranges, prog, b.lookupOptions(false))
		case together:
			out, err = copr.RunRanges(r.ctx, k, pl.Meta.Exec, ranges, prog)
		case sp.Index != nil:
			out, err = copr.RunLookupWith(r.ctx, k, pl.Meta.Exec, sp.Index.Exec, []executor.KeyRange{kr}, prog, b.lookupOptions(false))
		default:
			locked := false
			if st.lock != nil {
				out, locked, err = r.lockRangeRead(st.lock, k, kr, prog, want-read-int64(len(rows)))
				if err != nil {
					st.lockErr = err
					return nil, examined, fastpath.ReasonError, false
				}
			}
			if !locked {
				out, _, err = copr.Run(r.ctx, k, pl.Meta.Exec, kr, prog)
			}
		}
		if err != nil {
			return nil, examined, fastpath.ReasonError, false
		}
		for err == nil {
			var data []byte
			if data, err = out.Next(r.ctx); err != nil {
				break
			}
			if merger != nil {
				err = merger.Add(data)
				continue
			}
			err = copr.DecodeRows(data, len(prog.Output), func(row []any) error {
				if len(rows) < maxScanRows {
					rows = append(rows, row)
					return nil
				}
				if !stream || st.lock != nil || st.hold {
					// A locking read locks its rows before it sends
					// any.
					return errScanTooLarge
				}
				read += int64(len(rows))
				batch, err := st.take(rows, local)
				if err == nil {
					err = st.flush(batch)
				}
				if err != nil {
					return err
				}
				// The batch was sent: its rows' places are free.
				rows = append(rows[:0], row)
				return nil
			})
			if err == nil && st.done() {
				err = io.EOF
			}
		}
		examined += out.Examined()
		out.Close()
		switch {
		case err == errScanTooLarge:
			return nil, examined, fastpath.ReasonSize, false
		case err != io.EOF:
			return nil, examined, fastpath.ReasonError, false
		}
	}
	if merger != nil {
		if limit == 0 {
			return nil, examined, 0, true
		}
		if sp.Grouped {
			groups, err := b.groups(merger)
			if err != nil {
				return nil, examined, fastpath.ReasonError, false
			}
			return cut(groups, offset, limit), examined, 0, true
		}
		row, err := b.aggregates(merger)
		if err != nil {
			return nil, examined, fastpath.ReasonError, false
		}
		rows = []gsql.Row{row}
	} else if stream {
		if st.lock != nil {
			if err := r.lockScanned(st.lock, k, pl, rows); err != nil {
				st.lockErr = err
				return nil, examined, fastpath.ReasonError, false
			}
		}
		// The last batch: what the earlier batches left of OFFSET and
		// LIMIT applies.
		var err error
		if rows, err = st.take(rows, local); err != nil {
			return nil, examined, fastpath.ReasonError, false
		}
		return rows, examined, 0, true
	} else {
		if st.lock != nil {
			// Every row read, in key order, before the sort: the
			// rows GMS's scan locks as it reads them.
			if err := r.lockScanned(st.lock, k, pl, rows); err != nil {
				st.lockErr = err
				return nil, examined, fastpath.ReasonError, false
			}
		}
		var err error
		if rows, err = b.keepLocal(rows, local); err != nil {
			return nil, examined, fastpath.ReasonError, false
		}
		if sp.LocalAgg {
			if limit == 0 {
				return nil, examined, 0, true
			}
			row, ok := fastpath.LocalAggregates(sp.Out, rows)
			if !ok {
				return nil, examined, fastpath.ReasonValue, false
			}
			rows = []gsql.Row{row}
		} else if rows, err = b.finish(rows, sc.Distinct); err != nil {
			return nil, examined, fastpath.ReasonError, false
		}
	}
	return cut(rows, offset, limit), examined, 0, true
}

// lockScanned locks, for SELECT ... FOR UPDATE in transaction t, the
// rows a range SELECT read (those OFFSET skips included), by the handles
// their primary key columns make, as GMS's scan locks each row it reads
// (table.go's rowIter). The plan has lock columns only where the rows
// read are the rows in the answer: every condition bounds the key, and
// the rows come in key order, so the read stopped at OFFSET + LIMIT, or
// the SQL node sorts them all and cuts none (no LIMIT). The
// error is the statement's (lockError: a newer commit runs the statement
// again at a later snapshot, as for GMS's).
func (r *fastRun) lockScanned(t *Transaction, k *txn.Txn, pl *fastPlan, rows []gsql.Row) error {
	sp := pl.Scan
	if len(rows) == 0 {
		return nil
	}
	if len(sp.LockCols) == 0 {
		return errorString("range SELECT ... FOR UPDATE planned without its key columns")
	}
	handles := make([]tablecodec.Handle, len(rows))
	full := make([]any, len(pl.Meta.Schema.Schema))
	for i, row := range rows {
		for j, ord := range sp.PrimaryOrds {
			full[ord] = row[sp.LockCols[j]]
		}
		h, err := pl.Meta.Exec.HandleOf(full)
		if err != nil {
			return fmt.Errorf("range SELECT ... FOR UPDATE: key of row %d: %w", i, err)
		}
		handles[i] = h
	}
	return lockRows(r.ctx, t, k, pl.Meta.Exec, handles...)
}

// lockRangeRead reads the rows of kr for a range SELECT ... FOR UPDATE
// in transaction t with their locks (lockRangeReading) and evaluates prog
// over them. The plan locks only where the rows read are the rows in the
// answer (ScanPlan.LockCols), so the read stops where the answer does:
// at want rows (want < 0: no bound, then one past maxScanRows, which the
// caller refuses). locked is false, with nothing read, where
// lockRangeReading declines: the caller reads and locks as before.
func (r *fastRun) lockRangeRead(t *Transaction, k *txn.Txn, kr executor.KeyRange, prog *copr.Program, want int64) (out copr.Outputs, locked bool, err error) {
	limit := int64(maxScanRows + 1)
	if want >= 0 && want < limit {
		limit = want
	}
	if limit == 0 {
		return nil, false, nil
	}
	pairs, ok, err := r.lockRangeReading(t, k, kr, int(limit))
	if err != nil || !ok {
		return nil, false, err
	}
	out, err = copr.RunPairs(pairs, prog)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// lockRangeReading reads up to limit rows of kr (0: no limit) in
// transaction t with their locks, in one request per region where a read
// and a lock were two (txn.Txn.LockRange), for a statement that locks
// every row it reads in the range: a range SELECT ... FOR UPDATE, an
// UPDATE or DELETE by a key prefix. It serves pessimistic REPEATABLE
// READ transactions (lockBeforeRead) whose lock wait is the default (a
// session's NOWAIT or SKIP LOCKED goes the way it went); ok is false,
// with nothing read, for the others and where the transaction cannot
// (writes of its own in kr). The error is the statement's (lockError).
func (r *fastRun) lockRangeReading(t *Transaction, k *txn.Txn, kr executor.KeyRange, limit int) (pairs []kv.KvPair, ok bool, err error) {
	if !lockBeforeRead(t, k) || r.s.lockWait != compat.LockWaitDefault {
		return nil, false, nil
	}
	ts, err := k.SnapshotTS(r.ctx)
	if err != nil {
		return nil, false, t.lockError(r.ctx, err)
	}
	t.noteLocking(r.ctx)
	pairs, ok, err = k.LockRange(r.ctx, ts, kr.Start, kr.End, limit)
	if err != nil {
		return nil, false, t.lockError(r.ctx, err)
	}
	return pairs, ok, nil
}

// lockPointsReading locks the row keys of a point SELECT ... FOR UPDATE
// (an IN list of whole primary keys) in transaction t before they are
// read, those that have rows only, with their values
// (LockKeysReadingIfExist): the read that follows takes them from the
// transaction, one request where a read and a lock were two. An absent
// row's key is not locked, as when the rows were read first (percdb has
// no gap locks). Only in pessimistic REPEATABLE READ transactions
// (lockBeforeRead) whose lock wait is the default; the others, and a
// transaction that cannot lock so, read, then lock the rows found
// (lockScanned).
func (r *fastRun) lockPointsReading(t *Transaction, k *txn.Txn, keys [][]byte) error {
	if !lockBeforeRead(t, k) || r.s.lockWait != compat.LockWaitDefault {
		return nil
	}
	ts, err := k.SnapshotTS(r.ctx)
	if err == nil {
		t.noteLocking(r.ctx)
		_, err = k.LockKeysReadingIfExist(r.ctx, ts, keys...)
	}
	return t.lockError(r.ctx, err)
}

// errScanTooLarge stops a read past maxScanRows.
var errScanTooLarge = errorString("range SELECT past the fast path's row bound")

// errorString is an error of a constant message.
type errorString string

func (e errorString) Error() string { return string(e) }

// cut applies OFFSET and LIMIT (limit < 0: none).
func cut(rows []gsql.Row, offset, limit int64) []gsql.Row {
	if offset >= int64(len(rows)) {
		return rows[:0]
	}
	rows = rows[offset:]
	if limit >= 0 && limit < int64(len(rows)) {
		rows = rows[:limit]
	}
	return rows
}

// limits returns the statement's OFFSET (0 when absent) and LIMIT (-1
// when absent). ok is false for a value that is not a non-negative
// integer (GMS reports what it makes of it).
func (r *fastRun) limits(sc *fastpath.ScanShape) (offset, limit int64, ok bool) {
	count := func(v *fastpath.Value, none int64) (int64, bool) {
		if v == nil {
			return none, true
		}
		val, ok := r.value(*v)
		if !ok {
			return 0, false
		}
		switch n := val.(type) {
		case int64:
			return n, n >= 0
		case uint64:
			return int64(min(n, math.MaxInt64)), true
		}
		return 0, false
	}
	if offset, ok = count(sc.Offset, 0); !ok {
		return 0, 0, false
	}
	limit, ok = count(sc.Limit, -1)
	return offset, limit, ok
}

// scanBinder binds one execution's values into a range SELECT's plan.
type scanBinder struct {
	r  *fastRun
	pl *fastPlan
	// points is set by bind when each range is one row's (an IN list
	// or row IN over the whole primary key): the rows are read with one
	// batched point read (copr.RunPoints).
	points bool
}

// lookupOptions returns the options of a lookup through the plan's
// index, backwards when reverse: its integer columns are taken from the
// index's entries where it holds all those the program reads, as GMS's
// covering read takes them (covering.go), without reading the rows.
func (b *scanBinder) lookupOptions(reverse bool) copr.LookupOptions {
	sch := b.pl.Meta.Schema.Schema
	return copr.LookupOptions{Reverse: reverse, Convert: func(off int) func(any) any {
		if off < 0 || off >= len(sch) {
			return nil
		}
		return integerOf(sch[off].Type)
	}}
}

// colType returns the type of program column c.
func (b *scanBinder) colType(c int) gsql.Type {
	return b.pl.Meta.Schema.Schema[b.pl.Scan.Reads[c]].Type
}

// bind returns the primary-key ranges the key conditions leave, in key
// order, the other conditions compiled for the coprocessor, and those
// the SQL node evaluates (fastpath_scanlocal.go).
func (b *scanBinder) bind(sc *fastpath.ScanShape) ([]executor.KeyRange, []copr.Expr, []gsql.Expression, fastpath.Reason, bool) {
	sp := b.pl.Scan
	if len(sc.Where) != len(sp.Where) {
		return nil, nil, nil, fastpath.ReasonShape, false
	}
	sch := b.pl.Meta.Schema.Schema
	keys := make([]keyBounds, len(sp.KeyOrds))
	ranged := 0 // the last key column a condition bounds
	for i, ord := range sp.KeyOrds {
		keys[i] = newKeyBounds(sch[ord].Type)
		keys[i].nullable = sp.Index != nil
	}
	var (
		filter []copr.Expr
		local  []gsql.Expression
	)
	for i := range sc.Where {
		c, pc := &sc.Where[i], &sp.Where[i]
		switch {
		case sp.KeyTerm[i] && keys[sp.KeyCol[i]].text:
			// A string pinned by =: its collation key bounds the
			// range, and the SQL node evaluates it over the rows.
			k := sp.KeyCol[i]
			ranged = max(ranged, k)
			x, ok := b.local(c, pc)
			if !ok || !b.narrowText(&keys[k], c) {
				return nil, nil, nil, fastpath.ReasonValue, false
			}
			local = append(local, b.padSpaced(x))
		case sp.KeyTerm[i]:
			k := sp.KeyCol[i]
			ranged = max(ranged, k)
			if !b.narrow(&keys[k], c, sch[sp.KeyOrds[k]].Type) {
				return nil, nil, nil, fastpath.ReasonValue, false
			}
		case sp.Local[i]:
			x, ok := b.local(c, pc)
			if !ok {
				return nil, nil, nil, fastpath.ReasonValue, false
			}
			local = append(local, b.padSpaced(x))
		default:
			x, ok := b.cond(c, pc)
			if !ok {
				return nil, nil, nil, fastpath.ReasonValue, false
			}
			filter = append(filter, x)
		}
	}
	if sc.Limit == nil && b.wideIndexRead(keys[:ranged+1]) {
		// GMS scans the table instead (planrules.PreferTableScan).
		return nil, nil, nil, fastpath.ReasonSize, false
	}
	var ix *executor.Index
	if sp.Index != nil {
		ix = sp.Index.Exec
	}
	ranges, points, ok, err := scanKeyRanges(b.pl.Meta.Exec, ix, keys[:ranged+1])
	switch {
	case err != nil:
		return nil, nil, nil, fastpath.ReasonError, false
	case !ok:
		return nil, nil, nil, fastpath.ReasonSize, false
	}
	b.points = points
	return ranges, filter, local, 0, true
}

// maxScanRanges bounds the key ranges of one range SELECT (the product
// of its IN lists): more are GMS's.
const maxScanRanges = 1024

// keyBounds is the set of values the key conditions allow one column of
// the key: [lo, hi] (unbounded below or above unless loSet, hiSet), and
// when in is set only the points. The values of an unsigned column are
// those at most math.MaxInt64 (keyValue declines the others).
//
// A secondary index's column may hold NULLs (nullable), which sort first
// and which no condition that bounds the column lets through (bounded);
// a string column of one (text) is bounded only by = (textVal, its one
// point).
//
// An OR of conditions on the column (k < 100 OR k > 99900) allows the
// union of its branches' values: when orSet, only the values of the
// sorted, disjoint intervals ors are allowed besides.
type keyBounds struct {
	lo, hi       int64
	loSet, hiSet bool
	unsigned     bool
	points       []int64
	in, empty    bool
	nullable     bool
	bounded      bool
	text         bool
	textVal      string
	textSet      bool
	ors          []keyInterval
	orSet        bool
}

// keyInterval is the values [lo, hi] of a key column; loSet and hiSet say
// whether a condition bounds it below and above (an end no condition
// bounds is the type's: unbounded, and below, for a column that may hold
// NULLs, above NULL).
type keyInterval struct {
	lo, hi       int64
	loSet, hiSet bool
}

// fresh returns the bounds of the same column that no condition bounds
// yet: those of one branch of an OR.
func (k *keyBounds) fresh() keyBounds {
	f := keyBounds{lo: math.MinInt64, hi: math.MaxInt64, unsigned: k.unsigned, nullable: k.nullable}
	if f.unsigned {
		f.lo = 0
	}
	return f
}

// intervals returns the values k allows as sorted, disjoint intervals.
func (k *keyBounds) intervals() []keyInterval {
	if k.empty || k.lo > k.hi {
		return nil
	}
	if k.in {
		slices.Sort(k.points)
		out := make([]keyInterval, 0, len(k.points))
		for _, p := range k.points {
			if p >= k.lo && p <= k.hi && k.allows(p) {
				out = append(out, keyInterval{lo: p, hi: p, loSet: true, hiSet: true})
			}
		}
		return slices.CompactFunc(out, func(a, b keyInterval) bool { return a.lo == b.lo })
	}
	whole := []keyInterval{{lo: k.lo, hi: k.hi, loSet: k.loSet, hiSet: k.hiSet}}
	if !k.orSet {
		return whole
	}
	return intersectIntervals(whole, k.ors)
}

// allows reports whether the column's OR conditions allow value n.
func (k *keyBounds) allows(n int64) bool {
	if !k.orSet {
		return true
	}
	for _, iv := range k.ors {
		if n >= iv.lo && n <= iv.hi {
			return true
		}
	}
	return false
}

// restrict narrows k to the values of the sorted, disjoint intervals set
// (an OR's).
func (k *keyBounds) restrict(set []keyInterval) {
	k.bounded = true
	if k.orSet {
		set = intersectIntervals(k.ors, set)
	}
	k.ors, k.orSet = set, true
	if len(set) == 0 {
		k.empty = true
	}
}

// intersectIntervals returns the values both a and b (sorted, disjoint
// intervals) hold, sorted and disjoint.
func intersectIntervals(a, b []keyInterval) []keyInterval {
	var out []keyInterval
	for _, x := range a {
		for _, y := range b {
			iv := keyInterval{lo: max(x.lo, y.lo), hi: min(x.hi, y.hi)}
			if iv.lo > iv.hi {
				continue
			}
			iv.loSet = x.loSet && x.lo == iv.lo || y.loSet && y.lo == iv.lo
			iv.hiSet = x.hiSet && x.hi == iv.hi || y.hiSet && y.hi == iv.hi
			out = append(out, iv)
		}
	}
	return out
}

// unionIntervals returns the values of any of sets as sorted, disjoint
// intervals, those that meet or touch merged (a range read twice would
// return its rows twice).
func unionIntervals(sets [][]keyInterval) []keyInterval {
	var all []keyInterval
	for _, s := range sets {
		all = append(all, s...)
	}
	slices.SortFunc(all, func(a, b keyInterval) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		// Of two that start at one value, the one no condition
		// bounds below first: the merged interval is as wide.
		switch {
		case !a.loSet && b.loSet:
			return -1
		case a.loSet && !b.loSet:
			return 1
		}
		return 0
	})
	var out []keyInterval
	for _, iv := range all {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if iv.lo <= last.hi || last.hi != math.MaxInt64 && iv.lo == last.hi+1 {
				switch {
				case iv.hi > last.hi:
					last.hi, last.hiSet = iv.hi, iv.hiSet
				case iv.hi == last.hi:
					last.hiSet = last.hiSet && iv.hiSet
				}
				continue
			}
		}
		out = append(out, iv)
	}
	return out
}

// newKeyBounds returns the bounds of a key column of type typ that no
// condition bounds yet.
func newKeyBounds(typ gsql.Type) keyBounds {
	k := keyBounds{lo: math.MinInt64, hi: math.MaxInt64, unsigned: types.IsUnsigned(typ), text: types.IsTextOnly(typ)}
	if k.unsigned {
		k.lo = 0
	}
	return k
}

// lower returns the lower bound of the column's range after the points
// prefix: its lowest value, or, of a column that may hold NULLs, above
// NULL when a condition bounds it.
func (k *keyBounds) lower(prefix []any) executor.Bound {
	switch {
	case k.loSet:
		return executor.Bound{Values: append(slices.Clip(prefix), k.value(k.lo)), Inclusive: true}
	case k.nullable && k.bounded:
		return executor.Bound{Values: append(slices.Clip(prefix), nil), Inclusive: false}
	}
	return executor.Bound{Values: prefix, Inclusive: true}
}

// value returns n as the column's key value.
func (k *keyBounds) value(n int64) any {
	if k.unsigned {
		return uint64(n)
	}
	return n
}

// values returns the points the column is pinned to, in key order, and
// false when it is not pinned (a range).
func (k *keyBounds) values() ([]any, bool) {
	switch {
	case k.empty || k.lo > k.hi:
		return nil, true
	case k.text:
		return []any{k.textVal}, true
	case k.in:
		slices.Sort(k.points)
		var out []any
		for i, p := range k.points {
			if p >= k.lo && p <= k.hi && (i == 0 || p != k.points[i-1]) && k.allows(p) {
				out = append(out, k.value(p))
			}
		}
		return out, true
	case k.orSet:
		ivs := k.intervals()
		switch {
		case len(ivs) == 0:
			return nil, true
		case len(ivs) == 1 && ivs[0].loSet && ivs[0].hiSet && ivs[0].lo == ivs[0].hi:
			return []any{k.value(ivs[0].lo)}, true
		}
	case k.loSet && k.hiSet && k.lo == k.hi:
		return []any{k.value(k.lo)}, true
	}
	return nil, false
}

// scanKeyRanges returns the key ranges of t's rows that cols allow, in key
// order: the product of the points of the leading columns, each with the
// last column's range or points. points reports that each range is one
// row's: cols pin every column of the primary key (ix nil), so that a
// range's Start is the row's key and the range holds no other. ok is
// false past maxScanRanges.
func scanKeyRanges(t *executor.Table, ix *executor.Index, cols []keyBounds) (out []executor.KeyRange, points, ok bool, err error) {
	pinned, ok, err := eachKeyBounds(cols, func(_ int, lo, hi executor.Bound) error {
		var r executor.KeyRange
		var err error
		if ix != nil {
			r, err = t.IndexRange(ix, lo, hi)
		} else {
			r, err = t.HandleRange(lo, hi)
		}
		out = append(out, r)
		return err
	})
	if err != nil || !ok {
		return nil, false, ok, err
	}
	whole := len(t.PrimaryKey)
	if t.HandleKind == executor.HandleInt {
		whole = 1
	}
	return out, pinned && ix == nil && len(cols) == whole, true, nil
}

// eachKeyBounds calls each with the bounds of every key range cols allow,
// in key order (scanKeyRanges), and with the number of leading columns
// the range pins (the bounds' values after them bound the next column).
// pinned reports that cols pin every column they hold (each range's
// bounds are one tuple); ok is false past maxScanRanges.
func eachKeyBounds(cols []keyBounds, each func(pinned int, lo, hi executor.Bound) error) (pinned, ok bool, err error) {
	prefixes := [][]any{nil}
	for i := range cols {
		k := &cols[i]
		points, isPinned := k.values()
		if !isPinned {
			if i != len(cols)-1 {
				return false, false, nil // resolveScan makes only the last column a range
			}
			ivs := k.intervals()
			if len(prefixes)*len(ivs) > maxScanRanges {
				return false, false, nil
			}
			for _, p := range prefixes {
				for _, iv := range ivs {
					kb := *k
					kb.lo, kb.hi, kb.loSet, kb.hiSet = iv.lo, iv.hi, iv.loSet, iv.hiSet
					lo := kb.lower(p)
					hi := executor.Bound{Values: p, Inclusive: true}
					if kb.hiSet {
						hi.Values = append(slices.Clip(p), kb.value(kb.hi))
					}
					if err := each(len(p), lo, hi); err != nil {
						return false, false, err
					}
				}
			}
			return false, true, nil
		}
		if len(prefixes)*len(points) > maxScanRanges {
			return false, false, nil
		}
		next := make([][]any, 0, len(prefixes)*len(points))
		for _, p := range prefixes {
			for _, v := range points {
				next = append(next, append(slices.Clip(p), v))
			}
		}
		prefixes = next
	}
	for _, p := range prefixes {
		b := executor.Bound{Values: p, Inclusive: true}
		if err := each(len(p), b, b); err != nil {
			return false, false, err
		}
	}
	return true, true, nil
}

// wideIndexRead reports whether the plan reads rows through a secondary
// index that does not cover them, and the table's statistics estimate
// that the ranges cols allow hold more than 1/IndexLookupRowCost of its
// rows: GMS's plan then scans the table (planrules.PreferTableScan),
// which costs less than a point read per row.
func (b *scanBinder) wideIndexRead(cols []keyBounds) bool {
	sp := b.pl.Scan
	if sp.Index == nil || coveredScan(b.pl) {
		return false
	}
	encode := func(v any) ([]byte, bool) {
		enc, err := tablecodec.EncodeKey(nil, v)
		return enc, err == nil
	}
	var krs []statistics.KeyRange
	bound := func(b executor.Bound, pinned int) (statistics.ColumnBound, bool) {
		if len(b.Values) <= pinned {
			return statistics.ColumnBound{}, true // unbounded
		}
		enc, ok := encode(b.Values[pinned])
		return statistics.ColumnBound{Value: enc, Inclusive: b.Inclusive}, ok
	}
	_, ok, err := eachKeyBounds(cols, func(pinned int, lo, hi executor.Bound) error {
		var kr statistics.KeyRange
		for _, v := range lo.Values[:pinned] {
			enc, ok := encode(v)
			if !ok {
				return errNoEstimate
			}
			kr.Points = append(kr.Points, enc)
		}
		if len(lo.Values) > pinned || len(hi.Values) > pinned {
			var okLo, okHi bool
			kr.Bounded = true
			kr.Lower, okLo = bound(lo, pinned)
			kr.Upper, okHi = bound(hi, pinned)
			if !okLo || !okHi {
				return errNoEstimate
			}
		}
		krs = append(krs, kr)
		return nil
	})
	if err != nil || !ok || len(krs) == 0 {
		return false
	}
	rows, total, ok := b.r.s.provider.keyRangeRows(b.r.ctx, b.pl.Meta, sp.Index, krs)
	return ok && planrules.WideRead(rows, total)
}

// errNoEstimate stops eachKeyBounds where a value has no key encoding.
var errNoEstimate = errors.New("no estimate")

// keyValue converts a value compared with the key: null for NULL, which
// no key equals; ok false for a value that is not an integer in the key
// type's range (or, of an unsigned column, above math.MaxInt64).
func (b *scanBinder) keyValue(v fastpath.Value, typ gsql.Type) (n int64, null, ok bool) {
	d, ok := b.datum(v, typ)
	switch {
	case !ok:
		return 0, false, false
	case d.Null:
		return 0, true, true
	case d.Unsigned:
		return int64(d.Uint), false, d.Uint <= math.MaxInt64
	}
	return d.Int, false, true
}

// narrowText pins the string column kr to the value of c (col = value):
// a second value not the same is left to GMS, which compares the two
// under the column's collation.
func (b *scanBinder) narrowText(kr *keyBounds, c *fastpath.Cond) bool {
	v := c.Ops[1].Val
	if !c.Ops[0].IsCol() {
		v = c.Ops[0].Val
	}
	val, ok := b.r.value(v)
	if !ok {
		return false
	}
	switch s := val.(type) {
	case nil:
		kr.empty = true
		return true
	case string:
		if kr.textSet && kr.textVal != s {
			return false
		}
		kr.textVal, kr.textSet = s, true
		return true
	}
	return false
}

// narrow narrows kr by the key condition c.
func (b *scanBinder) narrow(kr *keyBounds, c *fastpath.Cond, typ gsql.Type) bool {
	kr.bounded = true
	atLeast := func(v int64) { kr.lo, kr.loSet = max(kr.lo, v), true }
	atMost := func(v int64) { kr.hi, kr.hiSet = min(kr.hi, v), true }
	switch c.Op {
	case fastpath.CondCmp:
		op, v := c.Cmp, c.Ops[1].Val
		if !c.Ops[0].IsCol() {
			// value op key: key (op reversed) value.
			v = c.Ops[0].Val
			switch op {
			case fastpath.CmpLT:
				op = fastpath.CmpGT
			case fastpath.CmpLE:
				op = fastpath.CmpGE
			case fastpath.CmpGT:
				op = fastpath.CmpLT
			case fastpath.CmpGE:
				op = fastpath.CmpLE
			}
		}
		n, null, ok := b.keyValue(v, typ)
		if !ok {
			return false
		}
		if null {
			if op == fastpath.CmpNullEQ && kr.nullable {
				return false // NULL <=> NULL: GMS's
			}
			kr.empty = true
			return true
		}
		switch op {
		case fastpath.CmpEQ, fastpath.CmpNullEQ:
			atLeast(n)
			atMost(n)
		case fastpath.CmpLT:
			if n == math.MinInt64 || kr.unsigned && n == 0 {
				kr.empty = true
			} else {
				atMost(n - 1)
			}
		case fastpath.CmpLE:
			atMost(n)
		case fastpath.CmpGT:
			switch {
			case kr.unsigned && n == math.MaxInt64:
				return false // an unsigned key may be above it
			case n == math.MaxInt64:
				kr.empty = true
			default:
				atLeast(n + 1)
			}
		case fastpath.CmpGE:
			atLeast(n)
		default:
			return false
		}
		return true
	case fastpath.CondBetween:
		lo, null1, ok1 := b.keyValue(c.Ops[1].Val, typ)
		hi, null2, ok2 := b.keyValue(c.Ops[2].Val, typ)
		if !ok1 || !ok2 {
			return false
		}
		if null1 || null2 {
			kr.empty = true
			return true
		}
		atLeast(lo)
		atMost(hi)
		return true
	case fastpath.CondIn:
		var set []int64
		for _, o := range c.Ops[1:] {
			n, null, ok := b.keyValue(o.Val, typ)
			if !ok {
				return false
			}
			if !null {
				set = append(set, n)
			}
		}
		if kr.in {
			set = slices.DeleteFunc(set, func(n int64) bool { return !slices.Contains(kr.points, n) })
		}
		kr.points, kr.in = set, true
		if len(set) == 0 {
			kr.empty = true
		}
		return true
	case fastpath.CondAnd:
		// Under an OR (the WHERE clause's own ANDs are split): both
		// narrow the branch.
		return b.narrow(kr, &c.Args[0], typ) && b.narrow(kr, &c.Args[1], typ)
	case fastpath.CondOr:
		// The union of the branches' values, each narrowed from none.
		sets := make([][]keyInterval, len(c.Args))
		for i := range c.Args {
			branch := kr.fresh()
			if !b.narrow(&branch, &c.Args[i], typ) {
				return false
			}
			sets[i] = branch.intervals()
		}
		kr.restrict(unionIntervals(sets))
		return true
	}
	return false
}

// datum converts a value compared with a column of type typ: NULL, or an
// integer the column's type holds (GMS converts a parameter to the
// column's type; one out of its range is GMS's to compare).
func (b *scanBinder) datum(v fastpath.Value, typ gsql.Type) (*copr.Datum, bool) {
	val, ok := b.r.value(v)
	if !ok {
		return nil, false
	}
	switch n := val.(type) {
	case nil:
		return &copr.Datum{Null: true}, true
	case int64, uint64:
		_, inRange, err := typ.Convert(b.r.ctx, val)
		if err != nil || inRange != gsql.InRange {
			return nil, false
		}
		if u, ok := n.(uint64); ok {
			return &copr.Datum{Unsigned: true, Uint: u}, true
		}
		return &copr.Datum{Int: n.(int64)}, true
	}
	return nil, false
}

// operand is a compiled operand of a comparison with its integer kind.
type operand struct {
	e    copr.Expr
	kind fastpath.IntKind
	// small: a constant of magnitude below 2^53 (exact as a double), or
	// NULL.
	small bool
	null  bool
}

// operand compiles o, program column col (-1: a value); other is the
// type of the column a value is compared with.
func (b *scanBinder) operand(o *fastpath.Operand, col int, other gsql.Type) (operand, bool) {
	if col >= 0 {
		return operand{e: copr.Expr{Op: copr.OpColumn, Col: col}, kind: fastpath.IntKindOf(b.colType(col))}, true
	}
	if other == nil {
		return operand{}, false
	}
	d, ok := b.datum(o.Val, other)
	if !ok {
		return operand{}, false
	}
	x := operand{e: copr.Expr{Op: copr.OpConst, Const: d}, kind: fastpath.Signed64, null: d.Null}
	switch {
	case d.Null:
		x.small = true
	case d.Unsigned:
		x.kind, x.small = fastpath.Unsigned64, d.Uint < maxExactInDouble
	default:
		x.small = d.Int > -maxExactInDouble && d.Int < maxExactInDouble
	}
	return x, true
}

// signedKind reports whether k is a signed kind.
func signedKind(k fastpath.IntKind) bool { return k == fastpath.Signed || k == fastpath.Signed64 }

// withSign returns a small constant operand with the signedness of
// kind: its value is in the range of the column it is compared with, so
// it has one.
func withSign(x operand, kind fastpath.IntKind) operand {
	d := x.e.Const
	switch {
	case signedKind(kind) && d.Unsigned:
		x.e.Const = &copr.Datum{Int: int64(d.Uint)}
	case !signedKind(kind) && !d.Unsigned:
		x.e.Const = &copr.Datum{Unsigned: true, Uint: uint64(d.Int)}
	}
	x.kind = kind
	return x
}

// compare compiles a op b. Integers of one signedness compare exactly
// however GMS compares them; of mixed signedness GMS compares them as
// doubles, which agrees with the exact comparison when one side is a
// constant of magnitude below 2^53 (compared exactly, with the other
// side's signedness) or both are columns of at most 32 bits.
func compare(op copr.Op, a, b operand) (copr.Expr, bool) {
	narrow := func(x operand) bool { return x.kind == fastpath.Signed || x.kind == fastpath.Unsigned }
	kind := copr.CmpSigned
	switch {
	case a.null || b.null:
	case signedKind(a.kind) == signedKind(b.kind):
	case a.e.Op == copr.OpConst && a.small:
		a = withSign(a, b.kind)
	case b.e.Op == copr.OpConst && b.small:
		b = withSign(b, a.kind)
	case narrow(a) && narrow(b):
		kind = copr.CmpDouble
	default:
		return copr.Expr{}, false
	}
	if kind != copr.CmpDouble && !a.null && !b.null && !signedKind(a.kind) {
		kind = copr.CmpUnsigned
	}
	return copr.Expr{Op: op, Cmp: kind, Args: []copr.Expr{a.e, b.e}}, true
}

// cmpOps are the coprocessor's comparison operators.
var cmpOps = map[fastpath.CmpOp]copr.Op{
	fastpath.CmpEQ: copr.OpEQ, fastpath.CmpNE: copr.OpNE, fastpath.CmpLT: copr.OpLT, fastpath.CmpLE: copr.OpLE,
	fastpath.CmpGT: copr.OpGT, fastpath.CmpGE: copr.OpGE, fastpath.CmpNullEQ: copr.OpNullSafe,
}

// pair compiles operand i op operand j of c.
func (b *scanBinder) pair(op copr.Op, c *fastpath.Cond, pc *fastpath.PlanCond, i, j int) (copr.Expr, bool) {
	col := func(i int) int {
		if i < len(pc.Cols) {
			return pc.Cols[i]
		}
		return -1 // an IN list's value beyond the plan's shape's
	}
	ci, cj := col(i), col(j)
	var ti, tj gsql.Type
	if ci >= 0 {
		ti = b.colType(ci)
	}
	if cj >= 0 {
		tj = b.colType(cj)
	}
	x, ok1 := b.operand(&c.Ops[i], ci, tj)
	y, ok2 := b.operand(&c.Ops[j], cj, ti)
	if !ok1 || !ok2 {
		return copr.Expr{}, false
	}
	return compare(op, x, y)
}

// cond compiles a condition that is not a key condition.
func (b *scanBinder) cond(c *fastpath.Cond, pc *fastpath.PlanCond) (copr.Expr, bool) {
	variadic := c.Op == fastpath.CondIn || c.Op == fastpath.CondRowIn
	if len(c.Args) != len(pc.Args) || !variadic && len(c.Ops) != len(pc.Cols) {
		return copr.Expr{}, false
	}
	var x copr.Expr
	switch c.Op {
	case fastpath.CondRowIn:
		return b.rowIn(c, pc)
	case fastpath.CondCmp:
		return b.pair(cmpOps[c.Cmp], c, pc, 0, 1)
	case fastpath.CondBetween:
		ge, ok1 := b.pair(copr.OpGE, c, pc, 0, 1)
		le, ok2 := b.pair(copr.OpLE, c, pc, 0, 2)
		if !ok1 || !ok2 {
			return copr.Expr{}, false
		}
		x = copr.Expr{Op: copr.OpAnd, Args: []copr.Expr{ge, le}}
	case fastpath.CondIn:
		if pc.Cols[0] < 0 {
			return copr.Expr{}, false
		}
		for i := 1; i < len(c.Ops); i++ {
			eq, ok := b.pair(copr.OpEQ, c, pc, 0, i)
			if !ok {
				return copr.Expr{}, false
			}
			if i == 1 {
				x = eq
			} else {
				x = copr.Expr{Op: copr.OpOr, Args: []copr.Expr{x, eq}}
			}
		}
	case fastpath.CondIsNull:
		if pc.Cols[0] < 0 {
			return copr.Expr{}, false
		}
		op := copr.OpIsNull
		if c.Not {
			op = copr.OpIsNotNull
		}
		return copr.Expr{Op: op, Args: []copr.Expr{{Op: copr.OpColumn, Col: pc.Cols[0]}}}, true
	case fastpath.CondAnd, fastpath.CondOr, fastpath.CondNot:
		args := make([]copr.Expr, len(c.Args))
		for i := range c.Args {
			a, ok := b.cond(&c.Args[i], &pc.Args[i])
			if !ok {
				return copr.Expr{}, false
			}
			args[i] = a
		}
		op := copr.OpNot
		switch c.Op {
		case fastpath.CondAnd:
			op = copr.OpAnd
		case fastpath.CondOr:
			op = copr.OpOr
		}
		return copr.Expr{Op: op, Args: args}, true
	default:
		return copr.Expr{}, false
	}
	if c.Not {
		x = copr.Expr{Op: copr.OpNot, Args: []copr.Expr{x}}
	}
	return x, true
}

// rowIns counts the row IN lists of sc's WHERE clause.
func rowIns(sc *fastpath.ScanShape) int {
	n := 0
	for i := range sc.Where {
		if sc.Where[i].Op == fastpath.CondRowIn {
			n++
		}
	}
	return n
}

// rowIn compiles a CondRowIn: an OR over its tuples of the AND of each
// column's equality with the tuple's value, as MySQL compares rows (a
// NULL in a tuple makes its equality NULL, never true).
func (b *scanBinder) rowIn(c *fastpath.Cond, pc *fastpath.PlanCond) (copr.Expr, bool) {
	n := 0
	for n < len(c.Ops) && c.Ops[n].IsCol() {
		n++
	}
	if n < 2 || n > len(pc.Cols) || len(c.Ops) == n || (len(c.Ops)-n)%n != 0 {
		return copr.Expr{}, false
	}
	var x copr.Expr
	for t := n; t < len(c.Ops); t += n {
		var and copr.Expr
		for j := 0; j < n; j++ {
			if c.Ops[t+j].IsCol() {
				return copr.Expr{}, false
			}
			eq, ok := b.pair(copr.OpEQ, c, pc, j, t+j)
			if !ok {
				return copr.Expr{}, false
			}
			if j == 0 {
				and = eq
			} else {
				and = copr.Expr{Op: copr.OpAnd, Args: []copr.Expr{and, eq}}
			}
		}
		if t == n {
			x = and
		} else {
			x = copr.Expr{Op: copr.OpOr, Args: []copr.Expr{x, and}}
		}
	}
	return x, true
}

// scanProgram returns the coprocessor program of a range SELECT's plan
// without its filter and limit: the columns it reads (with their origin
// defaults, CHAR columns trimmed), and the kept columns of each row as its
// output, or the aggregates over the rows (AVG as a sum and a count).
func scanProgram(pl *fastPlan) (*copr.Program, bool) {
	sp := pl.Scan
	c := newCoprCompiler(pl.table)
	for _, ord := range sp.Reads {
		c.column(ord) // program column i reads sp.Reads[i]
	}
	p := c.prog
	if sp.Grouped || len(sp.Out) > 0 && sp.Out[0].Agg != fastpath.AggNone && !sp.LocalAgg {
		p.Aggregate = true
		if sp.Grouped {
			// Groups keyed by the column's value, which each keeps.
			p.GroupBy = []copr.Expr{{Op: copr.OpColumn, Col: sp.GroupCol}}
			p.Keep = []int{sp.GroupCol}
		}
		for _, o := range sp.Out {
			col := copr.Expr{Op: copr.OpColumn, Col: o.Col}
			switch o.Agg {
			case fastpath.AggCountStar:
				p.Aggs = append(p.Aggs, copr.Agg{Func: copr.AggCountStar})
			case fastpath.AggCount:
				p.Aggs = append(p.Aggs, copr.Agg{Func: copr.AggCount, Arg: &col})
			case fastpath.AggSum:
				p.Aggs = append(p.Aggs, copr.Agg{Func: copr.AggSum, Arg: &col})
			case fastpath.AggAvg:
				p.Aggs = append(p.Aggs, copr.Agg{Func: copr.AggSum, Arg: &col}, copr.Agg{Func: copr.AggCount, Arg: &col})
			case fastpath.AggMin:
				p.Aggs = append(p.Aggs, copr.Agg{Func: copr.AggMin, Arg: &col})
			case fastpath.AggMax:
				p.Aggs = append(p.Aggs, copr.Agg{Func: copr.AggMax, Arg: &col})
			}
		}
	} else {
		p.Output = make([]int, sp.Kept)
		for i := range p.Output {
			p.Output[i] = i
		}
	}
	return c.finish()
}

// program returns the plan's program with filter, for this execution.
func (b *scanBinder) program(filter []copr.Expr) (*copr.Program, bool) {
	p := *b.pl.scanProg
	p.Filter = filter
	return &p, p.Validate() == nil
}

// maxScanGroups bounds the groups of a GROUP BY on the fast path: more
// are GMS's, whose buffers the query's memory bound counts.
const maxScanGroups = 1 << 16

// aggregates returns the result row of the aggregates from the merged
// partials (aggregateRow).
func (b *scanBinder) aggregates(m *copr.Merger) (gsql.Row, error) {
	var row gsql.Row
	err := m.Each(func(keep, aggs []any) error {
		row = b.aggregateRow(keep, aggs)
		return nil
	})
	return row, err
}

// groups returns the result rows of a GROUP BY from the merged groups,
// sorted by the group's value (NULL first, as MySQL orders it), in
// descending order for ORDER BY g DESC: the groups of ranges read one
// after another (an IN list, or the regions of one range read in
// parallel) are merged in the order first met, which need not be it.
func (b *scanBinder) groups(m *copr.Merger) ([]gsql.Row, error) {
	sp := b.pl.Scan
	type group struct {
		val any
		row gsql.Row
	}
	gs := make([]group, 0, m.Len())
	err := m.Each(func(keep, aggs []any) error {
		gs = append(gs, group{val: keep[0], row: b.aggregateRow(keep, aggs)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var bad error
	slices.SortFunc(gs, func(x, y group) int {
		c, err := compareGroupValues(x.val, y.val)
		if err != nil {
			bad = err
		}
		if sp.GroupDesc {
			return -c
		}
		return c
	})
	if bad != nil {
		return nil, bad
	}
	rows := make([]gsql.Row, len(gs))
	for i := range gs {
		rows[i] = gs[i].row
	}
	return rows, nil
}

// compareGroupValues compares two values of an integer column, NULL
// first; the error is a value of another type (a defect: the plan groups
// integers only).
func compareGroupValues(x, y any) (int, error) {
	switch {
	case x == nil && y == nil:
		return 0, nil
	case x == nil:
		return -1, nil
	case y == nil:
		return 1, nil
	}
	if a, ok := copr.Signed(x); ok {
		if b, ok := copr.Signed(y); ok {
			return cmp.Compare(a, b), nil
		}
	}
	if a, ok := copr.Unsigned(x); ok {
		if b, ok := copr.Unsigned(y); ok {
			return cmp.Compare(a, b), nil
		}
	}
	return 0, fmt.Errorf("range SELECT: group values %T and %T are not integers of one kind", x, y)
}

// aggregateRow returns a result row from a group's kept value (the
// GROUP BY column's, for an Out of AggNone) and final aggregates: SUM as
// a DECIMAL, AVG its sum divided by its count at the result's scale,
// rounded half away from zero (decimalAggBuffer).
func (b *scanBinder) aggregateRow(keep, aggs []any) gsql.Row {
	row := make(gsql.Row, len(b.pl.Scan.Out))
	j := 0
	for i, o := range b.pl.Scan.Out {
		if o.Agg == fastpath.AggNone {
			row[i] = keep[0]
			continue
		}
		v := aggs[j]
		j++
		switch o.Agg {
		case fastpath.AggSum:
			v = asDecimal(v)
		case fastpath.AggAvg:
			n, _ := aggs[j].(int64)
			j++
			if n == 0 || v == nil {
				v = nil
				break
			}
			scale := int32(0)
			if d, ok := b.pl.Schema[i].Type.(gsql.DecimalType); ok {
				scale = int32(d.Scale())
			}
			v = asDecimal(v).(decimal.Decimal).DivRound(decimal.NewFromInt(n), scale)
		}
		row[i] = v
	}
	return row
}

// asDecimal returns a partial SUM (an int64, a decimal or NULL) as a
// DECIMAL.
func asDecimal(v any) any {
	if n, ok := v.(int64); ok {
		return decimal.NewFromInt(n)
	}
	return v
}

// finish sorts the kept rows by the ORDER BY (stably, as GMS's sort:
// rows that tie stay in key order), projects them onto the result's
// columns and, for DISTINCT, keeps the first of each set of rows GMS's
// DISTINCT calls equal (by compat.DistinctKey).
func (b *scanBinder) finish(rows []gsql.Row, distinct bool) ([]gsql.Row, error) {
	sp, ctx := b.pl.Scan, b.r.ctx
	if len(sp.Order) > 0 && len(rows) > 1 {
		fields := make(gsql.SortFields, len(sp.Order))
		for i, o := range sp.Order {
			order := gsql.Ascending
			if o.Desc {
				order = gsql.Descending
			}
			// A PAD SPACE string sorts without its trailing spaces
			// ('a' and 'a ' tie), as GMS's sort keys do.
			key := compat.PadSpaceSortKey(expression.NewGetField(o.Col, b.colType(o.Col), "", true))
			key2, _ := key.(gsql.Expression2) // the sorter reads Column
			fields[i] = gsql.SortField{Column: key, Column2: key2, Order: order, NullOrdering: gsql.NullsFirst}
		}
		s, ok := newCollatedSorter(ctx, fields, rows)
		if !ok {
			return nil, errScanSort
		}
		// GMS's sort is stable: rows that tie keep their key order.
		// Ordered by the keys and then by that order, the rows have
		// one order, the stable sort's, which a sort that is not
		// stable (fewer comparisons) finds as well.
		slices.SortFunc(s.perm, func(a, b int) int {
			if c := s.compareRows(a, b); c != 0 {
				return c
			}
			if sp.ReverseTies {
				// GMS read the key backwards (fastpath.ScanPlan).
				return cmp.Compare(b, a)
			}
			return cmp.Compare(a, b)
		})
		if s.err != nil {
			return nil, s.err
		}
		sorted := make([]gsql.Row, len(rows))
		for i, p := range s.perm {
			sorted[i] = rows[p]
		}
		rows = sorted
	}
	identity := len(sp.Out) == sp.Kept
	for i, o := range sp.Out {
		identity = identity && o.Col == i
	}
	if !identity {
		for i, row := range rows {
			out := make(gsql.Row, len(sp.Out))
			for j, o := range sp.Out {
				out[j] = row[o.Col]
			}
			rows[i] = out
		}
	}
	if !distinct {
		return rows, nil
	}
	key := compat.DistinctKey(b.pl.Schema)
	seen := make(map[uint64]struct{}, len(rows))
	kept := rows[:0]
	null := false // a row of one NULL was kept
	for _, row := range rows {
		if len(row) == 1 && row[0] == nil {
			if !null {
				null = true
				kept = append(kept, row)
			}
			continue
		}
		h, err := key(ctx, row)
		if err != nil {
			return nil, err
		}
		if _, dup := seen[h]; dup {
			continue
		}
		seen[h] = struct{}{}
		kept = append(kept, row)
	}
	return kept, nil
}

// errScanSort is a sort key that did not evaluate (a defect: the keys
// are columns).
var errScanSort = errorString("range SELECT: sort key did not evaluate")
