package pd

import (
	"context"
	"slices"
)

// PruneRegionStats rids the region sizes and loads of the regions that
// no longer exist now, as the heartbeats do once a minute.
func (s *Server) PruneRegionStats(ctx context.Context) error { return s.pruneRegionStats(ctx) }

// RegionStatsKept returns the regions pd keeps a size, a load or a total
// of, sorted.
func (s *Server) RegionStatsKept() []uint64 {
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	var out []uint64
	for id := range s.sizes {
		out = append(out, id)
	}
	for id := range s.loads {
		out = append(out, id)
	}
	for id := range s.totals {
		out = append(out, id)
	}
	for id := range s.counted {
		out = append(out, id)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
