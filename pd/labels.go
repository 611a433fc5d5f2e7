package pd

import (
	"slices"

	"github.com/percdb/percdb/pd/pdpb"
)

// Placement by store labels, after PD's location-labels: stores carry
// labels (percdb kv --labels zone=z1,host=h1), and Config.LocationLabels
// names the keys that place a store, outermost first (zone, then host).
// A region's replicas are best on stores that differ at the outermost
// level they can: a zone's loss then takes one replica of each region, a
// host's loss one too. pd scores a store as a home of one replica of a
// region against the stores of the region's other replicas (isolation):
// for each of them, the number of levels from the first at which their
// labels differ to the innermost (zone differs: all levels; only host
// differs: one; the same location: none), summed, as PD's distinct
// score. Placement (placement.go) and repair (repair.go) pick, among the
// stores that can take a replica, one of the highest score, then the
// lightest; a balance move never lowers its replica's score; and a
// replica whose score a store that can take it would raise moves there
// (reason "isolation", after drain and low space, before balance). A
// label a store lacks counts as the empty value. Without
// Config.LocationLabels every score is 0 and none of this changes a
// decision.

// isolation is the score of store as the home of one of r's replicas
// against r's other replicas' stores (all but store and but without:
// the replica that leaves, or 0), under v's stores' labels.
func (s *Server) isolation(v *placementView, r *pdpb.Region, store, without uint64) int {
	keys := s.cfg.LocationLabels
	if len(keys) == 0 {
		return 0
	}
	score := 0
	for _, p := range replicaStores(r) {
		if p == store || p == without {
			continue
		}
		for i, k := range keys {
			if labelValue(v.stores[store], k) != labelValue(v.stores[p], k) {
				score += len(keys) - i
				break
			}
		}
	}
	return score
}

// labelValue is st's label key ("" when it has none).
func labelValue(st *pdpb.Store, key string) string {
	if i := slices.IndexFunc(st.GetLabels(), func(l *pdpb.StoreLabel) bool { return l.GetKey() == key }); i >= 0 {
		return st.GetLabels()[i].GetValue()
	}
	return ""
}
