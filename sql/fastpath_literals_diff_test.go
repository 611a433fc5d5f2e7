package sql_test

import (
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"
)

// The text protocol's cache of shapes (fastpath_literals.go) against
// GMS's path: each statement shape is sent as text again and again with
// literals of every type at the edges, so that a template cached for one
// literal's type runs with another's (an integer where a string was, a
// string of digits, NULL, a negative number, BIGINT UNSIGNED, a number
// GMS types as DECIMAL, floats, hex literals, strings compared under a
// case-insensitive and a binary collation, typed literals, character set
// introducers). Every answer must be GMS's, byte for byte (the diff
// harness of fastpath_diff_test.go), and the cache must have taken most
// statements without a parse (Percdb_fastpath_text_plan_hits).

// rawSQL is a literal written into a statement as it is.
type rawSQL string

// literalEdges are the literals the statements are filled with.
var literalEdges = []any{
	0, 1, 2, 5, -1, -5, 7, 30,
	int64(math.MaxInt64), int64(math.MinInt64 + 1), uint64(math.MaxUint64), uint64(1) << 63,
	int64(math.MaxInt32), int64(math.MinInt32), uint64(math.MaxUint32), 3000000000,
	nil, "1", "5", "-5", " 5", "5a", "", "a", "A", "a ", "ab", "ñ", "Ñ", "日本", "it's", "x' OR '1'='1",
	1.5, 2.0, -0.5,
	rawSQL("5.0"), rawSQL("-5.0"), rawSQL("1e1"), rawSQL("0x05"), rawSQL("- 5"), rawSQL("-0"),
	rawSQL("99999999999999999999"), rawSQL("-9223372036854775808"), rawSQL("-9223372036854775809"),
	rawSQL("TRUE"), rawSQL("_utf8mb4'a'"), rawSQL("_binary'a'"), rawSQL(`"dq"`), rawSQL(`'a\'b'`), rawSQL(`"a""b"`),
	rawSQL("DATE '2020-01-01'"), rawSQL("x'41'"),
	// Not N'a': GMS v0.20.0 does not parse it (error 1064) where MySQL
	// and the TiDB parser read a string, and the fast path, with or
	// without the cache, answers an UPDATE of no row with it.
}

// literalShapes are statements of the fast path's shapes (and near
// misses), their ? filled with literals as text.
var literalShapes = []string{
	"SELECT id, u, s FROM lt WHERE id = ?",
	"SELECT * FROM lt WHERE id IN (?, ?, ?)",
	"SELECT id, b FROM lt WHERE id BETWEEN ? AND ?",
	"SELECT id FROM lt WHERE id > ? AND id <= ? ORDER BY id DESC LIMIT ?",
	"SELECT COUNT(*), SUM(k), MIN(u), MAX(b) FROM lt WHERE id >= ? AND k <> ?",
	"SELECT id, s FROM lt WHERE id < ? AND s = ?",
	"SELECT id, sb FROM lt WHERE id > ? AND sb = ?",
	"SELECT id, m FROM lt WHERE id >= ? AND m > ?",
	"SELECT id, k FROM lt WHERE k IN (?, ?, ?, ?, ?, ?)",
	"SELECT id, k FROM lt WHERE k > ? ORDER BY k, id LIMIT ?",
	"SELECT id, k FROM lt ORDER BY k DESC, id DESC LIMIT ?",
	"SELECT MIN(k), MAX(k) FROM lt WHERE k > ?",
	"SELECT v FROM lc WHERE (w, id) IN ((?, ?), (?, ?), (?, ?))",
	"SELECT MAX(id) FROM lc WHERE w = ?",
	"SELECT COUNT(*), SUM(v) FROM lc WHERE w IN (?, ?) AND id < ?",
	"SELECT w, id FROM lc WHERE w = ? AND id BETWEEN ? AND ?",
	"SELECT v FROM lc WHERE w = ? AND id = ?",
	"SELECT id FROM lt WHERE u = ?",
	"SELECT id FROM lt WHERE id = ? LIMIT ?, ?",
	"UPDATE lt SET k = k + ? WHERE id = ?",
	"UPDATE lt SET s = ?, u = ? WHERE id = ?",
	"UPDATE lc SET v = v - ? WHERE w = ? AND id = ?",
	"DELETE FROM lt WHERE id = ?",
	"INSERT INTO lt (id, u, b, s, sb, m, k) VALUES (?, ?, ?, ?, ?, ?, ?)",
	"INSERT INTO lc (w, id, v) VALUES (?, ?, ?), (?, ?, ?)",
}

// TestTextPlanCacheDifferential sends literalShapes filled with
// literalEdges as text. PERCDB_RANGE_DIFF_N sets the number of
// statements (default 1500, 400 with -short).
func TestTextPlanCacheDifferential(t *testing.T) {
	n, seed := rangeDiffSize(t, 1500, 400, 42)
	r := rand.New(rand.NewSource(seed))
	setup := []string{"USE d",
		`CREATE TABLE lt (id INT PRIMARY KEY, u INT UNSIGNED, b BIGINT,
			s VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, sb VARCHAR(20) COLLATE utf8mb4_bin,
			m DECIMAL(10,2), k INT, KEY k_idx (k))`,
		"CREATE TABLE lc (w INT, id INT, v INT, PRIMARY KEY (w, id))",
	}
	for id := -5; id < 35; id++ {
		setup = append(setup, fill("INSERT INTO lt VALUES (?, ?, ?, ?, ?, ?, ?)", []any{
			id, id * id % 7, int64(id) * 1e15, []any{"a", "A", "ab", "ñ", "a ", nil}[(id+5)%6],
			[]any{"a", "A", "b", nil}[(id+5)%4], []any{"1.50", "-2.00", nil, "5"}[(id+5)%4], []any{nil, id % 9, -id}[(id+5)%3],
		}))
		setup = append(setup, fill("INSERT INTO lc VALUES (?, ?, ?)", []any{id % 4, id, id * 3}))
	}
	d := newDiff(t, setup...)
	value := func() any {
		if r.Intn(3) == 0 {
			return literalEdges[r.Intn(len(literalEdges))]
		}
		return r.Intn(40) - 6
	}
	steps := 0
	for steps < n {
		q := literalShapes[r.Intn(len(literalShapes))]
		// A few statements of one shape in a row: the first may teach
		// the fast path the column definitions, the others reuse the
		// template with other literals.
		for i := 0; i < 4; i++ {
			args := make([]any, 0, 8)
			for range countMarks(q) {
				args = append(args, value())
			}
			d.step(fill(q, args))
			steps++
		}
	}
	text := d.status("Percdb_fastpath_text_plan_hits")
	t.Logf("%d statements, %d taken from the text plan cache", steps, text)
	if text < uint64(steps/3) {
		t.Errorf("only %d of %d statements were taken from the text plan cache", text, steps)
	}
	d.checkHits(t, steps, 3)
	d.finish("lt", "lc")
}

// TestTextPlanCacheOff checks that percdb_text_plan_cache = OFF makes
// the fast path parse every text statement, and ON takes them from the
// cache again.
func TestTextPlanCacheOff(t *testing.T) {
	d := newDiff(t, "USE d", "CREATE TABLE lt (id INT PRIMARY KEY, k INT)", "INSERT INTO lt VALUES (1, 10), (2, 20)")
	run := func(want uint64) {
		t.Helper()
		before := d.status("Percdb_fastpath_text_plan_hits")
		for id := 0; id < 4; id++ {
			d.step(fill("SELECT k FROM lt WHERE id = ?", []any{id}))
		}
		if got := d.status("Percdb_fastpath_text_plan_hits") - before; got != want {
			t.Errorf("%d statements taken from the text plan cache, want %d", got, want)
		}
	}
	run(4)
	d.step("SET SESSION percdb_text_plan_cache = OFF")
	run(0)
	d.step("SET SESSION percdb_text_plan_cache = ON")
	run(4)
	d.finish("lt")
}

// countMarks returns how many ? q has.
func countMarks(q string) int {
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
		}
	}
	return n
}

// TestTextPlanCacheConcurrent runs one template from many connections
// at once, each with its own literals: the template's shape is shared
// by every session (go test -race checks that none writes it), and each
// answer must be its own literals'.
func TestTextPlanCacheConcurrent(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	for _, q := range []string{"CREATE DATABASE d", "USE d", "CREATE TABLE lt (w INT, id INT, k INT, s VARCHAR(10), PRIMARY KEY (w, id))"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for w := 0; w < 4; w++ {
		for id := 0; id < 50; id++ {
			if _, err := db.Exec(fill("INSERT INTO d.lt VALUES (?, ?, ?, ?)", []any{w, id, w*1000 + id, fmt.Sprint(w, "-", id)})); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			for i := 0; i < 200; i++ {
				w, lo := r.Intn(4), r.Intn(45)
				var q string
				var want string
				switch i % 3 {
				case 0:
					q, want = fill("SELECT k FROM d.lt WHERE w = ? AND id = ?", []any{w, lo}), fmt.Sprint(w*1000+lo)
				case 1:
					q, want = fill("SELECT SUM(k) FROM d.lt WHERE w = ? AND id BETWEEN ? AND ?", []any{w, lo, lo + 4}), fmt.Sprint(5*(w*1000+lo)+10)
				default:
					q, want = fill("SELECT k FROM d.lt WHERE s = ?", []any{fmt.Sprint(w, "-", lo)}), fmt.Sprint(w*1000+lo)
				}
				var got string
				if err := db.QueryRow(q).Scan(&got); err != nil {
					errs <- fmt.Errorf("%s: %w", q, err)
					return
				}
				if got != want {
					errs <- fmt.Errorf("%s: got %s, want %s", q, got, want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if hits := serverStatus(t, db, "Percdb_fastpath_text_plan_hits"); hits < 1000 {
		t.Errorf("%d statements taken from the text plan cache, want most of 1,600", hits)
	}
}
