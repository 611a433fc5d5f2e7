package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// kvRequestsFamily is the metric of a percdb node's requests to its store
// (sql/nodemetrics), by command and result.
const kvRequestsFamily = "percdb_kv_requests_total"

// KVRequests are a percdb node's requests to its store, by command (get,
// batch_get, acquire_pessimistic_lock, prewrite, ...), both results (ok
// and error: a lock met or a conflict is a request too). Unlike the time
// of a transaction they do not change with the load on the machine, so a
// change of the write path is measured by them.
type KVRequests map[string]float64

// ScrapeKVRequests reads the node's request counters from the /metrics of
// its status address (host:port).
func ScrapeKVRequests(ctx context.Context, statusAddr string) (KVRequests, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+statusAddr+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", statusAddr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", statusAddr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("scrape %s: %s: %s", statusAddr, resp.Status, b)
	}
	return parseKVRequests(resp.Body)
}

// parseKVRequests picks percdb_kv_requests_total out of a /metrics body in
// Prometheus' text format.
func parseKVRequests(r io.Reader) (KVRequests, error) {
	// percdb's metric names are all in the legacy scheme.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse /metrics: %w", err)
	}
	f, ok := fams[kvRequestsFamily]
	if !ok {
		return nil, fmt.Errorf("parse /metrics: no %s (not a percdb node?)", kvRequestsFamily)
	}
	out := KVRequests{}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "command" {
				out[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

// Sub returns the requests of r made since base (a scrape before r).
func (r KVRequests) Sub(base KVRequests) KVRequests {
	out := KVRequests{}
	for c, n := range r {
		if d := n - base[c]; d != 0 {
			out[c] = d
		}
	}
	return out
}

// Total is the requests of every command.
func (r KVRequests) Total() float64 {
	var n float64
	for _, c := range r.Commands() {
		n += r[c]
	}
	return n
}

// Per returns r divided by n (requests per transaction); r when n is 0.
func (r KVRequests) Per(n float64) KVRequests {
	if n == 0 {
		return r
	}
	out := KVRequests{}
	for c, v := range r {
		out[c] = v / n
	}
	return out
}

// Commands returns the commands of r, the most requested first (ties by
// name), for a report.
func (r KVRequests) Commands() []string {
	cs := slices.Sorted(maps.Keys(r))
	slices.SortStableFunc(cs, func(a, b string) int {
		switch {
		case r[a] > r[b]:
			return -1
		case r[a] < r[b]:
			return 1
		}
		return 0
	})
	return cs
}

// String is "get 3.1, prewrite 1.0, ..." with one decimal, the most
// requested first.
func (r KVRequests) String() string {
	var parts []string
	for _, c := range r.Commands() {
		parts = append(parts, fmt.Sprintf("%s %.1f", c, r[c]))
	}
	return strings.Join(parts, ", ")
}
