// Package tso is percdb's timestamp oracle: the single source of the start
// and commit timestamps of Percolator transactions, and a client that batches
// the requests of concurrent callers into one call.
//
// # Layout
//
// A timestamp is PD's hybrid layout (ts.go): physical milliseconds since the
// Unix epoch in the high 46 bits, a logical counter in the low 18 bits. The
// oracle never issues logical 0, so FromTime(t) is below every timestamp
// issued at t's millisecond, and one millisecond holds MaxCount timestamps.
//
// # The window
//
// An Oracle serves timestamps from memory: a request reads the wall clock
// (Options.Now), moves the physical part up to it if the clock is ahead, and
// takes the next count logical values. Before any timestamp is served, an
// upper bound above it has been saved durably through a WindowStore: the
// oracle saves "physical + SaveWindow" (default 3 s, as PD) and may serve
// any timestamp below it without touching the disk. A background goroutine,
// owned by the Oracle and stopped by Close, saves the next window when less
// than half of the current one remains, so a request waits on the disk only
// when the window is exhausted (a clock jump forward, or a window too small
// for the request rate).
//
// # Restart safety
//
// Every timestamp ever served is below the last saved bound. Open loads that
// bound and starts the physical part at least one millisecond above it (PD's
// update guard), then saves a fresh window before serving anything. So
// timestamps never go back across a restart, a crash at any point (the file
// store writes a temporary file, fsyncs it, renames it over the old one and
// fsyncs the directory, so a crash leaves either the old or the new bound),
// or a wall clock that goes backwards: the physical part only ever moves up,
// and a clock behind it is simply ignored until it catches up.
//
// # Logical overflow
//
// When a request would carry the logical part past MaxCount within one
// millisecond, the oracle borrows the next millisecond at once instead of
// waiting for the clock: the physical part runs ahead of the wall clock, by
// at most what the saved window allows, and the clock catches up later. PD
// makes the request fail and retry after its 50 ms update interval and lets
// its updater jump ahead by 1 ms when half the logical space is used; with
// borrowing no request waits, and the window still bounds how far ahead the
// oracle can run, since the next window is saved from the borrowed physical.
//
// # Batching
//
// A BatchClient sits between callers and a Source (an in-process *Oracle or
// a remote one over gRPC, see package tso/tsorpc). Callers that arrive while
// a Source call is in flight join the next batch; when the call returns, one
// new call fetches count = number of callers, and each caller gets one
// timestamp of the returned range [last-count+1, last], as PD's client
// dispatcher does. A caller joins only a batch whose Source call has not yet
// started, so its timestamp is issued after the caller asked for it: a
// timestamp is never older than the request, which snapshot isolation needs
// (a start_ts must be above the commit_ts of every transaction that finished
// before the transaction began). Each Source call is bounded by
// ClientOptions.Timeout (3 s, as PD's client): a Source that stops
// answering fails the callers it serves instead of holding them, and the
// transactions waiting for a timestamp end with an error.
package tso
