package tpcc

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/sql/sqltest"
)

// tinyScale keeps every rule of the population at a size a test loads in
// a moment: two warehouses (so remote lines and payments happen), three
// districts, 30 customers and orders per district, the last 9 new.
var tinyScale = Scale{Warehouses: 2, Items: 200, Districts: 3, Customers: 30, NewOrders: 9}

// loaded starts an in-process percdb and loads the tiny database.
func loaded(t *testing.T) *sql.DB {
	t.Helper()
	return loadedOn(t, sqltest.Start(t, ""))
}

// loadedOn loads the tiny database on srv.
func loadedOn(t *testing.T, srv *sqltest.Server) *sql.DB {
	t.Helper()
	ctx := context.Background()
	if err := CreateSchema(ctx, srv.Open(""), "tpcc"); err != nil {
		t.Fatal(err)
	}
	db := srv.Open("tpcc")
	rows, err := Load(ctx, db, LoadOptions{Scale: tinyScale, Loaders: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// item + stock + district + warehouse + customer + history + orders
	// + new orders, and 5..15 lines per order.
	fixed := 200 + 2*200 + 2*3 + 2 + 2*3*30*3 + 2*3*9
	if rows < int64(fixed+2*3*30*5) || rows > int64(fixed+2*3*30*15) {
		t.Fatalf("loaded %d rows, want %d plus 5..15 lines per order", rows, fixed)
	}
	return db
}

func checksPass(t *testing.T, db *sql.DB, initial bool) {
	t.Helper()
	for _, r := range RunChecks(context.Background(), db, Checks(tinyScale), initial, 0) {
		if !r.Passed() {
			t.Errorf("%s %s: %s: %s", r.ID, r.Text, r.Status, r.Detail)
		}
	}
}

// TestLoadRunCheck loads, checks, runs the mix from four terminals (in both
// New-Order variants, with and without retries) and checks again.
func TestLoadRunCheck(t *testing.T) {
	db := loaded(t)
	checksPass(t, db, true)
	ctx := context.Background()
	for _, opts := range []RunOptions{
		{Retry: true},
		{Retry: false, StockIN: true},
	} {
		opts.Scale, opts.Threads, opts.Seed = tinyScale, 4, 7
		opts.Duration, opts.Transactions = time.Hour, 30
		res, err := Run(ctx, db, opts)
		if err != nil {
			t.Fatal(err)
		}
		var done int64
		for _, st := range res.Txns {
			done += st.Committed + st.RolledBack + st.Failed
			if st.Committed == 0 {
				t.Errorf("%+v: no %s committed", opts, st.Name)
			}
			if st.Committed+st.RolledBack > 0 && !(st.P50 > 0 && st.P50 <= st.P95 && st.P95 <= st.P99 && st.P99 <= st.Max) {
				t.Errorf("%s: latencies p50 %v p95 %v p99 %v max %v", st.Name, st.P50, st.P95, st.P99, st.Max)
			}
			for code, n := range st.Errors {
				t.Logf("%s: %d x %s (%s)", st.Name, n, code, st.FirstError[code])
			}
		}
		if done != 4*30 || res.Unfinished != 0 {
			t.Errorf("%+v: %d transactions ended, %d unfinished; want 120, 0", opts, done, res.Unfinished)
		}
		if res.NewOrders != res.Txns[NewOrder].Committed || res.NewOrders == 0 {
			t.Errorf("new orders %d, committed new-order transactions %d", res.NewOrders, res.Txns[NewOrder].Committed)
		}
		checksPass(t, db, false)
	}
}

// TestChecksFail shows that the checks see a broken database: a payment
// recorded in the warehouse only, an order line too many, a delivered order
// still in NEW-ORDER.
func TestChecksFail(t *testing.T) {
	db := loaded(t)
	for _, q := range []string{
		"UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2",
		"INSERT INTO order_line VALUES (1, 1, 1, 16, 1, 1, NULL, 5, 1.00, 'x')",
		"INSERT INTO new_order VALUES (2, 2, 1)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	failed := map[string]bool{}
	for _, r := range RunChecks(context.Background(), db, Checks(tinyScale), true, 0) {
		if r.Status == "FAIL" {
			failed[r.ID] = true
		} else if r.Status != "pass" {
			t.Errorf("%s: %s: %s", r.ID, r.Status, r.Detail)
		}
	}
	want := "3.3.2.1 3.3.2.3 3.3.2.4 3.3.2.5 3.3.2.6 3.3.2.7 3.3.2.8 3.3.2.11"
	var got []string
	for _, id := range strings.Fields(want) {
		if !failed[id] {
			t.Errorf("check %s passed on a broken database", id)
		}
		got = append(got, id)
	}
	if len(failed) != len(got) {
		t.Errorf("failed checks %v, want exactly %s", failed, want)
	}
}
