package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	percsql "github.com/percdb/percdb/sql"
)

// TestCoprDifferential compares the answers of statements pushed down to
// the coprocessor (copr.go) with those of the same statements on GMS's
// plan (@percdb_coprocessor = 0), over random predicates on integer
// columns of every width and signedness with NULLs, mixed with conditions
// the coprocessor leaves to GMS (collated strings, DECIMAL, arithmetic,
// IN lists): filters, aggregates with and without GROUP BY, COUNT
// (DISTINCT), top-N and LIMIT, on a table of more rows than a
// coprocessor response carries, on an empty table, and inside
// transactions with writes of their own (which the coprocessor cannot see
// and evaluates in process). The result columns' types are compared too.
// Scans are pushed in every scope GMS analyzes on its own: the sides of
// UNION, INTERSECT and EXCEPT (with joins and subqueries in them),
// derived tables, CTEs read twice; those statements also run prepared
// (the plan cache's path), as the source of CREATE TABLE ... SELECT and
// of INSERT ... SELECT.
func TestCoprDifferential(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE cx", `CREATE TABLE cx.t (
		id INT NOT NULL PRIMARY KEY, a TINYINT, b INT, c BIGINT, u INT UNSIGNED, v BIGINT UNSIGNED,
		s VARCHAR(8) COLLATE utf8mb4_0900_ai_ci, d DECIMAL(6,2), ch CHAR(4))`,
		"CREATE TABLE cx.e (id INT NOT NULL PRIMARY KEY, b INT, u INT UNSIGNED)",
		// j is joined to t: a pushed scan on a join's outer side.
		"CREATE TABLE cx.j (jid INT NOT NULL PRIMARY KEY, jb INT, KEY (jb))")
	r := rand.New(rand.NewSource(7))
	pick := func(vs ...string) string { return vs[r.Intn(len(vs))] }
	// More than copr.DefaultPageRows, and than rowCountCap: full scans
	// are cut into sub-ranges evaluated in parallel (copr.RunParallel).
	const rows = 12000
	for i := 0; i < rows; i += 500 {
		var vals []string
		for id := i; id < i+500; id++ {
			null := func(v string) string {
				if r.Intn(6) == 0 {
					return "NULL"
				}
				return v
			}
			vals = append(vals, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s, %s, %s)", id,
				null(fmt.Sprint(r.Intn(256)-128)), null(fmt.Sprint(r.Intn(41)-20)),
				null(pick("-9223372036854775808", "9223372036854775807", fmt.Sprint(r.Int63n(2000)-1000), "9007199254740993")),
				null(fmt.Sprint(r.Intn(30))), null(pick("18446744073709551615", "9223372036854775808", fmt.Sprint(r.Intn(50)))),
				null(pick("'a'", "'A'", "'b'", "'ab '", "''")), null(fmt.Sprintf("%d.%02d", r.Intn(5)-2, r.Intn(100))),
				null(pick("'x'", "'x  '", "'y'"))))
		}
		mustExec(t, admin, "INSERT INTO cx.t VALUES "+strings.Join(vals, ","))
	}
	var jrows []string
	for id := 0; id < 3000; id++ {
		jrows = append(jrows, fmt.Sprintf("(%d, %d)", id*3, r.Intn(60)-20))
	}
	mustExec(t, admin, "INSERT INTO cx.j VALUES "+strings.Join(jrows, ","))
	conns := coprConns(t, srv, "cx")

	intCols := []string{"id", "a", "b", "c", "u", "v"}
	constant := func() string {
		return pick("NULL", "0", "1", "-1", "5", "-20", "127", "-128", "300", "18446744073709551615",
			"9223372036854775807", "-9223372036854775808", "9007199254740992", "4294967295", fmt.Sprint(r.Intn(41)-20))
	}
	var atom func(depth int) string
	atom = func(depth int) string {
		col := intCols[r.Intn(len(intCols))]
		switch n := r.Intn(18); {
		case n < 6:
			return fmt.Sprintf("%s %s %s", col, pick("=", "<>", "<", "<=", ">", ">=", "<=>"), constant())
		case n < 7:
			return fmt.Sprintf("%s %s %s", constant(), pick("=", "<", ">="), col)
		case n < 8:
			return fmt.Sprintf("%s %s %s", col, pick("=", "<", ">", "<=>"), intCols[r.Intn(len(intCols))])
		case n < 9:
			// Of a column of any type: pushed, told by the value's tag.
			return fmt.Sprintf("%s IS %sNULL", pick(col, col, "s", "d", "ch"), pick("", "NOT "))
		case n < 10 && depth < 3:
			return fmt.Sprintf("(%s %s %s)", atom(depth+1), pick("AND", "OR"), atom(depth+1))
		case n < 11 && depth < 3:
			return "NOT (" + atom(depth+1) + ")"
		case n < 12:
			// Left to GMS.
			return pick("s = 'a'", "s > 'a'", "d > 0.5", "d IS NULL", "ch = 'x'", "b + 1 > 3", "a IN (1, 2, -5)", "u BETWEEN 3 AND 9", "c % 7 = 1")
		case n < 13:
			return fmt.Sprintf("%s %% %s %s %s", pick("a", "b", "u"), pick("3", "4", "7"), pick("=", ">"), pick("0", "1", "-1"))
		case n < 15:
			// IN lists: NULLs and values past the column's type among
			// them (those are left to GMS).
			list := []string{constant()}
			for r.Intn(3) != 0 {
				list = append(list, pick(constant(), fmt.Sprint(r.Intn(41)-20), fmt.Sprint(r.Intn(30))))
			}
			return fmt.Sprintf("%s %sIN (%s)", col, pick("", "NOT "), strings.Join(list, ", "))
		}
		return fmt.Sprintf("%s %s %s", col, pick(">", "<"), constant())
	}
	predicate := func() string {
		p := atom(0)
		for r.Intn(3) == 0 {
			p += pick(" AND ", " OR ") + atom(0)
		}
		return p
	}
	// answer gives the result of q, read as rs, as text.
	answer := func(q string, rs *sql.Rows, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		defer rs.Close()
		types, _ := rs.ColumnTypes()
		var head []string
		for _, ct := range types {
			head = append(head, ct.DatabaseTypeName())
		}
		var out []string
		for _, row := range readRows(rs) {
			out = append(out, strings.Join(row, "|"))
		}
		if !strings.Contains(q, "ORDER BY") {
			sort.Strings(out)
		}
		return strings.Join(head, ",") + "\n" + strings.Join(out, "\n")
	}
	query := func(c *sql.Conn, q string) string {
		rs, err := c.QueryContext(ctx, q)
		return answer(q, rs, err)
	}
	// prepared answers q as a prepared statement.
	prepared := func(c *sql.Conn, q string) string {
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			return "error: " + err.Error()
		}
		defer st.Close()
		rs, err := st.QueryContext(ctx)
		return answer(q, rs, err)
	}
	// made answers with the rows of a table made by CREATE TABLE ... q
	// and then given them again by INSERT ... q.
	made := func(c *sql.Conn, q string, n int) string {
		name := fmt.Sprintf("made%d", n)
		for _, s := range []string{"CREATE TABLE " + name + " " + q, "INSERT INTO " + name + " " + q} {
			if _, err := c.ExecContext(ctx, s); err != nil {
				return "error: " + err.Error()
			}
		}
		defer func() { _, _ = c.ExecContext(ctx, "DROP TABLE "+name) }()
		return query(c, "SELECT * FROM "+name)
	}
	pushed, joinsPushed := 0, 0
	same := func(q string) {
		t.Helper()
		on, off := query(conns[0], q), query(conns[1], q)
		if on != off {
			t.Errorf("%s:\npushed: %.2000s\n   GMS: %.2000s", q, on, off)
		}
		var plan strings.Builder
		rs, err := conns[0].QueryContext(ctx, "EXPLAIN FORMAT=TREE "+q)
		if err == nil {
			for _, row := range readRows(rs) {
				plan.WriteString(strings.Join(row, ""))
			}
			rs.Close()
		}
		if strings.Contains(plan.String(), "Coprocessor(") {
			pushed++
			if strings.Contains(plan.String(), "Join") {
				joinsPushed++
			}
		}
	}
	shapes := []string{
		"SELECT * FROM %s WHERE %s",
		"SELECT x.id, x.b FROM %s AS x WHERE %s ORDER BY x.b, x.id LIMIT 6",
		"SELECT count(*), count(b), min(c), max(u), min(v), max(a) FROM %s WHERE %s",
		"SELECT b %% 3, count(*), max(c), min(u) FROM %s WHERE %s GROUP BY b %% 3",
		"SELECT a, count(*), count(ch) FROM %s WHERE %s GROUP BY a",
		"SELECT u %% 4 AS m, min(a), count(s) FROM %s WHERE %s GROUP BY m HAVING count(*) > 1",
		"SELECT v, u, count(*) FROM %s WHERE %s GROUP BY v, u",
		"SELECT COUNT(DISTINCT b) FROM %s WHERE %s",
		"SELECT COUNT(DISTINCT v) FROM %s WHERE %s",
		"SELECT id, b, ch FROM %s WHERE %s ORDER BY b DESC, id LIMIT 5",
		"SELECT id, u FROM %s WHERE %s ORDER BY u, id LIMIT 3",
		"SELECT id, c FROM %s WHERE %s ORDER BY c DESC, id DESC LIMIT 7",
		"SELECT id, a FROM %s WHERE %s LIMIT 4",
		"SELECT s, count(*) FROM %s WHERE %s GROUP BY s",
		"SELECT sum(b), avg(u) FROM %s WHERE %s",
		// Exact sums past the int64 range (c and v hold the extremes).
		"SELECT sum(c), sum(v), sum(a), count(*) FROM %s WHERE %s",
		"SELECT a, sum(u), sum(c MOD 7) FROM %s WHERE %s GROUP BY a",
		// AVG as a pushed sum and count: past the int64 range, of an
		// expression, beside other aggregates, over groups without values.
		"SELECT avg(c), avg(v), avg(a), count(*) FROM %s WHERE %s",
		"SELECT a, avg(b), min(b), avg(c MOD 7), sum(b) FROM %s WHERE %s GROUP BY a",
		"SELECT u %% 3 AS m, avg(u + b), avg(v) FROM %s WHERE %s GROUP BY m",
		// SUM and AVG of a DECIMAL column, exact, as percdb's.
		"SELECT sum(d), avg(d), count(d), count(*) FROM %s WHERE %s",
		"SELECT a %% 5, sum(d), avg(d), max(b) FROM %s WHERE %s GROUP BY a %% 5",
		"SELECT id, b FROM %s WHERE %s ORDER BY id DESC LIMIT 4",
		"SELECT id, b FROM %s WHERE (%s) AND id > 4000 ORDER BY id LIMIT 4",
		"SELECT count(*), max(b) FROM %s WHERE (%s) AND (id < 300 OR id BETWEEN 2000 AND 2100 OR id IN (7, 4500, 4999))",
		"SELECT id, a FROM %s WHERE id < 200 AND NOT (%s)",
		// A subquery beside pushed conditions (tests/difftest seed 18).
		"SELECT count(*), 0 FROM e UNION SELECT x.id, x.b FROM %s x WHERE (%s) AND x.b < (SELECT MIN(y.b) + 3 FROM t y)",
		"SELECT id FROM %s WHERE (%s) AND b > (SELECT AVG(b) FROM t)",
		// Joins: the scan of the outer side is pushed.
		"SELECT count(*), sum(u) FROM %s WHERE (%s) AND EXISTS (SELECT 1 FROM j WHERE j.jid = id)",
		"SELECT id, b, jb FROM %s JOIN j ON j.jid = id WHERE %s",
		"SELECT id, jid FROM %s LEFT JOIN j ON j.jid = b + 30 WHERE %s ORDER BY id LIMIT 9",
		"SELECT count(*) FROM %s WHERE (%s) AND NOT EXISTS (SELECT 1 FROM j WHERE j.jid = id)",
		"SELECT id FROM %s WHERE (%s) AND id IN (SELECT jid FROM j WHERE jb > 0)",
		// Under a LIMIT the outer side is read in growing pages: the
		// rows are the first ones in key order either way.
		"SELECT id, jid, jb FROM %s JOIN j ON j.jid = id WHERE %s LIMIT 7",
		"SELECT id, jid FROM %s LEFT JOIN j ON j.jid = b + 30 WHERE %s LIMIT 40",
		"SELECT id FROM %s WHERE (%s) AND NOT EXISTS (SELECT 1 FROM j WHERE j.jid = id) LIMIT 3",
		// IN lists of the primary key: its points are read with batched
		// point reads (copr.RunPoints), missing ones among them, in
		// growing batches under a LIMIT.
		"SELECT id, b, s FROM %s WHERE (%s) AND id IN (3, 7, 500, 4999, 11999, 12500, -1) ORDER BY id",
		"SELECT count(*), sum(b), max(c), avg(u) FROM %s WHERE (%s) AND id IN (1, 2, 3, 40, 41, 7000, 99999)",
		"SELECT id, a FROM %s WHERE (%s) AND id IN (5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40) LIMIT 20",
		"SELECT id, b FROM %s WHERE (%s) AND id IN (1, 2, 3, 100, 200, 300, 400) ORDER BY b DESC, id LIMIT 2",
		"SELECT id, jid FROM %s JOIN j ON j.jid = id WHERE (%s) AND id IN (0, 3, 6, 9, 12, 301, 9000) LIMIT 5",
		"SELECT id, b FROM %s WHERE (%s) AND (id IN (4, 8, 15, 16, 23, 42) OR id BETWEEN 100 AND 110)",
		// Ranges of the key: one program over all of them, one request
		// (copr.RunRanges), its limit, top-N and groups over them all.
		"SELECT id, b FROM %s WHERE (%s) AND (id BETWEEN 10 AND 20 OR id BETWEEN 5000 AND 5010 OR id > 11990) LIMIT 15",
		"SELECT id, b FROM %s WHERE (%s) AND (id BETWEEN 10 AND 200 OR id BETWEEN 5000 AND 5100 OR id >= 11900) ORDER BY b, id LIMIT 5",
		"SELECT b %% 3, count(*), sum(u), min(c) FROM %s WHERE (%s) AND (id < 50 OR id BETWEEN 3000 AND 3050 OR id >= 11950) GROUP BY b %% 3",
		"SELECT COUNT(DISTINCT b) FROM %s WHERE (%s) AND (id BETWEEN 100 AND 400 OR id BETWEEN 9000 AND 9300)",
	}
	// Scans pushed in a scope GMS analyzes on its own, whose execution
	// indexes it assigns again with the whole statement's (the comment
	// at the top of copr.go): a join's outer side read the pushed scan's
	// columns for its inner side's, and a subquery its outer row's for
	// its own, until a coprScan reported its columns' ids. Their first
	// columns have plain names: they also make tables (scoped, below).
	scoped := []string{
		"SELECT id, b FROM e UNION ALL SELECT id, jb FROM %s JOIN j ON j.jid = b WHERE %s",
		"SELECT id, u FROM e UNION ALL SELECT jb, id FROM j JOIN %s ON jid = b + 1 WHERE jb > 0 AND %s",
		"SELECT jid, jb FROM j WHERE jb < 3 INTERSECT SELECT jid, jb FROM %s JOIN j ON j.jid = b WHERE %s",
		"SELECT id, jb FROM %s JOIN j ON j.jid = b WHERE %s EXCEPT SELECT id, b FROM e",
		"SELECT id, b FROM e UNION ALL SELECT (SELECT MIN(y.jb) FROM j y WHERE y.jid = x.b), x.id FROM %s x WHERE %s",
		"SELECT id, b FROM e UNION ALL SELECT (SELECT MIN(y.jb) FROM j y), x.c FROM %s x WHERE %s",
		"SELECT id, b FROM e UNION SELECT x.id, x.b FROM %s x WHERE (%s) AND x.u > (SELECT MIN(y.jb) FROM j y WHERE y.jid = x.a)",
		"WITH w AS (SELECT id, jb FROM %s JOIN j ON j.jid = b WHERE %s) SELECT * FROM w UNION ALL SELECT * FROM w",
		"SELECT * FROM (SELECT id, b FROM e UNION ALL SELECT id, jb FROM %s JOIN j ON j.jid = b WHERE %s) d WHERE b > 0",
		"SELECT d.id, d.jb FROM (SELECT id, jb FROM %s JOIN j ON j.jid = b WHERE %s) d JOIN j ON j.jid = d.id",
		// A derived table on a join's inner side (pushDerived).
		"SELECT x.id, d.c, d.m FROM %s x LEFT JOIN (SELECT b, count(*) AS c, min(u) AS m FROM t WHERE %s GROUP BY b) d ON d.b = x.a WHERE x.id < 300",
	}
	shapes = append(shapes, scoped...)
	isScoped := map[string]bool{}
	for _, sh := range scoped {
		isScoped[sh] = true
	}
	for _, q := range []string{"SELECT COUNT(DISTINCT id) FROM t", "SELECT id, count(*) FROM t GROUP BY id", "SELECT count(*) FROM t"} {
		same(q)
	}
	for i := 0; i < 300 && !t.Failed(); i++ {
		p := predicate()
		shape := shapes[i%len(shapes)]
		table := "t"
		if i%25 == 0 {
			table = "e" // an empty table
			p = strings.NewReplacer("a", "b", "c", "b", "v", "u", "s ", "b ", "d ", "b ", "ch", "b").Replace(p)
			shape = shapes[r.Intn(8)]
			shape = strings.NewReplacer("a,", "b,", "ch", "b", "max(a)", "max(b)", "min(a)", "min(b)", "count(s)", "count(b)", "v,", "b,", "min(v)", "min(u)", "max(c)", "max(b)", "min(c)", "min(b)", "DISTINCT v", "DISTINCT u", "GROUP BY a", "GROUP BY b", "SELECT a", "SELECT b").Replace(shape)
		}
		q := fmt.Sprintf(shape, table, p)
		if i%10 == 9 {
			// Writes of the transaction's own, which the store cannot
			// see: both sessions write, read and roll back. Optimistic,
			// so that the second session's writes of the same rows do not
			// wait for the first's locks.
			id := r.Intn(rows + 10)
			w := []string{
				"BEGIN OPTIMISTIC",
				fmt.Sprintf("UPDATE t SET b = %d, u = %d WHERE id = %d", r.Intn(41)-20, r.Intn(30), id), // a value b holds: MySQL refuses one it does not (1264)
				fmt.Sprintf("DELETE FROM t WHERE id = %d", id+1),
				fmt.Sprintf("INSERT INTO t (id, a, b, u) VALUES (%d, 1, %d, 2)", rows+100+i, r.Intn(41)-20),
			}
			for _, c := range conns {
				for _, s := range w {
					if _, err := c.ExecContext(ctx, s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
			}
			same(q)
			for _, c := range conns {
				if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		same(q)
		if isScoped[shape] {
			if on, off := prepared(conns[0], q), prepared(conns[1], q); on != off {
				t.Errorf("prepared %s:\npushed: %.2000s\n   GMS: %.2000s", q, on, off)
			}
			if on, off := made(conns[0], q, 0), made(conns[1], q, 1); on != off {
				t.Errorf("CREATE TABLE and INSERT ... %s:\npushed: %.2000s\n   GMS: %.2000s", q, on, off)
			}
		}
	}
	// An IN list over rows the transaction wrote, updated, deleted and
	// inserted, which the store cannot see.
	for _, c := range conns {
		for _, s := range []string{"BEGIN OPTIMISTIC", "UPDATE t SET b = 7 WHERE id = 10", "DELETE FROM t WHERE id = 11", "INSERT INTO t (id, a, b) VALUES (12345, 1, 2)"} {
			if _, err := c.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	same("SELECT id, b FROM t WHERE id IN (9, 10, 11, 12, 12345, 12346) AND b + 0 > -100 ORDER BY id")
	same("SELECT count(*), sum(b) FROM t WHERE id IN (9, 10, 11, 12, 12345) AND b % 1 = 0")
	for _, c := range conns {
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
	// IN lists on a prefix of a composite primary key: ranges of the
	// key, read as one multi-range request, the list evaluated by the
	// program too.
	mustExec(t, admin, "CREATE TABLE cx.m (w TINYINT NOT NULL, id INT NOT NULL, b INT, u INT UNSIGNED, PRIMARY KEY (w, id))")
	var mrows []string
	for i := 0; i < 3000; i++ {
		b := fmt.Sprint(r.Intn(41) - 20)
		if r.Intn(8) == 0 {
			b = "NULL"
		}
		mrows = append(mrows, fmt.Sprintf("(%d, %d, %s, %d)", i%40-20, i, b, r.Intn(30)))
	}
	mustExec(t, admin, "INSERT INTO cx.m VALUES "+strings.Join(mrows, ","))
	for i := 0; i < 40 && !t.Failed(); i++ {
		var list []string
		for n := 1 + r.Intn(6); len(list) < n; {
			list = append(list, pick(fmt.Sprint(r.Intn(44)-22), "NULL", "127", "-128", "300"))
		}
		in := fmt.Sprintf("w IN (%s)", strings.Join(list, ", "))
		cond := strings.NewReplacer("a", "w", "c", "b", "v", "u", "s ", "b ", "d ", "b ", "ch", "b").Replace(atom(1))
		same(fmt.Sprintf(pick(
			"SELECT * FROM m WHERE %s AND %s",
			"SELECT w, count(*), sum(b), max(u) FROM m WHERE %s AND %s GROUP BY w",
			"SELECT count(*), COUNT(DISTINCT b) FROM m WHERE %s AND %s",
			"SELECT w, id, b FROM m WHERE %s AND %s ORDER BY b DESC, id LIMIT 5",
			"SELECT w, id FROM m WHERE %s AND %s LIMIT 7",
			"SELECT w, id FROM m WHERE %s AND NOT (%s) AND id %% 5 = 0",
		), in, cond))
	}
	if pushed < 150 {
		t.Errorf("only %d statements were pushed down", pushed)
	}
	if joinsPushed == 0 {
		t.Error("no join's outer side was pushed down")
	}
	t.Logf("%d statements pushed down", pushed)
}

// coprConns returns two connections to database db, closed when the test
// ends: the first with pushdown to the coprocessor, the second without
// (@percdb_coprocessor = 0).
func coprConns(t *testing.T, srv *percsql.Server, db string) []*sql.Conn {
	t.Helper()
	conns := make([]*sql.Conn, 2)
	for i := range conns {
		c, err := openDB(t, srv, db).Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		conns[i] = c
	}
	if _, err := conns[1].ExecContext(context.Background(), "SET @percdb_coprocessor = 0"); err != nil {
		t.Fatal(err)
	}
	return conns
}

// TestExplainCoprocessor checks that EXPLAIN shows what runs in the
// coprocessor, and that a statement with an expression outside its set
// keeps GMS's plan.
func TestExplainCoprocessor(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE DATABASE x", "USE x",
		"CREATE TABLE t (w INT NOT NULL, id INT NOT NULL, k INT, q INT, s VARCHAR(10), PRIMARY KEY (w, id), KEY k (k))",
		"INSERT INTO t VALUES (1, 1, 1, 1, 'a'), (1, 2, 2, 5, 'b')")
	for _, c := range []struct{ q, extra string }{
		{"SELECT count(*) FROM t WHERE q > 50", "Using coprocessor (where, aggregation)"},
		{"SELECT q % 10 AS m, count(*) FROM t GROUP BY q % 10 ORDER BY m", "Using coprocessor (aggregation)"},
		{"SELECT COUNT(DISTINCT k) FROM t", "Using coprocessor (aggregation)"},
		{"SELECT w, id, q FROM t ORDER BY q DESC, id LIMIT 10", "Using coprocessor (top-N)"},
		{"SELECT * FROM t WHERE q > 1 LIMIT 3", "Using coprocessor (where, limit)"},
		{"SELECT * FROM t WHERE q > 1 AND s = 'a'", "Using coprocessor (where)"},
		{"SELECT * FROM t WHERE s = 'a'", ""},
		{"SELECT x.id FROM t AS x WHERE x.q > 1 ORDER BY x.q, x.id LIMIT 2", "Using coprocessor (where)"},
		// A join's outer side is pushed (its inner side, read under each
		// outer row, is not).
		{"SELECT * FROM t JOIN t y ON t.k = y.id WHERE y.q > 3", "Using coprocessor (where)"},
		// Under a LIMIT too, read in growing pages.
		{"SELECT * FROM t JOIN t y ON t.k = y.id WHERE y.q > 3 LIMIT 5", "Using coprocessor (where)"},
		{"SELECT sum(q) FROM t WHERE q > 1", "Using coprocessor (where, aggregation)"},
		{"SELECT avg(q) FROM t WHERE q > 1", "Using coprocessor (where, aggregation)"},
		{"SELECT q % 10 AS m, avg(q % 3), avg(id), count(*) FROM t GROUP BY q % 10", "Using coprocessor (aggregation)"},
		{"SELECT avg(s) FROM t WHERE q > 1", "Using coprocessor (where)"},
		{"SELECT sum(s) FROM t WHERE q > 1", "Using coprocessor (where)"},
		{"SELECT * FROM t WHERE k = 5", ""},
		{"SELECT count(*) FROM t WHERE w = 1 OR w = 7", "Using coprocessor (where, aggregation)"},
		// IN lists of integer constants: on a key prefix (the ranges of
		// its values, one request) and over a scan.
		// (The IN list is the key range's, which enforces it: no filter
		// is left, planrules/enforced.go.)
		{"SELECT count(*) FROM t WHERE w IN (1, 7)", "Using coprocessor (aggregation)"},
		{"SELECT * FROM t WHERE q IN (1, 5, NULL)", "Using coprocessor (where)"},
		{"SELECT * FROM t WHERE q NOT IN (1, 5) AND w IN (1, 2)", "Using coprocessor (where)"},
		// A value the column's type cannot hold is GMS's to convert.
		{"SELECT * FROM t WHERE q IN (1, 5000000000)", ""},
		{"SELECT * FROM t WHERE s IN ('a', 'b')", ""},
		{"SELECT id FROM t WHERE w = 1 AND q > 2 ORDER BY w DESC, id DESC LIMIT 1", ""},
		// In the scopes GMS analyzes on its own: a derived table, a
		// join in a UNION side.
		{"SELECT w, c FROM (SELECT w, count(*) AS c FROM t WHERE q < 10 GROUP BY w) d WHERE c > 0", "Using coprocessor (where, aggregation)"},
		{"SELECT w, id FROM t WHERE s = 'a' UNION ALL SELECT y.w, t.id FROM t JOIN t y ON t.k = y.id WHERE y.q > 3", "Using coprocessor (where)"},
		// A derived table on a join's inner side sees no outer row: its
		// own plan is pushed (pushDerived).
		{"SELECT a.id, d.c FROM t a LEFT JOIN (SELECT w, count(*) AS c FROM t WHERE q < 10 GROUP BY w) d ON d.w = a.w WHERE a.s = 'b'", "Using coprocessor (where, aggregation)"},
	} {
		got := strings.Join(queryRows(t, db, "EXPLAIN "+c.q), ";")
		if c.extra == "" && strings.Contains(got, "coprocessor") || !strings.Contains(got, c.extra) {
			t.Errorf("EXPLAIN %s: Extra %q, want %q", c.q, got, c.extra)
		}
	}
}

// TestCountByIndexDifferential compares COUNT(*) of whole tables pushed
// down, which counts the entries of the narrowest index when one is
// narrower than the rows (narrowestIndex), with GMS's count of the rows:
// indexes over NULLs, a collated unique key, a composite primary key, a
// table without a primary key, rows past the short-value limit, an empty
// table, after deletes, and in a transaction whose own writes the store
// cannot see. EXPLAIN names the index read.
func TestCountByIndexDifferential(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE ci",
		`CREATE TABLE ci.a (w INT NOT NULL, id INT NOT NULL, k INT, s VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, pad VARCHAR(400),
			PRIMARY KEY (w, id), KEY (k), UNIQUE KEY us (s))`,
		"CREATE TABLE ci.b (k INT, pad VARCHAR(400), KEY kk (k))",
		"CREATE TABLE ci.c (id INT PRIMARY KEY, s VARCHAR(300), KEY ss (s))",
		"CREATE TABLE ci.e (id INT PRIMARY KEY, k INT, pad VARCHAR(100), KEY (k))")
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 6000; i += 500 {
		var a, b, c []string
		for id := i; id < i+500; id++ {
			k, s := fmt.Sprint(r.Intn(50)), fmt.Sprintf("'s%d'", id)
			if r.Intn(5) == 0 {
				k = "NULL"
			}
			if r.Intn(4) == 0 {
				s = "NULL" // many NULLs under a unique key
			}
			pad := fmt.Sprintf("REPEAT('p', %d)", r.Intn(3)*150) // up to 300 bytes
			a = append(a, fmt.Sprintf("(%d, %d, %s, %s, %s)", id%10, id, k, s, pad))
			b = append(b, fmt.Sprintf("(%s, %s)", k, pad))
			c = append(c, fmt.Sprintf("(%d, 'x%d')", id, id))
		}
		mustExec(t, admin, "INSERT INTO ci.a VALUES "+strings.Join(a, ","),
			"INSERT INTO ci.b VALUES "+strings.Join(b, ","), "INSERT INTO ci.c VALUES "+strings.Join(c, ","))
	}
	mustExec(t, admin, "DELETE FROM ci.a WHERE id % 7 = 0", "DELETE FROM ci.b WHERE k = 3")
	conns := coprConns(t, srv, "ci")
	one := func(c *sql.Conn, q string) string {
		t.Helper()
		var out []string
		rs, err := c.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for _, row := range readRows(rs) {
			out = append(out, strings.Join(row, "|"))
		}
		rs.Close()
		return strings.Join(out, ";")
	}
	check := func(when string) {
		t.Helper()
		for _, tbl := range []string{"a", "b", "c", "e"} {
			q := "SELECT count(*) FROM " + tbl
			if on, off := one(conns[0], q), one(conns[1], q); on != off {
				t.Errorf("%s, %s: pushed %s, GMS %s", when, q, on, off)
			}
		}
	}
	check("committed")
	for _, c := range conns {
		for _, s := range []string{"BEGIN OPTIMISTIC", "INSERT INTO a VALUES (1, 100001, NULL, NULL, 'x')", "DELETE FROM a WHERE w = 2 AND id < 100",
			"INSERT INTO b VALUES (NULL, 'y')", "DELETE FROM e"} {
			if _, err := c.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	check("in a transaction with writes")
	for _, c := range conns {
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ tbl, key string }{{"a", "k"}, {"b", "kk"}, {"c", ""}, {"e", "k"}} {
		rows := queryRows(t, admin, "EXPLAIN SELECT count(*) FROM ci."+c.tbl)
		f := strings.Fields(strings.Join(rows, " "))
		// id select_type table partitions type possible_keys key ...
		if len(f) < 7 || c.key == "" && (f[4] != "ALL" || strings.Contains(rows[0], "Using index")) ||
			c.key != "" && (f[4] != "index" || f[6] != c.key || !strings.Contains(rows[0], "Using index")) {
			t.Errorf("EXPLAIN count(*) of %s: %q, want key %q", c.tbl, rows, c.key)
		}
	}
}
