package sql

import (
	"context"
	"log/slog"
	"time"

	"github.com/percdb/percdb/pd/pdapi"
	"github.com/percdb/percdb/sql/keyviz"
)

// The whole cluster's key heatmap on a SQL node of a cluster: the
// regions' reads and writes as their leaders reported them to pd (every
// SQL node's traffic), sampled from pd's API while the status port is
// open. Each sample's growth of a region's running totals
// (pdapi.RegionRecord.Total) is counted in the heatmap column of its time
// under the part of the key space the region starts in, split by region.
// The node's own heatmap (nodemetrics.KV.Heat) counts its requests by the key
// each names; this one knows the regions only, so a region holding
// several tables' keys counts under the first, and it has no request
// counts (the KV nodes report keys and bytes).

// clusterHeatSample is how often the cluster's heatmap reads pd's
// regions: a fifth of a heatmap column, so that a column's counts come
// from several samples and a late one moves little.
const clusterHeatSample = keyviz.DefaultInterval / 5

// clusterHeat is the whole cluster's heatmap.
type clusterHeat struct {
	rec *keyviz.Recorder
	pd  []string
	// last is each region's totals at the previous sample (run's
	// goroutine only).
	last map[uint64]pdapi.RegionLoad
}

// newClusterHeat returns the heatmap of the cluster whose pd members'
// status ports are pd.
func newClusterHeat(pd []string) *clusterHeat {
	return &clusterHeat{rec: keyviz.New(keyviz.Options{ByRegion: true}), pd: pd}
}

// run samples pd's regions until ctx ends.
func (h *clusterHeat) run(ctx context.Context) {
	t := time.NewTicker(clusterHeatSample)
	defer t.Stop()
	for {
		if err := h.sample(ctx); err != nil && ctx.Err() == nil {
			slog.Debug("console: cluster heatmap", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sample reads pd's regions and counts each one's growth since the last
// sample. A region seen for the first time, or whose totals went down
// (a new pd leader counts from zero), only sets the base of the next.
func (h *clusterHeat) sample(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pdAPITimeout)
	defer cancel()
	var regions []pdapi.RegionRecord
	if err := getFromPD(ctx, h.pd, pdapi.PathRegions, &regions); err != nil {
		return err
	}
	next := make(map[uint64]pdapi.RegionLoad, len(regions))
	for _, r := range regions {
		cur := r.Total
		next[r.ID] = cur
		prev, seen := h.last[r.ID]
		if !seen || cur.IntervalMS < prev.IntervalMS || cur.ReadKeys < prev.ReadKeys || cur.ReadBytes < prev.ReadBytes ||
			cur.WrittenKeys < prev.WrittenKeys || cur.WrittenBytes < prev.WrittenBytes {
			continue
		}
		c := keyviz.Cell{ReadKeys: cur.ReadKeys - prev.ReadKeys, ReadBytes: cur.ReadBytes - prev.ReadBytes,
			WriteKeys: cur.WrittenKeys - prev.WrittenKeys, WriteBytes: cur.WrittenBytes - prev.WrittenBytes}
		if c == (keyviz.Cell{}) {
			continue
		}
		span := keyviz.SpanOf(r.Start)
		span.Region = r.ID
		h.rec.Add(span, c)
	}
	h.last = next
	return nil
}
