package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestIndexChoiceLongestPrefix checks the index chosen without histograms
// (planrules.PreferPinnedIndex): the index whose equalities pin the longest prefix,
// rather than a shorter prefix of the primary key, unless a unique key is
// pinned whole; and that the rows read through it are the rows a full
// scan of an unindexed copy finds, over strings under a case-insensitive
// PAD SPACE collation, NULLs and numbers compared with strings.
func TestIndexChoiceLongestPrefix(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	const cols = "w SMALLINT NOT NULL, d TINYINT NOT NULL, id INT NOT NULL, last VARCHAR(16) COLLATE utf8mb4_0900_ai_ci, first VARCHAR(16), bal DECIMAL(8,2)"
	mustExec(t, db, "CREATE DATABASE x", "USE x",
		"CREATE TABLE c ("+cols+", PRIMARY KEY (w, d, id), KEY name_idx (w, d, last, first), UNIQUE KEY first_u (first))",
		"CREATE TABLE n ("+cols+")")
	r := rand.New(rand.NewSource(5))
	lasts := []string{"'ABLE'", "'able'", "'able '", "'BAR'", "'bär'", "'5'", "'05'", "NULL", "''"}
	var vals []string
	for i := range 300 {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d, %s, 'f%d', %d.25)", r.Intn(2)+1, r.Intn(3)+1, i, lasts[r.Intn(len(lasts))], i, r.Intn(100)))
	}
	mustExec(t, db, "INSERT INTO c VALUES "+strings.Join(vals, ","), "INSERT INTO n SELECT * FROM c")
	const sel = "SELECT id FROM c WHERE "
	checkPlans(t, db, []planCase{
		{sel + "w = 1 AND d = 2 AND last = 'able' ORDER BY first", []explainRow{{"c", "ref", "name_idx"}}},
		{sel + "last = 'able' AND d = 2 AND w = 1 AND bal > 3", []explainRow{{"c", "ref", "name_idx"}}},
		{sel + "w = 1 AND d = 2 AND last = 'able' AND first = 'f9'", []explainRow{{"c", "const", "first_u"}}},
		{sel + "w = 1 AND d = 2 AND id = 7 AND last = 'able'", []explainRow{{"c", "const", "PRIMARY"}}},
		{sel + "w = 1 AND d = 2", []explainRow{{"c", "ref", "PRIMARY"}}},
		{sel + "w = 1 AND d = 2 AND last = 5", []explainRow{{"c", "ref", "PRIMARY"}}},
		{sel + "w = 1 AND d = 2 AND last IS NULL", []explainRow{{"c", "ref", "PRIMARY"}}},
		// An aliased table is left to GMS (equalityBound).
		{"SELECT id FROM c t WHERE t.w = 1 AND t.d = 2 AND t.last = 'able'", []explainRow{{"t", "ref", "PRIMARY"}}},
	})
	same := func(where string) {
		t.Helper()
		var got [2]string
		for i, tbl := range []string{"c", "n"} {
			rows, err := db.Query("SELECT id, last, first FROM " + tbl + " WHERE " + where + " ORDER BY id")
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			got[i] = fmt.Sprint(readRows(rows))
			rows.Close()
		}
		if got[0] != got[1] {
			t.Errorf("WHERE %s:\n indexed   %s\n unindexed %s", where, got[0], got[1])
		}
	}
	for _, w := range []string{"1", "2", "'1'", "3"} {
		for _, d := range []string{"1", "2", "3"} {
			for _, last := range append(lasts, "'ABLE  '", "5", "'Bar'", "'BAR' COLLATE utf8mb4_bin") {
				same(fmt.Sprintf("w = %s AND d = %s AND last = %s", w, d, last))
				same(fmt.Sprintf("last = %s AND d = %s AND w = %s AND first > 'f1'", last, d, w))
			}
		}
	}
}
