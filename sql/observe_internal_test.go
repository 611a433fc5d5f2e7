package sql

import (
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// TestObservePreparedExecution checks what observing a prepared
// statement's executions records with what was worked out when it was
// prepared: the statement's type in the metrics, its digest's row under
// the session's database at each execution (another row once the
// session changes database; the row made again after the summary was
// emptied); and that an execution allocates nothing.
func TestObservePreparedExecution(t *testing.T) {
	f := newObserveFixture(t)
	ins := &mysql.PrepareData{StatementID: 2, PrepareStmt: "INSERT INTO t VALUES (?)", ParamsCount: 1}
	f.c.PrepareData[ins.StatementID] = ins
	f.s.observed.prepare(f.c, f.s, ins)
	ok := &sqltypes.Result{RowsAffected: 1}
	send := func(*sqltypes.Result) error { return nil }
	execute := func(p *mysql.PrepareData, res *sqltypes.Result) {
		st := f.h.begin(f.c, p.PrepareStmt, p)
		if err := st.binaryResults(send)(res); err != nil {
			t.Fatal(err)
		}
		f.h.end(f.c, st, p.PrepareStmt, nil)
	}
	f.s.SetCurrentDatabase("db1")
	for i := 0; i < 3; i++ {
		execute(ins, ok)
		execute(f.prepare, f.res)
	}
	if got := counterValue(t, f.h.metrics.Queries(lexical.KindInsert, false)); got != 3 {
		t.Errorf("inserts counted: %v, want 3", got)
	}
	if got := counterValue(t, f.h.metrics.Queries(lexical.KindSelect, false)); got != 3 {
		t.Errorf("selects counted: %v, want 3", got)
	}
	counts := func() map[[2]string]uint64 {
		out := make(map[[2]string]uint64)
		for _, r := range f.s.provider.digests.Rows() {
			out[[2]string{r.Schema, r.DigestText}] += r.Count
		}
		return out
	}
	insText, selText := "insert into `t` values ( ? )", "select `c` from `sbtest1` where `id` = ?"
	if got := counts(); got[[2]string{"db1", insText}] != 3 || got[[2]string{"db1", selText}] != 3 {
		t.Errorf("digest rows: %v", got)
	}
	f.s.SetCurrentDatabase("db2")
	execute(ins, ok)
	f.s.SetCurrentDatabase("db1")
	execute(ins, ok)
	if got := counts(); got[[2]string{"db1", insText}] != 4 || got[[2]string{"db2", insText}] != 1 {
		t.Errorf("digest rows after a change of database: %v", got)
	}
	f.s.provider.digests.Reset()
	execute(ins, ok)
	if got := counts(); len(got) != 1 || got[[2]string{"db1", insText}] != 1 {
		t.Errorf("digest rows after a reset: %v", got)
	}
	if n := testing.AllocsPerRun(100, func() { execute(f.prepare, f.res) }); n != 0 {
		t.Errorf("an execution allocates %v times, want none", n)
	}
}

// counterValue returns the value of counter c.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestObserveTextStatements checks what observing text statements
// records through the session's digest slots: statements of many shapes
// interleaved (more shapes than slots, so that shapes share a slot) are
// each counted in their own digest's row under the session's database,
// statements that differ only in literals in one row, a row emptied by a
// reset is made again, and a statement whose digest the session has
// allocates nothing to be observed.
func TestObserveTextStatements(t *testing.T) {
	f := newObserveFixture(t)
	send := func(*sqltypes.Result, bool) error { return nil }
	run := func(q string) {
		n, d := parser.NormalizeDigest(q)
		f.query(q, n, d, send)
	}
	const shapes, rounds = 40, 3
	counts := func() map[[2]string]uint64 {
		out := make(map[[2]string]uint64)
		for _, r := range f.s.provider.digests.Rows() {
			out[[2]string{r.Schema, r.DigestText}] += r.Count
		}
		return out
	}
	textOf := func(shape int) string { return fmt.Sprintf("select `c%d` from `t` where `id` = ?", shape) }
	f.s.SetCurrentDatabase("db1")
	for r := 0; r < rounds; r++ {
		for i := 0; i < shapes; i++ {
			run(fmt.Sprintf("SELECT c%d FROM t WHERE id = %d", i, r*shapes+i))
		}
	}
	got := counts()
	for i := 0; i < shapes; i++ {
		if n := got[[2]string{"db1", textOf(i)}]; n != rounds {
			t.Errorf("shape %d counted %d times, want %d; rows: %v", i, n, rounds, got)
		}
	}
	if len(got) != shapes {
		t.Errorf("%d rows, want %d: %v", len(got), shapes, got)
	}
	if n := counterValue(t, f.h.metrics.Queries(lexical.KindSelect, false)); n != shapes*rounds {
		t.Errorf("selects counted: %v, want %d", n, shapes*rounds)
	}
	f.s.SetCurrentDatabase("db2")
	run("SELECT c0 FROM t WHERE id = 7")
	f.s.SetCurrentDatabase("db1")
	run("SELECT c0 FROM t WHERE id = 8")
	if got := counts(); got[[2]string{"db2", textOf(0)}] != 1 || got[[2]string{"db1", textOf(0)}] != rounds+1 {
		t.Errorf("rows after a change of database: %v", got)
	}
	f.s.provider.digests.Reset()
	run("SELECT c0 FROM t WHERE id = 9")
	if got := counts(); len(got) != 1 || got[[2]string{"db1", textOf(0)}] != 1 {
		t.Errorf("rows after a reset: %v", got)
	}
	q := "SELECT c0 FROM t WHERE id = 10"
	n, d := parser.NormalizeDigest(q)
	if allocs := testing.AllocsPerRun(100, func() { f.query(q, n, d, send) }); allocs != 0 {
		t.Errorf("a text statement allocates %v times, want none", allocs)
	}
}
