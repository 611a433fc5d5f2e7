package cluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/testproc"
)

// TestLookupAggregateAcrossRegions: aggregates over a lookup join
// computed per join key in the coprocessor (sql/lookupagg.go), with the
// inner table split into regions on three KV nodes so that a batch's
// ranges go to several leaders and one key's rows lie on both sides of a
// boundary, answer what GMS's aggregation of the joined rows answers
// (@percdb_lookup_agg = 0), and the coprocessor served them.
func TestLookupAggregateAcrossRegions(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	db := openDB(t, c.sql.addr, "", true)
	db.SetMaxOpenConns(1) // the session's @percdb_lookup_agg
	mustExec(t, db, "CREATE DATABASE la", c.logs)
	mustExec(t, db, "CREATE TABLE la.o (id INT PRIMARY KEY, k INT, g INT)", c.logs)
	mustExec(t, db, "CREATE TABLE la.l (oid INT NOT NULL, n INT NOT NULL, amount DECIMAL(6,2), d DATETIME, PRIMARY KEY (oid, n))", c.logs)
	var vals []string
	for id := 0; id < 1200; id++ {
		k := (id * 7919) % 1300 // some keys without lines, none repeated
		if id%50 == 0 {
			vals = append(vals, fmt.Sprintf("(%d, NULL, %d)", id, id%7))
			continue
		}
		vals = append(vals, fmt.Sprintf("(%d, %d, %d)", id, k, id%7))
	}
	mustExec(t, db, "INSERT INTO la.o VALUES "+strings.Join(vals, ","), c.logs)
	vals = vals[:0]
	for oid := 0; oid < 1200; oid++ {
		for n := 1; n <= oid%6; n++ {
			d := "'2026-01-02 03:04:05'"
			if (oid+n)%3 == 0 {
				d = "NULL"
			}
			vals = append(vals, fmt.Sprintf("(%d, %d, %d.%02d, %s)", oid, n, (oid*n)%500-100, (oid+n)%100, d))
		}
	}
	mustExec(t, db, "INSERT INTO la.l VALUES "+strings.Join(vals, ","), c.logs)
	var total int
	var ratio float64
	if err := db.QueryRow("SPLIT TABLE la.l BY (299, 3), (700), (1003, 2)").Scan(&total, &ratio); err != nil || total == 0 {
		t.Fatalf("split: %d regions, %v\n%s", total, err, c.logs())
	}
	programs := func() int {
		var name string
		var n int
		if err := db.QueryRow("SHOW STATUS LIKE 'Percdb_lookup_aggregates'").Scan(&name, &n); err != nil {
			t.Fatalf("status: %v\n%s", err, c.logs())
		}
		return n
	}
	for _, q := range []string{
		"SELECT o.g, COUNT(*), SUM(l.amount), AVG(l.amount), MIN(l.n), COUNT(l.d) FROM la.o JOIN la.l ON l.oid = o.k GROUP BY o.g ORDER BY o.g",
		"SELECT o.g, SUM(l.amount) FROM la.o JOIN la.l ON l.oid = o.k WHERE l.d IS NOT NULL AND o.id > 100 GROUP BY o.g ORDER BY o.g",
		"SELECT COUNT(*), SUM(sm) FROM (SELECT o.id, (SELECT SUM(l.amount) FROM la.l WHERE l.oid = o.k AND l.d IS NULL) sm FROM la.o) t WHERE sm > 0",
	} {
		var answers [2]string
		for i, on := range []string{"0", "1"} {
			mustExec(t, db, "SET @percdb_lookup_agg = "+on, c.logs)
			before := programs()
			rows, err := db.Query(q)
			if err != nil {
				t.Fatalf("%s: %v\n%s", q, err, c.logs())
			}
			var out []string
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for j := range vals {
					ptrs[j] = &vals[j]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("%s", vals))
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			answers[i] = strings.Join(out, "\n")
			served := programs() - before
			if on == "1" && served == 0 && !strings.Contains(q, "sm") {
				t.Errorf("%s: not aggregated per join key", q)
			}
			if on == "0" && served != 0 {
				t.Errorf("%s: %d programs with @percdb_lookup_agg = 0", q, served)
			}
		}
		if answers[0] != answers[1] || answers[0] == "" {
			t.Errorf("%s:\nper key %s\nGMS     %s", q, answers[1], answers[0])
		}
	}
}
