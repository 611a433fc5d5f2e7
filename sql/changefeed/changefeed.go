package changefeed

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
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
	"github.com/percdb/percdb/txn"
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
// The feed polls: every Poll it takes a fresh timestamp to and
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
// (package safepoint) at from, renewed every SafePointRenew for gc_ttl
// (default DefaultGCTTL, '0s' for none), which outlives the feed by
// gc_ttl so that a client can resume from its last resolved timestamp
// after a disconnect or a restart. A cursor below the GC safe point (the
// feed was away longer than gc_ttl, or never had an entry) fails with
// error 9006 rather than skip the collected changes (kv refuses a
// ScanChanges from below the safe point).

// Poll is how often a feed looks for new changes.
const Poll = 100 * time.Millisecond

// DefaultGCTTL is how long a change feed's position holds GC back
// after the feed last renewed it when the statement does not say
// (gc_ttl): TiCDC's default gc-ttl.
const DefaultGCTTL = 24 * time.Hour

// SafePointRenew is how often a running feed moves its service safe
// point up to its position: the entry lags the position by up to this,
// which only keeps a little more garbage.
const SafePointRenew = 10 * time.Second

// Stmt is a parsed CHANGEFEED statement.
type Stmt struct {
	// DB and Table name the table; DB is empty when the statement did
	// not name one.
	DB, Table string
	// Cursor is the timestamp the feed starts after, when HasCursor.
	Cursor    uint64
	HasCursor bool
	// Resolved is the interval of resolved rows (0: none); GCTTL how
	// long the feed's position holds GC back (0: not at all).
	Resolved time.Duration
	GCTTL    time.Duration
}

var changefeedRE = regexp.MustCompile("(?is)^\\s*changefeed\\s+for\\s+(?:table\\s+)?(`[^`]+`|[a-z0-9_$]+)(?:\\s*\\.\\s*(`[^`]+`|[a-z0-9_$]+))?(?:\\s+with\\s+(.*?))?\\s*;?\\s*$")

// Parse parses a statement that starts with the word CHANGEFEED: 1064
// when it does not parse, 1210 for an option it does not take (a gc_ttl
// above maxGCTTL among them).
func Parse(query string, maxGCTTL time.Duration) (Stmt, error) {
	m := changefeedRE.FindStringSubmatch(query)
	if m == nil {
		return Stmt{}, errSyntax("CHANGEFEED FOR [db.]table [WITH cursor = <ts>, resolved [= '<interval>'], gc_ttl = '<interval>']")
	}
	unquote := func(s string) string { return strings.Trim(s, "`") }
	st := Stmt{Table: unquote(m[1]), GCTTL: DefaultGCTTL}
	if m[2] != "" {
		st.DB, st.Table = unquote(m[1]), unquote(m[2])
	}
	if m[3] == "" {
		return st, nil
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
				return st, bad("want a timestamp (an unsigned integer, as commit_ts shows)")
			}
			st.Cursor, st.HasCursor = ts, true
		case "resolved":
			st.Resolved = time.Second
			if hasValue {
				d, err := time.ParseDuration(value)
				if err != nil || d <= 0 {
					return st, bad("want an interval such as '1s'")
				}
				st.Resolved = d
			}
		case "gc_ttl":
			d, err := time.ParseDuration(value)
			if err != nil || !hasValue || d < 0 || d > maxGCTTL {
				return st, bad("want an interval such as '24h' ('0s': do not hold GC back)")
			}
			st.GCTTL = d
		default:
			return st, bad("unknown option")
		}
	}
	return st, nil
}

// Feed is an open change feed: the table as it was defined when the feed
// started.
type Feed struct {
	store *txn.Store
	name  string
	m     *tablemeta.Table
	gctx  *gsql.Context
	pkOrd []int
}

// Open returns the feed of the table m of database db, read from store;
// gctx converts its values to text.
func Open(store *txn.Store, db string, m *tablemeta.Table, gctx *gsql.Context) *Feed {
	f := &Feed{store: store, name: db + "." + m.Def.Name, m: m, gctx: gctx}
	for _, id := range m.Def.PrimaryKey {
		_, ord, _ := m.Def.Column(id)
		f.pkOrd = append(f.pkOrd, ord)
	}
	return f
}

// Name is the feed's table as its rows name it, "db.table".
func (f *Feed) Name() string { return f.name }

// Fields are the columns of a feed's result set.
func Fields() []*querypb.Field {
	return []*querypb.Field{
		{Name: "table", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "key", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "value", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "commit_ts", Type: sqltypes.Uint64},
	}
}

// Run runs the feed of statement st from the timestamp from on until ctx
// ends (KILL QUERY, the client gone, the server closing), when it returns
// nil: every Poll it sends the rows of the changes since the last scan
// (send sends one result's rows and flushes them). With a gc_ttl, renew
// moves the feed's service safe point up to its position every
// SafePointRenew after renewed, when the caller set it. A scan from
// below the GC safe point fails with kv's GCTooOldError.
func (f *Feed) Run(ctx context.Context, st Stmt, from uint64, renewed time.Time, renew func(ctx context.Context, ts uint64) error, send func(rows [][]sqltypes.Value) error) error {
	// The header goes out after the first scan succeeded, so that a
	// cursor GC already passed fails as a plain error (9006), not in the
	// middle of a result set.
	headerSent := false
	lastResolved := time.Now()
	tick := time.NewTicker(Poll)
	defer tick.Stop()
	for {
		var rows [][]sqltypes.Value
		tx, err := f.store.Begin(ctx)
		if err == nil {
			var to uint64
			if to, err = tx.StartTS(ctx); err == nil && to > from {
				if rows, err = f.Poll(ctx, from, to); err == nil {
					if st.Resolved > 0 && time.Since(lastResolved) >= st.Resolved {
						rows = append(rows, f.ResolvedRow(to))
						lastResolved = time.Now()
					}
					from = to
				}
			}
			_ = tx.Rollback(ctx)
		}
		if err == nil && (!headerSent || len(rows) > 0) {
			err = send(rows)
			headerSent = true
		}
		if err == nil && st.GCTTL > 0 && time.Since(renewed) >= SafePointRenew {
			// A failed renewal leaves the older entry, which still holds
			// GC at or below from: the next tick tries again.
			if rerr := renew(ctx, from); rerr == nil {
				renewed = time.Now()
			} else if ctx.Err() == nil {
				slog.Warn("changefeed: renew the service safe point", "feed", f.name, "err", rerr)
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Poll returns the rows of the changes committed in (from, to], in
// commit_ts order (key order among those of one commit).
func (f *Feed) Poll(ctx context.Context, from, to uint64) ([][]sqltypes.Value, error) {
	r := f.m.Exec.RowRange()
	changes, err := f.store.ScanChanges(ctx, r.Start, r.End, from, to)
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
func (f *Feed) changeRow(decode func([]byte) ([]any, error), ch kv.Change) ([]sqltypes.Value, error) {
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
func (f *Feed) jsonValue(i int, v any) (json.RawMessage, error) {
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

// ResolvedRow promises that no change at or below ts follows.
func (f *Feed) ResolvedRow(ts uint64) []sqltypes.Value {
	return []sqltypes.Value{
		sqltypes.NewVarChar(f.name),
		sqltypes.NULL,
		sqltypes.NewVarChar(fmt.Sprintf(`{"resolved": "%d"}`, ts)),
		sqltypes.NewUint64(ts),
	}
}

// errSyntax is MySQL's error 1064 for a statement that does not parse:
// usage says what it expects.
func errSyntax(usage string) error {
	return mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "You have an error in your SQL syntax; %s", usage)
}
