package sql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	percsql "github.com/percdb/percdb/sql"
)

// TestCoprRangesOneRequest checks that a pushed read of many ranges of
// one region (an IN list on a prefix of the primary key, an OR of
// ranges) costs one coprocessor request, not one per range
// (copr.RunRanges), through the fast path and through GMS's plan, and
// answers what the rows hold.
func TestCoprRangesOneRequest(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprint("fast=", fast), func(t *testing.T) {
			srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", DisableFastPath: !fast, AutoAnalyzeInterval: time.Hour}) // no ANALYZE among the counted requests
			db := openDB(t, srv, "")
			db.SetMaxOpenConns(1)
			mustExec(t, db, "CREATE DATABASE mr", "CREATE TABLE mr.t (w INT, id INT, b INT, PRIMARY KEY (w, id))")
			var vals []string
			for w := 0; w < 20; w++ {
				for id := 0; id < 50; id++ {
					vals = append(vals, fmt.Sprintf("(%d, %d, %d)", w, id, w*100+id))
				}
			}
			mustExec(t, db, "INSERT INTO mr.t VALUES "+strings.Join(vals, ","))
			for _, c := range []struct {
				q      string
				ranges int
				want   string
			}{
				// Ten prefixes, 500 rows, as an OR and as an IN list
				// (GMS's HASH IN, which the program evaluates as OpIn).
				{"SELECT count(*), sum(b) FROM mr.t WHERE w = 1 OR w = 3 OR w = 5 OR w = 7 OR w = 9 OR w = 11 OR w = 13 OR w = 15 OR w = 17 OR w = 19", 10, "500 512250"},
				{"SELECT count(*), sum(b) FROM mr.t WHERE w IN (1, 3, 5, 7, 9, 11, 13, 15, 17, 19)", 10, "500 512250"},
				{"SELECT count(*), sum(b) FROM mr.t WHERE w IN (1, 3, 5, 7, 9, 11, 13, 15, 17, 19, NULL, 400) AND id < 10", 10, "100 100450"},
				// IN lists over the whole key: points, read by batched
				// point reads (copr.RunPoints), no request.
				{"SELECT w, id, b FROM mr.t WHERE w IN (19, 2, 7) AND id IN (3, 4) ORDER BY b", 0, "2 3 203|2 4 204|7 3 703|7 4 704|19 3 1903|19 4 1904"},
				{"SELECT b FROM mr.t WHERE w IN (4, 6, 8, 10) AND b % 10 = 9 ORDER BY b DESC LIMIT 3", 4, "1049|1039|1029"},
				// Ten ranges of the whole key, 3 rows each.
				{"SELECT count(*), sum(b) FROM mr.t WHERE " + orOfRanges(10), 10, "30 27060"},
				// Rows in key order under a LIMIT: the first of them. A
				// reader that may stop early reads range by range, in
				// growing pages (copr.RunPaged): not counted.
				{"SELECT group_concat(b) FROM (SELECT b FROM mr.t WHERE " + orOfRanges(10) + " LIMIT 4) d", 0, "1,2,3,201"},
				{"SELECT b FROM mr.t WHERE " + orOfRanges(10) + " ORDER BY b DESC LIMIT 2", 10, "1803|1802"},
			} {
				before := scrape(t, srv)
				got := strings.Join(queryRows(t, db, c.q), "|")
				after := scrape(t, srv)
				if got != c.want {
					t.Errorf("%s: %q, want %q", c.q, got, c.want)
				}
				n := metricValue(t, after, "percdb_kv_requests_total", "command=coprocessor", "result=ok") -
					metricValue(t, before, "percdb_kv_requests_total", "command=coprocessor", "result=ok")
				t.Logf("%s: %v coprocessor requests", c.q, n)
				if c.ranges > 0 && (n < 1 || n >= float64(c.ranges)) {
					t.Errorf("%s: %v coprocessor requests for %d ranges of one region", c.q, n, c.ranges)
				}
			}
		})
	}
}

// orOfRanges returns n ranges of mr.t's key, (w, id) from (2i, 1) to
// (2i, 3), ORed.
func orOfRanges(n int) string {
	var or []string
	for i := 0; i < n; i++ {
		or = append(or, fmt.Sprintf("(w = %d AND id BETWEEN 1 AND 3)", 2*i))
	}
	return strings.Join(or, " OR ")
}
