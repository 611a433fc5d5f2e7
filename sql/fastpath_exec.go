package sql

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/fastpath"
	"github.com/percdb/percdb/txn"
)

// fastRun is one execution of a statement on the fast path.
type fastRun struct {
	fp    *fastPath
	s     *Session
	c     *mysql.Conn
	ctx   *gsql.Context
	vars  *fastVars
	entry *fastEntry
	shape *fastpath.Shape
	// args are a prepared statement's parameter values (nil for a text
	// statement, whose values are literals in shape).
	args   []any
	binary bool
	send   func(*sqltypes.Result) error
	// pending is a write's answer, sent once an autocommit write has
	// committed.
	pending *sqltypes.Result
}

// fastOutcome is what a fastRun did: handled (the client was answered, or
// err is the statement's error), or not, with the reason the statement
// goes to GMS and the plan whose result metadata GMS's answer teaches
// (learn, for fastpath.ReasonLearning).
type fastOutcome struct {
	handled bool
	err     error
	reason  fastpath.Reason
	learn   *fastPlan
}

func handled(err error) fastOutcome             { return fastOutcome{handled: true, err: err} }
func fallThrough(r fastpath.Reason) fastOutcome { return fastOutcome{reason: r} }

// run executes the statement.
func (r *fastRun) run() fastOutcome {
	if !r.vars.sqlModeOK {
		return fallThrough(fastpath.ReasonSession)
	}
	// GMS clears the previous statement's warnings before it runs one;
	// the fast path does it first, so that a conversion that warns is
	// seen (and the statement left to GMS, which clears them again).
	r.s.ClearWarnings()
	switch r.shape.Kind {
	case fastpath.Begin, fastpath.Commit, fastpath.Rollback:
		return r.runTransactionStatement()
	case fastpath.Select:
		return r.runSelect()
	case fastpath.Scan:
		return r.runScan()
	default:
		return r.runWrite()
	}
}

// answer ends a statement the fast path ran: it counts the question as
// GMS does and the hit, and answers the client with res, under the
// session's status flags (status.go), or returns err, the statement's
// error.
func (r *fastRun) answer(res *sqltypes.Result, err error) fastOutcome {
	r.fp.hits.Add(1)
	gsql.IncrementStatusVariable(r.ctx, "Questions", 1)
	if err != nil {
		return handled(gsql.CastSQLError(err))
	}
	setStatusFlags(r.c, r.s, r.vars.autocommit)
	return handled(r.send(res))
}

// explicit reports whether the statement runs inside a transaction that
// outlives it (after BEGIN, or with autocommit off).
func (r *fastRun) explicit() bool {
	return r.s.GetIgnoreAutoCommit() || !r.vars.autocommit
}

// runTransactionStatement runs BEGIN, COMMIT or ROLLBACK as GMS's
// StartTransaction, Commit and Rollback nodes do.
func (r *fastRun) runTransactionStatement() fastOutcome {
	s, ctx := r.s, r.ctx
	cur, _ := s.GetTransaction().(*Transaction)
	if s.GetTransaction() != nil && cur == nil {
		return fallThrough(fastpath.ReasonSession)
	}
	switch r.shape.Kind {
	case fastpath.Begin:
		if cur != nil {
			if err := s.CommitTransaction(ctx, cur); err != nil {
				return r.answer(nil, err)
			}
		}
		t, err := s.StartTransaction(ctx, gsql.ReadWrite)
		if err != nil {
			return r.answer(nil, err)
		}
		s.SetTransaction(t)
		s.SetIgnoreAutoCommit(true)
	case fastpath.Commit, fastpath.Rollback:
		if cur != nil {
			var err error
			if r.shape.Kind == fastpath.Commit {
				err = s.CommitTransaction(ctx, cur)
			} else {
				err = s.Rollback(ctx, cur)
			}
			if err != nil {
				return r.answer(nil, err)
			}
		}
		s.SetIgnoreAutoCommit(false)
		s.SetTransaction(nil)
	}
	// GMS counts these statements as selects of no rows.
	ctx.SetLastQueryInfoInt(gsql.RowCount, -1)
	ctx.SetLastQueryInfoInt(gsql.FoundRows, 0)
	return r.answer(&sqltypes.Result{}, nil)
}

// transaction returns the transaction an explicit statement runs in,
// starting it as GMS does when there is none (autocommit off, first
// statement).
func (r *fastRun) transaction() (*Transaction, fastpath.Reason, bool) {
	switch t := r.s.GetTransaction().(type) {
	case *Transaction:
		if t.catDirty || t.finished {
			return nil, fastpath.ReasonSession, false
		}
		return t, 0, true
	case nil:
		t, err := r.s.StartTransaction(r.ctx, gsql.ReadWrite)
		if err != nil {
			return nil, fastpath.ReasonError, false
		}
		r.s.SetTransaction(t)
		return t.(*Transaction), 0, true
	}
	return nil, fastpath.ReasonSession, false
}

// runSelect runs SELECT cols FROM t WHERE key = v / key IN (...). In
// autocommit mode it reads the latest committed row without a timestamp
// (txn.Store.PointGet): no oracle call, where GMS's path fetches a
// start_ts. Inside a transaction it reads at the transaction's snapshot,
// and FOR UPDATE locks the rows it found as GMS's path does (table.go's
// rowIter): pessimistic locks in a pessimistic transaction, which wait
// for their holders (a statement that opens its transaction goes to GMS,
// see Session.selectLocks). In autocommit mode FOR UPDATE locks nothing,
// in GMS's path too.
func (r *fastRun) runSelect() fastOutcome {
	s, ctx := r.s, r.ctx
	var (
		cat    *catalog.Catalog
		reader executor.Reader
		// autocommit reads without a timestamp, having seen ddls DDL
		// commits finished (fastpath.SchemaGuard); latest reads the schema
		// version too when the cached catalog is not yet verified.
		autocommit bool
		ddls       uint64
		latest     *versionedReader
	)
	var (
		t *Transaction
		k *txn.Txn
	)
	if r.explicit() {
		if s.forUpdate != r.shape.ForUpdate {
			// The handler's lexical test and the parser disagree:
			// GMS's path does what the handler says.
			return fallThrough(fastpath.ReasonSession)
		}
		var reason fastpath.Reason
		var ok bool
		t, reason, ok = r.transaction()
		if !ok {
			return fallThrough(reason)
		}
		var err error
		if cat, err = t.catalog(ctx); err != nil {
			return fallThrough(fastpath.ReasonError)
		}
		if k, err = t.txn(ctx); err != nil {
			return fallThrough(fastpath.ReasonError)
		}
		reader = k
	} else {
		if s.GetTransaction() != nil {
			return fallThrough(fastpath.ReasonSession)
		}
		autocommit = true
		var ok bool
		if ddls, ok = r.fp.schema.Begin(); !ok {
			return fallThrough(fastpath.ReasonLearning)
		}
		if cat = s.provider.catalogs.Cached(); cat == nil {
			return fallThrough(fastpath.ReasonLearning)
		}
	}
	pl, reason, ok := r.planFor(cat)
	if !ok {
		return fallThrough(reason)
	}
	if pl.Scan != nil {
		// No point read of this table: a range SELECT (Shape.Alt).
		r.entry.RanAsScan()
		if r.shape.Alt == nil {
			return fallThrough(fastpath.ReasonLearning)
		}
		r.shape = r.shape.Alt
		return r.runScan()
	}
	if autocommit {
		if r.fp.schema.Trusted(ddls) && s.provider.cacheCurrentFor(pl.Meta.Def) {
			reader = executor.LatestReader{Store: s.provider.store}
		} else {
			latest = &versionedReader{store: s.provider.store, version: cat.Version}
			reader = latest
		}
	}
	fields := pl.FieldsText.Load()
	if r.binary {
		fields = pl.FieldsBinary.Load()
	}
	if fields == nil || fields.Charset != r.vars.charsetResults || !fields.Matches(r.shape) {
		return fastOutcome{reason: fastpath.ReasonLearning, learn: pl}
	}
	var one [1]int64
	keys := one[:0]
	if pl.KeyArgs == nil {
		keyType := pl.Meta.Schema.Schema[pl.KeyOrd].Type
		for _, v := range r.shape.Keys {
			k, ok := r.intKey(keyType, v)
			if !ok {
				return fallThrough(fastpath.ReasonValue)
			}
			keys = append(keys, k)
		}
	}

	// One row, the common case, needs no allocation for the list.
	var oneRow [1][]any
	rows := oneRow[:0]
	// locked are the handles of the rows found, for FOR UPDATE.
	var oneHandle [1]tablecodec.Handle
	locked := oneHandle[:0]
	switch {
	case pl.Unique != nil:
		row, found, err := r.uniqueRow(pl, reader, keys[0])
		if err != nil {
			return fallThrough(fastpath.ReasonError)
		}
		if found {
			rows = append(rows, row)
		}
	case !r.shape.In:
		h, ok := r.keyHandle(pl, keys)
		if !ok {
			return fallThrough(fastpath.ReasonValue)
		}
		lockFirst := k != nil && r.shape.ForUpdate && lockBeforeRead(t, k)
		if lockFirst {
			// Locked before it is read, the row comes with its lock
			// (lockRowsReading): one request to the store, not two.
			if err := lockRowsReading(ctx, t, k, pl.Meta.Exec, h); err != nil {
				return r.answer(nil, err)
			}
		}
		dec := pl.Proj.Get()
		row, found, err := executor.GetRow(ctx, reader, pl.Meta.Exec, dec, h)
		pl.Proj.Put(dec)
		if err != nil {
			return fallThrough(fastpath.ReasonError)
		}
		if found {
			rows = append(rows, row)
			if !lockFirst {
				locked = append(locked, h)
			}
		}
	default:
		// GMS turns IN into sorted, merged ranges: the rows come in key
		// order, each once.
		slices.Sort(keys)
		keys = slices.Compact(keys)
		handles := make([]tablecodec.Handle, len(keys))
		for i, k := range keys {
			handles[i] = tablecodec.IntHandle(k)
		}
		lockedFirst := false
		if k != nil && r.shape.ForUpdate && lockBeforeRead(t, k) && r.s.lockWait == compat.LockWaitDefault && len(handles) > 0 {
			// The rows there are come with their locks, one request
			// for the whole list; an absent key is not locked.
			var err error
			if lockedFirst, err = lockRowsReadingIfExist(ctx, t, k, pl.Meta.Exec, handles...); err != nil {
				return r.answer(nil, err)
			}
		}
		dec := pl.Proj.Get()
		got, err := executor.BatchGetRows(ctx, reader, pl.Meta.Exec, dec, handles)
		pl.Proj.Put(dec)
		if err != nil {
			return fallThrough(fastpath.ReasonError)
		}
		for _, row := range got {
			rows = append(rows, row.Values)
			if !lockedFirst {
				locked = append(locked, row.Handle)
			}
		}
	}
	if k != nil && r.shape.ForUpdate && len(locked) > 0 {
		if err := lockRows(ctx, t, k, pl.Meta.Exec, locked...); err != nil {
			return r.answer(nil, err)
		}
	}

	switch {
	case latest != nil && latest.stale:
		// The schema changed since the cache was filled: GMS's path
		// loads the new catalog into the cache.
		return fallThrough(fastpath.ReasonLearning)
	case latest != nil:
		r.fp.schema.Verify(ddls)
	case autocommit && !r.fp.schema.Unchanged(ddls):
		// A DDL committed while the row was read: GMS's path reads it
		// again under the new catalog.
		return fallThrough(fastpath.ReasonLearning)
	}
	r.s.rowsExamined.Add(uint64(len(rows)))
	gsql.IncrementStatusVariable(ctx, "Com_select", 1)
	res := &sqltypes.Result{Fields: fields.Fields, RowsAffected: uint64(len(rows))}
	res.Rows = make([][]sqltypes.Value, 0, len(rows))
	for _, row := range rows {
		vals, err := server.RowToSQL(ctx, pl.Schema, row, nil, nil)
		if err != nil {
			return r.answer(nil, err)
		}
		res.Rows = append(res.Rows, vals)
	}
	ctx.SetLastQueryInfoInt(gsql.RowCount, -1)
	ctx.SetLastQueryInfoInt(gsql.FoundRows, int64(len(rows)))
	if !r.explicit() {
		r.fp.avoided.Add(1)
	}
	return r.answer(res, nil)
}

// uniqueRow reads the row whose unique column equals key. Read without a
// timestamp, the index entry and the row are two reads at two instants:
// the row is the answer only if it still holds key (then, the key being
// unique, it was the answer at the instant of the row's read); otherwise
// a writer moved the key in between and the lookup is retried in a
// snapshot.
func (r *fastRun) uniqueRow(pl *fastPlan, reader executor.Reader, key int64) ([]any, bool, error) {
	m := pl.Meta
	dec := pl.Full.Get()
	defer pl.Full.Put(dec)
	lookup := func(rd executor.Reader) ([]any, bool, bool, error) {
		row, found, err := executor.UniqueLookup(r.ctx, rd, m.Exec, pl.Unique.Exec, dec, []any{key})
		if err != nil || !found {
			return nil, false, true, err
		}
		cmp, err := pl.Unique.Types[0].Compare(r.ctx, row.Values[pl.KeyOrd], key)
		if err != nil {
			return nil, false, false, err
		}
		if cmp != 0 {
			return nil, false, false, nil
		}
		return project(row.Values, pl.Offsets), true, true, nil
	}
	row, found, settled, err := lookup(reader)
	if err != nil || settled {
		return row, found, err
	}
	k, err := r.s.provider.store.Begin(r.ctx)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = k.Rollback(r.ctx) }()
	row, found, _, err = lookup(k)
	return row, found, err
}

// project returns the values of row at offsets (all of row for nil).
func project(row []any, offsets []int) []any {
	if offsets == nil {
		return row
	}
	out := make([]any, len(offsets))
	for i, o := range offsets {
		out[i] = row[o]
	}
	return out
}

// intKey converts a key value for a column of type typ: only integers
// that fit the column, the one case where GMS's lookup is an exact match
// on the value.
func (r *fastRun) intKey(typ gsql.Type, v fastpath.Value) (int64, bool) {
	val, ok := r.value(v)
	if !ok {
		return 0, false
	}
	switch val.(type) {
	case int64, uint64:
	default:
		return 0, false
	}
	conv, inRange, err := typ.Convert(r.ctx, val)
	if err != nil || inRange != gsql.InRange || !sameInt(val, conv) {
		return 0, false
	}
	k, _, err := types.Int64.Convert(r.ctx, conv)
	if err != nil {
		return 0, false
	}
	return k.(int64), true
}

// sameInt reports whether the integers a and b (of any Go integer types)
// are equal. GMS v0.20.0's Convert to a narrower unsigned type truncates
// an unsigned value that does not fit (uint8(v) for TINYINT UNSIGNED) and
// calls it in range: a key of 2^63 became 0, and a prefix DELETE by it
// deleted the rows of key 0 (docs/compatibility.md).
func sameInt(a, b any) bool {
	as, aSigned := copr.Signed(a)
	bs, bSigned := copr.Signed(b)
	au, _ := copr.Unsigned(a)
	bu, _ := copr.Unsigned(b)
	switch {
	case aSigned && bSigned:
		return as == bs
	case aSigned:
		return as >= 0 && uint64(as) == bu
	case bSigned:
		return bs >= 0 && uint64(bs) == au
	}
	return au == bu
}

// value returns the value v stands for: a literal, or a parameter
// converted as GMS binds it. ok is false for values the fast path leaves
// to GMS.
func (r *fastRun) value(v fastpath.Value) (any, bool) {
	if v.Param < 0 {
		return v.Lit, v.OK
	}
	if v.Param >= len(r.args) {
		return nil, false
	}
	a := r.args[v.Param]
	return a, a != errValue
}

// errValue marks a parameter the fast path does not convert.
var errValue any = struct{}{}

// dbName returns the database the statement's table is in.
func (r *fastRun) dbName() string {
	if r.shape.DB != "" {
		return r.shape.DB
	}
	return r.s.GetCurrentDatabase()
}

// runWrite runs UPDATE, DELETE or INSERT through the table editor GMS
// uses (tableEditor), in the session's transaction, or in autocommit mode
// in a transaction of its own committed at the end, as GMS does. Every
// value is converted before anything is written, so that a value the fast
// path does not take sends the statement to GMS with nothing done.
func (r *fastRun) runWrite() fastOutcome {
	s, ctx := r.s, r.ctx
	var t *Transaction
	autocommit := !r.explicit()
	if autocommit {
		if s.GetTransaction() != nil {
			return fallThrough(fastpath.ReasonSession)
		}
		tx, err := s.StartTransaction(ctx, gsql.ReadWrite)
		if err != nil {
			return fallThrough(fastpath.ReasonError)
		}
		t = tx.(*Transaction)
		if t.readOnly {
			// transaction_read_only: GMS refuses the statement.
			return fallThrough(fastpath.ReasonSession)
		}
		s.SetTransaction(t)
	} else {
		var reason fastpath.Reason
		var ok bool
		if t, reason, ok = r.transaction(); !ok {
			return fallThrough(reason)
		}
		if t.readOnly {
			return fallThrough(fastpath.ReasonSession)
		}
	}
	out := r.write(t)
	if !out.handled && autocommit {
		// Nothing was written; GMS starts its own transaction.
		_ = t.rollback(ctx)
		s.SetTransaction(nil)
	}
	if !out.handled || out.err != nil {
		return out
	}
	if !autocommit {
		return r.answer(r.pending, nil)
	}
	if err := s.CommitTransaction(ctx, t); err != nil {
		return r.answer(nil, err)
	}
	s.SetTransaction(nil)
	return r.answer(r.pending, nil)
}

// write runs the write in t; on success the answer waits in r.pending
// (an autocommit statement commits first).
func (r *fastRun) write(t *Transaction) fastOutcome {
	ctx := r.ctx
	cat, err := t.catalog(ctx)
	if err != nil {
		return fallThrough(fastpath.ReasonError)
	}
	pl, reason, ok := r.planFor(cat)
	if !ok {
		return fallThrough(reason)
	}
	switch r.shape.Kind {
	case fastpath.Update:
		return r.update(t, pl)
	case fastpath.Delete:
		return r.delete(t, pl)
	case fastpath.Insert:
		return r.insert(pl)
	}
	return fallThrough(fastpath.ReasonShape)
}

// keyHandle returns the handle of the row the statement's WHERE pins: the
// integer key of keys[0], or the composite key of the values of
// shape.keys, each converted to its column's type. ok is false for a
// value the fast path does not convert exactly as GMS's lookup does.
func (r *fastRun) keyHandle(pl *fastPlan, keys []int64) (tablecodec.Handle, bool) {
	if pl.KeyArgs == nil {
		return tablecodec.IntHandle(keys[0]), true
	}
	vals, ok := r.keyColumnValues(pl, pl.KeyArgs)
	if !ok {
		return tablecodec.Handle{}, false
	}
	row := make([]any, len(pl.Meta.Schema.Schema))
	for i, ord := range pl.Meta.Primary.Ords {
		row[ord] = vals[i]
	}
	h, err := pl.Meta.Exec.HandleOf(row)
	return h, err == nil
}

// readForWrite reads the full row of the statement's key through t.
func (r *fastRun) readForWrite(t *Transaction, pl *fastPlan) (row []any, found bool, out fastOutcome) {
	var keys []int64
	if pl.KeyArgs == nil {
		key, ok := r.intKey(pl.Meta.Schema.Schema[pl.KeyOrd].Type, r.shape.Keys[0])
		if !ok {
			return nil, false, fallThrough(fastpath.ReasonValue)
		}
		keys = []int64{key}
	}
	h, ok := r.keyHandle(pl, keys)
	if !ok {
		return nil, false, fallThrough(fastpath.ReasonValue)
	}
	k, err := t.txn(r.ctx)
	if err != nil {
		return nil, false, fallThrough(fastpath.ReasonError)
	}
	if lockBeforeRead(t, k) && r.locksRowOnly(pl) {
		// The statement locks the row it writes and nothing else:
		// locked first, the row comes with its lock and GetRow below
		// reads it from the transaction, one request to the store where
		// a read and a lock (lockWritten, lockUnchanged) were two.
		if err := lockRowsReading(r.ctx, t, k, pl.Meta.Exec, h); err != nil {
			return nil, false, r.answer(nil, err)
		}
	}
	dec := pl.Full.Get()
	row, found, err = executor.GetRow(r.ctx, k, pl.Meta.Exec, dec, h)
	pl.Full.Put(dec)
	if err != nil {
		return nil, false, fallThrough(fastpath.ReasonError)
	}
	if found {
		r.s.rowsExamined.Add(1)
	}
	return row, found, fastOutcome{handled: true}
}

// locksRowOnly reports whether the statement's write of a row locks the
// row's key alone: an UPDATE that sets no column of a unique secondary
// index (the table editor writes index entries only when their values
// change) or a DELETE from a table without one. The entries of
// non-unique indexes are covered by the row's lock (lockWritten,
// txn.Txn.LockableSince), so their keys, which depend on the row read,
// need no lock of their own. Locking such a row before reading it
// (readForWrite) saves the read; a statement that also writes unique
// index entries locks them after it in a second request either way, and
// gains nothing from it.
func (r *fastRun) locksRowOnly(pl *fastPlan) bool {
	ixs := pl.Meta.Exec.Indexes
	switch r.shape.Kind {
	case fastpath.Delete:
		for _, ix := range ixs {
			if ix.Unique {
				return false
			}
		}
		return true
	case fastpath.Update:
		for _, set := range pl.Sets {
			for _, ix := range ixs {
				if !ix.Unique {
					continue
				}
				for _, c := range ix.Columns {
					if c.Offset == set.Ord {
						return false
					}
				}
			}
		}
		return true
	}
	return false
}

// update applies the assignments to the row, as GMS's UPDATE does:
// assignments in order, each seeing the ones before; the row written only
// if it changed (strings compared by their bytes, as in MySQL and in
// percdb's GMS path, compat_exec.go).
//
// Every row's new values are computed before the first is written, so
// that a value the fast path leaves to GMS sends the statement there with
// nothing written; the rows are then written in key order, as GMS's scan
// meets them, through one editor (which numbers them for its messages).
func (r *fastRun) update(t *Transaction, pl *fastPlan) fastOutcome {
	ctx := r.ctx
	sch := pl.Meta.Schema.Schema
	olds, out := r.rowsForWrite(t, pl)
	if !out.handled || out.err != nil {
		return out
	}
	matched, changed := len(olds), 0
	news := make([][]any, len(olds))
	for n, old := range olds {
		row := slices.Clone(old)
		for i, set := range pl.Sets {
			v, ok := r.value(r.shape.Sets[i].Val)
			if !ok {
				return fallThrough(fastpath.ReasonValue)
			}
			if set.SrcOrd >= 0 {
				if v, ok = r.add(sch[set.SrcOrd].Type, row[set.SrcOrd], v, set.Neg); !ok {
					return fallThrough(fastpath.ReasonValue)
				}
			}
			conv, ok := r.convert(sch[set.Ord], v)
			if !ok {
				return fallThrough(fastpath.ReasonValue)
			}
			row[set.Ord] = conv
		}
		equal, err := bytewiseEqual(ctx, old, row, sch)
		if err != nil {
			return fallThrough(fastpath.ReasonValue)
		}
		if !equal {
			news[n] = row
		}
	}
	if err := r.lockUnchanged(t, pl, olds, news); err != nil {
		return r.answer(nil, err)
	}
	ed := pl.table.editor()
	ed.batch.on = len(news) > 1
	for n, row := range news {
		if row == nil {
			continue
		}
		if err := ed.Update(ctx, olds[n], row); err != nil {
			return r.answer(nil, err)
		}
		changed++
	}
	if err := ed.flushLocks(ctx); err != nil {
		return r.answer(nil, err)
	}
	affected := changed
	if r.clientFoundRows() {
		affected = matched
	}
	ctx.SetLastQueryInfoInt(gsql.FoundRows, int64(matched))
	ctx.SetLastQueryInfoInt(gsql.RowCount, int64(affected))
	info := plan.UpdateInfo{Matched: matched, Updated: changed}
	r.pending = &sqltypes.Result{RowsAffected: uint64(affected), Info: info.String()}
	return fastOutcome{handled: true}
}

// clientFoundRows reports whether the client asked for the matched rather
// than the changed rows' count (CLIENT_FOUND_ROWS).
func (r *fastRun) clientFoundRows() bool {
	return r.ctx.Client().Capabilities&mysql.CapabilityClientFoundRows != 0
}

// add computes cur, the value of a column of type typ, plus (minus, neg)
// the assignment's value v, as GMS's arithmetic does; ok is false for
// the operands the fast path leaves to GMS. An integer column takes an
// integer (addInt). A DECIMAL column takes an integer (addToDecimal) or
// a string spelled as a decimal number ('12.34', as drivers send amounts
// held as strings), which GMS's own arithmetic computes: MySQL does
// DECIMAL plus string in DOUBLE, and the column's type rounds the result
// as it rounds GMS's.
func (r *fastRun) add(typ gsql.Type, cur, v any, neg bool) (any, bool) {
	if !types.IsDecimal(typ) {
		return addInt(cur, v, neg)
	}
	s, ok := v.(string)
	if !ok {
		return addToDecimal(cur, v, neg)
	}
	if !plainDecimal.MatchString(s) {
		return nil, false
	}
	op := "+"
	if neg {
		op = "-"
	}
	e := expression.NewArithmetic(expression.NewLiteral(cur, typ), expression.NewLiteral(s, types.CreateLongText(r.ctx.GetCollation())), op)
	warnings := r.s.WarningCount()
	res, err := e.Eval(r.ctx, nil)
	if err != nil || r.s.WarningCount() != warnings {
		return nil, false
	}
	return res, true
}

// addInt computes the integer column value cur plus (minus) v in int64,
// as GMS's arithmetic does for signed integers. ok is false when the
// operand is not an integer or the result overflows (GMS's answer then is
// its own). NULL plus anything is NULL.
func addInt(cur, v any, neg bool) (any, bool) {
	return addOperands(cur, v, func(cur any, b int64) (any, bool) {
		a, ok := asInt64(cur)
		if !ok {
			return nil, false
		}
		if neg {
			if b == math.MinInt64 {
				return nil, false
			}
			b = -b
		}
		sum := a + b
		if (b > 0 && sum < a) || (b < 0 && sum > a) {
			return nil, false
		}
		return sum, true
	})
}

// addToDecimal computes the DECIMAL column value cur plus (minus) the
// integer v, exactly, as GMS's arithmetic on a DECIMAL and an integer
// does (its result is a DECIMAL); the column's type then rounds it as it
// rounds GMS's. ok is false for an operand that is not an integer, whose
// arithmetic (a string's is DOUBLE in MySQL) the fast path leaves to GMS.
// NULL plus anything is NULL.
func addToDecimal(cur, v any, neg bool) (any, bool) {
	return addOperands(cur, v, func(cur any, b int64) (any, bool) {
		a, ok := cur.(decimal.Decimal)
		if !ok {
			return nil, false
		}
		if neg {
			return a.Sub(decimal.NewFromInt(b)), true
		}
		return a.Add(decimal.NewFromInt(b)), true
	})
}

// addOperands is the part of addInt and addToDecimal that does not depend
// on the column's type: NULL plus anything is NULL, and the operand must
// be an integer; add adds an integer to a value that is not NULL.
func addOperands(cur, v any, add func(cur any, b int64) (any, bool)) (any, bool) {
	if cur == nil || v == nil {
		return nil, v == nil || isInt(v)
	}
	b, ok := v.(int64)
	if !ok {
		return nil, false
	}
	return add(cur, b)
}

func isInt(v any) bool {
	_, ok := v.(int64)
	return ok
}

// asInt64 returns a signed integer column's value as int64.
func asInt64(v any) (int64, bool) { return copr.Signed(v) }

// convert converts v for column col as GMS converts a value it writes
// (the column type's Convert). ok is false when GMS would fail, warn or
// clamp, or when the conversion is one whose side effects the fast path
// does not reproduce (a string into a number column, NULL into NOT NULL).
// A string goes into a DECIMAL, DATETIME or DATE column only when it is
// the value written out exactly (exactTemporalOrDecimal), and an integer
// into a DATETIME or DATE never.
func (r *fastRun) convert(col *gsql.Column, v any) (any, bool) {
	if v == nil {
		return nil, col.Nullable
	}
	s, isStr := v.(string)
	switch {
	case isStr && !types.IsTextOnly(col.Type):
		if !exactTemporalOrDecimal(col.Type, s) {
			return nil, false
		}
	case !isStr && types.IsTime(col.Type):
		return nil, false
	}
	warnings := r.s.WarningCount()
	conv, inRange, err := col.Type.Convert(r.ctx, v)
	if err != nil || inRange != gsql.InRange || r.s.WarningCount() != warnings {
		return nil, false
	}
	if isInteger(v) && types.IsInteger(col.Type) && !sameInt(v, conv) {
		// GMS's Convert truncated a value too wide for the column
		// (sameInt); its own write fails with 1264.
		return nil, false
	}
	return conv, true
}

// isInteger reports whether v is of a Go integer type.
func isInteger(v any) bool {
	_, signed := copr.Signed(v)
	_, unsigned := copr.Unsigned(v)
	return signed || unsigned
}

// Strings that name a value exactly: a DECIMAL with no exponent, a DATETIME
// to the second, a DATE. Any other spelling ('1e2', '2024-1-5', ' 12',
// '2024-01-05 10:00') converts by rules (rounding, truncation warnings,
// MySQL's relaxed date formats) that the fast path leaves to GMS.
var (
	plainDecimal  = regexp.MustCompile(`^-?([0-9]+)(\.([0-9]+))?$`)
	plainDatetime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$`)
	plainDate     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// exactTemporalOrDecimal reports whether s is a value of typ (DECIMAL,
// DATETIME or DATE) spelled exactly, with no more fractional digits than
// a DECIMAL's scale and no more integer digits than it holds.
func exactTemporalOrDecimal(typ gsql.Type, s string) bool {
	if dt, ok := typ.(gsql.DecimalType); ok {
		m := plainDecimal.FindStringSubmatch(s)
		if m == nil {
			return false
		}
		whole := strings.TrimLeft(m[1], "0")
		return len(m[3]) <= int(dt.Scale()) && len(whole) <= int(dt.Precision()-dt.Scale())
	}
	if strings.HasPrefix(s, "0000") || strings.Contains(s, "-00") {
		// Zero dates and zero parts: sql_mode's NO_ZERO_DATE and
		// NO_ZERO_IN_DATE rules are GMS's.
		return false
	}
	switch typ.Type() {
	case sqltypes.Datetime:
		return plainDatetime.MatchString(s)
	case sqltypes.Date:
		return plainDate.MatchString(s)
	}
	return false
}

// delete removes the rows of the key (or key prefix), in key order.
func (r *fastRun) delete(t *Transaction, pl *fastPlan) fastOutcome {
	rows, out := r.rowsForWrite(t, pl)
	if !out.handled || out.err != nil {
		return out
	}
	ed := pl.table.editor()
	ed.batch.on = len(rows) > 1
	for _, row := range rows {
		if err := ed.Delete(r.ctx, row); err != nil {
			return r.answer(nil, err)
		}
	}
	if err := ed.flushLocks(r.ctx); err != nil {
		return r.answer(nil, err)
	}
	n := len(rows)
	r.ctx.SetLastQueryInfoInt(gsql.RowCount, int64(n))
	r.pending = &sqltypes.Result{RowsAffected: uint64(n)}
	return fastOutcome{handled: true}
}

// insert inserts the rows one by one as GMS's INSERT does: each row's
// AUTO_INCREMENT value is taken (GMS's own AutoIncrement expression over
// the table) just before the row is written, so that a failure part way
// leaves the allocator where GMS would. LAST_INSERT_ID() becomes the
// first generated value; the OK packet's insert ID is the first row's
// AUTO_INCREMENT value.
func (r *fastRun) insert(pl *fastPlan) fastOutcome {
	ctx := r.ctx
	sch := pl.Meta.Schema.Schema
	autoOrd := pl.Meta.AutoIncOrd
	rows := make([]gsql.Row, len(r.shape.Rows))
	firstGenerated := -1
	if autoOrd >= 0 && pl.Listed[autoOrd] < 0 {
		firstGenerated = 0
	}
	for i, vals := range r.shape.Rows {
		row := make(gsql.Row, len(sch))
		for ord, col := range sch {
			li := pl.Listed[ord]
			var v any
			switch {
			case li >= 0:
				var ok bool
				if v, ok = r.value(vals[li]); !ok {
					return fallThrough(fastpath.ReasonValue)
				}
			case col.Default != nil:
				var err error
				if v, err = col.Default.Eval(ctx, nil); err != nil {
					return fallThrough(fastpath.ReasonValue)
				}
			}
			if ord == autoOrd {
				// The given value, converted when the row is written.
				switch x := v.(type) {
				case nil:
					if firstGenerated < 0 {
						firstGenerated = i
					}
				case int64:
					if x == 0 && firstGenerated < 0 {
						firstGenerated = i
					}
				case uint64:
					if x == 0 && firstGenerated < 0 {
						firstGenerated = i
					}
				default:
					return fallThrough(fastpath.ReasonValue)
				}
				row[ord] = v
				continue
			}
			conv, ok := r.convert(col, v)
			if !ok {
				return fallThrough(fastpath.ReasonValue)
			}
			row[ord] = conv
		}
		rows[i] = row
	}

	ed := pl.table.editor()
	var insertID uint64
	for i, row := range rows {
		if autoOrd >= 0 {
			v, err := r.autoIncrement(pl, row[autoOrd])
			if err != nil {
				return r.answer(nil, gsql.NewWrappedInsertError(row, err))
			}
			row[autoOrd] = v
			if i == 0 {
				id, _, _ := types.Int64.Convert(ctx, v)
				if id, ok := id.(int64); ok {
					insertID = uint64(id)
				}
			}
		}
		if err := ed.Insert(ctx, row); err != nil {
			return r.answer(nil, gsql.NewWrappedInsertError(row, err))
		}
		if i == firstGenerated {
			id, _, _ := types.Int64.Convert(ctx, row[autoOrd])
			if id, ok := id.(int64); ok {
				ctx.SetLastQueryInfoInt(gsql.LastInsertId, id)
			}
		}
	}
	ctx.SetLastQueryInfoInt(gsql.RowCount, int64(len(rows)))
	r.pending = &sqltypes.Result{RowsAffected: uint64(len(rows)), InsertID: insertID}
	if len(rows) > 1 {
		// MySQL's info for rows of VALUES (compat_insertinfo.go).
		r.pending.Info = insertInfo{records: len(rows)}.String()
	}
	return fastOutcome{handled: true}
}

// autoIncrement evaluates GMS's AUTO_INCREMENT expression for the given
// value (NULL or 0 take the next value, a positive value moves the
// counter past it), then converts the result to the column's type as
// GMS's INSERT does.
func (r *fastRun) autoIncrement(pl *fastPlan, given any) (any, error) {
	col := pl.Meta.Schema.Schema[pl.Meta.AutoIncOrd]
	var lit *expression.Literal
	switch given.(type) {
	case nil:
		lit = expression.NewLiteral(nil, types.Null)
	case int64:
		lit = expression.NewLiteral(given, types.Int64)
	case uint64:
		lit = expression.NewLiteral(given, types.Uint64)
	default:
		return nil, fmt.Errorf("auto_increment value %v: unexpected type %T", given, given)
	}
	ai, err := expression.NewAutoIncrementForColumn(r.ctx, pl.table, col, lit)
	if err != nil {
		return nil, err
	}
	v, err := ai.Eval(r.ctx, nil)
	if err != nil || v == nil {
		return v, err
	}
	conv, inRange, err := col.Type.Convert(r.ctx, v)
	if err == nil && inRange != gsql.InRange {
		err = gsql.ErrValueOutOfRange.New(v, col.Type)
	}
	if err != nil {
		return nil, err
	}
	return conv, nil
}

// versionedReader reads the latest committed data without a timestamp,
// and with every read the schema version, in one request
// (txn.Store.BatchPointGet: one snapshot at kv.MaxTS when the keys share
// a region): the rows read are those of the schema version the plan was
// resolved with, or the reader is stale and what it read must not be
// used. This costs one request where a version read and a row read would
// cost two.
type versionedReader struct {
	store   *txn.Store
	version uint64
	stale   bool
}

// Get implements executor.Reader.
func (r *versionedReader) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	m, err := r.BatchGet(ctx, [][]byte{key})
	if err != nil {
		return nil, false, err
	}
	v, ok := m[string(key)]
	return v, ok, nil
}

// BatchGet implements executor.Reader.
func (r *versionedReader) BatchGet(ctx context.Context, keys [][]byte) (map[string][]byte, error) {
	m, err := r.store.BatchPointGet(ctx, append(keys[:len(keys):len(keys)], catalog.KeyVersion))
	if err != nil {
		return nil, err
	}
	var version uint64
	if raw, ok := m[string(catalog.KeyVersion)]; ok {
		if version, err = catalog.DecodeUint64("schema version", raw); err != nil {
			return nil, err
		}
		delete(m, string(catalog.KeyVersion))
	}
	if version != r.version {
		r.stale = true
		clear(m)
	}
	return m, nil
}
