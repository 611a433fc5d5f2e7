package sql

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/observe"
	"github.com/percdb/percdb/txn"
)

// TestGCSweepsAcksOfDeletedRows: once an observer has run for rows that
// were then deleted and observed again, a GC run whose safe point passed
// those runs deletes their acknowledgements, and keeps the ack of the row
// that still exists. Without the sweep the ack space keeps one key per
// deleted row and observer for good.
func TestGCSweepsAcksOfDeletedRows(t *testing.T) {
	ctx := context.Background()
	srv, db := openInternal(t, t.TempDir(), "")
	p := srv.provider
	execAll(t, db, "CREATE DATABASE o", "CREATE TABLE o.t (id INT PRIMARY KEY, v INT)", "INSERT INTO o.t VALUES (1, 1), (2, 2), (3, 3)")
	var mu sync.Mutex
	var tableID int64
	r := observe.New(srv.TxnStore(), observe.Options{Catalog: srv, Txns: srv.ObserverTxns(), Idle: time.Millisecond})
	if err := r.Register(ctx, observe.Observer{Name: "o", Table: "o.t", Run: func(_ context.Context, _ *txn.Txn, rowKey []byte) error {
		id, _, err := tablecodec.DecodeRowKey(rowKey, false)
		mu.Lock()
		tableID = id
		mu.Unlock()
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	drain := func() {
		t.Helper()
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(rctx) }()
		defer func() { stop(); <-done }()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			n, err := r.Pending(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d notifications still waiting; stats %+v", n, r.Stats())
			}
		}
	}
	// Watched after the inserts: write every row once so that each gets
	// an ack, then delete two and observe the deletions.
	execAll(t, db, "UPDATE o.t SET v = v + 1")
	drain()
	execAll(t, db, "DELETE FROM o.t WHERE id > 1")
	drain()
	acks := func() []int64 {
		t.Helper()
		mu.Lock()
		start, end := tablecodec.PrefixRange(tablecodec.AckPrefix(nil, tableID))
		mu.Unlock()
		tx, err := srv.TxnStore().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		it, err := tx.Iter(ctx, start, end)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var rows []int64
		for ; it.Valid(); err = it.Next(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			row, _, err := tablecodec.DecodeAckKey(it.Key())
			if err != nil {
				t.Fatal(err)
			}
			_, h, err := tablecodec.DecodeRowKey(row, false)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, h.Int)
		}
		return rows
	}
	if got := acks(); len(got) != 3 {
		t.Fatalf("acks before GC of rows %v, want 3", got)
	}
	p.gc.settings.lifeTime.Store(0)
	if _, err := p.runGC(ctx); err != nil {
		t.Fatal(err)
	}
	if got := acks(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("acks after GC of rows %v, want [1]", got)
	}
}
