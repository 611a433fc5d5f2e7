// Package tsorpc serves a tso.Oracle over gRPC and reaches it from another
// process.
//
// The service (tso/tsopb) is one bidirectional stream per client: the
// client sends a TsoRequest{count} and reads the TsoResponse{last, count}
// that answers it, one request in flight at a time, so answers need no ids.
// A tso.BatchClient over a RemoteSource puts every caller waiting at one
// moment into one request, as PD's client does, so a round trip serves a
// whole batch.
//
// An error ends the stream (the server returns a status: InvalidArgument for
// a count out of range, Unavailable when the oracle is closed or cannot save
// its window). A RemoteSource then drops the stream and opens a new one on
// its next call. A call whose context ends while it waits cancels its
// stream too, since the answer still on the way would otherwise be taken
// for the next request's.
package tsorpc
