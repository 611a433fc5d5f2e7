package sql_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// groupedSubqueryQueries are correlated scalar subqueries over random
// tables with NULLs in every correlated column; grouped says whether the
// grouped path must serve the query (decorrelate.go), the others being
// shapes it must leave to GMS's row-by-row evaluation.
var groupedSubqueryQueries = []struct {
	q       string
	grouped bool
}{
	{"SELECT id, (SELECT SUM(v) FROM i WHERE i.a = o.a) FROM o ORDER BY id", true},
	{"SELECT id, (SELECT COUNT(*) FROM i WHERE i.a = o.a) FROM o ORDER BY id", true},
	{"SELECT id, (SELECT COUNT(v) FROM i WHERE i.a = o.a AND i.b = o.b AND i.v > 20) FROM o ORDER BY id", true},
	{"SELECT id, (SELECT AVG(d) FROM i WHERE o.b = i.b) FROM o ORDER BY id", true},
	{"SELECT id, (SELECT MAX(s) FROM i WHERE i.a = o.a) FROM o ORDER BY id", true},
	{"SELECT id, (SELECT GROUP_CONCAT(s ORDER BY s, id) FROM i WHERE i.b = o.b) FROM o ORDER BY id", true},
	{"SELECT id, (SELECT COALESCE(SUM(v), 0) + COUNT(*) FROM i WHERE i.a = o.a) FROM o ORDER BY id", true},
	{"SELECT id, (SELECT SUM(i.v) FROM i, j WHERE i.id = j.id AND j.w > 3 AND i.a = o.a AND j.a = o.b) FROM o ORDER BY id", true},
	{"SELECT id FROM o WHERE o.b < (SELECT COUNT(*) FROM i WHERE i.b = o.b) ORDER BY id", true},
	{"SELECT COUNT(*), SUM(sm) FROM (SELECT o.id, o.a, (SELECT SUM(v) FROM i, j WHERE i.id = j.id AND i.a = o.a) sm FROM o WHERE o.id > 10) t WHERE t.a + 100 <> sm", true},
	{"SELECT o.id, (SELECT SUM(v) FROM i WHERE i.a = o.a) FROM o JOIN j ON j.id = o.id WHERE j.w < 5 ORDER BY o.id", true},
	// Not grouped: an unsigned column against a signed one, an outer
	// column in the aggregate, a comparison other than =, GROUP BY, a
	// LIMIT over the aggregate.
	{"SELECT id, (SELECT SUM(v) FROM i WHERE i.u = o.a) FROM o ORDER BY id", false},
	{"SELECT id, (SELECT SUM(v + o.b) FROM i WHERE i.a = o.a) FROM o ORDER BY id", false},
	{"SELECT id, (SELECT SUM(v) FROM i WHERE i.a < o.a) FROM o ORDER BY id", false},
	{"SELECT id, (SELECT SUM(v) FROM i WHERE i.a = o.a GROUP BY i.a) FROM o ORDER BY id", false},
	// GMS looks the outer column up in k's index on a, per outer row.
	{"SELECT id, (SELECT SUM(v) FROM k WHERE k.a = o.a) FROM o ORDER BY id", false},
	// GMS reads a user variable once per statement.
	{"SELECT id, (SELECT SUM(v) FROM i WHERE i.a = o.a AND i.v > @gs_min) FROM o ORDER BY id", true},
}

// TestGroupedSubqueryNotInWrites: an UPDATE whose correlated subquery
// reads the table it writes sees its own earlier rows' writes row by
// row, which one grouped run before them would not; writes are left to
// GMS's evaluation.
func TestGroupedSubqueryNotInWrites(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE gw", "USE gw",
		"CREATE TABLE o (id INT PRIMARY KEY, a INT, x INT)",
		"CREATE TABLE i (id INT PRIMARY KEY, a INT, v INT)",
		"INSERT INTO o VALUES (1, 1, NULL), (2, 2, NULL), (3, NULL, NULL)",
		"INSERT INTO i VALUES (1, 1, 5), (2, 1, 6), (3, 2, 7)")
	before := serverStatus(t, db, "Percdb_grouped_subqueries")
	mustExec(t, db, "UPDATE gw.o SET x = (SELECT SUM(v) FROM gw.i WHERE i.a = o.a)")
	if n := serverStatus(t, db, "Percdb_grouped_subqueries") - before; n != 0 {
		t.Errorf("%d grouped runs in an UPDATE", n)
	}
	// Nor a routine's statements, which may run many times in one plan.
	mustExec(t, db, "CREATE PROCEDURE gw.p() BEGIN DECLARE k INT DEFAULT 0; DECLARE s DOUBLE; WHILE k < 2 DO "+
		"INSERT INTO gw.i VALUES (10 + k, 2, 1); SELECT SUM(x) INTO s FROM (SELECT (SELECT SUM(v) FROM gw.i WHERE i.a = o.a) x FROM gw.o) t; "+
		"SET k = k + 1; END WHILE; SET @gw_s = s; END", "CALL gw.p()")
	if n := serverStatus(t, db, "Percdb_grouped_subqueries") - before; n != 0 {
		t.Errorf("%d grouped runs in a routine", n)
	}
	var got string
	if err := db.QueryRow("SELECT GROUP_CONCAT(COALESCE(x, -1) ORDER BY id) FROM gw.o").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "11,7,-1" {
		t.Errorf("x = %s, want 11,7,-1", got)
	}
}

// TestGroupedSubqueryDifferential checks that correlated scalar
// subqueries run once, grouped, answer exactly what GMS's evaluation
// per outer row answers (@percdb_decorrelate = 0), and that the grouped
// path served the queries it should.
func TestGroupedSubqueryDifferential(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE gs", "USE gs",
		"CREATE TABLE o (id INT PRIMARY KEY, a INT, b TINYINT)",
		"CREATE TABLE i (id INT PRIMARY KEY, a BIGINT, b INT, u INT UNSIGNED, v INT, d DECIMAL(6,2), s VARCHAR(5))",
		"CREATE TABLE j (id INT PRIMARY KEY, a SMALLINT, w INT)",
		"CREATE TABLE k (id INT PRIMARY KEY, a BIGINT, v INT, KEY (a))")
	r := rand.New(rand.NewSource(29))
	maybe := func(v string) string {
		if r.Intn(6) == 0 {
			return "NULL"
		}
		return v
	}
	var ov, iv, jv []string
	for id := 1; id <= 120; id++ {
		ov = append(ov, fmt.Sprintf("(%d, %s, %s)", id, maybe(fmt.Sprint(r.Intn(14)-2)), maybe(fmt.Sprint(r.Intn(9)-4))))
	}
	for id := 1; id <= 400; id++ {
		iv = append(iv, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s)", id,
			maybe(fmt.Sprint(r.Intn(12))), maybe(fmt.Sprint(r.Intn(7)-3)), maybe(fmt.Sprint(r.Intn(12))),
			maybe(fmt.Sprint(r.Intn(100))), maybe(fmt.Sprintf("%d.%02d", r.Intn(500)-250, r.Intn(100))),
			maybe(fmt.Sprintf("'%c%c'", 'a'+r.Intn(4), 'A'+r.Intn(4)))))
		if r.Intn(3) > 0 {
			jv = append(jv, fmt.Sprintf("(%d, %s, %d)", id, maybe(fmt.Sprint(r.Intn(9)-4)), r.Intn(10)))
		}
	}
	mustExec(t, db, "INSERT INTO gs.o VALUES "+strings.Join(ov, ","),
		"INSERT INTO gs.i VALUES "+strings.Join(iv, ","),
		"INSERT INTO gs.j VALUES "+strings.Join(jv, ","),
		"INSERT INTO gs.k SELECT id, a, v FROM gs.i")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	setVar := func(v string) {
		if _, err := conn.ExecContext(ctx, "SET @percdb_decorrelate = "+v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, "SET @gs_min = 30"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "USE gs"); err != nil {
		t.Fatal(err)
	}
	for _, c := range groupedSubqueryQueries {
		setVar("0")
		want, wantErr := answer(ctx, conn, c.q)
		setVar("1")
		before := serverStatus(t, db, "Percdb_grouped_subqueries")
		got, gotErr := answer(ctx, conn, c.q)
		runs := serverStatus(t, db, "Percdb_grouped_subqueries") - before
		if wantErr != nil || gotErr != nil {
			t.Errorf("%s: errors: grouped %v, per row %v", c.q, gotErr, wantErr)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\ngrouped %.600v\nper row %.600v", c.q, got, want)
		}
		// One run per statement, however often GMS's plan repeats the
		// subquery (a derived table's column filtered above it).
		if (runs == 1) != c.grouped || runs > 1 {
			t.Errorf("%s: %d grouped runs, want grouped %v (once)", c.q, runs, c.grouped)
		}
		if len(want) == 0 {
			t.Errorf("%s: no rows: the case tests nothing", c.q)
		}
	}
}
