package console

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/percdb/percdb/internal/statusserver"
)

// fakeSource is a Source with fixed data that records kills.
type fakeSource struct {
	killed []KillRequest
}

func (f *fakeSource) Statements() []Statement {
	return []Statement{{Schema: "db", Digest: "d1", DigestText: "select ?", Count: 3}}
}
func (f *fakeSource) SlowQueries() []SlowQuery {
	return []SlowQuery{{Query: "SELECT SLEEP(1)", StartTS: 1 << 60}}
}
func (f *fakeSource) Processes() []Process {
	return []Process{{ID: 7, Command: "Query", Info: "SELECT 1"}}
}
func (f *fakeSource) Transactions() []Transaction { return nil }
func (f *fakeSource) LockWaits() []LockWait {
	return []LockWait{{ConnID: 7, StartTS: 9, HoldingConnID: 8}}
}
func (f *fakeSource) Heatmap() Heatmap {
	return Heatmap{IntervalS: 10, Times: []int64{1000}, Rows: []HeatmapRow{{Table: "d.t", Part: "rows", ReadKeys: []uint64{3}}}}
}
func (f *fakeSource) Storage() Storage {
	return Storage{Local: true, StoreFigures: statusserver.StoreFigures{Dir: "/data/kv", DiskTotal: 100}, Tables: []TableSize{{Table: "d.t", Bytes: 42}}}
}
func (f *fakeSource) Cluster() Cluster { return Cluster{} }
func (f *fakeSource) ClusterHeatmap() Heatmap {
	return Heatmap{IntervalS: 10, Times: []int64{0}, Rows: []HeatmapRow{{Table: "d.t", Part: "rows", Region: 7, WriteKeys: []uint64{3}}}}
}
func (f *fakeSource) Kill(id uint32, query bool) error {
	if id != 7 {
		return ErrNoConnection
	}
	f.killed = append(f.killed, KillRequest{ID: id, Query: query})
	return nil
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func TestHandlerPagesAndAPI(t *testing.T) {
	src := &fakeSource{}
	srv := httptest.NewServer(Handler(src, nil))
	defer srv.Close()

	for _, c := range []struct {
		path, ctype, contains string
	}{
		{"/", "text/html", `<script src="/static/console.js">`},
		{"/static/console.js", "javascript", "function lineChart"},
		{"/static/console.css", "text/css", ".chart"},
		{"/api/statements", "application/json", `"digest_text":"select ?"`},
		// A timestamp beyond 2^53 is a string, so JavaScript keeps it.
		{"/api/slow", "application/json", `"start_ts":"1152921504606846976"`},
		{"/api/processes", "application/json", `"info":"SELECT 1"`},
		{"/api/transactions", "application/json", `{"transactions":[],"lock_waits":[{"conn_id":7,"start_ts":"9"`},
		{"/api/overview", "application/json", `"samples":[]`},
		{"/api/heatmap", "application/json", `"rows":[{"table":"d.t","part":"rows","read_keys":[3]`},
		{"/api/heatmap?scope=cluster", "application/json", `"region":7`},
		// Empty lists are [], never null.
		{"/api/storage", "application/json", `"levels":[]`},
		{"/api/storage", "application/json", `"tables":[{"table":"d.t","bytes":42}]`},
		{"/api/storage", "application/json", `"pending_ranges":[],"service_safe_points":[]`},
	} {
		code, ctype, body := get(t, srv, c.path)
		if code != http.StatusOK || !strings.Contains(ctype, c.ctype) || !strings.Contains(body, c.contains) {
			t.Errorf("GET %s: %d %s, want %s containing %q: %.300s", c.path, code, ctype, c.ctype, c.contains, body)
		}
	}
	for _, path := range []string{"/nosuch", "/api/nosuch", "/static/nosuch.js"} {
		if code, _, _ := get(t, srv, path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	if resp, err := http.Get(srv.URL + "/api/kill"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/kill: %v %v, want 405", resp.StatusCode, err)
	}
}

func TestKillGuard(t *testing.T) {
	src := &fakeSource{}
	srv := httptest.NewServer(Handler(src, nil))
	defer srv.Close()
	post := func(body, ctype, origin string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/kill", strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name, body, ctype, origin string
		want                      int
	}{
		{"another site's page", `{"id":7,"query":true}`, "application/json", "http://evil.example", http.StatusForbidden},
		{"a form post", "id=7", "application/x-www-form-urlencoded", "", http.StatusUnsupportedMediaType},
		{"a text/plain post", `{"id":7}`, "text/plain", "", http.StatusUnsupportedMediaType},
		{"no id", `{"query":true}`, "application/json", "", http.StatusBadRequest},
		{"unknown field", `{"id":7,"all":true}`, "application/json", "", http.StatusBadRequest},
		{"unknown connection", `{"id":99,"query":true}`, "application/json", "", http.StatusNotFound},
		{"KILL QUERY from the console", `{"id":7,"query":true}`, "application/json", srv.URL, http.StatusOK},
		{"KILL from curl", `{"id":7}`, "application/json", "", http.StatusOK},
	} {
		if got := post(c.body, c.ctype, c.origin); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	want := []KillRequest{{ID: 7, Query: true}, {ID: 7, Query: false}}
	if len(src.killed) != 2 || src.killed[0] != want[0] || src.killed[1] != want[1] {
		t.Errorf("kills = %+v, want %+v", src.killed, want)
	}
}

// TestHistory samples a registry by hand: rates, the latency percentiles
// of the interval's observations only, gauges.
func TestHistory(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "percdb_queries_total"}, []string{"type", "result"})
	d := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "percdb_query_duration_seconds", Buckets: []float64{0.001, 0.01, 0.1}}, []string{"type"})
	c := prometheus.NewGauge(prometheus.GaugeOpts{Name: "percdb_connections"})
	tx := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "percdb_transactions_total"}, []string{"result"})
	reg.MustRegister(q, d, c, tx)
	// Before the first sample: slow statements that must not count in
	// the interval's percentiles.
	for i := 0; i < 100; i++ {
		d.WithLabelValues("select").Observe(0.05)
	}
	h := NewHistory(reg, time.Second, 2)
	t0 := time.Unix(1000, 0)
	h.sample(t0)
	for i := 0; i < 20; i++ {
		q.WithLabelValues("select", "ok").Inc()
		d.WithLabelValues("select").Observe(0.0005)
	}
	q.WithLabelValues("insert", "error").Add(2)
	tx.WithLabelValues("committed").Add(4)
	tx.WithLabelValues("conflicted").Add(1)
	c.Set(3)
	h.sample(t0.Add(2 * time.Second))
	o := h.Overview(t0.Add(2 * time.Second))
	if len(o.Samples) != 1 {
		t.Fatalf("samples = %+v", o.Samples)
	}
	s := o.Samples[0]
	if s.QPS != 11 || s.ErrorsPS != 1 || s.CommitsPS != 2 || s.ConflictsPS != 0.5 || s.Connections != 3 {
		t.Errorf("sample = %+v", s)
	}
	if s.P99Ms <= 0 || s.P99Ms > 1 {
		t.Errorf("p99 = %v ms, want within the first bucket (<= 1 ms): older observations leaked in", s.P99Ms)
	}
	if o.Totals["queries"] != 22 {
		t.Errorf("totals = %v", o.Totals)
	}
	// The ring keeps size samples.
	h.sample(t0.Add(3 * time.Second))
	h.sample(t0.Add(4 * time.Second))
	if o := h.Overview(t0); len(o.Samples) != 2 || o.Samples[1].T != t0.Add(4*time.Second).UnixMilli() {
		t.Errorf("after 3 samples of a ring of 2: %+v", o.Samples)
	}
	b, err := json.Marshal(o)
	if err != nil || !strings.Contains(string(b), `"p99_ms"`) {
		t.Errorf("overview JSON: %s %v", b, err)
	}
}

func TestQuantile(t *testing.T) {
	bounds := []float64{1, 2, 4, math.Inf(1)}
	for _, c := range []struct {
		q    float64
		cum  []float64
		want float64
	}{
		{0.5, []float64{0, 0, 0, 0}, 0},
		{0.5, []float64{10, 10, 10, 10}, 0.5},
		{0.5, []float64{0, 10, 10, 10}, 1.5},
		{0.99, []float64{0, 0, 0, 10}, 4},
		{1, []float64{5, 5, 10, 10}, 4},
	} {
		if got := quantile(c.q, bounds, c.cum); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v, %v) = %v, want %v", c.q, c.cum, got, c.want)
		}
	}
}

func TestSlowRing(t *testing.T) {
	r := NewSlowRing(3)
	if got := r.List(); len(got) != 0 {
		t.Fatalf("empty ring: %v", got)
	}
	for i := 1; i <= 5; i++ {
		r.Add(SlowQuery{ConnID: uint32(i)})
	}
	got := r.List()
	if len(got) != 3 || got[0].ConnID != 5 || got[1].ConnID != 4 || got[2].ConnID != 3 {
		t.Errorf("List = %+v, want 5, 4, 3", got)
	}
}
