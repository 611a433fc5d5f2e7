package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"
)

// TestPlanCacheResults runs a cached plan (boundexec.go: its executions
// after the first run in the connection's goroutine, not through GMS's
// handler) over results of 0 to 300 rows, around GMS's batches of 128,
// and compares what the client gets, rows, column definitions and
// FOUND_ROWS(), with the same statement on a session whose plan cache is
// off.
func TestPlanCacheResults(t *testing.T) {
	ctx := context.Background()
	srv, admin := planCacheSetup(t)
	cached, plain := planCacheConn(t, srv), planCacheConn(t, srv)
	if _, err := plain.ExecContext(ctx, "SET @percdb_plan_cache = 0"); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"SELECT id, k, c, n FROM t WHERE id BETWEEN ? AND ? ORDER BY id",
		"SELECT c, id * 2, n FROM t WHERE id BETWEEN ? AND ? ORDER BY c, id",
		"SELECT SUM(k), COUNT(n) FROM t WHERE id BETWEEN ? AND ?",
	}
	ranges := [][2]int{{1, 0}, {5, 5}, {1, 127}, {1, 128}, {1, 129}, {1, 256}, {1, 257}, {1, 300}, {290, 400}}
	hits := serverStatus(t, admin, "Percdb_plan_cache_hit")
	for _, q := range queries {
		cst, err := cached.PrepareContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pst, err := plain.PrepareContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 2; round++ {
			for _, r := range ranges {
				got := runStmt(t, ctx, cached, cst, r[0], r[1])
				want := runStmt(t, ctx, plain, pst, r[0], r[1])
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s with %v, round %d:\ncached   %+v\nuncached %+v", q, r, round, got, want)
				}
			}
		}
		cst.Close()
		pst.Close()
	}
	if n := serverStatus(t, admin, "Percdb_plan_cache_hit") - hits; n < uint64(len(queries)*len(ranges)) {
		t.Errorf("%d plan cache hits, want at least %d", n, len(queries)*len(ranges))
	}
}

// stmtResult is what a client saw of one execution.
type stmtResult struct {
	Columns   []string
	Rows      [][]string
	FoundRows string
}

// runStmt executes st with args on conn and returns its result.
func runStmt(t *testing.T, ctx context.Context, conn *sql.Conn, st *sql.Stmt, args ...any) stmtResult {
	t.Helper()
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var res stmtResult
	for _, ct := range types {
		length, _ := ct.Length()
		prec, scale, _ := ct.DecimalSize()
		nullable, _ := ct.Nullable()
		res.Columns = append(res.Columns, fmt.Sprintf("%s %s %d %d,%d null=%v %v", ct.Name(), ct.DatabaseTypeName(), length, prec, scale, nullable, ct.ScanType()))
	}
	res.Rows = readRows(rows)
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if err := conn.QueryRowContext(ctx, "SELECT FOUND_ROWS()").Scan(&res.FoundRows); err != nil {
		t.Fatal(err)
	}
	return res
}
