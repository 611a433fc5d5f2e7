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
		"SPLIT TABLE t INDEX nosuch BY (1)":            1176,
		"SPLIT TABLE t INDEX kv BY (1, 2, 3)":          1136,
		"SPLIT TABLE c BY ('x')":                       1210,
		"SPLIT TABLE c BETWEEN (5) AND (1) REGIONS 2":  1210,
		"SPLIT TABLE nosuch BY (1)":                    1146,
		"SHOW TABLE nosuch REGIONS":                    1146,
	} {
		if _, err := db.Exec(q); errCode(err) != code {
			t.Errorf("%s: %v, want error %d", q, err, code)
		}
	}
}

// TestSplitTableByIndexAndCompositeKey: SPLIT TABLE cuts an index's
// entries (INDEX i BY values, BETWEEN by the keys' bytes) and the rows of
// a table whose primary key is composite, at values of a prefix of the
// key's columns converted to their types; SHOW TABLE t INDEX i REGIONS
// lists the index's regions; reads across them are unchanged.
func TestSplitTableByIndexAndCompositeKey(t *testing.T) {
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	mustExec(t, db, "CREATE DATABASE s", "USE s",
		"CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), d DATE, KEY kn (name), KEY kd (d))",
		"CREATE TABLE c (a INT, b VARCHAR(10), v INT, PRIMARY KEY (a, b))")
	for i := 0; i < 50; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d, 'n%02d', DATE_ADD('2024-01-01', INTERVAL %d DAY))", i, i, i),
			fmt.Sprintf("INSERT INTO c VALUES (%d, 'b%d', %d), (%d, 'z%d', %d)", i%5, i, i, i%5, i, -i))
	}
	count := func(q string) int {
		t.Helper()
		return len(queryRows(t, db, q))
	}
	if n := count("SHOW TABLE t INDEX kn REGIONS"); n != 1 {
		t.Fatalf("kn's regions before a split: %d", n)
	}
	if got := queryRows(t, db, "SPLIT TABLE t INDEX kn BY ('n10'), ('n20'), ('n30')"); got[0] != "3 1" {
		t.Fatalf("SPLIT INDEX kn BY: %v", got)
	}
	if n := count("SHOW TABLE t INDEX kn REGIONS"); n != 4 {
		t.Fatalf("kn's regions after three splits: %d, want 4", n)
	}
	regions := queryRows(t, db, "SHOW TABLE t INDEX kn REGIONS")
	if !strings.Contains(strings.Join(regions, "\n"), "_i_") {
		t.Fatalf("kn's regions do not start at index keys: %v", regions)
	}
	if got := queryRows(t, db, "SPLIT TABLE t INDEX kd BETWEEN ('2024-01-01') AND ('2024-03-01') REGIONS 4"); got[0] != "4 1" {
		t.Fatalf("SPLIT INDEX kd BETWEEN: %v", got)
	}
	if n := count("SHOW TABLE t INDEX kd REGIONS"); n < 4 {
		t.Fatalf("kd's regions after the split: %d", n)
	}
	// A composite primary key: by the first column, and by both.
	if got := queryRows(t, db, "SPLIT TABLE c BY (1), (2, 'm'), (3)"); got[0] != "3 1" {
		t.Fatalf("SPLIT composite BY: %v", got)
	}
	if n := count("SHOW TABLE c REGIONS"); n != 4 {
		t.Fatalf("c's regions after three splits: %d, want 4", n)
	}
	if got := queryRows(t, db, "SPLIT TABLE c BETWEEN (0) AND (5) REGIONS 2"); got[0] != "1 1" && got[0] != "2 1" {
		t.Fatalf("SPLIT composite BETWEEN: %v", got)
	}
	for q, want := range map[string]string{
		"SELECT COUNT(*), SUM(v) FROM c":                            "100 0",
		"SELECT COUNT(*) FROM c WHERE a = 2 AND b >= 'm'":           "10",
		"SELECT COUNT(*) FROM t WHERE name BETWEEN 'n05' AND 'n25'": "21",
		"SELECT COUNT(*) FROM t WHERE d >= '2024-02-01'":            "19",
	} {
		if got := queryRows(t, db, q); got[0] != want {
			t.Errorf("%s: %v, want %s", q, got, want)
		}
	}
}
