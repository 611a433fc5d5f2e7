package sql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/gcworker"
)

// Service safe points: a timestamp that a service outside the
// transactions still reads from, kept in the store so that the garbage
// collector of any node sees it and it survives a restart:
//
//	m:gc:svc:<id>   serviceSafePointRecord (JSON)
//
// A change feed keeps one at its position (changefeed.go) and renews it
// as it goes; the GC safe point stays at or below every entry that has
// not expired (gcworker.ServiceSafePointSource), so that a feed resumed
// from a cursor at or after its entry's timestamp misses no change. An
// entry expires when its service stops renewing it for its TTL: a feed
// whose client went away holds GC back for that long and no longer
// (TiCDC's gc-ttl, 24 hours by default, is the model).
var prefixServiceSafePoints = []byte("m:gc:svc:")

// serviceSafePointRecord is one service's entry.
type serviceSafePointRecord struct {
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

// setServiceSafePoint keeps (or renews) service id's safe point at ts
// until ttl from now, in a transaction of its own, tried again after a
// write conflict (a GC forgetting the entry as it expired).
func (p *DatabaseProvider) setServiceSafePoint(ctx context.Context, id string, ts uint64, ttl time.Duration, what string) error {
	rec := serviceSafePointRecord{TS: ts, Expires: time.Now().Add(ttl).UnixMilli(), What: what}
	for tries := 0; ; tries++ {
		k, err := p.store.Begin(ctx)
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
		if tries >= 3 || !retryableConflict(err) {
			return fmt.Errorf("keep the service safe point of %s: %w", what, err)
		}
	}
}

// gcServiceSafePoints is the provider's entries as the garbage
// collector's gcworker.ServiceSafePointSource.
type gcServiceSafePoints struct{ p *DatabaseProvider }

// ServiceSafePoints returns the entries in force at now, and deletes the
// expired ones.
func (g gcServiceSafePoints) ServiceSafePoints(ctx context.Context, now time.Time) ([]gcworker.ServiceSafePoint, error) {
	k, err := g.p.store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	it, err := k.Iter(ctx, prefixServiceSafePoints, tablecodec.PrefixNext(prefixServiceSafePoints))
	if err != nil {
		_ = k.Rollback(ctx)
		return nil, err
	}
	var live []gcworker.ServiceSafePoint
	var expired [][]byte
	for it.Valid() {
		var rec serviceSafePointRecord
		id := string(it.Key()[len(prefixServiceSafePoints):])
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			it.Close()
			_ = k.Rollback(ctx)
			return nil, fmt.Errorf("decode service safe point %s: %w", id, err)
		}
		sp := gcworker.ServiceSafePoint{ID: id, TS: rec.TS, Expires: time.UnixMilli(rec.Expires)}
		if now.Before(sp.Expires) {
			live = append(live, sp)
		} else {
			expired = append(expired, append([]byte(nil), it.Key()...))
		}
		if err := it.Next(ctx); err != nil {
			it.Close()
			_ = k.Rollback(ctx)
			return nil, err
		}
	}
	it.Close()
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
