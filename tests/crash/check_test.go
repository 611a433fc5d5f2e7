package crash

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// openDB opens a pool on addr with database as the default one and
// client-side interpolation, closed when the test ends.
func openDB(t testing.TB, addr, database string) *sql.DB {
	t.Helper()
	return openPool(t, DSN(addr, database, true))
}

// openPools opens two pools on addr with database as the default one:
// one interpolating arguments, one using server-side prepared
// statements. Workers alternate between them.
func openPools(t testing.TB, addr, database string) []*sql.DB {
	t.Helper()
	return []*sql.DB{openPool(t, DSN(addr, database, true)), openPool(t, DSN(addr, database, false))}
}

// openPool opens a pool on dsn, closed when the test ends.
func openPool(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// setupInProcess starts a percdb server in the test process and creates
// the workload's tables in database name.
func setupInProcess(t *testing.T, srv *sqltest.Server, name string) (Config, *sql.DB) {
	t.Helper()
	cfg := Config{Database: name}
	if err := Setup(context.Background(), openDB(t, srv.Addr(), ""), cfg); err != nil {
		t.Fatal(err)
	}
	return cfg, openDB(t, srv.Addr(), name)
}

func TestCheckerAcceptsAWorkload(t *testing.T) {
	ctx := context.Background()
	srv := sqltest.Start(t, "")
	cfg, db := setupInProcess(t, srv, "crash")
	h := NewHistory()
	ids := NewIDs(0)
	pools := openPools(t, srv.Addr(), cfg.Database)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			wk := &Worker{ID: w, DB: pools[w%len(pools)], Cfg: cfg, IDs: ids, Rand: rand.New(rand.NewPCG(uint64(w), 1)), Rec: h}
			for range 25 {
				wk.One(ctx)
			}
		})
	}
	wg.Wait()
	c := h.Counts()
	if c[Committed] == 0 || c[Unknown] != 0 {
		t.Fatalf("workload on a live server: %s", h.Summary())
	}
	rep, err := (&Checker{DB: db, Cfg: cfg}).Check(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatal(rep)
	}
	for _, table := range []string{"transfers", "items", "orders", "order_lines"} {
		if rep.Rows[table] == 0 {
			t.Errorf("no rows in %s after %s", table, h.Summary())
		}
	}
	t.Log(rep)
}

// TestCheckerFindsViolations breaks the data or the history in each way
// the checker must notice, so that a crash test that passes means
// something.
func TestCheckerFindsViolations(t *testing.T) {
	ctx := context.Background()
	srv := sqltest.Start(t, "")
	type env struct {
		db *sql.DB
		w  *Worker
		h  *History
	}
	exec := func(t *testing.T, e env, q string) {
		t.Helper()
		if _, err := e.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	lines := []Line{{Qty: 2, Pad: 10}, {Qty: 3, Pad: 10}, {Qty: 4, Pad: 10}}
	for i, c := range []struct {
		name string
		// break does the damage; want is a piece of the violation.
		breaks func(t *testing.T, e env)
		want   string
	}{
		{"lost commit", func(t *testing.T, e env) {
			e.h.Done(Txn{Kind: Transfer, ID: 1000, From: 0, To: 1, Amount: 5, Outcome: Committed})
		}, "transfer 1000: acknowledged as committed but lost"},
		{"failed but visible", func(t *testing.T, e env) {
			tx := e.w.Transfer(ctx, 0, 1, 5)
			tx.Outcome = Failed
			e.h.Done(tx)
		}, "failed at its client but visible"},
		{"partial order", func(t *testing.T, e env) {
			e.h.Done(Txn{Kind: Order, ID: 1000, Worker: 0, Lines: lines, Outcome: Unknown})
			exec(t, e, "INSERT INTO orders VALUES (1000, 0, 3, 9)")
			exec(t, e, fmt.Sprintf("INSERT INTO order_lines VALUES (1000, 1, 2, '%s'), (1000, 2, 3, '%s')", linePad(1000, 1, 10), linePad(1000, 2, 10)))
			exec(t, e, "UPDATE counters SET orders = 1, qty = 9 WHERE worker = 0")
		}, "order 1000 (unknown): partly visible"},
		{"orphan lines", func(t *testing.T, e env) {
			e.h.Done(Txn{Kind: Order, ID: 1000, Worker: 0, Lines: lines, Outcome: Unknown})
			exec(t, e, fmt.Sprintf("INSERT INTO order_lines VALUES (1000, 1, 2, '%s')", linePad(1000, 1, 10)))
		}, "order 1000: 1 lines without their order"},
		{"balance without ledger", func(t *testing.T, e env) {
			exec(t, e, "UPDATE accounts SET bal = bal + 7 WHERE id = 0")
			exec(t, e, "UPDATE accounts SET bal = bal - 7 WHERE id = 1")
		}, "account 0: balance 1007, the ledger says 1000"},
		{"money created", func(t *testing.T, e env) {
			exec(t, e, "UPDATE accounts SET bal = bal + 1 WHERE id = 3")
		}, "balances sum to 10001"},
		{"row nobody wrote", func(t *testing.T, e env) {
			exec(t, e, "INSERT INTO items VALUES (1000, 1, 1, 'x')")
		}, "items row 1000: no client committed it"},
		{"counters off", func(t *testing.T, e env) {
			e.w.Order(ctx, lines)
			exec(t, e, "UPDATE counters SET orders = orders + 1 WHERE worker = 0")
		}, "counters of worker 0: 2 orders"},
		{"item changed", func(t *testing.T, e env) {
			it := e.w.Item(ctx)
			exec(t, e, fmt.Sprintf("UPDATE items SET pad = 'x' WHERE id = %d", it.ID))
		}, "partly visible or changed: row worker 0 seq 0 pad of 1 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, db := setupInProcess(t, srv, fmt.Sprintf("c%d", i))
			h := NewHistory()
			w := &Worker{ID: 0, DB: db, Cfg: cfg, IDs: NewIDs(0), Rand: rand.New(rand.NewPCG(1, 1)), Rec: h}
			e := env{db: db, w: w, h: h}
			// A clean start passes, so that what fails below is the damage.
			if rep, err := (&Checker{DB: db, Cfg: cfg}).Check(ctx, h); err != nil || !rep.OK() {
				t.Fatalf("before the damage: %v %v", rep, err)
			}
			c.breaks(t, e)
			rep, err := (&Checker{DB: db, Cfg: cfg}).Check(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || !strings.Contains(rep.String(), c.want) {
				t.Fatalf("want a violation %q, got %s", c.want, rep)
			}
		})
	}
}

func TestReadHistory(t *testing.T) {
	var b strings.Builder
	r := NewLineRecorder(&b)
	r.Pending(Txn{Kind: Order, ID: 1, Lines: []Line{{Qty: 1, Pad: 2}}})
	r.Done(Txn{Kind: Order, ID: 1, Lines: []Line{{Qty: 1, Pad: 2}}, Outcome: Committed})
	r.Pending(Txn{Kind: Item, ID: 2, Seq: 7})
	b.WriteString("some other output\n")
	r.Done(Txn{Kind: Transfer, ID: 3, From: 1, To: 2, Amount: 3, Outcome: Failed})
	out := b.String()
	// A kill can cut the last record short.
	out += recordPrefix + `{"kind":1,"id":4,"wor`
	h, err := ReadHistory(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	txns := h.Txns()
	if len(txns) != 3 || txns[1].Outcome != Committed || txns[1].Lines[0].Pad != 2 || txns[2].Outcome != Unknown || txns[2].Seq != 7 || txns[3].Outcome != Failed {
		t.Fatalf("read %+v", txns)
	}
	// Garbage in the middle is an error.
	if _, err := ReadHistory(strings.NewReader(recordPrefix + "{\n" + recordPrefix + "}\n")); err == nil {
		t.Fatal("garbled records read without an error")
	}
}
