package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/testproc"
)

// TestSplitUnderBank: under the bank workload, the bank's tables are
// split into several regions with SPLIT TABLE (accounts at every other
// id, so that most transfers commit across regions); pd then balances
// the leaderships until every KV node leads some region; the KV node
// leading the first region is SIGKILLed and restarted, and the workload
// goes on. The crash suite's Checker finds nothing acknowledged lost and
// the sum invariant. The regions and their leaders are logged.
func TestSplitUnderBank(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	b := startBank(t, c)
	h, p := b.h, b.p
	db := openDB(t, c.sql.addr, b.cfg.Database, true)

	splits := map[string]string{
		"accounts":  "SPLIT TABLE accounts BY (2), (4), (6), (8)",
		"transfers": "SPLIT TABLE transfers BETWEEN (0) AND (100000) REGIONS 4",
		"items":     "SPLIT TABLE items BETWEEN (0) AND (100000) REGIONS 2",
		"orders":    "SPLIT TABLE orders BETWEEN (0) AND (100000) REGIONS 2",
	}
	for table, stmt := range splits {
		var total int
		var ratio float64
		if err := db.QueryRow(stmt).Scan(&total, &ratio); err != nil {
			t.Fatalf("%s: %v\n%s", stmt, err, c.logs())
		}
		if total == 0 {
			t.Fatalf("%s split nothing", table)
		}
		b.progress(h.Len() + 10)
	}
	leaders := func() (map[string]int, int, error) {
		out, n := map[string]int{}, 0
		for table := range splits {
			rows, err := db.Query("SHOW TABLE " + table + " REGIONS")
			if err != nil {
				return nil, 0, err
			}
			for rows.Next() {
				var id, version int64
				var start, end, addr string
				if err := rows.Scan(&id, &start, &end, &version, &addr); err != nil {
					rows.Close()
					return nil, 0, err
				}
				out[addr]++
				n++
			}
			if err := rows.Close(); err != nil {
				return nil, 0, err
			}
		}
		return out, n, nil
	}
	var spread map[string]int
	waitFor(t, "leaders spread over the three KV nodes", func() bool {
		m, _, err := leaders()
		spread = m
		return err == nil && len(m) == 3
	}, func() string { return fmt.Sprintf("leaders by node: %v\n%s", spread, c.logs()) })
	_, regions, err := leaders()
	if err != nil {
		t.Fatal(err)
	}
	b.progress(h.Len() + 30)

	killed := c.leader(t)
	out := outage(t, c, killed, h, p, -1)
	b.progress(h.Len() + 30)
	rep := b.finish()
	after, _, err := leaders()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; %d regions over the bank's tables, leaders by node %v, after the kill of %s (reads back %v) %v; check: %s",
		h.Summary(), regions, spread, killed.name, out.Round(time.Millisecond), after, rep)
	c.stop()
}
