package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"

	percsql "github.com/percdb/percdb/sql"
)

// planCacheQueries are prepared statements whose plans the plan cache
// keeps, each over pc.t (id primary key, k indexed, c a string, n a
// nullable integer), with the number of parameters.
var planCacheQueries = []struct {
	sql    string
	params int
}{
	{"SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY id", 2},
	{"SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?", 2},
	{"SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c, id", 2},
	{"SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c", 2},
	{"SELECT id FROM t WHERE k BETWEEN ? AND ? ORDER BY id", 2},
	{"SELECT COUNT(*) FROM t WHERE k = ?", 1},
	{"SELECT id, n FROM t WHERE k IN (?, ?, ?) ORDER BY id", 3},
	{"SELECT id FROM t WHERE k > ? ORDER BY k DESC, id LIMIT 3", 1},
	{"SELECT MIN(id), MAX(n) FROM t WHERE k = ?", 1},
	{"SELECT id FROM t WHERE id = ? OR n = ? ORDER BY id", 2},
	{"SELECT id, c FROM t WHERE id >= ? AND id < ? AND n IS NOT NULL ORDER BY id LIMIT 5", 2},
	{"SELECT a.id, b.id FROM t a JOIN t b ON a.k = b.id WHERE a.id BETWEEN ? AND ? ORDER BY a.id", 2},
	{"SELECT k % 7, COUNT(*) FROM t WHERE id < ? GROUP BY k % 7 ORDER BY 1", 1},
	{"SELECT id + ?, CONCAT(c, ?) FROM t WHERE id = ?", 3},
	{"SELECT id FROM t WHERE c LIKE ? AND id < ? ORDER BY id", 2},
	// Subqueries: semi and anti joins, a scalar subquery read by the
	// primary key (scalarlookup.go), and one whose select item holds a
	// parameter (not cached: notInTemplate).
	{planCacheInSubquery, 1},
	{"SELECT COUNT(*) FROM t a WHERE EXISTS (SELECT 1 FROM t b WHERE b.id = a.k AND b.n = ?)", 1},
	{"SELECT id FROM t a WHERE NOT EXISTS (SELECT 1 FROM t b WHERE b.id = a.k AND b.n > ?) AND a.id < ? ORDER BY id", 2},
	{planCacheScalarSubquery, 2},
	{"SELECT a.id, (SELECT b.n FROM t b WHERE b.id = a.k AND b.n > ?) FROM t a WHERE a.id < ? ORDER BY a.id", 2},
	{"SELECT a.id, (SELECT b.n + ? FROM t b WHERE b.id = a.k) FROM t a WHERE a.id < ? ORDER BY a.id", 2},
}

// Statements with subqueries whose plans the cache keeps
// (TestPlanCacheSubqueries).
const (
	planCacheInSubquery     = "SELECT id, n FROM t WHERE k IN (SELECT b.id FROM t b WHERE b.n = ?) ORDER BY id"
	planCacheScalarSubquery = "SELECT a.id, (SELECT b.c FROM t b WHERE b.id = a.k) FROM t a WHERE a.id BETWEEN ? AND ? ORDER BY a.id"
)

// planCacheSetup creates database pc with table t of 300 rows.
func planCacheSetup(t *testing.T) (*percsql.Server, *sql.DB) {
	t.Helper()
	srv := startServerConfig(t, percsql.Config{})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE pc",
		"CREATE TABLE pc.t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NOT NULL, n INT, KEY k (k))")
	var b strings.Builder
	b.WriteString("INSERT INTO pc.t VALUES ")
	for i := 1; i <= 300; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		n := "NULL"
		if i%5 != 0 {
			n = fmt.Sprint(i % 13)
		}
		fmt.Fprintf(&b, "(%d, %d, 'c%03d', %s)", i, (i*37)%100, (i*7)%50, n)
	}
	mustExec(t, admin, b.String())
	return srv, admin
}

// planCacheConn opens a connection to database pc of srv, closed when
// the test ends: one session, whose plan cache the test fills. The fast
// path is off in it: its range SELECTs (fastpath_scan.go) would answer
// the plan cache's statements before the cache saw them.
func planCacheConn(t *testing.T, srv *percsql.Server) *sql.Conn {
	t.Helper()
	conn, err := openDB(t, srv, "pc").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(context.Background(), "SET @percdb_fastpath = 0"); err != nil {
		t.Fatal(err)
	}
	return conn
}

// sameAsUnprepared runs q prepared with args on conn and with the values
// written in, and reports (failing t) whether the two answers differ.
func sameAsUnprepared(t *testing.T, ctx context.Context, conn *sql.Conn, q string, args []any) bool {
	t.Helper()
	got, gerr := answer(ctx, conn, q, args...)
	want, werr := answer(ctx, conn, fill(q, args))
	if (gerr == nil) != (werr == nil) || gerr == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%s with %v:\nprepared %v (%v)\ninlined  %v (%v)", q, args, got, gerr, want, werr)
		return false
	}
	return true
}

// randomParam is a parameter value of a random type: mostly integers in
// and around the table's keys, sometimes strings, floats, negatives,
// large values and NULL, so that one statement meets several types.
func randomParam(r *rand.Rand) any {
	switch r.Intn(12) {
	case 0:
		return nil
	case 1:
		return fmt.Sprint(r.Intn(320))
	case 2:
		return float64(r.Intn(3000)) / 10
	case 3:
		return -r.Intn(50)
	case 4:
		return int64(1) << 40
	case 5:
		return fmt.Sprintf("c%03d%%", r.Intn(50))
	default:
		return r.Intn(320)
	}
}

// answer runs q with args on conn and returns its rows, each with its
// values separated by spaces, or its error.
func answer(ctx context.Context, conn *sql.Conn, q string, args ...any) ([]string, error) {
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for _, r := range readRows(rows) {
		out = append(out, strings.Join(r, " "))
	}
	return out, rows.Err()
}

// compareCached runs every query of planCacheQueries rounds times on
// conn, prepared with random values, and fails t when an answer differs
// from the same statement's with the values written in (not prepared).
func compareCached(t *testing.T, ctx context.Context, conn *sql.Conn, seed int64, rounds int) {
	r := rand.New(rand.NewSource(seed))
	for round := 0; round < rounds; round++ {
		for _, q := range planCacheQueries {
			args := make([]any, q.params)
			for i := range args {
				args[i] = randomParam(r)
			}
			sameAsUnprepared(t, ctx, conn, q.sql, args)
		}
	}
}

// TestPlanCacheDifferential runs prepared statements with parameters of
// many values and types and compares each answer with the unprepared
// statement's; the plan cache must have served most of them.
func TestPlanCacheDifferential(t *testing.T) {
	ctx := context.Background()
	srv, admin := planCacheSetup(t)
	conn := planCacheConn(t, srv)
	hits := serverStatus(t, admin, "Percdb_plan_cache_hit")
	compareCached(t, ctx, conn, 1, 40)
	got := serverStatus(t, admin, "Percdb_plan_cache_hit") - hits
	t.Logf("hits %d, misses %d, uncacheable %d, rechecks %d", got, serverStatus(t, admin, "Percdb_plan_cache_miss"),
		serverStatus(t, admin, "Percdb_plan_cache_uncacheable"), serverStatus(t, admin, "Percdb_plan_cache_recheck"))
	if got < uint64(len(planCacheQueries))*10 {
		t.Errorf("plan cache hits: %d, want at least %d", got, len(planCacheQueries)*10)
	}
}

// TestPlanCacheSubqueries runs statements with subqueries again and
// again with integer values: after its first execution, each must run
// its cached plan, with the unprepared statement's answer. An IN
// subquery's analysis used to change a session variable for the
// duration of a rule (compat.withoutMergeJoins), which made every plan
// of the session stale; a scalar subquery by the primary key was left
// to GMS's Subquery in a template, which the cache refuses.
func TestPlanCacheSubqueries(t *testing.T) {
	ctx := context.Background()
	srv, admin := planCacheSetup(t)
	conn := planCacheConn(t, srv)
	for _, c := range []struct {
		q    string
		args func(i int) []any
	}{
		{planCacheInSubquery, func(i int) []any { return []any{i % 13} }},
		{planCacheScalarSubquery, func(i int) []any { return []any{i * 10, i*10 + 30} }},
	} {
		if !sameAsUnprepared(t, ctx, conn, c.q, c.args(1)) {
			continue
		}
		hits := serverStatus(t, admin, "Percdb_plan_cache_hit")
		const runs = 8
		for i := 2; i < 2+runs; i++ {
			sameAsUnprepared(t, ctx, conn, c.q, c.args(i))
		}
		if got := serverStatus(t, admin, "Percdb_plan_cache_hit") - hits; got != runs {
			t.Errorf("%s: %d plan cache hits in %d executions, want %d", c.q, got, runs, runs)
		}
	}
}

// TestPlanCacheConcurrentSessions runs the differential comparison from
// several sessions at once (run it with -race): each has its own plans.
func TestPlanCacheConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	srv, _ := planCacheSetup(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		conn := planCacheConn(t, srv)
		go func() {
			defer wg.Done()
			compareCached(t, ctx, conn, int64(g), 8)
		}()
	}
	wg.Wait()
}

// TestPlanCacheInvalidation runs one prepared statement before and after
// what changes its plan: ADD COLUMN, DROP INDEX, a table renamed and
// another made under its name, a sql_mode that parses it differently.
// Each answer must be the unprepared statement's. A cached plan used past
// the change reads the old table, a dropped index or a column list of
// the old definition.
func TestPlanCacheInvalidation(t *testing.T) {
	ctx := context.Background()
	srv, _ := planCacheSetup(t)
	db := openDB(t, srv, "pc")
	admin := openDB(t, srv, "pc")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	check := func(q string, args ...any) {
		t.Helper()
		for i := 0; i < 3; i++ { // the first fills the cache, the others hit it
			if !sameAsUnprepared(t, ctx, conn, q, args) {
				t.FailNow()
			}
		}
	}
	const byK = "SELECT * FROM t WHERE k BETWEEN ? AND ? ORDER BY id"
	check(byK, 10, 12)
	mustExec(t, admin, "ALTER TABLE pc.t ADD COLUMN z INT DEFAULT 7")
	check(byK, 10, 12)
	mustExec(t, admin, "ALTER TABLE pc.t DROP INDEX k")
	check(byK, 10, 12)
	// (RENAME TABLE with qualified names fails with 1046 when no
	// database is selected, hence admin's.)
	mustExec(t, admin, "RENAME TABLE pc.t TO pc.t_old",
		"CREATE TABLE pc.t (id INT PRIMARY KEY, k INT, c VARCHAR(20), n INT, KEY k (k))",
		"INSERT INTO pc.t VALUES (1, 11, 'new', NULL), (2, 12, 'newer', 5)")
	check(byK, 10, 12)
	// Within the session's own transaction: its DDL changes the catalog
	// its next statement sees.
	if _, err := conn.ExecContext(ctx, "CREATE INDEX kc ON t (k, c)"); err != nil {
		t.Fatal(err)
	}
	check(byK, 10, 12)

	// Under ANSI_QUOTES "c" names the column; otherwise it is a string.
	const quoted = `SELECT id, "c" FROM t WHERE id = ?`
	check(quoted, 1)
	if _, err := conn.ExecContext(ctx, "SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')"); err != nil {
		t.Fatal(err)
	}
	check(quoted, 1)
	rows, err := answer(ctx, conn, quoted, 1)
	if err != nil || len(rows) != 1 || rows[0] != "1 new" {
		t.Fatalf("with ANSI_QUOTES: %v %v, want [1 new]", rows, err)
	}
}

// TestPlanCacheRecheck runs statements whose plans rest on the shape of
// their ranges, first with values that pin the index's column to one
// value, then with values that do not: an IN list of one value twice
// reads the index (k, c) in c's order, so the sort is left out (and
// MIN(c) reads one row), which two values need again. The cache must
// analyse the statement anew (a recheck) rather than run the plan
// without its sort.
func TestPlanCacheRecheck(t *testing.T) {
	ctx := context.Background()
	srv, admin := planCacheSetup(t)
	conn := planCacheConn(t, srv)
	mustExec(t, admin, "CREATE INDEX kc ON pc.t (k, c)")
	rechecks := serverStatus(t, admin, "Percdb_plan_cache_recheck")
	for _, q := range []string{
		"SELECT c FROM t WHERE k IN (?, ?) ORDER BY c",
		"SELECT c FROM t WHERE k IN (?, ?) ORDER BY c DESC LIMIT 3",
		"SELECT MIN(c) FROM t WHERE k IN (?, ?)",
		"SELECT id FROM t WHERE k IN (?, ?) ORDER BY id",
		"SELECT id FROM t WHERE k IN (?, ?) ORDER BY id DESC LIMIT 4",
		"SELECT MIN(id) FROM t WHERE k IN (?, ?)",
	} {
		for _, args := range [][]any{{11, 11}, {11, 11}, {11, 48}, {48, 11}, {48, 48}} {
			sameAsUnprepared(t, ctx, conn, q, args)
		}
	}
	if n := serverStatus(t, admin, "Percdb_plan_cache_recheck") - rechecks; n == 0 {
		t.Errorf("no recheck")
	}
}

// TestPlanCacheGivesUp runs a statement whose plan cannot be cached (a
// subquery keeps its rows in the plan): the cache tries maxUncacheable
// (4) times, then leaves it to GMS until the schema changes.
func TestPlanCacheGivesUp(t *testing.T) {
	ctx := context.Background()
	srv, admin := planCacheSetup(t)
	conn := planCacheConn(t, srv)
	const q = "SELECT id FROM t WHERE k = (SELECT MAX(k) FROM t WHERE id < ?) ORDER BY id"
	run := func() uint64 {
		t.Helper()
		before := serverStatus(t, admin, "Percdb_plan_cache_uncacheable")
		for i := 0; i < 8; i++ {
			sameAsUnprepared(t, ctx, conn, q, []any{20 + i})
		}
		return serverStatus(t, admin, "Percdb_plan_cache_uncacheable") - before
	}
	if n := run(); n != 4 {
		t.Errorf("uncacheable analyses: %d, want 4", n)
	}
	mustExec(t, admin, "ALTER TABLE pc.t ADD COLUMN z INT")
	if n := run(); n != 4 {
		t.Errorf("uncacheable analyses after a schema change: %d, want 4", n)
	}
}

// planCacheWrites are prepared UPDATEs and DELETEs of one table, {t},
// with the number of parameters.
var planCacheWrites = []struct {
	sql    string
	params int
}{
	{"UPDATE {t} SET n = ? WHERE id BETWEEN ? AND ?", 3},
	{"UPDATE {t} SET c = CONCAT(c, ?) WHERE k = ?", 2},
	{"UPDATE {t} SET n = n + ? WHERE k IN (?, ?, ?)", 4},
	{"UPDATE {t} SET k = k + 1, n = ? WHERE id = ? OR n = ?", 3},
	{"UPDATE {t} SET n = ? WHERE k > ? ORDER BY id LIMIT 3", 2},
	{"UPDATE {t} SET c = ? WHERE id >= ? AND id < ? AND n IS NOT NULL", 3},
	{"DELETE FROM {t} WHERE id BETWEEN ? AND ? AND n IS NULL", 2},
	{"DELETE FROM {t} WHERE k = ? AND id > ? ORDER BY id LIMIT 2", 2},
}

// TestPlanCacheWritesDifferential runs prepared UPDATEs and DELETEs with
// parameters of many values and types on table t and the same statements
// with the values written in on u, a copy of it: the counts of rows
// affected, the errors and the tables must stay the same, and the plan
// cache must have served most of the prepared executions.
func TestPlanCacheWritesDifferential(t *testing.T) {
	ctx := context.Background()
	srv, admin := planCacheSetup(t)
	mustExec(t, admin, "CREATE TABLE pc.u LIKE pc.t", "INSERT INTO pc.u SELECT * FROM pc.t")
	conn := planCacheConn(t, srv)
	hits := serverStatus(t, admin, "Percdb_plan_cache_hit")
	r := rand.New(rand.NewSource(3))
	outcome := func(res sql.Result, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		n, err := res.RowsAffected()
		return fmt.Sprint(n, err)
	}
	for round := 0; round < 30; round++ {
		for _, w := range planCacheWrites {
			args := make([]any, w.params)
			for i := range args {
				// Mostly integers, so that parameter types repeat
				// (the cache keeps a plan per types, and GMS types an
				// integer by its magnitude: int8 below 128).
				if args[i] = randomParam(r); r.Intn(5) > 0 {
					args[i] = r.Intn(127)
				}
			}
			prepared := strings.ReplaceAll(w.sql, "{t}", "t")
			got := outcome(conn.ExecContext(ctx, prepared, args...))
			want := outcome(conn.ExecContext(ctx, fill(strings.ReplaceAll(w.sql, "{t}", "u"), args)))
			if got != want {
				t.Errorf("%s with %v: prepared %s, inlined %s", w.sql, args, got, want)
			}
		}
		a, _ := answer(ctx, conn, "SELECT * FROM t ORDER BY id")
		b, _ := answer(ctx, conn, "SELECT * FROM u ORDER BY id")
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: the tables differ:\nt %v\nu %v", round, a, b)
		}
	}
	got := serverStatus(t, admin, "Percdb_plan_cache_hit") - hits
	if got < uint64(len(planCacheWrites))*10 {
		t.Errorf("plan cache hits: %d, want at least %d", got, len(planCacheWrites)*10)
	}
	t.Logf("hits %d, misses %d, uncacheable %d, rechecks %d", got, serverStatus(t, admin, "Percdb_plan_cache_miss"),
		serverStatus(t, admin, "Percdb_plan_cache_uncacheable"), serverStatus(t, admin, "Percdb_plan_cache_recheck"))
}

// TestPlanCacheInvalidCounts checks that a cached plan is not run with a
// LIMIT or OFFSET that is not a count: GMS's analysis refuses a negative
// one, and the cached plan, bound to -1 after executions with valid
// counts, returned no rows instead of the error.
func TestPlanCacheInvalidCounts(t *testing.T) {
	ctx := context.Background()
	srv, _ := planCacheSetup(t)
	conn, plain := planCacheConn(t, srv), planCacheConn(t, srv)
	if _, err := plain.ExecContext(ctx, "SET @percdb_plan_cache = 0"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT id FROM t WHERE id BETWEEN ? AND ? LIMIT ?, ?"
	for _, args := range [][]any{{1, 9, 0, 2}, {1, 9, 1, 2}, {1, 9, -1, 2}, {1, 9, 0, -1}, {1, 9, 1, 3}} {
		got, err := answer(ctx, conn, q, args...)
		want, werr := answer(ctx, plain, q, args...)
		if fmt.Sprint(got, err) != fmt.Sprint(want, werr) {
			t.Errorf("%s with %v: %v %v, analysed afresh %v %v", q, args, got, err, want, werr)
		}
	}
}
