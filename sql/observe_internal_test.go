package sql

import (
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
	if got := counterValue(t, f.h.metrics.queries[stmtInsert][resultOK]); got != 3 {
		t.Errorf("inserts counted: %v, want 3", got)
	}
	if got := counterValue(t, f.h.metrics.queries[stmtSelect][resultOK]); got != 3 {
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
