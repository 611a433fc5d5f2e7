package sql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/observe"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/observeraction"
	"github.com/percdb/percdb/sql/schemalease"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn"
)

// Observers (package observe) watch columns of tables. A watch is part of
// the table's definition (TableDef.Observers), so that every node and
// every path that writes rows (GMS's, the fast path's, triggers', all
// through package executor's write operators) marks the rows it changes
// notified, in the writing transaction. Adding a watch is a schema change
// like any DDL: it publishes a new catalog version and waits for the
// writers of the older one, so a transaction that commits after Watch
// returns notifies.

// Watch records that observer watches columns (names; none: every
// column) of table ("db.table"): from its return on, every committed
// insert or delete of a row, and every update changing one of columns,
// sets the row's notify entry for observer. A second Watch of the same
// observer on the table replaces the first. It implements
// observe.Catalog.
func (s *Server) Watch(ctx context.Context, table, observer string, columns []string) error {
	return s.provider.watch(ctx, table, catalog.ObserverDef{Name: observer}, columns, false)
}

// Unwatch removes observer's watch on table ("db.table"), if any.
func (s *Server) Unwatch(ctx context.Context, table, observer string) error {
	return s.provider.watch(ctx, table, catalog.ObserverDef{Name: observer}, nil, true)
}

// TxnStore returns the node's transaction store, for observers running in
// the process (package observe).
func (s *Server) TxnStore() *txn.Store { return s.store }

// watch changes the watch on table of the observer o names (o's Action
// and owner, when set, are its built-in action). Errors are MySQL's
// (*mysql.SQLError): 1049, 1146 or 1054 for a database, table or column
// that does not exist (or a NEW.column of the action the table lacks),
// 1210 for an action on an observer whose other watches have none or the
// reverse.
func (p *DatabaseProvider) watch(ctx context.Context, table string, o catalog.ObserverDef, columns []string, remove bool) error {
	if err := p.changeWatch(ctx, table, o, columns, remove); err != nil {
		return gsql.CastSQLError(toSQLError(err))
	}
	if p.actions != nil {
		// The node's action runner starts or stops running the
		// observer now rather than at its next look.
		p.actions.kick()
	}
	return nil
}

// changeWatch is watch with the errors as they come.
func (p *DatabaseProvider) changeWatch(ctx context.Context, table string, watch catalog.ObserverDef, columns []string, remove bool) error {
	observer := watch.Name
	var action *observeraction.Action
	if watch.Action != "" {
		var err error
		if action, err = observeraction.Parse(watch.Action); err != nil {
			return err
		}
	}
	dbName, tblName, ok := strings.Cut(table, ".")
	if !ok || dbName == "" || tblName == "" {
		return fmt.Errorf("watch: table %q is not of the form db.table", table)
	}
	if observer == "" {
		return fmt.Errorf("watch %s: empty observer name", table)
	}
	return p.runSchemaStep(ctx, nil, func(c *catalog.Catalog, k *txn.Txn) error {
		db, ok := c.Database(dbName)
		if !ok {
			return gsql.ErrDatabaseNotFound.New(dbName)
		}
		cur, ok := c.Table(db.ID, tblName)
		if !ok {
			return gsql.ErrTableNotFound.New(tblName)
		}
		if busy := cur.SchemaChangeInProgress(); busy != "" {
			return errSchemaChangeInProgress(cur.Name, busy)
		}
		nd := cur.Clone()
		kept := nd.Observers[:0]
		for _, o := range nd.Observers {
			if o.Name != observer {
				kept = append(kept, o)
			}
		}
		nd.Observers = kept
		if !remove {
			if err := sameActionKind(c, nd, watch); err != nil {
				return err
			}
			if action != nil {
				if err := action.CheckColumns(nd); err != nil {
					return err
				}
			}
			o := watch
			o.Columns = nil
			for _, name := range columns {
				col, _, ok := nd.ColumnByName(name)
				if !ok {
					return mysql.NewSQLError(mysql.ERBadFieldError, mysql.SSBadFieldError, "Unknown column '%s' in '%s'", name, nd.Name)
				}
				o.Columns = append(o.Columns, col.ID)
			}
			nd.Observers = append(nd.Observers, o)
		}
		return putTableDef(c, k, nd)
	})
}

// sameActionKind refuses a watch w of table nd whose observer watches
// another table with an action when w has none, or the reverse: the SQL
// nodes run an observer with an action (every notification of it), and a
// program registers the others, so one observer is one or the other.
func sameActionKind(c *catalog.Catalog, nd *catalog.TableDef, w catalog.ObserverDef) error {
	for _, db := range c.SortedDatabases() {
		for _, def := range c.SortedTables(db.ID) {
			if def.ID == nd.ID {
				continue
			}
			for _, o := range def.Observers {
				if o.Name == w.Name && (o.Action == "") != (w.Action == "") {
					return mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState,
						"Incorrect arguments to ADMIN WATCH: observer %s watches %s.%s %s a built-in action; every watch of an observer has one or none",
						w.Name, db.Name, def.Name, map[bool]string{true: "with", false: "without"}[o.Action != ""])
				}
			}
		}
	}
	return nil
}

// ObserverTxns begins and ends the transactions of observer runs that
// write SQL tables (observe.Options.Txns), under the rules every SQL
// transaction of the node keeps: each is registered with the node's
// schema tracker before its start timestamp, records the catalog version
// it read and the tables it writes, and fails its commit, retryably, when
// a schema change marked it stale; a table being rewritten is not
// written. Table hands out a table of the run's catalog to read and
// write through package executor.
type ObserverTxns struct {
	p    *DatabaseProvider
	runs txnRegistry[*observerRun]
}

// observerRun is the schema state of one observer transaction.
type observerRun struct {
	use *schemalease.Use
	cat *catalog.Catalog
}

// ObserverTxns returns the node's source of observer transactions.
func (s *Server) ObserverTxns() *ObserverTxns {
	return &ObserverTxns{p: s.provider}
}

// Begin begins an observer run's transaction.
func (o *ObserverTxns) Begin(ctx context.Context) (*txn.Txn, error) {
	use := o.p.schemas.Begin()
	tx, err := o.p.store.Begin(ctx)
	if err != nil {
		use.End()
		return nil, err
	}
	o.runs.put(tx, &observerRun{use: use})
	return tx, nil
}

// take removes tx's run.
func (o *ObserverTxns) take(tx *txn.Txn) *observerRun {
	return o.runs.take(tx)
}

// Commit commits tx. A transaction a schema change made stale is rolled
// back with an error that wraps txn.ErrWriteConflict (the run is retried
// under the new schema).
func (o *ObserverTxns) Commit(ctx context.Context, tx *txn.Txn) error {
	run := o.take(tx)
	if run == nil {
		return errors.New("commit: not an observer transaction of this node")
	}
	defer run.use.End()
	if !tx.IsReadOnly() {
		if err := run.use.BeginCommit(); err != nil {
			_ = tx.Rollback(ctx)
			return fmt.Errorf("%w: %w", txn.ErrWriteConflict, schemaChangedError(err))
		}
	}
	return tx.Commit(ctx)
}

// Rollback rolls tx back.
func (o *ObserverTxns) Rollback(ctx context.Context, tx *txn.Txn) error {
	if run := o.take(tx); run != nil {
		defer run.use.End()
	}
	return tx.Rollback(ctx)
}

// Table returns table ("db.table") as tx's snapshot of the catalog has it,
// and a decoder of its rows, for an observer run to read and write
// through package executor. A table that a schema change is rewriting is
// an error wrapping txn.ErrWriteConflict: the run is tried again later.
func (o *ObserverTxns) Table(ctx context.Context, tx *txn.Txn, table string) (*executor.Table, *executor.RowDecoder, error) {
	run := o.runs.get(tx)
	if run == nil {
		return nil, nil, errors.New("table: not an observer transaction of this node")
	}
	if run.cat == nil {
		c, err := o.p.catalogs.Load(ctx, tx)
		if err != nil {
			return nil, nil, err
		}
		run.use.Observe(c.Version)
		run.cat = c
	}
	dbName, tblName, ok := strings.Cut(table, ".")
	db, found := run.cat.Database(dbName)
	if !ok || !found {
		return nil, nil, gsql.CastSQLError(gsql.ErrDatabaseNotFound.New(dbName))
	}
	def, found := run.cat.Table(db.ID, tblName)
	if !found {
		return nil, nil, gsql.CastSQLError(gsql.ErrTableNotFound.New(tblName))
	}
	if def.Fence != "" {
		return nil, nil, fmt.Errorf("%w: table %s is being rewritten (%s)", txn.ErrWriteConflict, table, def.Fence)
	}
	m, ok := o.p.metas.Cached(def)
	if !ok {
		var err error
		if m, err = o.p.metas.Get(gsql.NewEmptyContext(), db.Name, def); err != nil {
			return nil, nil, err
		}
	}
	dec, err := m.Exec.NewRowDecoder(nil)
	if err != nil {
		return nil, nil, err
	}
	run.use.Wrote(def.ID)
	return m.Exec, dec, nil
}

// latestCatalog returns the catalog of a fresh snapshot.
func (p *DatabaseProvider) latestCatalog(ctx context.Context) (*catalog.Catalog, error) {
	k, err := p.store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	return p.catalogs.Load(ctx, k)
}

// sweepAcks is the GC's sweep (gcworker.Config.Sweep): it deletes the
// observers' acknowledgements of rows deleted and observed below the safe
// point (observe.SweepAcks), over every table of the catalog, watched or
// not (a watch may have been removed since the acks were written).
func (p *DatabaseProvider) sweepAcks(ctx context.Context, safePoint uint64) error {
	c, err := p.latestCatalog(ctx)
	if err != nil {
		return err
	}
	var ids []int64
	for _, db := range c.SortedDatabases() {
		for _, t := range c.SortedTables(db.ID) {
			ids = append(ids, t.ID)
		}
	}
	removed, err := observe.SweepAcks(ctx, p.store, ids, safePoint)
	if removed > 0 {
		slog.Info("gc: removed the acknowledgements of deleted rows", "acks", removed, "safe_point", safePoint)
	}
	return err
}

// isShowObservers recognises ADMIN SHOW OBSERVERS, the list of watches.
func isShowObservers(query string) bool { return isAdminWords(query, "admin", "show", "observers") }

// showObservers lists every watch of the catalog, one row per observer
// and table: the database, the table, the observer, the columns it
// watches ("" for all), how many of its notifications wait in the store
// (of every table) and its lag: the seconds since the oldest of them was
// committed (NULL when none waits). A watch with a built-in action also
// shows it, its owner, and what this node's action runner did for the
// observer since the node started: runs committed, runs failed, and the
// last failure's error (NULL for a watch without action, or none).
func (p *DatabaseProvider) showObservers(ctx context.Context) (*sqltypes.Result, error) {
	c, err := p.latestCatalog(ctx)
	if err != nil {
		return nil, err
	}
	pending := map[string]int{}
	oldest := map[string]uint64{} // commit_ts of each observer's oldest waiting notification
	var start []byte
	for {
		entries, next, err := p.store.ScanNotify(ctx, start, nil, 1024)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			pending[string(e.Column)]++
			if o, ok := oldest[string(e.Column)]; !ok || e.TS < o {
				oldest[string(e.Column)] = e.TS
			}
		}
		if next == nil {
			break
		}
		start = next
	}
	res := &sqltypes.Result{}
	var ran map[string]observe.ObserverStats
	if p.actions != nil {
		ran = p.actions.stats()
	}
	for _, name := range []string{"DB_NAME", "TABLE_NAME", "OBSERVER", "COLUMNS", "PENDING", "LAG_SECONDS", "ACTION", "OWNER", "RUNS", "FAILURES", "LAST_ERROR"} {
		res.Fields = append(res.Fields, &querypb.Field{Name: name, Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8})
	}
	now := time.Now()
	for _, db := range c.SortedDatabases() {
		for _, t := range c.SortedTables(db.ID) {
			for _, o := range t.Observers {
				var cols []string
				for _, id := range o.Columns {
					if col, _, ok := t.Column(id); ok {
						cols = append(cols, col.Name)
					}
				}
				// The lag: how long ago the oldest notification still
				// waiting was committed (NULL when none waits).
				lag := sqltypes.NULL
				if ts, ok := oldest[o.Name]; ok {
					lag = sqltypes.NewVarChar(strconv.FormatFloat(max(now.Sub(tso.Time(ts)), 0).Seconds(), 'f', 3, 64))
				}
				action, owner, runs, failures, lastErr := sqltypes.NULL, sqltypes.NULL, sqltypes.NULL, sqltypes.NULL, sqltypes.NULL
				if o.Action != "" {
					action = sqltypes.NewVarChar(o.Action)
					owner = sqltypes.NewVarChar(fmt.Sprintf("'%s'@'%s'", o.OwnerUser, o.OwnerHost))
					st := ran[o.Name]
					runs = sqltypes.NewVarChar(strconv.FormatUint(st.Committed, 10))
					failures = sqltypes.NewVarChar(strconv.FormatUint(st.Failed, 10))
					if st.LastError != "" {
						lastErr = sqltypes.NewVarChar(st.LastError)
					}
				}
				res.Rows = append(res.Rows, []sqltypes.Value{
					sqltypes.NewVarChar(db.Name),
					sqltypes.NewVarChar(t.Name),
					sqltypes.NewVarChar(o.Name),
					sqltypes.NewVarChar(strings.Join(cols, ",")),
					sqltypes.NewVarChar(strconv.Itoa(pending[o.Name])),
					lag, action, owner, runs, failures, lastErr,
				})
			}
		}
	}
	return res, nil
}

// watchStmt is ADMIN WATCH or ADMIN UNWATCH:
//
//	ADMIN WATCH [db.]table [(column [, column] ...)] FOR OBSERVER name [DO action]
//	ADMIN UNWATCH [db.]table FOR OBSERVER name
//
// records or removes a watch from any client, as Server.Watch and
// Unwatch do (no columns: every column). Without DO the observer's code
// runs in a process that registers it with package observe under the
// same name; with DO, action (package observeraction) is its code, which every
// SQL node runs.
type watchStmt struct {
	remove        bool
	db, table     string
	columns       []string
	observer      string
	columnsListed bool
	action        string
}

var watchRE = regexp.MustCompile("(?is)^\\s*admin\\s+(watch|unwatch)\\s+(`[^`]+`|[a-z0-9_$]+)(?:\\s*\\.\\s*(`[^`]+`|[a-z0-9_$]+))?\\s*(?:\\(([^)]*)\\))?\\s*for\\s+observer\\s+(`[^`]+`|'[^']+'|\"[^\"]+\"|[a-z0-9_$]+)(?:\\s+do\\s+(.*?))?\\s*;?\\s*$")

// parseWatch recognises ADMIN WATCH and ADMIN UNWATCH. A statement that
// starts with those words but does not parse is an error.
func parseWatch(query string) (watchStmt, bool, error) {
	if !isAdminVerb(query, "watch") && !isAdminVerb(query, "unwatch") {
		return watchStmt{}, false, nil
	}
	m, at := watchRE.FindStringSubmatch(query), watchRE.FindStringSubmatchIndex(query)
	if m == nil {
		return watchStmt{}, true, errSyntax("ADMIN WATCH [db.]table [(column, ...)] FOR OBSERVER name [DO action], or ADMIN UNWATCH [db.]table FOR OBSERVER name")
	}
	unquote := func(s string) string { return strings.Trim(s, "`'\"") }
	st := watchStmt{remove: strings.EqualFold(m[1], "unwatch"), table: unquote(m[2]), observer: unquote(m[5]), action: strings.TrimSpace(m[6])}
	if m[3] != "" {
		st.db, st.table = st.table, unquote(m[3])
	}
	if at[2*4] >= 0 { // a column list, perhaps empty
		st.columnsListed = true
		for _, c := range strings.Split(m[4], ",") {
			if c = unquote(strings.TrimSpace(c)); c != "" {
				st.columns = append(st.columns, c)
			}
		}
		if len(st.columns) == 0 {
			return st, true, errSyntax("ADMIN WATCH with an empty column list (leave it out to watch every column)")
		}
	}
	if st.remove && st.columnsListed {
		return st, true, errSyntax("ADMIN UNWATCH takes no column list: it removes the observer's watch of the table")
	}
	if st.remove && st.action != "" {
		return st, true, errSyntax("ADMIN UNWATCH takes no action")
	}
	return st, true, nil
}

// isAdminVerb reports whether query starts with the words ADMIN verb.
// It looks at the query's first words only: the handler asks it of every
// multi-statement query.
func isAdminVerb(query, verb string) bool {
	q := strings.TrimSpace(query)
	// Every statement is asked (ownStatement): the words are split, which
	// allocates, only after the first one is ADMIN.
	if len(q) < len("admin") || !strings.EqualFold(q[:len("admin")], "admin") {
		return false
	}
	f := strings.Fields(q[:min(len(q), 64)])
	return len(f) >= 2 && strings.EqualFold(f[0], "admin") && strings.EqualFold(f[1], verb)
}

// watch runs an ADMIN WATCH or ADMIN UNWATCH statement of connection c:
// a schema change, which returns once every SQL node writes under it. It
// needs the TRIGGER privilege on the table: like a trigger, a watch
// attaches work to every write of the table.
func (h *handler) watch(ctx context.Context, c *mysql.Conn, st watchStmt, cb mysql.ResultSpoolFn) error {
	s, db, err := h.sessionAndDatabase(c, st.db)
	if err != nil {
		return err
	}
	if err := h.requireTablePrivilege(ctx, s, gsql.PrivilegeType_Trigger, "TRIGGER", db, st.table); err != nil {
		return err
	}
	w := catalog.ObserverDef{Name: st.observer, Action: st.action}
	if w.Action != "" {
		w.OwnerUser, w.OwnerHost = h.account(s)
	}
	if err := s.provider.watch(ctx, db+"."+st.table, w, st.columns, st.remove); err != nil {
		return err
	}
	return cb(&sqltypes.Result{}, false)
}

// account returns the account (user and host pattern, MySQL's
// CURRENT_USER()) session s is authenticated as: the owner of what it
// makes that runs later with its privileges.
func (h *handler) account(s *Session) (user, host string) {
	client := s.Client()
	if h.accounts == nil || !h.accounts.Enabled() {
		return client.User, client.Address
	}
	rd := h.accounts.Reader()
	defer rd.Close()
	if u := h.accounts.GetUser(rd, client.User, client.Address, false); u != nil {
		return u.User, u.Host
	}
	return client.User, client.Address
}
