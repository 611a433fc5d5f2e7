package tsorpc

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/tso/tsopb"
)

// Server serves one oracle's timestamps on the TSO service.
type Server struct {
	tsopb.UnimplementedTSOServer
	oracle *tso.Oracle
}

// NewServer returns the service of o; Register puts it on a gRPC server.
func NewServer(o *tso.Oracle) *Server {
	return &Server{oracle: o}
}

// Register registers the TSO service on r (a *grpc.Server).
func (s *Server) Register(r grpc.ServiceRegistrar) {
	tsopb.RegisterTSOServer(r, s)
}

// GetTimestamps implements tsopb.TSOServer: it answers each request on the
// stream in order until the client closes its side.
func (s *Server) GetTimestamps(stream grpc.BidiStreamingServer[tsopb.TsoRequest, tsopb.TsoResponse]) error {
	if s.oracle == nil {
		return status.Error(codes.Unavailable, "tso: server has no oracle")
	}
	ctx := stream.Context()
	var req tsopb.TsoRequest
	var resp tsopb.TsoResponse
	for {
		if err := stream.RecvMsg(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		last, err := s.oracle.GetTimestamps(ctx, req.GetCount())
		if err != nil {
			return toStatus(err)
		}
		resp.Last, resp.Count = last, req.GetCount()
		if err := stream.Send(&resp); err != nil {
			return err
		}
	}
}

// toStatus gives an oracle error the gRPC code a client can act on.
func toStatus(err error) error {
	code := codes.Unavailable
	switch {
	case errors.Is(err, tso.ErrBadCount):
		code = codes.InvalidArgument
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}
