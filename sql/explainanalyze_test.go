package sql_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestExplainAnalyze: EXPLAIN ANALYZE runs the statement and answers one
// line per operator with the rows it returned a loop and its loops (the
// inner side of a nested loop once per outer row); the times vary, so
// they are checked for their shape only. A statement that changes data
// is refused with 1235.
func TestExplainAnalyze(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE x")
	db := openDB(t, srv, "x")
	mustExec(t, db, "CREATE TABLE ea (id INT PRIMARY KEY, k INT, v VARCHAR(10), KEY (k))",
		"INSERT INTO ea VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 3, 'd'), (5, 3, 'e')")
	timing := regexp.MustCompile(`actual time=[0-9]+\.[0-9]{3}\.\.[0-9]+\.[0-9]{3} `)
	for _, c := range []struct {
		query string
		want  []string // the lines, times written as T
	}{{
		// A nested loop: the inner table read once per outer row.
		query: "SELECT a.id, b.id FROM ea a JOIN ea b ON a.v < b.v",
		want: []string{
			"-> Project  (actual time=T rows=10 loops=1)",
			"    -> InnerJoin  (actual time=T rows=10 loops=1)",
			"        -> TableAlias(b)  (actual time=T rows=5 loops=1)",
			"            -> Table  (actual time=T rows=5 loops=1)",
			"        -> TableAlias(a)  (actual time=T rows=5 loops=5)",
			"            -> Table  (actual time=T rows=5 loops=5)",
		},
	}} {
		rows, err := db.Query("EXPLAIN ANALYZE " + c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		got := readRows(rows)
		rows.Close()
		if len(got) != 1 || len(got[0]) != 1 {
			t.Fatalf("%s: %v, want one row of one column", c.query, got)
		}
		lines := strings.Split(timing.ReplaceAllString(got[0][0], "actual time=T "), "\n")
		if strings.Join(lines, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", c.query, strings.Join(lines, "\n"), strings.Join(c.want, "\n"))
		}
	}
	// Every operator of a statement whose plan the other rules shape is
	// timed or said not to be.
	rows, err := db.Query("EXPLAIN ANALYZE SELECT * FROM ea WHERE EXISTS (SELECT 1 FROM ea x WHERE x.k = ea.id)")
	if err != nil {
		t.Fatal(err)
	}
	got := readRows(rows)
	rows.Close()
	for _, line := range strings.Split(got[0][0], "\n") {
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "-> ") ||
			!timing.MatchString(line) && !strings.HasSuffix(line, "(within its parent)") && !strings.HasSuffix(line, "(never executed)") {
			t.Errorf("line %q", line)
		}
	}
	if !strings.HasPrefix(got[0][0], "-> Project  (actual time=") || !strings.Contains(got[0][0], " rows=3 loops=1)") {
		t.Errorf("EXISTS: %s", got[0][0])
	}
	if _, err := db.Exec("EXPLAIN ANALYZE DELETE FROM ea"); err == nil || !strings.Contains(err.Error(), "1235") && !strings.Contains(err.Error(), "1064") {
		t.Errorf("EXPLAIN ANALYZE DELETE: %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM ea").Scan(&n); err != nil || n != 5 {
		t.Errorf("rows after EXPLAIN ANALYZE DELETE: %d %v", n, err)
	}
}
