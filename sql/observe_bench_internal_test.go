package sql

import (
	"context"
	"fmt"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/pingcap/tidb/pkg/parser"

	"github.com/percdb/percdb/kv"
)

// observeFixture is a node and one session of it, with the outermost
// handler around nothing, for measuring what observing a statement costs
// by itself.
type observeFixture struct {
	h       *observedHandler
	s       *Session
	c       *mysql.Conn
	prepare *mysql.PrepareData
	res     *sqltypes.Result
}

func newObserveFixture(tb testing.TB) *observeFixture {
	tb.Helper()
	srv, err := Open(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: tb.TempDir(),
		KV: kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: -1}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	s, err := newSession(gsql.NewBaseSession(), srv.provider, srv.sessionVars())
	if err != nil {
		tb.Fatal(err)
	}
	const id = 1
	srv.sessions.add(id, s)
	h := &observedHandler{
		limitHandler: &limitHandler{handler: &handler{sessions: srv.sessions}},
		metrics:      srv.metrics, slow: srv.slow, recentSlow: srv.recentSlow, openConns: &srv.openConns,
		statsOff: &srv.provider.statsOff,
	}
	query := "SELECT c FROM sbtest1 WHERE id=?"
	f := &observeFixture{
		h: h, s: s,
		c:       &mysql.Conn{ConnectionID: id, PrepareData: map[uint32]*mysql.PrepareData{}},
		prepare: &mysql.PrepareData{StatementID: 1, PrepareStmt: query, ParamsCount: 1},
		res: &sqltypes.Result{
			Fields: []*querypb.Field{{Name: "c", Type: sqltypes.Char}},
			Rows:   [][]sqltypes.Value{{sqltypes.NewVarChar("x")}},
		},
	}
	f.c.PrepareData[1] = f.prepare
	return f
}

// BenchmarkObserveExecute measures what observedHandler adds to one
// execution of a prepared statement that sends one row: everything
// ComStmtExecute does around the inner handler.
//
//	go test ./sql -run '^$' -bench ObserveExecute -benchmem
func BenchmarkObserveExecute(b *testing.B) { benchObserveExecute(b, false) }

// BenchmarkObserveExecuteStatsOff is BenchmarkObserveExecute with
// percdb_statement_stats OFF: what is left is the process list's record.
func BenchmarkObserveExecuteStatsOff(b *testing.B) { benchObserveExecute(b, true) }

func benchObserveExecute(b *testing.B, statsOff bool) {
	f := newObserveFixture(b)
	f.h.statsOff.Store(statsOff)
	send := func(*sqltypes.Result) error { return nil }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.execute(send)
	}
}

// execute is one observed execution of f's prepared statement, apart
// from its fixture so that valgrind --toggle-collect can count it alone.
//
//go:noinline
func (f *observeFixture) execute(send func(*sqltypes.Result) error) {
	st := f.h.begin(f.c, f.prepare.PrepareStmt, f.prepare)
	_ = st.binaryResults(send)(f.res)
	f.h.end(f.c, st, f.prepare.PrepareStmt, nil)
}

// BenchmarkObserveQuery measures what observedHandler adds to one text
// point select that sends one row, each with its own literal (as
// sysbench's text statements): everything ComQuery does around the inner
// handler. The inner handler's part, the fast path normalizing the text
// for its plan cache and leaving the result in the session, is done
// before the loop: it is not observation.
//
//	go test ./sql -run '^$' -bench ObserveQuery -benchmem
func BenchmarkObserveQuery(b *testing.B) { benchObserveQuery(b, false) }

// BenchmarkObserveQueryStatsOff is BenchmarkObserveQuery with
// percdb_statement_stats OFF: what is left is the process list's record.
func BenchmarkObserveQueryStatsOff(b *testing.B) { benchObserveQuery(b, true) }

func benchObserveQuery(b *testing.B, statsOff bool) {
	f := newObserveFixture(b)
	f.h.statsOff.Store(statsOff)
	const n = 1024
	queries := make([]string, n)
	normalized := make([]string, n)
	digests := make([]*parser.Digest, n)
	for i := range queries {
		queries[i] = fmt.Sprintf("SELECT c FROM sbtest1 WHERE id=%d", i+1)
		normalized[i], digests[i] = parser.NormalizeDigest(queries[i])
	}
	send := func(*sqltypes.Result, bool) error { return nil }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f.query(queries[i%n], normalized[i%n], digests[i%n], send)
	}
}

// query is one observed text statement q, which the inner handler
// normalizes to normalized and digest, apart from its fixture so that
// valgrind --toggle-collect can count it alone.
//
//go:noinline
func (f *observeFixture) query(q, normalized string, digest *parser.Digest, send mysql.ResultSpoolFn) {
	st := f.h.begin(f.c, q, nil)
	f.s.digests.remember(q, normalized, digest)
	_ = st.textResults(send)(f.res, false)
	f.h.end(f.c, st, q, nil)
}
