package nodemetrics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// TestCountersAndStatements checks that the node's counters are served as
// they are listed (a label, a gauge, a scale from milliseconds to
// seconds), read at every scrape, and the statement counters by kind.
func TestCountersAndStatements(t *testing.T) {
	n := uint64(1)
	counters := func(context.Context) []Counter {
		return []Counter{
			{Status: "A_ok", Metric: "percdb_a_total", Help: "A.", Label: "result", LabelValue: "ok", Value: n},
			{Status: "A_failed", Metric: "percdb_a_total", Help: "A.", Label: "result", LabelValue: "failed", Value: 2 * n},
			{Status: "B", Metric: "percdb_b", Help: "B.", Gauge: true, Value: 5},
			{Status: "C_time", Metric: "percdb_c_seconds_total", Help: "C.", Value: 1500, MetricScale: 1e-3},
		}
	}
	m := New(counters, nil, NewKV(false), nil)
	n = 3 // read at the scrape, not at New
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "percdb_a_") && !strings.HasPrefix(f.GetName(), "percdb_b") && !strings.HasPrefix(f.GetName(), "percdb_c_") {
			continue
		}
		for _, mt := range f.GetMetric() {
			v := mt.GetCounter().GetValue()
			if f.GetType() == dto.MetricType_GAUGE {
				v = mt.GetGauge().GetValue()
			}
			var labels []string
			for _, l := range mt.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got = append(got, fmt.Sprintf("%s %s{%s} %v", f.GetType(), f.GetName(), strings.Join(labels, ","), v))
		}
	}
	sort.Strings(got)
	want := "COUNTER percdb_a_total{result=failed} 6|COUNTER percdb_a_total{result=ok} 3|COUNTER percdb_c_seconds_total{} 1.5|GAUGE percdb_b{} 5"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("scraped\n%s\nwant\n%s", g, want)
	}
	m.Statement(lexical.KindSelect, time.Millisecond, false)
	m.Statement(lexical.KindSelect, time.Millisecond, true)
	m.Statement(lexical.KindSelect, time.Millisecond, false)
	for failed, want := range map[bool]float64{false: 2, true: 1} {
		var d dto.Metric
		if err := m.Queries(lexical.KindSelect, failed).Write(&d); err != nil {
			t.Fatal(err)
		}
		if got := d.GetCounter().GetValue(); got != want {
			t.Errorf("select failed=%v: %v, want %v", failed, got, want)
		}
	}
	m.SlowQuery()
	if got := m.SlowQueries(); got != 1 {
		t.Errorf("SlowQueries = %d, want 1", got)
	}
}
