package tsorpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/tso/tsopb"
)

// RemoteSource is a tso.Source served by a remote oracle over one stream.
// It is safe for concurrent use, but serves one call at a time: put a
// tso.BatchClient in front of it so that concurrent callers share calls.
type RemoteSource struct {
	addr   string
	conn   *grpc.ClientConn
	client tsopb.TSOClient
	// ctx ends at Close; every stream's context derives from it, so Close
	// also interrupts a call under way.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	// stream is nil until the first call and after a failure.
	stream       grpc.BidiStreamingClient[tsopb.TsoRequest, tsopb.TsoResponse]
	cancelStream context.CancelFunc
	req          tsopb.TsoRequest
	resp         tsopb.TsoResponse
}

// Dial connects to the TSO service at addr (host:port) and opens its
// stream; ctx bounds only the connecting. The connection is plaintext
// unless opts say otherwise (they are applied after the default).
func Dial(ctx context.Context, addr string, opts ...grpc.DialOption) (*RemoteSource, error) {
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("tso dial %s: %w", addr, err)
	}
	r := &RemoteSource{addr: addr, conn: conn, client: tsopb.NewTSOClient(conn)}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.mu.Lock()
	err = r.openStream(ctx)
	r.mu.Unlock()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("tso dial %s: %w", addr, err)
	}
	return r, nil
}

// openStream opens the stream, giving up when ctx ends. Called with mu held.
func (r *RemoteSource) openStream(ctx context.Context) error {
	sctx, cancel := context.WithCancel(r.ctx)
	stop := context.AfterFunc(ctx, cancel)
	stream, err := r.client.GetTimestamps(sctx)
	if !stop() {
		cancel()
		return ctx.Err()
	}
	if err != nil {
		cancel()
		return err
	}
	r.stream, r.cancelStream = stream, cancel
	return nil
}

// dropStream ends the stream after a failure. Called with mu held.
func (r *RemoteSource) dropStream() {
	if r.cancelStream != nil {
		r.cancelStream()
	}
	r.stream, r.cancelStream = nil, nil
}

// GetTimestamps implements tso.Source: it asks the remote oracle for count
// timestamps and returns the last. A count out of range gives an error
// wrapping tso.ErrBadCount.
func (r *RemoteSource) GetTimestamps(ctx context.Context, count uint32) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, tso.ErrClosed
	}
	if r.stream == nil {
		if err := r.openStream(ctx); err != nil {
			return 0, fmt.Errorf("tso remote %s: open stream: %w", r.addr, err)
		}
	}
	// If ctx ends while we wait, cancel the stream: the answer still on its
	// way must not be read as the next request's.
	stop := context.AfterFunc(ctx, r.cancelStream)
	r.req.Count = count
	err := r.stream.Send(&r.req)
	if err == nil || errors.Is(err, io.EOF) {
		// After a failed Send, Recv returns the stream's status.
		err = r.stream.RecvMsg(&r.resp)
	}
	if !stop() {
		r.dropStream()
		return 0, fmt.Errorf("tso remote %s: %w", r.addr, ctx.Err())
	}
	if err != nil {
		r.dropStream()
		if errors.Is(err, io.EOF) {
			err = errors.New("stream closed by the server")
		}
		if status.Code(err) == codes.InvalidArgument {
			return 0, fmt.Errorf("tso remote %s: %w (%w)", r.addr, tso.ErrBadCount, err)
		}
		return 0, fmt.Errorf("tso remote %s: %w", r.addr, err)
	}
	if r.resp.Count != count {
		r.dropStream()
		return 0, fmt.Errorf("tso remote %s: asked %d timestamps, answer grants %d", r.addr, count, r.resp.Count)
	}
	return r.resp.Last, nil
}

// Close ends the stream, interrupting a call under way, and the
// connection. Later calls return tso.ErrClosed.
func (r *RemoteSource) Close() error {
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.dropStream()
	if err := r.conn.Close(); err != nil {
		return fmt.Errorf("tso remote %s: close: %w", r.addr, err)
	}
	return nil
}
