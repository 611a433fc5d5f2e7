package safepoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/memtable"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/gcworker"
)

// Service safe points: a timestamp that a service outside the
// transactions still reads from, kept in the store so that the garbage
// collector of any node sees it and it survives a restart:
//
//	m:gc:svc:<id>   Record (JSON)
//
// A change feed keeps one at its position (package sql's
// changefeed_exec.go) and renews it
// as it goes; the GC safe point stays at or below every entry that has
// not expired (gcworker.ServiceSafePointSource), so that a feed resumed
// from a cursor at or after its entry's timestamp misses no change. An
// entry expires when its service stops renewing it for its TTL: a feed
// whose client went away holds GC back for that long and no longer
// (TiCDC's gc-ttl, 24 hours by default, is the model).
var prefixServiceSafePoints = []byte("m:gc:svc:")

// Record is one service's entry.
type Record struct {
	// TS is the timestamp the service still reads at or after.
	TS uint64 `json:"ts"`
	// Expires is when the entry stops holding GC back, in Unix
	// milliseconds.
	Expires int64 `json:"expires"`
	// What says which service keeps it, for the log.
	What string `json:"what"`
}

func serviceSafePointKey(id string) []byte {
	return append(append([]byte(nil), prefixServiceSafePoints...), id...)
}

// Set keeps (or renews) service id's safe point at ts until ttl from
// now, in a transaction of its own in store, tried again after a write
// conflict (a GC forgetting the entry as it expired).
func Set(ctx context.Context, store *txn.Store, id string, ts uint64, ttl time.Duration, what string) error {
	rec := Record{TS: ts, Expires: time.Now().Add(ttl).UnixMilli(), What: what}
	for tries := 0; ; tries++ {
		k, err := store.Begin(ctx)
		if err != nil {
			return err
		}
		if err := catalog.PutJSON(k, serviceSafePointKey(id), &rec); err != nil {
			_ = k.Rollback(ctx)
			return err
		}
		err = k.Commit(ctx)
		if err == nil {
			return nil
		}
		if tries >= 3 || !ddljob.RetryableConflict(err) {
			return fmt.Errorf("keep the service safe point of %s: %w", what, err)
		}
	}
}

// Source is the entries of a store as the garbage collector's
// gcworker.ServiceSafePointSource.
type Source struct{ Store *txn.Store }

// Stored is an entry as read, with its key and id.
type Stored struct {
	Key []byte
	ID  string
	Rec Record
}

// Read reads every entry in k, expired or not.
func Read(ctx context.Context, k *txn.Txn) ([]Stored, error) {
	var out []Stored
	err := catalog.ScanJSON(ctx, k, prefixServiceSafePoints, func(key []byte, rec Record) {
		out = append(out, Stored{Key: key, ID: string(key[len(prefixServiceSafePoints):]), Rec: rec})
	})
	return out, err
}

// ServiceSafePoints returns the entries in force at now, and deletes the
// expired ones.
func (g Source) ServiceSafePoints(ctx context.Context, now time.Time) ([]gcworker.ServiceSafePoint, error) {
	k, err := g.Store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := Read(ctx, k)
	if err != nil {
		_ = k.Rollback(ctx)
		return nil, err
	}
	var live []gcworker.ServiceSafePoint
	var expired [][]byte
	for _, e := range entries {
		sp := gcworker.ServiceSafePoint{ID: e.ID, TS: e.Rec.TS, Expires: time.UnixMilli(e.Rec.Expires)}
		if now.Before(sp.Expires) {
			live = append(live, sp)
		} else {
			expired = append(expired, e.Key)
		}
	}
	if len(expired) == 0 {
		return live, k.Rollback(ctx)
	}
	for _, key := range expired {
		if err := k.Delete(key); err != nil {
			_ = k.Rollback(ctx)
			return nil, err
		}
	}
	// Forgetting them is tidying up: an entry renewed meanwhile makes
	// this commit conflict, and it stays.
	if err := k.Commit(ctx); err != nil && !errors.Is(err, txn.ErrWriteConflict) {
		slog.Warn("gc: forget expired service safe points", "err", err)
	}
	return live, nil
}

// TableName is information_schema.PERCDB_SERVICE_SAFE_POINTS: the
// services that hold the GC safe point back (a change feed's position),
// expired entries included until the GC forgets them.
const TableName = "PERCDB_SERVICE_SAFE_POINTS"

// Schema is the table's schema.
var Schema = memtable.Schema(TableName, []memtable.Column{
	{"SERVICE_ID", memtable.VarChar(256), false}, {"WHAT", memtable.VarChar(512), false},
	{"SAFE_POINT", types.Uint64, false}, {"SAFE_POINT_TIME", types.DatetimeMaxPrecision, false},
	{"EXPIRES", types.DatetimeMaxPrecision, false}, {"EXPIRED", types.Boolean, false},
})

// Rows reads the entries of store for the table, in a transaction of
// their own.
func Rows(ctx *gsql.Context, store *txn.Store) ([]gsql.Row, error) {
	k, err := store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	entries, err := Read(ctx, k)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rows := make([]gsql.Row, len(entries))
	for i, e := range entries {
		exp := time.UnixMilli(e.Rec.Expires).UTC()
		rows[i] = gsql.Row{e.ID, e.Rec.What, e.Rec.TS, tso.Time(e.Rec.TS).UTC(), exp, !now.Before(exp)}
	}
	return rows, nil
}
