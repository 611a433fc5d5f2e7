package statusserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures a Server.
type Config struct {
	// Addr is the host:port to listen on; port 0 picks a free one (see
	// Server.Addr).
	Addr string
	// Version is the server's version, reported by /status.
	Version string
	// Gatherer is what /metrics serves.
	Gatherer prometheus.Gatherer
	// Connections returns the number of open client connections, for
	// /status; nil for a member without clients (pd, a KV node).
	Connections func() int
	// Handlers serves more paths (a KV node's /regions, pd's API), by
	// the pattern each is registered with (net/http.ServeMux's).
	Handlers map[string]http.Handler
	// Console, when set, serves every other path: the web console
	// (package console), which answers 404 for what it does not know.
	Console http.Handler
}

// Status is the JSON document /status answers with.
type Status struct {
	// Ready is false once the node has begun to shut down.
	Ready   bool   `json:"ready"`
	Version string `json:"version"`
	// GitHash is the VCS revision the binary was built from (with
	// "-dirty" when the work tree had changes), "" when the build did not
	// record one (go test, go run of files).
	GitHash       string  `json:"git_hash"`
	GoVersion     string  `json:"go_version"`
	StartTime     string  `json:"start_time"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	Connections   int     `json:"connections"`
}

// Server is a running status server.
type Server struct {
	cfg      Config
	listener net.Listener
	http     *http.Server
	started  time.Time
	gitHash  string
	closing  atomic.Bool
}

// readHeaderTimeout bounds how long a client may take to send its request
// headers, so that idle half-open clients do not pile up.
const readHeaderTimeout = 10 * time.Second

// Listen starts listening on cfg.Addr. Serve serves; Close stops.
func Listen(cfg Config) (*Server, error) {
	if cfg.Gatherer == nil {
		return nil, errors.New("statusserver: Config needs a Gatherer")
	}
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("status port: listen on %s: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, listener: l, started: time.Now(), gitHash: gitHash()}
	mux := http.NewServeMux()
	mux.HandleFunc("/status", s.serveStatus)
	mux.Handle("/metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{
		// A collector that fails (a store closing under a scrape) costs
		// its own families, not the whole answer.
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	for pattern, h := range cfg.Handlers {
		mux.Handle(pattern, h)
	}
	if cfg.Console != nil {
		mux.Handle("/", cfg.Console)
	}
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Serve serves until Close; it returns nil after Close.
func (s *Server) Serve() error {
	if err := s.http.Serve(s.listener); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("status port: %w", err)
	}
	return nil
}

// SetNotReady makes /status answer 503 from now on: the node is shutting
// down, and a load balancer should send no more clients.
func (s *Server) SetNotReady() { s.closing.Store(true) }

// Close stops the server, waiting for the answers in flight until ctx
// ends, then closing what is left.
func (s *Server) Close(ctx context.Context) error {
	s.SetNotReady()
	if err := s.http.Shutdown(ctx); err != nil {
		return errors.Join(fmt.Errorf("status port: shutdown: %w", err), s.http.Close())
	}
	return nil
}

// status returns what /status reports now.
func (s *Server) status(now time.Time) Status {
	conns := 0
	if s.cfg.Connections != nil {
		conns = s.cfg.Connections()
	}
	return Status{
		Ready:         !s.closing.Load(),
		Version:       s.cfg.Version,
		GitHash:       s.gitHash,
		GoVersion:     runtime.Version(),
		StartTime:     s.started.UTC().Format(time.RFC3339),
		UptimeSeconds: now.Sub(s.started).Seconds(),
		Connections:   conns,
	}
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	st := s.status(time.Now())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !st.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(st)
}

// gitHash returns the VCS revision recorded in the binary, "" if none.
func gitHash() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	dirty := false
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			dirty = kv.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}
