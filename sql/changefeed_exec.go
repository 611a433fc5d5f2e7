package sql

import (
	"context"
	"errors"
	"fmt"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/changefeed"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/safepoint"
)

// CHANGEFEED FOR [db.]table (package changefeed, whose doc says what a
// feed sends and how it keeps its place) as the handler runs it: the
// privileges, the table as the catalog has it, the service safe point
// that holds GC back at the feed's position (set here, renewed by the
// feed), the client's result set, and MySQL's errors.

// parseChangefeed recognises a CHANGEFEED statement. A statement that
// starts with the word but does not parse is an error.
func parseChangefeed(query string) (changefeed.Stmt, bool, error) {
	if !lexical.LeadingWordIs(query, "changefeed") {
		return changefeed.Stmt{}, false, nil
	}
	st, err := changefeed.Parse(query, maxGCDuration)
	return st, true, err
}

// changefeed runs a CHANGEFEED statement until ctx ends (KILL QUERY, the
// client gone, the server closing); the result set then ends normally.
func (h *handler) changefeed(ctx context.Context, c *mysql.Conn, st changefeed.Stmt, cb mysql.ResultSpoolFn) error {
	s, db, err := h.sessionAndDatabase(c, st.DB)
	if err != nil {
		return err
	}
	st.DB = db
	// Checked before the table is looked up, as MySQL does, so that a
	// refusal does not tell whether the table exists.
	if err := h.requireTablePrivilege(ctx, s, gsql.PrivilegeType_Select, "SELECT", db, st.Table); err != nil {
		return err
	}
	if err := h.requireGlobalPrivilege(ctx, s, gsql.PrivilegeType_ReplicationSlave, "REPLICATION SLAVE"); err != nil {
		return err
	}
	p := s.provider
	feed, now, err := p.openFeed(ctx, st)
	if err != nil {
		return err
	}
	from := now
	if st.HasCursor {
		from = st.Cursor
	}
	// The entry is kept before the first scan, which fails if GC already
	// passed from: after that GC cannot pass it.
	svcID := fmt.Sprintf("changefeed:%d:%d", c.ConnectionID, now)
	renewed := time.Now()
	if st.GCTTL > 0 {
		if err := safepoint.Set(ctx, p.store, svcID, from, st.GCTTL, "CHANGEFEED FOR "+feed.Name()); err != nil {
			return toSQLError(err)
		}
	}
	fields := changefeed.Fields()
	send := func(rows [][]sqltypes.Value) error {
		if err := cb(&sqltypes.Result{Fields: fields, Rows: rows}, false); err != nil {
			return err
		}
		return c.FlushBuffer()
	}
	renew := func(ctx context.Context, ts uint64) error {
		return safepoint.Set(ctx, p.store, svcID, ts, st.GCTTL, "CHANGEFEED FOR "+feed.Name())
	}
	err = feed.Run(ctx, st, from, renewed, renew, send)
	var tooOld *kv.GCTooOldError
	if errors.As(err, &tooOld) {
		return mysql.NewSQLError(codeGCTooEarly, stateGeneral, "CHANGEFEED position %d is older than the GC safe point %d: the changes since it may have been collected (a feed's position holds GC back for gc_ttl after the feed last ran)", tooOld.TS, tooOld.SafePoint)
	}
	if err != nil {
		return toSQLError(err)
	}
	return nil
}

// sessionAndDatabase returns connection c's session and the database a
// statement of it means by db: db itself, or when empty the session's
// current one (error 1046 when none is selected).
func (h *handler) sessionAndDatabase(c *mysql.Conn, db string) (*Session, string, error) {
	s, err := h.sessionFor(c)
	if err != nil {
		return nil, "", err
	}
	if db == "" {
		if db = s.GetCurrentDatabase(); db == "" {
			return nil, "", errNoDatabase()
		}
	}
	return s, db, nil
}

// errSyntax is MySQL's error 1064 for a statement percdb parses itself
// that does not parse: usage says what it expects.
func errSyntax(usage string) error {
	return mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "You have an error in your SQL syntax; %s", usage)
}

// errNoDatabase is MySQL's error 1046 for a statement that names a table
// without its database while the session has none (GMS's
// ErrNoDatabaseSelected reaches the client as 1105).
func errNoDatabase() error {
	return mysql.NewSQLError(mysql.ERNoDb, mysql.SSNoDB, "No database selected")
}

// openFeed finds the feed's table and returns the oracle's time now.
func (p *DatabaseProvider) openFeed(ctx context.Context, st changefeed.Stmt) (*changefeed.Feed, uint64, error) {
	k, err := p.store.Begin(ctx)
	if err != nil {
		return nil, 0, toSQLError(err)
	}
	defer func() { _ = k.Rollback(ctx) }()
	now, err := k.StartTS(ctx)
	if err != nil {
		return nil, 0, toSQLError(err)
	}
	c, err := p.catalogs.Load(ctx, k)
	if err != nil {
		return nil, 0, err
	}
	db, ok := c.Database(st.DB)
	if !ok {
		return nil, 0, gsql.CastSQLError(gsql.ErrDatabaseNotFound.New(st.DB))
	}
	def, ok := c.Table(db.ID, st.Table)
	if !ok {
		return nil, 0, gsql.CastSQLError(gsql.ErrTableNotFound.New(st.Table))
	}
	gctx := gsql.NewEmptyContext()
	m, err := p.metas.Get(gctx, db.Name, def)
	if err != nil {
		return nil, 0, err
	}
	return changefeed.Open(p.store, db.Name, m, gctx), now, nil
}
