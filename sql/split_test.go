package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestSplitTable: on the single node, SPLIT TABLE cuts the store's
// regions at row keys (BETWEEN in equal widths, BY at given handles,
// skipping keys that start a region already), SHOW TABLE ... REGIONS
// lists them with TiDB's key format, the rows read and write across the
// regions, and what cannot be split is refused with MySQL errors.
func TestSplitTable(t *testing.T) {
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	mustExec(t, db, "CREATE DATABASE s", "USE s", "CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v))", "CREATE TABLE c (a INT, b INT, PRIMARY KEY (a, b))")
	for i := 0; i < 100; i += 10 {
		mustExec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d, %d), (%d, %d), (%d, %d), (%d, %d), (%d, %d), (%d, %d), (%d, %d), (%d, %d), (%d, %d), (%d, %d)",
			i, i, i+1, i+1, i+2, i+2, i+3, i+3, i+4, i+4, i+5, i+5, i+6, i+6, i+7, i+7, i+8, i+8, i+9, i+9))
	}
	regions := func() []string {
		t.Helper()
		rows, err := db.Query("SHOW TABLE t REGIONS")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			// REGION_ID START_KEY END_KEY EPOCH_VERSION LEADER_ADDR: the
			// range, with the table id written as T.
			var id, version int64
			var start, end, addr string
			if err := rows.Scan(&id, &start, &end, &version, &addr); err != nil {
				t.Fatal(err)
			}
			out = append(out, start+".."+end)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var tid string
		for _, r := range out {
			if i := strings.Index(r, "t_"); i >= 0 {
				tid = strings.Split(r[i:], "_")[1]
				break
			}
		}
		for i := range out {
			out[i] = strings.ReplaceAll(out[i], "t_"+tid+"_", "t_T_")
		}
		return out
	}
	if got := regions(); len(got) != 1 {
		t.Fatalf("before any split: regions %v, want one", got)
	}
	if got := queryRows(t, db, "SPLIT TABLE t BETWEEN (0) AND (100) REGIONS 4"); len(got) != 1 || got[0] != "4 1" {
		t.Fatalf("SPLIT BETWEEN: %v, want 4 1", got)
	}
	want := "[..t_T_r_0 t_T_r_0..t_T_r_25 t_T_r_25..t_T_r_50 t_T_r_50..t_T_r_75 t_T_r_75..]"
	if got := fmt.Sprint(regions()); !strings.HasPrefix(got, "[") || !strings.Contains(got, "t_T_r_0..t_T_r_25 t_T_r_25..t_T_r_50 t_T_r_50..t_T_r_75 t_T_r_75..") {
		t.Fatalf("regions after SPLIT BETWEEN: %s, want %s", got, want)
	}
	// 25 starts a region already: one split.
	if got := queryRows(t, db, "SPLIT TABLE t BY (25), (60)"); len(got) != 1 || got[0] != "1 1" {
		t.Fatalf("SPLIT BY: %v, want 1 1", got)
	}
	if got := fmt.Sprint(regions()); !strings.Contains(got, "t_T_r_50..t_T_r_60 t_T_r_60..t_T_r_75") {
		t.Fatalf("regions after SPLIT BY: %s", got)
	}
	// Rows read and write across the regions, in one transaction.
	mustExec(t, db, "BEGIN", "UPDATE t SET v = v + 1 WHERE id IN (1, 30, 55, 70, 99)", "COMMIT")
	if got := queryRows(t, db, "SELECT COUNT(*), SUM(v) FROM t"); got[0] != "100 4955" {
		t.Fatalf("count and sum after the splits: %v, want 100 4955", got)
	}
	for q, code := range map[string]uint16{
		"SPLIT TABLE t BETWEEN (10) AND (5) REGIONS 2": 1210,
		"SPLIT TABLE t BETWEEN (0) AND (10) REGIONS 0": 1210,
		"SPLIT TABLE t BY ('x')":                       1210,
		"SPLIT TABLE t INDEX kv BY (1)":                1235,
		"SPLIT TABLE c BY (1)":                         1235,
		"SPLIT TABLE nosuch BY (1)":                    1146,
		"SHOW TABLE nosuch REGIONS":                    1146,
	} {
		if _, err := db.Exec(q); errCode(err) != code {
			t.Errorf("%s: %v, want error %d", q, err, code)
		}
	}
}
