// Package scan times scan and analytics queries (filtered full scans,
// top-N, grouping, distinct counts, a self-join, an index range, a
// row-constructor IN on a composite primary key, and TPC-C's consistency
// subquery) on any MySQL-protocol server, for the side-by-side comparison
// of percdb with MariaDB.
//
// The table is the shape issue 13 measured: a composite primary key (w,
// id), a secondary index on k, an integer q and a 100-byte pad:
//
//	CREATE TABLE <name> (w INT NOT NULL, id INT NOT NULL, k INT NOT NULL,
//	  q INT NOT NULL, pad VARCHAR(120) NOT NULL,
//	  PRIMARY KEY (w, id), KEY k (k))
//
// n rows: w in 1..10, id in 1..n/10, k uniform in 1..n, q uniform in
// 0..99. The values come from a seeded generator per chunk, so every server
// gets the same rows and the answers can be compared.
//
// Every query runs Repeat times; the figure is the median. A query that
// exceeds its limit is stopped with KILL QUERY from a second connection
// and reported as "> limit"; it is not repeated.
package scan

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"time"
)

// Groups is the number of distinct w values.
const Groups = 10

// CreateTable creates table name (dropping it first) in the current
// database of db.
func CreateTable(ctx context.Context, db *sql.DB, name string) error {
	for _, q := range []string{
		"DROP TABLE IF EXISTS " + name,
		"CREATE TABLE " + name + " (w INT NOT NULL, id INT NOT NULL, k INT NOT NULL, q INT NOT NULL, pad VARCHAR(120) NOT NULL, PRIMARY KEY (w, id), KEY k (k))",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("scan: %s: %w", q, err)
		}
	}
	return nil
}

// loadChunk is the rows per INSERT statement and per random source.
const loadChunk = 1000

// Load inserts n rows (a multiple of Groups) into table name from loaders
// connections.
func Load(ctx context.Context, db *sql.DB, name string, n, loaders int, seed int64) error {
	if n < Groups || n%Groups != 0 {
		return fmt.Errorf("scan: %d rows: want a positive multiple of %d", n, Groups)
	}
	per := n / Groups
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	chunks := make(chan int)
	var wg sync.WaitGroup
	for range max(1, loaders) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range chunks {
				r := rand.New(rand.NewSource(seed*1_000_003 + int64(start)))
				var b strings.Builder
				b.WriteString("INSERT INTO " + name + " (w, id, k, q, pad) VALUES ")
				for i := start; i < min(start+loadChunk, n); i++ {
					if i > start {
						b.WriteByte(',')
					}
					pad := make([]byte, 100)
					for j := range pad {
						pad[j] = byte('a' + r.Intn(26))
					}
					fmt.Fprintf(&b, "(%d,%d,%d,%d,'%s')", i/per+1, i%per+1, 1+r.Intn(n), r.Intn(100), pad)
				}
				if _, err := db.ExecContext(ctx, b.String()); err != nil {
					cancel(fmt.Errorf("scan: load %s rows %d..: %w", name, start, err))
					return
				}
			}
		}()
	}
feed:
	for start := 0; start < n; start += loadChunk {
		select {
		case chunks <- start:
		case <-ctx.Done():
			break feed
		}
	}
	close(chunks)
	wg.Wait()
	return context.Cause(ctx)
}

// Query is one timed query.
type Query struct {
	// Name is a short label, SQL the statement ("{t}" stands for the
	// table).
	Name, SQL string
	// Ordered says the answer is fully determined (ORDER BY over a unique
	// key, or one row), so that answers from two servers can be compared.
	Ordered bool
}

// TableQueries are the queries on the (w, id, k, q, pad) table.
func TableQueries() []Query {
	return []Query{
		{"filtered count(*)", "SELECT count(*) FROM {t} WHERE q > 50", true},
		// (q, id) is not unique: rows tied on it may come in either order.
		{"ORDER BY q DESC, id LIMIT 10", "SELECT w, id, q FROM {t} ORDER BY q DESC, id LIMIT 10", false},
		{"GROUP BY q % 10", "SELECT q % 10 AS m, count(*) FROM {t} GROUP BY q % 10 ORDER BY m", true},
		{"COUNT(DISTINCT k)", "SELECT COUNT(DISTINCT k) FROM {t}", true},
		{"self-join LIMIT 20", "SELECT a.w, a.id, b.q FROM {t} a, {t} b WHERE a.k = b.id AND b.w = a.w AND a.q = 3 LIMIT 20", false},
		{"k BETWEEN 1000 AND 6000", "SELECT count(*), sum(q) FROM {t} WHERE k BETWEEN 1000 AND 6000", true},
		{"(w, id) IN 3 pairs", "SELECT w, id, q FROM {t} WHERE (w, id) IN ((1,5),(1,77),(1,9000)) ORDER BY w, id", true},
		// Shapes near the issue's: other join orders and join kinds, IN
		// lists, ranges with ORDER BY ... LIMIT on the secondary index,
		// subqueries, derived tables, MIN/MAX and grouping on a key prefix.
		{"self-join, b first, ORDER BY LIMIT 20", "SELECT a.w, a.id, b.q FROM {t} b JOIN {t} a ON a.k = b.id AND b.w = a.w WHERE a.q = 3 ORDER BY a.w, a.id LIMIT 20", true},
		{"LEFT JOIN on the primary key, w = 2", "SELECT count(*), count(b.id), sum(b.q) FROM {t} a LEFT JOIN {t} b ON b.w = a.w AND b.id = a.k WHERE a.w = 2 AND a.id <= 1000", true},
		{"k IN 6 values", "SELECT w, id, k, q FROM {t} WHERE k IN (5, 77, 500, 4242, 5000, 50000) ORDER BY w, id", true},
		{"w IN (2, 5) AND id < 100", "SELECT count(*), sum(q) FROM {t} WHERE w IN (2, 5) AND id < 100", true},
		{"k > 5000 ORDER BY k LIMIT 10", "SELECT w, id, k FROM {t} WHERE k > 5000 ORDER BY k, w, id LIMIT 10", true},
		{"ORDER BY k DESC LIMIT 10", "SELECT w, id, k FROM {t} ORDER BY k DESC, w DESC, id DESC LIMIT 10", true},
		{"k < 100 OR k > 99900", "SELECT count(*), sum(q) FROM {t} WHERE k < 100 OR k > 99900", true},
		{"EXISTS correlated", "SELECT count(*) FROM {t} a WHERE a.q = 7 AND EXISTS (SELECT 1 FROM {t} b WHERE b.w = a.w AND b.id = a.k)", true},
		{"NOT EXISTS correlated", "SELECT count(*) FROM {t} a WHERE a.q = 7 AND NOT EXISTS (SELECT 1 FROM {t} b WHERE b.w = a.w AND b.id = a.k)", true},
		{"IN subquery", "SELECT count(*), sum(a.q) FROM {t} a WHERE a.k IN (SELECT b.id FROM {t} b WHERE b.w = 1 AND b.q = 5)", true},
		{"scalar subquery per row", "SELECT a.w, a.id, (SELECT b.q FROM {t} b WHERE b.w = a.w AND b.id = a.k) FROM {t} a WHERE a.w = 1 AND a.id <= 100 ORDER BY a.w, a.id", true},
		{"derived table GROUP BY w", "SELECT w, c FROM (SELECT w, count(*) AS c FROM {t} WHERE q < 10 GROUP BY w) d WHERE c > 0 ORDER BY w", true},
		{"MIN/MAX of k", "SELECT min(k), max(k) FROM {t}", true},
		{"MAX(id) WHERE w = 3", "SELECT max(id) FROM {t} WHERE w = 3", true},
		{"GROUP BY w (key prefix)", "SELECT w, count(*), max(id) FROM {t} GROUP BY w ORDER BY w", true},
		{"GROUP BY k on a k range", "SELECT k, count(*) FROM {t} WHERE k BETWEEN 1000 AND 1100 GROUP BY k ORDER BY k", true},
		{"COUNT(*) of the whole table", "SELECT count(*) FROM {t}", true},
	}
}

// TPCCQueries are the queries of issue 13 on a loaded TPC-C database
// (bench/tpcc) with warehouse 1.
func TPCCQueries() []Query {
	return []Query{
		{"stock filtered count(*)", "SELECT count(*) FROM stock WHERE s_quantity > 50", true},
		{"stock (s_w_id, s_i_id) IN FOR UPDATE", "SELECT s_i_id, s_quantity FROM stock WHERE (s_w_id, s_i_id) IN ((1,5),(1,77),(1,9000)) ORDER BY s_i_id FOR UPDATE", true},
		{"consistency subquery (3.3.2.12)", "SELECT count(*) FROM (SELECT c.c_id, c.c_d_id, c.c_balance c1, c_ytd_payment, " +
			"(SELECT sum(ol_amount) FROM orders, order_line WHERE OL_W_ID=O_W_ID AND OL_D_ID=O_D_ID AND OL_O_ID=O_ID " +
			"AND OL_DELIVERY_D IS NOT NULL AND O_W_ID=1 AND O_D_ID=c.C_D_ID AND O_C_ID=c.C_ID) sm " +
			"FROM customer c WHERE c.c_w_id = 1) t1 WHERE c1+c_ytd_payment <> sm", true},
	}
}

// Timing is what one query did on one server.
type Timing struct {
	Query, SQL string
	// Times are the runs' durations; Median their median.
	Times  []time.Duration
	Median time.Duration
	// OverLimit says a run was stopped at Limit.
	OverLimit bool
	Limit     time.Duration
	// Rows is the number of rows of the answer, Digest a hash of it.
	Rows   int
	Digest string
	// Err is the error of a failed run.
	Err string
}

// Time runs q (with "{t}" replaced by table) repeat times on one
// connection of db and returns the timing. A run past limit is stopped
// with KILL QUERY from another connection.
func Time(ctx context.Context, db *sql.DB, q Query, table string, repeat int, limit time.Duration) Timing {
	text := strings.ReplaceAll(q.SQL, "{t}", table)
	t := Timing{Query: q.Name, SQL: text, Limit: limit}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Err = err.Error()
		return t
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Err = err.Error()
		return t
	}
	for range repeat {
		killed := make(chan struct{})
		timer := time.AfterFunc(limit, func() {
			defer close(killed)
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			db.ExecContext(kctx, fmt.Sprintf("KILL QUERY %d", id))
		})
		began := time.Now()
		rows, digest, err := answer(ctx, conn, text)
		took := time.Since(began)
		if !timer.Stop() {
			<-killed
			t.OverLimit = true
			return t
		}
		if err != nil {
			t.Err = err.Error()
			return t
		}
		t.Times = append(t.Times, took)
		t.Rows, t.Digest = rows, digest
	}
	s := slices.Clone(t.Times)
	slices.Sort(s)
	t.Median = s[len(s)/2]
	return t
}

// answer runs text and returns its row count and a hash of its rows.
func answer(ctx context.Context, conn *sql.Conn, text string) (int, string, error) {
	// A locking read needs a transaction to mean anything; it is rolled
	// back at once.
	locking := strings.HasSuffix(text, "FOR UPDATE")
	if locking {
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return 0, "", err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}
	rs, err := conn.QueryContext(ctx, text)
	if err != nil {
		return 0, "", err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	n := 0
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return 0, "", err
		}
		for _, v := range vals {
			fmt.Fprintf(h, "%v:%s|", v.Valid, v.String)
		}
		h.Write([]byte{'\n'})
		n++
	}
	if err := rs.Err(); err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil))[:12], nil
}

// Summary is the cell text of a timing: "12.3 ms", "> 60s" or "error".
func (t Timing) Summary() string {
	switch {
	case t.OverLimit:
		return "> " + t.Limit.String()
	case t.Err != "":
		return "error"
	case len(t.Times) == 0:
		return "-"
	}
	return FormatMillis(t.Median)
}

// FormatMillis renders d in milliseconds with three significant digits.
func FormatMillis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	default:
		return fmt.Sprintf("%.2f ms", ms)
	}
}
