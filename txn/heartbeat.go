package txn

import (
	"context"
	"sync"
	"time"

	"github.com/percdb/percdb/kv"
)

// liveCommit is a commit in progress whose primary is locked: the
// heartbeat keeps its primary lock's TTL ahead of the clock until the
// commit reaches its commit point or gives up.
type liveCommit struct {
	primary []byte
	startTS uint64
	// born is when the transaction got its start_ts, by the local clock:
	// TTLs count from there.
	born time.Time
	// extended is when the TTL was last set (prewrite or heartbeat).
	extended time.Time
}

// heartbeat is the registry of live commits and the Store goroutine that
// extends their primary locks every HeartbeatInterval.
type heartbeat struct {
	mu   sync.Mutex
	live map[*liveCommit]struct{}
}

func newHeartbeat() *heartbeat {
	return &heartbeat{live: make(map[*liveCommit]struct{})}
}

func (h *heartbeat) add(c *liveCommit) {
	h.mu.Lock()
	h.live[c] = struct{}{}
	h.mu.Unlock()
}

func (h *heartbeat) remove(c *liveCommit) {
	h.mu.Lock()
	delete(h.live, c)
	h.mu.Unlock()
}

// due returns the commits whose TTL was last set at least interval ago.
func (h *heartbeat) due(now time.Time, interval time.Duration) []*liveCommit {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*liveCommit
	for c := range h.live {
		if now.Sub(c.extended) >= interval {
			out = append(out, c)
		}
	}
	return out
}

// lockTTL is the TTL (ms) to give the locks of a transaction born at born:
// LockTTL from now, expressed from the start_ts as the store counts it.
func (s *Store) lockTTL(born time.Time) uint64 {
	return uint64((time.Since(born) + s.opts.LockTTL).Milliseconds())
}

// runHeartbeat extends the TTL of every commit in progress for which a
// HeartbeatInterval has passed since its TTL was last set, until ctx ends.
// Errors are ignored: a commit whose primary lock is gone finds out itself
// when it commits.
func (s *Store) runHeartbeat(ctx context.Context) {
	t := time.NewTicker(s.opts.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, c := range s.heartbeat.due(now, s.opts.HeartbeatInterval) {
				ttl := s.lockTTL(c.born)
				_ = s.onRegion(ctx, c.primary, func(ctx context.Context, reg kv.RegionInfo) error {
					_, err := s.client.TxnHeartBeat(ctx, reg.Ctx(), c.primary, c.startTS, ttl)
					return err
				})
				s.heartbeat.mu.Lock()
				c.extended = now
				s.heartbeat.mu.Unlock()
			}
		}
	}
}
