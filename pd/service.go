package pd

import (
	"cmp"
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/pd/pdpb"
)

// pdService implements pdpb.PDServer on the directory. Every call needs
// the leadership: reads too, so that a client never reads a directory a
// deposed member has stopped keeping.
type pdService struct {
	pdpb.UnimplementedPDServer
	s *Server
}

// toStatus gives a directory error the gRPC code the client acts on:
// Unavailable (try again, maybe at another member) for everything but a
// malformed request.
func toStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, errBadRequest):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, errFailedPrecondition):
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Unavailable, err.Error())
}

// errBadRequest is wrapped by errors of malformed requests.
var errBadRequest = errors.New("pd: bad request")

// errFailedPrecondition is wrapped by errors of requests the cluster's
// state does not allow (draining a store the others cannot replace).
var errFailedPrecondition = errors.New("pd: refused")

// PutStore implements pdpb.PDServer.
func (p *pdService) PutStore(ctx context.Context, req *pdpb.PutStoreRequest) (*pdpb.PutStoreResponse, error) {
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	if req.GetStore().GetAddr() == "" {
		return nil, toStatus(errors.Join(errBadRequest, errors.New("store without an address")))
	}
	id, err := p.s.dir.putStore(ctx, t.guard, req.GetStore())
	if err != nil {
		return nil, toStatus(err)
	}
	p.s.beat(id)
	p.s.hbMu.Lock()
	p.s.unreported[id] = true
	p.s.hbMu.Unlock()
	return &pdpb.PutStoreResponse{StoreId: id}, nil
}

// beat records a heartbeat of store id.
func (s *Server) beat(id uint64) {
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	s.heartbeats[id] = s.now().UnixMilli()
	s.beats.Add(1)
}

// StoreHeartbeat implements pdpb.PDServer. A heartbeat from an address
// other than the registered one updates the registration (a store moved);
// the regions the store says it leads are routed to it from now on
// (heartbeat.go).
func (p *pdService) StoreHeartbeat(ctx context.Context, req *pdpb.StoreHeartbeatRequest) (*pdpb.StoreHeartbeatResponse, error) {
	defer p.s.noteSlowHeartbeat(req, time.Now())
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	st, err := p.s.dir.store(ctx, req.GetStoreId())
	if err != nil {
		return nil, toStatus(err)
	}
	if st == nil {
		return nil, status.Errorf(codes.NotFound, "pd: store %d is not registered", req.GetStoreId())
	}
	if a := cmp.Or(req.GetAddr(), st.GetAddr()); a != st.GetAddr() || req.GetStatusAddr() != st.GetStatusAddr() {
		if _, err := p.s.dir.putStore(ctx, t.guard, &pdpb.Store{Id: st.Id, Addr: a, StatusAddr: req.GetStatusAddr(), Labels: st.GetLabels()}); err != nil {
			return nil, toStatus(err)
		}
	}
	p.s.beat(st.Id)
	return p.s.heartbeat(ctx, t, st.Id, req)
}

// withStore answers a region with the store that serves it: its leader as
// last reported, or, when that store has stopped heartbeating (it is down:
// the region's other replicas elect a leader, which reports in at once),
// a voter on a live store, which answers NotLeader with the new leader's
// address, or, when a quorum is lost, that the region is unavailable.
func (p *pdService) withStore(ctx context.Context, r *pdpb.Region) (*pdpb.GetRegionResponse, error) {
	if t, err := p.s.leader(); err == nil {
		r.StoreId = p.s.liveRoute(t, r, p.s.now())
	}
	st, err := p.s.dir.store(ctx, r.StoreId)
	if err != nil {
		return nil, toStatus(err)
	}
	if st == nil {
		return nil, status.Errorf(codes.Unavailable, "pd: region %d is on store %d, which is not registered", r.Id, r.StoreId)
	}
	p.s.hbMu.Lock()
	st.LastHeartbeatUnixMs = p.s.heartbeats[st.Id]
	size, load := p.s.sizes[r.GetId()], p.s.loads[r.GetId()]
	p.s.hbMu.Unlock()
	return &pdpb.GetRegionResponse{Region: r, Store: st, ApproximateSize: size, Load: load}, nil
}

// GetRegion implements pdpb.PDServer.
func (p *pdService) GetRegion(ctx context.Context, req *pdpb.GetRegionRequest) (*pdpb.GetRegionResponse, error) {
	if _, err := p.s.leader(); err != nil {
		return nil, err
	}
	r, err := p.s.dir.regionOf(ctx, req.GetKey())
	if err != nil {
		return nil, toStatus(err)
	}
	return p.withStore(ctx, r)
}

// GetRegionByID implements pdpb.PDServer.
func (p *pdService) GetRegionByID(ctx context.Context, req *pdpb.GetRegionByIDRequest) (*pdpb.GetRegionResponse, error) {
	if _, err := p.s.leader(); err != nil {
		return nil, err
	}
	r, err := p.s.dir.regionByID(ctx, req.GetRegionId())
	if err != nil {
		return nil, toStatus(err)
	}
	if r == nil {
		return nil, status.Errorf(codes.NotFound, "pd: no region %d", req.GetRegionId())
	}
	return p.withStore(ctx, r)
}

// GetStores implements pdpb.PDServer.
func (p *pdService) GetStores(ctx context.Context, _ *pdpb.GetStoresRequest) (*pdpb.GetStoresResponse, error) {
	if _, err := p.s.leader(); err != nil {
		return nil, err
	}
	c, err := p.s.dir.view(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	stores := c.storeList()
	count, leaders := c.counts()
	sizes, leaderSizes := c.storeSizes()
	weights := c.storeWeights()
	p.s.hbMu.Lock()
	for _, st := range stores {
		st.LastHeartbeatUnixMs = p.s.heartbeats[st.Id]
		st.Replicas, st.Leaders = uint32(count[st.Id]), uint32(leaders[st.Id])
		st.RegionSize, st.LeaderSize, st.RegionWeight = uint64(max(sizes[st.Id], 0)), uint64(max(leaderSizes[st.Id], 0)), uint64(max(weights[st.Id], 0))
		if sp := p.s.space[st.Id]; sp != nil {
			st.Space = sp
			st.LowSpace = p.s.lowSpace(sp, 0)
		}
	}
	p.s.hbMu.Unlock()
	return &pdpb.GetStoresResponse{Stores: stores}, nil
}

// maxAllocCount bounds one AllocID request.
const maxAllocCount = 1 << 16

// AllocID implements pdpb.PDServer.
func (p *pdService) AllocID(ctx context.Context, req *pdpb.AllocIDRequest) (*pdpb.AllocIDResponse, error) {
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	n := req.GetCount()
	if n == 0 || n > maxAllocCount {
		return nil, status.Errorf(codes.InvalidArgument, "pd: alloc %d ids: want 1 to %d", n, maxAllocCount)
	}
	first, err := p.s.dir.allocIDs(ctx, t.guard, n)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.AllocIDResponse{First: first, Count: n}, nil
}

// SetStoreStatus implements pdpb.PDServer: OFFLINE drains a store, UP
// cancels a drain (placement.go).
func (p *pdService) SetStoreStatus(ctx context.Context, req *pdpb.SetStoreStatusRequest) (*pdpb.SetStoreStatusResponse, error) {
	t, err := p.s.leader()
	if err != nil {
		return nil, err
	}
	var drain bool
	switch req.GetStatus() {
	case pdpb.StoreStatus_OFFLINE:
		drain = true
	case pdpb.StoreStatus_UP:
	default:
		return nil, status.Errorf(codes.InvalidArgument, "pd: a store can be set OFFLINE (drain) or UP (cancel a drain), not %s", req.GetStatus())
	}
	st, err := p.s.drain(ctx, t, req.GetStoreId(), drain)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pdpb.SetStoreStatusResponse{Store: st}, nil
}
