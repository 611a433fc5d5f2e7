package bench

import (
	"strings"
	"testing"
)

// TestParseKVRequests reads the request counters out of a /metrics body,
// both results of a command summed, other families ignored, and does the
// arithmetic the reports use.
func TestParseKVRequests(t *testing.T) {
	body := `# HELP percdb_kv_requests_total The node's requests to the KV layer.
# TYPE percdb_kv_requests_total counter
percdb_kv_requests_total{command="get",result="error"} 2
percdb_kv_requests_total{command="get",result="ok"} 40
percdb_kv_requests_total{command="prewrite",result="ok"} 10
percdb_kv_requests_total{command="scan",result="ok"} 0
# HELP percdb_kv_request_keys_total Keys.
# TYPE percdb_kv_request_keys_total counter
percdb_kv_request_keys_total{command="get"} 99
`
	r, err := parseKVRequests(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if r["get"] != 42 || r["prewrite"] != 10 || len(r) != 3 {
		t.Fatalf("parsed %v, want get 42, prewrite 10, scan 0", r)
	}
	d := r.Sub(KVRequests{"get": 2, "prewrite": 10})
	if got := d.Per(4).String(); got != "get 10.0" {
		t.Errorf("(r - base) / 4 = %q, want get 10.0", got)
	}
	if got := r.Total(); got != 52 {
		t.Errorf("total %v, want 52", got)
	}
	if got := strings.Join(r.Commands(), " "); got != "get prewrite scan" {
		t.Errorf("commands %q, want the most requested first", got)
	}
	if _, err := parseKVRequests(strings.NewReader("other_total 1\n")); err == nil {
		t.Error("a body without the family parsed")
	}
}
