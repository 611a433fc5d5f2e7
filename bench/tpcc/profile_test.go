package tpcc

import (
	"context"
	"testing"

	"github.com/percdb/percdb/bench"
	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/sql/sqltest"
)

// TestProfile counts the store requests of each transaction type on an
// in-process percdb through its /metrics: every type asks the store for
// something, the three that write prewrite and lock, and the two read-only
// ones (Order-Status, Stock-Level) neither prewrite nor lock. The
// database still passes its checks after the profile's transactions.
func TestProfile(t *testing.T) {
	srv := sqltest.StartConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0"})
	db := loadedOn(t, srv)
	addr := srv.Percdb().StatusAddr().String()
	ctx := context.Background()
	profile, err := Profile(ctx, db, ProfileOptions{Scale: tinyScale, Transactions: 5, Seed: 7,
		Sample: func(ctx context.Context) (map[string]float64, error) { return bench.ScrapeKVRequests(ctx, addr) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(profile) != int(numTxnTypes) {
		t.Fatalf("%d types profiled, want %d", len(profile), numTxnTypes)
	}
	for i, p := range profile {
		t.Logf("%s: %v", p.Name, bench.KVRequests(p.Counters))
		if p.Name != TxnType(i).String() || p.Transactions != 5 || p.Failed != 0 {
			t.Errorf("%s: %d transactions, %d failed; want %s, 5, 0", p.Name, p.Transactions, p.Failed, TxnType(i))
		}
		if bench.KVRequests(p.Counters).Total() == 0 {
			t.Errorf("%s: no store requests counted", p.Name)
		}
		writes := TxnType(i) == NewOrder || TxnType(i) == Payment || TxnType(i) == Delivery
		for _, cmd := range []string{"prewrite", "acquire_pessimistic_lock"} {
			if got := p.Counters[cmd] > 0; got != writes {
				t.Errorf("%s: %s %.1f per transaction; want requests: %v", p.Name, cmd, p.Counters[cmd], writes)
			}
		}
	}
	checksPass(t, db, false)
}
