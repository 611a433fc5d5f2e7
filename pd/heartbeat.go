package pd

import (
	"time"

	"github.com/percdb/percdb/pd/pdpb"
)

// slowHeartbeat is how long pd may take to answer a store's heartbeat
// before it logs it: a KV node heartbeats every second, its pd client
// gives an attempt 3 s, and placement counts a store live while it
// heartbeated within liveWindow.
const slowHeartbeat = time.Second

// noteSlowHeartbeat logs a heartbeat of req's store that pd took longer
// than slowHeartbeat to handle (begun at start).
func (s *Server) noteSlowHeartbeat(req *pdpb.StoreHeartbeatRequest, start time.Time) {
	if took := time.Since(start); took > slowHeartbeat {
		s.cfg.Logger.Warn("pd: slow store heartbeat", "store", req.GetStoreId(), "took", took.Round(time.Millisecond),
			"leading", len(req.GetLeading()), "reports", len(req.GetReports()))
	}
}
