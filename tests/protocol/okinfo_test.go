package protocol

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// lenencInfo is info as MySQL writes it in an OK packet, a
// length-encoded string (the reader's Info is the rest of the packet).
func lenencInfo(info string) string {
	return string(rune(len(info))) + info
}

// TestUpdateInfoWarnings reads the OK packet of an UPDATE that raised
// warnings: its warning count and the info text's "Warnings: n" agree
// (GMS's info always said "Warnings: 0"), with the fast path and
// without, and of the same UPDATE prepared (vitess wrote a
// COM_STMT_EXECUTE's OK packet with no info and a warning count of 0);
// the info is a length-encoded string, as MySQL writes it (vitess wrote
// a '#' before it, which the mariadb client took for its length).
func TestUpdateInfoWarnings(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{
			"SET SESSION sql_mode = ''",
			"DROP TABLE IF EXISTS okinfo",
			"CREATE TABLE okinfo (id INT PRIMARY KEY, a TINYINT)",
			"INSERT INTO okinfo VALUES (1, 1), (2, 2)",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		res, err := c.QueryAll("UPDATE okinfo SET a = a + 1000")
		if err != nil || len(res) != 1 {
			t.Fatalf("UPDATE: %v, %d results", err, len(res))
		}
		const want = "Rows matched: 2  Changed: 2  Warnings: 2"
		if res[0].Warnings != 2 || res[0].Info != lenencInfo(want) {
			t.Errorf("UPDATE: warnings %d, info %q; want 2 and %q", res[0].Warnings, res[0].Info, want)
		}

		id, _, err := c.Prepare("UPDATE okinfo SET a = a + ? WHERE id >= ?")
		if err != nil {
			t.Fatalf("prepare: %v", err)
		}
		for _, tc := range []struct {
			delta, from int64
			want        string
			warnings    uint16
		}{
			{1000, 1, "Rows matched: 2  Changed: 0  Warnings: 2", 2}, // both already 127: clipped again
			{-1, 2, "Rows matched: 1  Changed: 1  Warnings: 0", 0},
		} {
			res, err := c.Execute(id, tc.delta, tc.from)
			if err != nil || len(res) != 1 {
				t.Fatalf("execute (%d, %d): %v, %d results", tc.delta, tc.from, err, len(res))
			}
			if res[0].Warnings != tc.warnings || res[0].Info != lenencInfo(tc.want) {
				t.Errorf("prepared UPDATE (%d, %d): warnings %d, info %q; want %d and %q", tc.delta, tc.from, res[0].Warnings, res[0].Info, tc.warnings, tc.want)
			}
		}

	})
}

// TestInsertInfo reads the OK packets of INSERT and REPLACE: MySQL's
// "Records: R  Duplicates: D  Warnings: W" for several rows of VALUES
// and for a SELECT's rows (none, one or more), none for one row of
// VALUES (sql_insert.cc; GMS sent none for any), with the fast path and
// without, text and prepared. The same statements on MariaDB 10.11
// (PERCDB_TEST_MARIADB) answer the same.
func TestInsertInfo(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{
			"SET SESSION sql_mode = 'STRICT_TRANS_TABLES'",
			"DROP TABLE IF EXISTS insinfo",
			"CREATE TABLE insinfo (a INT PRIMARY KEY, b INT)",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for _, tc := range []struct {
			query, info string
			warnings    uint16
		}{
			{"INSERT INTO insinfo VALUES (1, 1)", "", 0},
			{"INSERT INTO insinfo VALUES (2, 2), (3, 3)", "Records: 2  Duplicates: 0  Warnings: 0", 0},
			{"INSERT INTO insinfo (a, b) VALUES (4, 4), (5, 5)", "Records: 2  Duplicates: 0  Warnings: 0", 0},
			{"INSERT IGNORE INTO insinfo VALUES (5, 5), (6, 6)", "Records: 2  Duplicates: 1  Warnings: 1", 1},
			{"REPLACE INTO insinfo VALUES (6, 7), (7, 7)", "Records: 2  Duplicates: 1  Warnings: 0", 0},
			{"REPLACE INTO insinfo VALUES (8, 8)", "", 0},
			{"INSERT INTO insinfo VALUES (7, 0), (9, 9) ON DUPLICATE KEY UPDATE b = b + 10", "Records: 2  Duplicates: 1  Warnings: 0", 0},
			{"INSERT INTO insinfo VALUES (1, 1) ON DUPLICATE KEY UPDATE b = 1", "", 0},
			{"INSERT INTO insinfo SELECT a + 100, b FROM insinfo WHERE a < 3", "Records: 2  Duplicates: 0  Warnings: 0", 0},
			{"INSERT INTO insinfo SELECT a + 200, b FROM insinfo WHERE a > 1000", "Records: 0  Duplicates: 0  Warnings: 0", 0},
			{"INSERT IGNORE INTO insinfo SELECT a, b FROM insinfo WHERE a < 3", "Records: 2  Duplicates: 2  Warnings: 2", 2},
			{"INSERT INTO insinfo SELECT a, b + 1 FROM insinfo WHERE a < 4 ON DUPLICATE KEY UPDATE b = 1", "Records: 3  Duplicates: 2  Warnings: 0", 0}, // a = 1 already 1,
			{"REPLACE INTO insinfo SELECT a, b FROM insinfo WHERE a < 3", "Records: 2  Duplicates: 0  Warnings: 0", 0},
			{"SET SESSION sql_mode = ''", "", 0},
			{"INSERT INTO insinfo VALUES (10, 300000000000), (11, 'x')", "Records: 2  Duplicates: 0  Warnings: 2", 2},
		} {
			res, err := c.QueryAll(tc.query)
			if err != nil || len(res) != 1 {
				t.Fatalf("%s: %v, %d results", tc.query, err, len(res))
			}
			want := tc.info
			if want != "" {
				want = lenencInfo(want)
			}
			if res[0].Warnings != tc.warnings || res[0].Info != want {
				t.Errorf("%s: warnings %d, info %q; want %d and %q", tc.query, res[0].Warnings, res[0].Info, tc.warnings, want)
			}
		}

		// LOAD DATA's own text (sql_load.cc): the rows REPLACE
		// deleted, the rows not copied.
		for i, tc := range []struct{ rows, how, info string }{
			{"1\t1\n30\t30\n", "IGNORE", "Records: 2  Deleted: 0  Skipped: 1  Warnings: 1"},
			{"1\t5\n31\t31\n", "REPLACE", "Records: 2  Deleted: 1  Skipped: 0  Warnings: 0"},
		} {
			file := filepath.Join(t.TempDir(), fmt.Sprintf("rows%d.tsv", i))
			if err := os.WriteFile(file, []byte(tc.rows), 0o644); err != nil {
				t.Fatal(err)
			}
			q := fmt.Sprintf("LOAD DATA INFILE '%s' %s INTO TABLE insinfo", file, tc.how)
			res, err := c.QueryAll(q)
			if err != nil || len(res) != 1 {
				t.Fatalf("%s: %v, %d results", q, err, len(res))
			}
			if res[0].Info != lenencInfo(tc.info) {
				t.Errorf("%s: info %q; want %q", q, res[0].Info, lenencInfo(tc.info))
			}
		}

		id, _, err := c.Prepare("INSERT INTO insinfo VALUES (?, 1), (?, 2) ON DUPLICATE KEY UPDATE b = b + 1")
		if err != nil {
			t.Fatalf("prepare: %v", err)
		}
		res, err := c.Execute(id, int64(1), int64(20))
		if err != nil || len(res) != 1 {
			t.Fatalf("execute: %v, %d results", err, len(res))
		}
		if want := lenencInfo("Records: 2  Duplicates: 1  Warnings: 0"); res[0].Info != want {
			t.Errorf("prepared upsert: info %q; want %q", res[0].Info, want)
		}
	})
}
