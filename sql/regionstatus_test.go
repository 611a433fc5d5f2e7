package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestRegionStatus: information_schema.TIKV_REGION_STATUS on the single
// node lists every region with a row for each table's rows and each index
// it overlaps: one region over everything at first, then, after SPLIT
// TABLE, the table's rows in five regions, the index's keys (before the
// rows in key order) in the first, every region's epoch version counting
// the splits.
func TestRegionStatus(t *testing.T) {
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	mustExec(t, db, "CREATE DATABASE rs", "USE rs", "CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v))",
		"INSERT INTO t VALUES (1, 1), (30, 30), (60, 60)")
	const q = `SELECT REGION_ID, IS_INDEX, COALESCE(INDEX_NAME, '-'), START_KEY, END_KEY, EPOCH_VERSION,
		APPROXIMATE_SIZE IS NOT NULL, APPROXIMATE_KEYS IS NULL, LEADER_STORE_ID IS NULL
		FROM information_schema.TIKV_REGION_STATUS WHERE DB_NAME = 'rs' AND TABLE_NAME = 't' ORDER BY START_KEY, IS_INDEX`
	rows := func() []string {
		t.Helper()
		got := queryRows(t, db, q)
		// Keys name the table by id: write it T.
		for i, r := range got {
			if j := strings.Index(r, "t_"); j >= 0 {
				tid := strings.Split(r[j:], "_")[1]
				got[i] = strings.ReplaceAll(r, "t_"+tid+"_", "t_T_")
			}
		}
		return got
	}
	got := rows()
	if len(got) != 2 || !strings.HasSuffix(got[0], " 0 -   1 1 1 1") || !strings.HasSuffix(got[1], " 1 kv   1 1 1 1") {
		t.Fatalf("before a split:\n%s", strings.Join(got, "\n"))
	}
	if r := queryRows(t, db, "SPLIT TABLE t BETWEEN (0) AND (100) REGIONS 4"); len(r) != 1 || r[0] != "4 1" {
		t.Fatalf("SPLIT: %v", r)
	}
	got = rows()
	var shape []string
	for _, r := range got {
		f := strings.Fields(r)
		shape = append(shape, strings.Join(f[1:], " "))
	}
	// The first region ends at the first split, row 0: it holds the
	// index's keys (t_T_i_ sorts before t_T_r_) and the negative handles.
	want := []string{
		"0 - t_T_r_0 2 1 1 1",
		"1 kv t_T_r_0 2 1 1 1",
		"0 - t_T_r_0 t_T_r_25 3 1 1 1",
		"0 - t_T_r_25 t_T_r_50 4 1 1 1",
		"0 - t_T_r_50 t_T_r_75 5 1 1 1",
		"0 - t_T_r_75 5 1 1 1",
	}
	if fmt.Sprint(shape) != fmt.Sprint(want) {
		t.Fatalf("after SPLIT TABLE:\n%s\nwant\n%s", strings.Join(shape, "\n"), strings.Join(want, "\n"))
	}
	// Every region is listed, those with no table's keys too.
	if n := queryRows(t, db, "SELECT COUNT(DISTINCT REGION_ID) FROM information_schema.TIKV_REGION_STATUS"); n[0] != "5" {
		t.Fatalf("regions listed: %v, want 5", n)
	}
}
