package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// explainTableRows returns EXPLAIN q's rows estimate of table.
func explainTableRows(t *testing.T, db *sql.DB, q, table string) float64 {
	t.Helper()
	rows, err := db.Query("EXPLAIN " + q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	for _, r := range readRows(rows) {
		if len(r) == 12 && r[2] == table {
			n, err := strconv.ParseFloat(r[9], 64)
			if err != nil {
				t.Fatalf("EXPLAIN %s: rows %q", q, r[9])
			}
			return n
		}
	}
	t.Fatalf("EXPLAIN %s: no row of %s", q, table)
	return 0
}

// TestRangeRowsEstimate compares EXPLAIN's rows for range reads of an
// analyzed table's composite primary key with the true counts: TPC-C's
// Stock-Level window of 20 orders in a district of ORDER-LINE, an open
// range, an IN list of prefixes and ranges on the first column. Each
// must be within a factor of 2 (before: every order line of the
// district, 15 times the truth for the window).
func TestRangeRowsEstimate(t *testing.T) {
	db := stockLevelSetup(t)
	for _, where := range []string{
		"ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id < 281 AND ol_o_id >= 261",
		"ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id BETWEEN 10 AND 59",
		"ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id > 250",
		"ol_w_id = 1 AND ol_d_id IN (1, 3) AND ol_o_id BETWEEN 100 AND 139",
		"ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 17",
		"ol_w_id = 1 AND ol_d_id < 3",
	} {
		q := "SELECT ol_i_id FROM order_line WHERE " + where
		var truth float64
		if err := db.QueryRow("SELECT COUNT(*) FROM order_line WHERE " + where).Scan(&truth); err != nil {
			t.Fatal(err)
		}
		got := explainTableRows(t, db, q, "order_line")
		if got > 2*truth || got < truth/2 {
			t.Errorf("%s: EXPLAIN estimates %.0f rows, the table has %.0f", where, got, truth)
		}
	}
}

// TestRangeEstimatesJoinChoice: a window of 50 rows of a's primary key
// joined to b's 300 rows on b's primary key. Counted as every row of the
// window's prefix (a.d = 4: 400), GMS's memo merges a, read whole through
// its index on the join column, with b read whole; counted right, each
// row of the window looks its b row up (eq_ref), as MySQL plans it.
func TestRangeEstimatesJoinChoice(t *testing.T) {
	conn := keyWindowSetup(t)
	ctx := context.Background()
	for _, c := range []struct{ estimates, want string }{
		{"0", "a index x Using index; Using where\nb index PRIMARY Using merge join"},
		// (The outer side's conditions are its key range's, which
		// enforces them: no filter is left, planrules/enforced.go.)
		{"1", "a range PRIMARY \nb eq_ref PRIMARY Using join buffer (Batched Key Access)"},
	} {
		if _, err := conn.ExecContext(ctx, "SET @percdb_range_estimates = "+c.estimates); err != nil {
			t.Fatal(err)
		}
		if got := explainText(ctx, t, conn, "SELECT a.o, b.q"+keyWindowJoin); got != c.want {
			t.Errorf("@percdb_range_estimates = %s: EXPLAIN\n%s\nwant\n%s", c.estimates, got, c.want)
		}
	}
}

// TestRangeEstimatesDifferential runs joins with ranges on composite keys
// over analyzed random tables with NULLs, with the statistics' range
// estimates and with GMS's (@percdb_range_estimates = 0): the plans may
// differ, the answers may not.
func TestRangeEstimatesDifferential(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE re", "USE re",
		"CREATE TABLE a (w INT NOT NULL, d INT NOT NULL, o INT NOT NULL, x INT, y INT, PRIMARY KEY (w, d, o), KEY (x))",
		"CREATE TABLE b (id INT PRIMARY KEY, q INT, z INT, KEY (q, z))",
		"CREATE TABLE c (k INT NOT NULL, n INT NOT NULL, v INT, PRIMARY KEY (k, n))")
	r := rand.New(rand.NewSource(41))
	maybe := func(v int) string {
		if r.Intn(7) == 0 {
			return "NULL"
		}
		return fmt.Sprint(v)
	}
	var av, bv, cv []string
	for d := 1; d <= 4; d++ {
		for o := 1; o <= 400; o++ {
			av = append(av, fmt.Sprintf("(1, %d, %d, %s, %s)", d, o, maybe(r.Intn(300)), maybe(r.Intn(50))))
		}
	}
	for id := 1; id <= 300; id++ {
		bv = append(bv, fmt.Sprintf("(%d, %s, %s)", id, maybe(r.Intn(40)), maybe(r.Intn(10))))
	}
	for k := 0; k < 50; k++ {
		for n := 1; n <= 1+r.Intn(6); n++ {
			cv = append(cv, fmt.Sprintf("(%d, %d, %s)", k, n, maybe(r.Intn(1000))))
		}
	}
	mustExec(t, db, "INSERT INTO re.a VALUES "+strings.Join(av, ","), "INSERT INTO re.b VALUES "+strings.Join(bv, ","),
		"INSERT INTO re.c VALUES "+strings.Join(cv, ","), "ANALYZE TABLE re.a, re.b, re.c")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE re"); err != nil {
		t.Fatal(err)
	}
	set := func(v string) {
		if _, err := conn.ExecContext(ctx, "SET @percdb_range_estimates = "+v); err != nil {
			t.Fatal(err)
		}
	}
	ranges := func() string {
		d := 1 + r.Intn(4)
		lo := r.Intn(420)
		switch r.Intn(4) {
		case 0:
			return fmt.Sprintf("a.w = 1 AND a.d = %d AND a.o BETWEEN %d AND %d", d, lo, lo+r.Intn(60))
		case 1:
			return fmt.Sprintf("a.w = 1 AND a.d IN (%d, %d) AND a.o > %d", d, 1+r.Intn(4), lo)
		case 2:
			return fmt.Sprintf("a.w = 1 AND a.d = %d AND a.o < %d", d, lo)
		}
		return fmt.Sprintf("a.d <= %d AND a.o >= %d AND a.o < %d", d, lo, lo+r.Intn(30))
	}
	joins := []string{
		"SELECT a.d, a.o, b.q, b.z FROM a JOIN b ON b.id = a.x WHERE %s",
		"SELECT a.o, b.id FROM a LEFT JOIN b ON b.id = a.x AND b.q > 5 WHERE %s",
		"SELECT a.o, c.n, c.v FROM a JOIN c ON c.k = a.y WHERE %s",
		"SELECT a.o, b.id, c.v FROM a JOIN b ON b.q = a.y JOIN c ON c.k = b.z WHERE %s AND c.n <= 2",
		"SELECT COUNT(*), SUM(b.z) FROM a, b WHERE b.id = a.x AND %s",
		"SELECT a.o FROM a WHERE %s AND EXISTS (SELECT 1 FROM b WHERE b.id = a.x AND b.z IS NULL)",
		"SELECT a.o FROM a WHERE %s AND a.y NOT IN (SELECT c.k FROM c WHERE c.v > 500)",
	}
	differ := 0
	for i := 0; i < 120; i++ {
		q := fmt.Sprintf(joins[i%len(joins)], ranges())
		set("0")
		want, wantErr := answer(ctx, conn, q)
		planOff := explainText(ctx, t, conn, q)
		set("1")
		got, gotErr := answer(ctx, conn, q)
		planOn := explainText(ctx, t, conn, q)
		if wantErr != nil || gotErr != nil {
			t.Errorf("%s: errors: estimates %v, GMS's %v", q, gotErr, wantErr)
			continue
		}
		sort.Strings(want)
		sort.Strings(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\nwith estimates %v\n%s\nwith GMS's     %v\n%s", q, got, planOn, want, planOff)
		}
		if planOn != planOff {
			differ++
		}
	}
	t.Logf("%d of 120 plans changed by the estimates", differ)
	if differ == 0 {
		t.Error("no plan changed: the test compares nothing")
	}
}

// BenchmarkRangeJoinChoice runs TestRangeEstimatesJoinChoice's join
// (windows of 50 rows of a, each joined to b) with the statistics' range
// estimates and with GMS's, one after the other in one process, and
// reports the process's CPU per query:
//
//	go test ./sql -run '^$' -bench RangeJoinChoice -count 10
func BenchmarkRangeJoinChoice(b *testing.B) {
	conn := keyWindowSetup(b)
	ctx := context.Background()
	const q = "SELECT COUNT(*), SUM(b.q) FROM a JOIN b ON b.id = a.x WHERE a.w = 1 AND a.d = ? AND a.o BETWEEN ? AND ?"
	for _, v := range []string{"1", "0"} {
		b.Run("estimates="+v, func(b *testing.B) {
			if _, err := conn.ExecContext(ctx, "SET @percdb_range_estimates = "+v); err != nil {
				b.Fatal(err)
			}
			benchCPU(b, func(i int) error {
				var n int
				var sum sql.NullInt64
				lo := 1 + i%350
				return conn.QueryRowContext(ctx, q, 1+i%4, lo, lo+49).Scan(&n, &sum)
			})
		})
	}
}

// benchCPU runs op b.N times and reports the process's CPU per run
// (cpu-us/op), which a loaded machine inflates less than the wall time.
func benchCPU(b *testing.B, op func(i int) error) {
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := range b.N {
		if err := op(i); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e3/float64(b.N), "cpu-us/op")
}
