package sql

import (
	"fmt"
	"strings"
	"testing"
)

// TestPreferTableScan checks that a read of a secondary index whose
// range holds most of the table, by its statistics, is a scan of the
// table (planrules.PreferTableScan), in GMS's plan (EXPLAIN's type ALL)
// and on the fast path (which leaves it to that plan: a fall-through for
// size), while a narrow range, a covering read and a read under a LIMIT
// keep the index; the answers are the same with and without statistics.
func TestPreferTableScan(t *testing.T) {
	_, db := openInternal(t, t.TempDir(), "")
	db.SetMaxOpenConns(1)
	execAll(t, db, "CREATE DATABASE x", "USE x",
		"CREATE TABLE t (w INT NOT NULL, id INT NOT NULL, k INT NOT NULL, q INT NOT NULL, PRIMARY KEY (w, id), KEY k (k))")
	// More rows than planrules.MinScanRows; k is a permutation of
	// 0..19999.
	const n = 20000
	for start := 0; start < n; start += 4000 {
		var vals []string
		for i := start; i < start+4000; i++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, %d, %d)", i%4, i, (i*7919)%n, i%100))
		}
		execAll(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ","))
	}
	access := func(q string) string {
		t.Helper()
		rows, err := db.Query("EXPLAIN " + q)
		if err != nil {
			t.Fatal(err)
		}
		r := readAll(t, rows)
		return r[0][4] + " " + r[0][6]
	}
	sizeFallThroughs := func() string {
		t.Helper()
		var name, v string
		if err := db.QueryRow("SHOW STATUS LIKE 'Percdb_fastpath_fallthrough_size'").Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	type probe struct{ query, with string }
	probes := []probe{
		{"SELECT count(*), sum(q) FROM t WHERE k < 10 OR k > 500", "ALL NULL"},
		{"SELECT sum(q) FROM t WHERE k > 50", "ALL NULL"},
		{"SELECT sum(a.q) FROM t a WHERE a.k > 50", "ALL NULL"},
		{"SELECT w, id, q FROM t WHERE k >= 30 ORDER BY w, id", "index PRIMARY"}, // the table in key order
		{"SELECT count(*), sum(q) FROM t WHERE k BETWEEN 10 AND 300", "range k"},
		{"SELECT count(*) FROM t WHERE k > 50", "range k"},                    // covering
		{"SELECT w, id, k FROM t WHERE k > 50 ORDER BY k LIMIT 5", "range k"}, // stops after 5 entries
	}
	answers := func() []string {
		var out []string
		for _, p := range probes {
			for range 3 { // the fast path learns a shape, then runs it
				out = append(out, strings.Join(stringsOf(t, db, p.query), ","))
			}
		}
		return out
	}
	without := answers()
	for _, p := range probes {
		if got := access(p.query); !strings.HasPrefix(got, "range k") {
			t.Errorf("without statistics %s: %s, want the index k", p.query, got)
		}
	}
	execAll(t, db, "ANALYZE TABLE t")
	for _, p := range probes {
		if got := access(p.query); got != p.with {
			t.Errorf("with statistics %s: %s, want %s", p.query, got, p.with)
		}
	}
	before := sizeFallThroughs()
	with := answers()
	if after := sizeFallThroughs(); after == before {
		t.Errorf("the fast path ran the wide index reads (Percdb_fastpath_fallthrough_size %s, before %s)", after, before)
	}
	for i := range without {
		if with[i] != without[i] {
			t.Errorf("%s: %s with statistics, %s without", probes[i/3].query, with[i], without[i])
		}
	}
}
