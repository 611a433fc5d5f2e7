package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/observe"
	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/txn"
)

// schema: documents are written by clients; members and contents by the
// dedup observer; canonical by the canon observer.
var schema = []string{
	"CREATE DATABASE web",
	"CREATE TABLE web.documents (id BIGINT PRIMARY KEY, url VARCHAR(200) NOT NULL, body TEXT NOT NULL)",
	"CREATE TABLE web.members (doc_id BIGINT PRIMARY KEY, hash BIGINT NOT NULL, KEY by_hash (hash, doc_id))",
	"CREATE TABLE web.contents (hash BIGINT PRIMARY KEY, canonical_id BIGINT NOT NULL, copies BIGINT NOT NULL)",
	"CREATE TABLE web.canonical (hash BIGINT PRIMARY KEY, doc_id BIGINT NOT NULL, url VARCHAR(200) NOT NULL)",
}

func createSchema(db *sql.DB) error {
	for _, q := range schema {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// body returns the content of kind k.
func body(k int) string { return fmt.Sprintf("the content of kind %d", k) }

// contentHash is a document's content hash: 63 bits of its SHA-256.
func contentHash(body string) int64 {
	sum := sha256.Sum256([]byte(body))
	return int64(binary.BigEndian.Uint64(sum[:]) >> 1)
}

// runningObservers is a Runner running in the background.
type runningObservers struct {
	runner *observe.Runner
	stop   func()
}

// startObservers registers dedup and canon (recording their watches in
// the catalog) and runs them until stop.
func startObservers(ctx context.Context, srv *percsql.Server) (*runningObservers, error) {
	txns := srv.ObserverTxns()
	r := observe.New(srv.TxnStore(), observe.Options{Catalog: srv, Txns: txns, Scanners: 2, MaxRuns: 8})
	o := &observers{txns: txns}
	for _, obs := range []observe.Observer{
		{Name: "dedup", Table: "web.documents", Columns: []string{"body"}, Run: o.dedup},
		{Name: "canon", Table: "web.contents", Columns: []string{"canonical_id"}, Run: o.canon},
	} {
		if err := r.Register(ctx, obs); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(runCtx)
	}()
	return &runningObservers{runner: r, stop: func() { cancel(); <-done }}, nil
}

// observers holds what the two observers share: the SQL node's tables.
type observers struct {
	txns *percsql.ObserverTxns
}

// table is one table of an observer's transaction, with its decoder.
type table struct {
	t   *executor.Table
	dec *executor.RowDecoder
}

func (o *observers) table(ctx context.Context, tx *txn.Txn, name string) (table, error) {
	t, dec, err := o.txns.Table(ctx, tx, name)
	return table{t, dec}, err
}

// get reads the row with integer primary key id.
func (t table) get(ctx context.Context, tx *txn.Txn, id int64) ([]any, bool, error) {
	return executor.GetRow(ctx, tx, t.t, t.dec, tablecodec.IntHandle(id))
}

// put writes row (integer primary key first) over old (nil: a new row).
func (t table) put(ctx context.Context, tx *txn.Txn, old, row []any) error {
	h := tablecodec.IntHandle(row[0].(int64))
	if old == nil {
		return executor.AddRecord(ctx, tx, t.t, h, row)
	}
	return executor.UpdateRecord(ctx, tx, t.t, h, h, old, row)
}

// dedup runs for a document whose body changed (or that was inserted or
// deleted): it moves the document from its old content's members to its
// new one's and recomputes both contents rows.
func (o *observers) dedup(ctx context.Context, tx *txn.Txn, key []byte) error {
	docs, err := o.table(ctx, tx, "web.documents")
	if err != nil {
		return err
	}
	members, err := o.table(ctx, tx, "web.members")
	if err != nil {
		return err
	}
	_, h, err := tablecodec.DecodeRowKey(key, false)
	if err != nil {
		return err
	}
	id := h.Int
	doc, exists, err := docs.get(ctx, tx, id)
	if err != nil {
		return err
	}
	member, wasMember, err := members.get(ctx, tx, id)
	if err != nil {
		return err
	}
	var newHash, oldHash int64
	if exists {
		newHash = contentHash(doc[2].(string))
	}
	if wasMember {
		oldHash = member[1].(int64)
	}
	if exists && wasMember && newHash == oldHash {
		return nil
	}
	switch {
	case exists:
		if err := members.put(ctx, tx, nilIf(!wasMember, member), []any{id, newHash}); err != nil {
			return err
		}
	case wasMember:
		if err := executor.RemoveRecord(ctx, tx, members.t, h, member); err != nil {
			return err
		}
	}
	for _, hash := range []int64{oldHash, newHash} {
		if (hash == oldHash && !wasMember) || (hash == newHash && !exists) {
			continue
		}
		if err := o.recount(ctx, tx, members, hash); err != nil {
			return err
		}
	}
	return nil
}

func nilIf(cond bool, row []any) []any {
	if cond {
		return nil
	}
	return row
}

// recount rewrites the contents row of hash from its members: how many
// documents have it, and the smallest id among them (the first entry of
// the by_hash index), the canonical document.
func (o *observers) recount(ctx context.Context, tx *txn.Txn, members table, hash int64) error {
	contents, err := o.table(ctx, tx, "web.contents")
	if err != nil {
		return err
	}
	var byHash *executor.Index
	for i := range members.t.Indexes {
		if members.t.Indexes[i].Name == "by_hash" {
			byHash = &members.t.Indexes[i]
		}
	}
	if byHash == nil {
		return errors.New("web.members has no index by_hash")
	}
	bound := executor.Bound{Values: []any{hash}, Inclusive: true}
	rng, err := members.t.IndexRange(byHash, bound, bound)
	if err != nil {
		return err
	}
	it, err := executor.ScanIndex(ctx, tx, members.t, byHash, rng, executor.ScanOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	var copies, canonical int64
	for {
		h, _, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if copies == 0 {
			canonical = h.Int
		}
		copies++
	}
	old, found, err := contents.get(ctx, tx, hash)
	if err != nil {
		return err
	}
	if copies == 0 {
		if !found {
			return nil
		}
		return executor.RemoveRecord(ctx, tx, contents.t, tablecodec.IntHandle(hash), old)
	}
	return contents.put(ctx, tx, nilIf(!found, old), []any{hash, canonical, copies})
}

// canon runs for a contents row whose canonical document changed (or
// that was inserted or deleted): the canonical row of its hash names that
// document and its URL, or goes.
func (o *observers) canon(ctx context.Context, tx *txn.Txn, key []byte) error {
	contents, err := o.table(ctx, tx, "web.contents")
	if err != nil {
		return err
	}
	canonical, err := o.table(ctx, tx, "web.canonical")
	if err != nil {
		return err
	}
	docs, err := o.table(ctx, tx, "web.documents")
	if err != nil {
		return err
	}
	_, h, err := tablecodec.DecodeRowKey(key, false)
	if err != nil {
		return err
	}
	content, exists, err := contents.get(ctx, tx, h.Int)
	if err != nil {
		return err
	}
	old, had, err := canonical.get(ctx, tx, h.Int)
	if err != nil {
		return err
	}
	if !exists {
		if !had {
			return nil
		}
		return executor.RemoveRecord(ctx, tx, canonical.t, h, old)
	}
	docID := content[1].(int64)
	doc, found, err := docs.get(ctx, tx, docID)
	if err != nil {
		return err
	}
	url := ""
	if found {
		url = doc[1].(string)
	}
	return canonical.put(ctx, tx, nilIf(!had, old), []any{h.Int, docID, url})
}

// converge waits until the observers have processed every change: the
// derived tables equal their recomputation from documents and no
// notification is left. It gives up after a minute.
func converge(ctx context.Context, db *sql.DB, r *observe.Runner) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := verify(db)
		if err == nil {
			var pending int
			if pending, err = r.Pending(ctx); err == nil && pending > 0 {
				err = fmt.Errorf("%d notifications pending", pending)
			}
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the observers did not converge: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// verify recomputes the derived tables from documents with SQL and
// compares.
func verify(db *sql.DB) error {
	rows, err := db.Query("SELECT id, url, body FROM web.documents ORDER BY id")
	if err != nil {
		return err
	}
	type want struct {
		canonical, copies int64
		url               string
	}
	wants := map[int64]*want{}
	for rows.Next() {
		var id int64
		var url, b string
		if err := rows.Scan(&id, &url, &b); err != nil {
			rows.Close()
			return err
		}
		h := contentHash(b)
		if w := wants[h]; w != nil {
			w.copies++
		} else {
			wants[h] = &want{canonical: id, copies: 1, url: url}
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	got := map[int64]*want{}
	rows, err = db.Query("SELECT c.hash, c.canonical_id, c.copies, k.doc_id, k.url FROM web.contents c LEFT JOIN web.canonical k ON k.hash = c.hash")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var h, canonicalID, copies int64
		var docID sql.NullInt64
		var url sql.NullString
		if err := rows.Scan(&h, &canonicalID, &copies, &docID, &url); err != nil {
			return err
		}
		if !docID.Valid || docID.Int64 != canonicalID {
			return fmt.Errorf("hash %d: canonical row %v, contents names %d", h, docID, canonicalID)
		}
		got[h] = &want{canonical: canonicalID, copies: copies, url: url.String}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(got) != len(wants) {
		return fmt.Errorf("%d contents rows, %d distinct contents", len(got), len(wants))
	}
	for h, w := range wants {
		if g := got[h]; g == nil || *g != *w {
			return fmt.Errorf("hash %d: got %+v, want %+v", h, g, w)
		}
	}
	var canonicalRows int
	if err := db.QueryRow("SELECT COUNT(*) FROM web.canonical").Scan(&canonicalRows); err != nil {
		return err
	}
	if canonicalRows != len(wants) {
		return fmt.Errorf("%d canonical rows, %d distinct contents", canonicalRows, len(wants))
	}
	return nil
}
