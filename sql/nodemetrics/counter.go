package nodemetrics

import "context"

// Counter is one of the node's counters (or gauges) as both of its views
// show it: SHOW STATUS under Status, /metrics on the status port as the
// Prometheus family Metric, with Label=LabelValue when Label is set.
// Both views read the same list (package sql's nodeCounters, through
// Counters), so a counter is added in one place and cannot mean
// different things in the two.
type Counter struct {
	Status     string
	Metric     string
	Help       string
	Label      string
	LabelValue string
	// Gauge marks a value that goes down as well as up.
	Gauge bool
	Value uint64
	// MetricScale, when not 0, multiplies Value for /metrics: a time
	// SHOW STATUS gives in milliseconds, as MySQL does, is in seconds
	// there, as Prometheus' conventions ask.
	MetricScale float64
}

// Counters returns the node's counters with their current values; a
// scrape calls it (package sql's DatabaseProvider.nodeCounters). ctx
// bounds what it asks other processes.
type Counters func(ctx context.Context) []Counter
