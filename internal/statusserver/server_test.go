package statusserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// start runs a status server on a free port over reg, closed when the
// test ends.
func start(t *testing.T, reg *prometheus.Registry) *Server {
	t.Helper()
	s, err := Listen(Config{Addr: "127.0.0.1:0", Version: "v-test", Gatherer: reg, Connections: func() int { return 3 }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s
}

func get(t *testing.T, s *Server, method, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+s.Addr().String()+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStatusReadiness checks /status: 200 with the fields while ready,
// 503 once SetNotReady, 405 for a POST.
func TestStatusReadiness(t *testing.T) {
	s := start(t, prometheus.NewRegistry())
	code, body := get(t, s, http.MethodGet, "/status")
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil || code != http.StatusOK {
		t.Fatalf("GET /status: %d %s (%v)", code, body, err)
	}
	if !st.Ready || st.Version != "v-test" || st.Connections != 3 || st.GoVersion == "" || st.StartTime == "" {
		t.Errorf("/status = %+v", st)
	}
	if code, _ := get(t, s, http.MethodPost, "/status"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /status: %d, want 405", code)
	}
	s.SetNotReady()
	if code, body := get(t, s, http.MethodGet, "/status"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"ready":false`) {
		t.Errorf("GET /status shutting down: %d %s, want 503 and ready false", code, body)
	}
}

// TestPebbleCollector checks that Pebble's metrics come out under their
// families, and that a store that cannot answer (closed) fails only those
// families: the rest of /metrics is served.
func TestPebbleCollector(t *testing.T) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set([]byte("k"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	var closed atomic.Bool
	reg := prometheus.NewRegistry()
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "other_total", Help: "another family"})
	reg.MustRegister(other, NewPebbleCollector(func() (*pebble.Metrics, error) {
		if closed.Load() {
			return nil, errors.New("store closed")
		}
		return db.Metrics(), nil
	}))
	s := start(t, reg)

	code, body := get(t, s, http.MethodGet, "/metrics")
	// The legacy scheme: percdb's metric names are all [a-zA-Z_:][a-zA-Z0-9_:]*.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if code != http.StatusOK || err != nil {
		t.Fatalf("GET /metrics: %d %v\n%s", code, err, body)
	}
	for _, name := range []string{"percdb_pebble_compactions_total", "percdb_pebble_read_amplification",
		"percdb_pebble_block_cache_hits_total", "percdb_pebble_block_cache_misses_total", "percdb_pebble_disk_usage_bytes",
		"percdb_pebble_memtable_size_bytes", "percdb_pebble_wal_bytes_written_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if w := fams["percdb_pebble_wal_bytes_written_total"]; w != nil && w.GetMetric()[0].GetCounter().GetValue() <= 0 {
		t.Error("percdb_pebble_wal_bytes_written_total is 0 after a write")
	}

	closed.Store(true)
	code, body = get(t, s, http.MethodGet, "/metrics")
	if code != http.StatusOK || !strings.Contains(body, "other_total") || strings.Contains(body, "percdb_pebble_") {
		t.Errorf("GET /metrics with the store closed: %d\n%s\nwant 200 with the other families only", code, body)
	}
}
