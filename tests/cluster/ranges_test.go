package cluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/testproc"
)

// TestRangesAcrossRegions: a read of many ranges of a table split into
// regions on three KV nodes (an OR of ranges of the key, the ranges of a
// region sent to its leader in one coprocessor request, a region's end
// cutting a range) answers what the rows hold, as the same read range
// by range without the coprocessor does; so do an IN list on a composite
// key's prefix and a NOT EXISTS read by an anti lookup join.
func TestRangesAcrossRegions(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	db := openDB(t, c.sql.addr, "", true)
	db.SetMaxOpenConns(1) // the session's @percdb_coprocessor
	mustExec(t, db, "CREATE DATABASE mr", c.logs)
	mustExec(t, db, "CREATE TABLE mr.t (id INT PRIMARY KEY, v INT)", c.logs)
	var vals []string
	for id := 0; id < 1000; id++ {
		vals = append(vals, fmt.Sprintf("(%d, %d)", id, id%7))
	}
	mustExec(t, db, "INSERT INTO mr.t VALUES "+strings.Join(vals, ","), c.logs)
	var total int
	var ratio float64
	if err := db.QueryRow("SPLIT TABLE mr.t BY (250), (500), (750)").Scan(&total, &ratio); err != nil || total == 0 {
		t.Fatalf("split: %d regions, %v\n%s", total, err, c.logs())
	}
	// [100, 300] crosses 250, [490, 510] crosses 500; the points are
	// ranges of one row; id > 740 crosses 750 to the table's end.
	where := "id BETWEEN 100 AND 300 OR id BETWEEN 490 AND 510 OR id = 600 OR id = 601 OR id BETWEEN 700 AND 702 OR id > 740"
	var want [2]int
	for id := 0; id < 1000; id++ {
		if id >= 100 && id <= 300 || id >= 490 && id <= 510 || id == 600 || id == 601 || id >= 700 && id <= 702 || id > 740 {
			want[0]++
			want[1] += id % 7
		}
	}
	for _, pushed := range []string{"1", "0"} {
		mustExec(t, db, "SET @percdb_coprocessor = "+pushed, c.logs)
		for _, q := range []string{
			"SELECT count(*), sum(v) FROM mr.t WHERE " + where,
			"SELECT count(*), sum(v) FROM (SELECT v FROM mr.t WHERE v >= 0 AND (" + where + ")) d",
		} {
			var got [2]int
			if err := db.QueryRow(q).Scan(&got[0], &got[1]); err != nil {
				t.Fatalf("%s: %v\n%s", q, err, c.logs())
			}
			if got != want {
				t.Errorf("coprocessor %s: %s: %v, want %v", pushed, q, got, want)
			}
		}
	}
	// An IN list on a composite key's prefix (its ranges in one request
	// per region, the list evaluated there too), and a NOT EXISTS on a
	// nullable column read by an anti lookup join, across the regions of
	// mr.m: w in 0..9, id in 0..99.
	mustExec(t, db, "CREATE TABLE mr.m (w INT, id INT, v INT, PRIMARY KEY (w, id))", c.logs)
	vals = vals[:0]
	for w := 0; w < 10; w++ {
		for id := 0; id < 100; id++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, %d)", w, id, (w+id)%5))
		}
	}
	mustExec(t, db, "INSERT INTO mr.m VALUES "+strings.Join(vals, ","), c.logs)
	if err := db.QueryRow("SPLIT TABLE mr.m BY (3, 50), (6, 0), (8, 99)").Scan(&total, &ratio); err != nil || total == 0 {
		t.Fatalf("split: %d regions, %v\n%s", total, err, c.logs())
	}
	want = [2]int{}
	for _, w := range []int{1, 3, 5, 6, 8} {
		for id := 0; id < 100; id++ {
			if v := (w + id) % 5; v == 0 || v == 2 {
				want[0]++
				want[1] += v + w
			}
		}
	}
	// t's v is id % 7, so its rows with id < 100 have an m row.
	notExists := [2]int{900, 0}
	for id := 100; id < 1000; id++ {
		notExists[1] += id % 7
	}
	for _, pushed := range []string{"1", "0"} {
		mustExec(t, db, "SET @percdb_coprocessor = "+pushed, c.logs)
		mustExec(t, db, "SET @percdb_anti_lookup = "+pushed, c.logs)
		for q, want := range map[string][2]int{
			"SELECT count(*), sum(v + w) FROM mr.m WHERE w IN (1, 3, 5, 6, 8, NULL, 12) AND v IN (0, 2)":                    want,
			"SELECT count(*), sum(a.v) FROM mr.t a WHERE NOT EXISTS (SELECT 1 FROM mr.m b WHERE b.w = a.v AND b.id = a.id)": notExists,
		} {
			var got [2]int
			if err := db.QueryRow(q).Scan(&got[0], &got[1]); err != nil {
				t.Fatalf("%s: %v\n%s", q, err, c.logs())
			}
			if got != want {
				t.Errorf("coprocessor %s: %s: %v, want %v", pushed, q, got, want)
			}
		}
	}
}
