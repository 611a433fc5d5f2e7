package sql

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/tablemeta"
)

// CHANGEFEED FOR [db.]table [WITH cursor = <ts>, resolved [= '<interval>'],
// gc_ttl = '<interval>'] streams the committed changes of a table to any MySQL client as one
// result set that never ends (until KILL QUERY, the client going away, or
// the server closing): CockroachDB's core changefeeds, over SQL. Columns:
// table ("db.table"), key (the primary key's values as a JSON array; a
// table without one: its hidden row ID), value (the row after the change
// as a JSON object, NULL for a delete) and commit_ts. With resolved, a row
// whose key is NULL and whose value is {"resolved": "<ts>"} promises that
// no change at or below ts follows.
//
// The feed polls: every changefeedPoll it takes a fresh timestamp to and
// reads the changes committed in (from, to] (txn.Store.ScanChanges, which
// settles every transaction that could still commit at or below to), sends
// them in commit_ts order, then from = to. Each (key, commit_ts) falls in
// exactly one interval, so every change is sent once, in commit_ts order
// per key (and overall). cursor = ts starts after ts instead of now: a
// client that resumes from the last resolved timestamp it read misses
// nothing and sees nothing twice. The rows are decoded with the table's
// definition when the feed started.
//
// The feed's position holds GC back: it keeps a service safe point
// (gcservice.go) at from, renewed every feedSafePointRenew for gc_ttl
// (default DefaultFeedGCTTL, '0s' for none), which outlives the feed by
// gc_ttl so that a client can resume from its last resolved timestamp
// after a disconnect or a restart. A cursor below the GC safe point (the
// feed was away longer than gc_ttl, or never had an entry) fails with
// error 9006 rather than skip the collected changes (kv refuses a
// ScanChanges from below the safe point).

// changefeedPoll is how often a feed looks for new changes.
const changefeedPoll = 100 * time.Millisecond

// DefaultFeedGCTTL is how long a change feed's position holds GC back
// after the feed last renewed it when the statement does not say
// (gc_ttl): TiCDC's default gc-ttl.
const DefaultFeedGCTTL = 24 * time.Hour

// feedSafePointRenew is how often a running feed moves its service safe
// point up to its position: the entry lags the position by up to this,
// which only keeps a little more garbage.
const feedSafePointRenew = 10 * time.Second

// changefeedStmt is a parsed CHANGEFEED statement.
type changefeedStmt struct {
	db, table string
	cursor    uint64
	hasCursor bool
	resolved  time.Duration // 0: no resolved rows
	gcTTL     time.Duration // 0: the feed does not hold GC back
}

var changefeedRE = regexp.MustCompile("(?is)^\\s*changefeed\\s+for\\s+(?:table\\s+)?(`[^`]+`|[a-z0-9_$]+)(?:\\s*\\.\\s*(`[^`]+`|[a-z0-9_$]+))?(?:\\s+with\\s+(.*?))?\\s*;?\\s*$")

// parseChangefeed recognises a CHANGEFEED statement. A statement that
// starts with the word but does not parse is an error.
func parseChangefeed(query string) (changefeedStmt, bool, error) {
	if !leadingWordIs(query, "changefeed") {
		return changefeedStmt{}, false, nil
	}
	m := changefeedRE.FindStringSubmatch(query)
	if m == nil {
		return changefeedStmt{}, true, errSyntax("CHANGEFEED FOR [db.]table [WITH cursor = <ts>, resolved [= '<interval>'], gc_ttl = '<interval>']")
	}
	unquote := func(s string) string { return strings.Trim(s, "`") }
	st := changefeedStmt{table: unquote(m[1]), gcTTL: DefaultFeedGCTTL}
	if m[2] != "" {
		st.db, st.table = unquote(m[1]), unquote(m[2])
	}
	if m[3] == "" {
		return st, true, nil
	}
	for _, opt := range strings.Split(m[3], ",") {
		name, value, hasValue := strings.Cut(opt, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.Trim(strings.TrimSpace(value), "'\"")
		bad := func(why string) error {
			return mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Incorrect arguments to CHANGEFEED: %s %q: %s", name, value, why)
		}
		switch name {
		case "cursor":
			ts, err := strconv.ParseUint(value, 10, 64)
			if err != nil || !hasValue || ts == 0 {
				return st, true, bad("want a timestamp (an unsigned integer, as commit_ts shows)")
			}
			st.cursor, st.hasCursor = ts, true
		case "resolved":
			st.resolved = time.Second
			if hasValue {
				d, err := time.ParseDuration(value)
				if err != nil || d <= 0 {
					return st, true, bad("want an interval such as '1s'")
				}
				st.resolved = d
			}
		case "gc_ttl":
			d, err := time.ParseDuration(value)
			if err != nil || !hasValue || d < 0 || d > maxGCDuration {
				return st, true, bad("want an interval such as '24h' ('0s': do not hold GC back)")
			}
			st.gcTTL = d
		default:
			return st, true, bad("unknown option")
		}
	}
	return st, true, nil
}

// changefeed runs a CHANGEFEED statement until ctx ends (KILL QUERY, the
// client gone, the server closing); the result set then ends normally.
func (h *handler) changefeed(ctx context.Context, c *mysql.Conn, st changefeedStmt, cb mysql.ResultSpoolFn) error {
	s, db, err := h.sessionAndDatabase(c, st.db)
	if err != nil {
		return err
	}
	st.db = db
	// Checked before the table is looked up, as MySQL does, so that a
	// refusal does not tell whether the table exists.
	if err := h.requireTablePrivilege(ctx, s, gsql.PrivilegeType_Select, "SELECT", db, st.table); err != nil {
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
	if st.hasCursor {
		from = st.cursor
	}
	// The entry is kept before the first scan, which fails if GC already
	// passed from: after that GC cannot pass it.
	svcID := fmt.Sprintf("changefeed:%d:%d", c.ConnectionID, now)
	renewed := time.Now()
	if st.gcTTL > 0 {
		if err := p.setServiceSafePoint(ctx, svcID, from, st.gcTTL, "CHANGEFEED FOR "+feed.name); err != nil {
			return toSQLError(err)
		}
	}
	fields := []*querypb.Field{
		{Name: "table", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "key", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "value", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "commit_ts", Type: sqltypes.Uint64},
	}
	// The header goes out after the first scan succeeded, so that a
	// cursor GC already passed fails as a plain error (9006), not in the
	// middle of a result set.
	headerSent := false
	lastResolved := time.Now()
	tick := time.NewTicker(changefeedPoll)
	defer tick.Stop()
	for {
		var rows [][]sqltypes.Value
		tx, err := p.store.Begin(ctx)
		if err == nil {
			var to uint64
			if to, err = tx.StartTS(ctx); err == nil && to > from {
				if rows, err = feed.poll(ctx, from, to); err == nil {
					if st.resolved > 0 && time.Since(lastResolved) >= st.resolved {
						rows = append(rows, feed.resolvedRow(to))
						lastResolved = time.Now()
					}
					from = to
				}
			}
			_ = tx.Rollback(ctx)
		}
		if err == nil && (!headerSent || len(rows) > 0) {
			if err = cb(&sqltypes.Result{Fields: fields, Rows: rows}, false); err == nil {
				err = c.FlushBuffer()
			}
			headerSent = true
		}
		if err == nil && st.gcTTL > 0 && time.Since(renewed) >= feedSafePointRenew {
			// A failed renewal leaves the older entry, which still holds
			// GC at or below from: the next tick tries again.
			if rerr := p.setServiceSafePoint(ctx, svcID, from, st.gcTTL, "CHANGEFEED FOR "+feed.name); rerr == nil {
				renewed = time.Now()
			} else if ctx.Err() == nil {
				slog.Warn("changefeed: renew the service safe point", "feed", feed.name, "err", rerr)
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		var tooOld *kv.GCTooOldError
		if errors.As(err, &tooOld) {
			return mysql.NewSQLError(codeGCTooEarly, stateGeneral, "CHANGEFEED position %d is older than the GC safe point %d: the changes since it may have been collected (a feed's position holds GC back for gc_ttl after the feed last ran)", tooOld.TS, tooOld.SafePoint)
		}
		if err != nil {
			return toSQLError(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
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

// feed is an open change feed: the table as it was defined when the feed
// started.
type feed struct {
	p     *DatabaseProvider
	name  string
	m     *tablemeta.Table
	gctx  *gsql.Context
	pkOrd []int
}

// openFeed finds the feed's table and returns the oracle's time now.
func (p *DatabaseProvider) openFeed(ctx context.Context, st changefeedStmt) (*feed, uint64, error) {
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
	db, ok := c.Database(st.db)
	if !ok {
		return nil, 0, gsql.CastSQLError(gsql.ErrDatabaseNotFound.New(st.db))
	}
	def, ok := c.Table(db.ID, st.table)
	if !ok {
		return nil, 0, gsql.CastSQLError(gsql.ErrTableNotFound.New(st.table))
	}
	gctx := gsql.NewEmptyContext()
	m, err := p.metas.Get(gctx, db.Name, def)
	if err != nil {
		return nil, 0, err
	}
	f := &feed{p: p, name: db.Name + "." + def.Name, m: m, gctx: gctx}
	for _, id := range def.PrimaryKey {
		_, ord, _ := def.Column(id)
		f.pkOrd = append(f.pkOrd, ord)
	}
	return f, now, nil
}

// poll returns the rows of the changes committed in (from, to], in
// commit_ts order (key order among those of one commit).
func (f *feed) poll(ctx context.Context, from, to uint64) ([][]sqltypes.Value, error) {
	r := f.m.Exec.RowRange()
	changes, err := f.p.store.ScanChanges(ctx, r.Start, r.End, from, to)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(changes, func(a, b kv.Change) int {
		if a.CommitTS != b.CommitTS {
			return cmp.Compare(a.CommitTS, b.CommitTS)
		}
		return bytes.Compare(a.Key, b.Key)
	})
	dec, err := f.m.Exec.NewRowDecoder(nil)
	if err != nil {
		return nil, err
	}
	rows := make([][]sqltypes.Value, 0, len(changes))
	for _, ch := range changes {
		row, err := f.changeRow(dec.Decode, ch)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// changeRow is the feed's row of one change.
func (f *feed) changeRow(decode func([]byte) ([]any, error), ch kv.Change) ([]sqltypes.Value, error) {
	value := sqltypes.NULL
	var keyVals []any
	stored := ch.Value
	if stored == nil {
		stored = ch.Prev
	}
	if stored != nil {
		row, err := decode(stored)
		if err != nil {
			return nil, fmt.Errorf("changefeed: row %q at %d: %w", ch.Key, ch.CommitTS, err)
		}
		obj := make(map[string]json.RawMessage, len(row))
		for i, v := range row {
			j, err := f.jsonValue(i, v)
			if err != nil {
				return nil, err
			}
			obj[f.m.Def.Columns[i].Name] = j
		}
		if ch.Value != nil {
			b, err := json.Marshal(obj)
			if err != nil {
				return nil, err
			}
			value = sqltypes.NewVarChar(string(b))
		}
		for _, ord := range f.pkOrd {
			keyVals = append(keyVals, obj[f.m.Def.Columns[ord].Name])
		}
	}
	if len(f.pkOrd) == 0 || keyVals == nil {
		// No primary key (or a delete of a row never seen): the handle.
		_, h, err := tablecodec.DecodeRowKey(ch.Key, f.m.Exec.HandleKind == executor.HandleCommon)
		if err != nil {
			return nil, err
		}
		keyVals = []any{h.String()}
		if h.IsInt() {
			keyVals = []any{h.Int}
		}
	}
	key, err := json.Marshal(keyVals)
	if err != nil {
		return nil, err
	}
	return []sqltypes.Value{
		sqltypes.NewVarChar(f.name),
		sqltypes.NewVarChar(string(key)),
		value,
		sqltypes.NewUint64(ch.CommitTS),
	}, nil
}

// jsonValue is column i's value v as JSON: numbers as numbers, NULL as
// null, anything else as the string MySQL would show.
func (f *feed) jsonValue(i int, v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("null"), nil
	}
	sv, err := f.m.Schema.Schema[i].Type.SQL(f.gctx, nil, v)
	if err != nil {
		return nil, fmt.Errorf("changefeed: column %s: %w", f.m.Def.Columns[i].Name, err)
	}
	if sv.IsNull() {
		return json.RawMessage("null"), nil
	}
	if sv.IsIntegral() || sv.IsFloat() {
		return json.RawMessage(sv.ToString()), nil
	}
	return json.Marshal(sv.ToString())
}

// resolvedRow promises that no change at or below ts follows.
func (f *feed) resolvedRow(ts uint64) []sqltypes.Value {
	return []sqltypes.Value{
		sqltypes.NewVarChar(f.name),
		sqltypes.NULL,
		sqltypes.NewVarChar(fmt.Sprintf(`{"resolved": "%d"}`, ts)),
		sqltypes.NewUint64(ts),
	}
}
