package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/percdb/percdb/internal/statusserver"
	percsql "github.com/percdb/percdb/sql"
)

// The status ports of pd and the KV nodes: /status, /metrics and
// /debug/pprof/ as on a SQL node, plus each role's JSON (pd's read-only
// API, a KV node's /store and /regions). Each port's default is derived
// from the role's --addr, as pd's etcd listeners are (pd: the port of
// --addr + 3, after etcd's peer and client ports; a KV node: + 20, as
// TiKV's 20160 and 20180), so that several members on one host do not
// collide.

// Offsets of the default status ports from the port of --addr.
const (
	pdStatusOffset = 3
	kvStatusOffset = 20
)

// statusFlags are a role's --status-host and --status-port.
type statusFlags struct {
	host *string
	port *int
}

// addStatusFlags defines --status-host and --status-port on fs; port -1
// (the default) derives the port from --addr by offset.
func addStatusFlags(fs *flag.FlagSet, offset int) statusFlags {
	return statusFlags{
		host: fs.String("status-host", "127.0.0.1", "address the status port listens on"),
		port: fs.Int("status-port", -1, fmt.Sprintf("HTTP status port: /status, /metrics (Prometheus), /debug/pprof/ and the role's JSON; -1: the port of --addr + %d; 0 disables it", offset)),
	}
}

// addr returns the status port's host:port ("" when disabled) for a
// member listening on addr.
func (f statusFlags) addr(addr string, offset int) (string, error) {
	port := *f.port
	if port < -1 || port > 65535 {
		return "", fmt.Errorf("--status-port %d is not a TCP port", port)
	}
	if port == 0 {
		return "", nil
	}
	if port == -1 {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			return "", fmt.Errorf("--addr %q: %w", addr, err)
		}
		n, err := strconv.Atoi(p)
		if err != nil || n+offset > 65535 {
			return "", fmt.Errorf("--addr %q: no status port at its port + %d; give --status-port", addr, offset)
		}
		port = n + offset
	}
	return net.JoinHostPort(*f.host, strconv.Itoa(port)), nil
}

// memberStatus is a pd's or KV node's status port, listening before the
// member opens (a port that cannot listen fails the start, before the
// member serves or registers) and describing the member once it is open
// (attach): until then /metrics has the process' families only and the
// member's JSON answers 503.
type memberStatus struct {
	reg     *prometheus.Registry
	handler atomic.Pointer[http.Handler]
	srv     *statusserver.Server
}

// listenStatus starts the status port on addr ("": none; the result's
// methods then do nothing) serving the paths in patterns with the
// member's handler once attached.
func listenStatus(logger *slog.Logger, addr string, patterns ...string) (*memberStatus, error) {
	m := &memberStatus{reg: prometheus.NewRegistry()}
	if addr == "" {
		return m, nil
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	member := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := m.handler.Load()
		if h == nil {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		(*h).ServeHTTP(w, r)
	})
	handlers := map[string]http.Handler{}
	for _, p := range patterns {
		handlers[p] = member
	}
	srv, err := statusserver.Listen(statusserver.Config{Addr: addr, Version: percsql.DefaultVersion, Gatherer: m.reg, Handlers: handlers})
	if err != nil {
		return nil, err
	}
	m.srv = srv
	go func() {
		if err := srv.Serve(); err != nil {
			logger.Error("status port stopped", "err", err)
		}
	}()
	logger.Info("status port listening", "addr", "http://"+srv.Addr().String()+"/status")
	return m, nil
}

// attach describes the open member: its families and its JSON handler.
func (m *memberStatus) attach(h http.Handler, cols ...prometheus.Collector) {
	if m.srv == nil {
		return
	}
	m.reg.MustRegister(cols...)
	m.handler.Store(&h)
}

// advertised returns the address others reach the status port at ("":
// none): where it listens, with the host of the member's own address
// (memberAddr, as registered with pd) in place of an unspecified one
// (--status-host 0.0.0.0).
func (m *memberStatus) advertised(memberAddr string) string {
	if m.srv == nil {
		return ""
	}
	host, port, err := net.SplitHostPort(m.srv.Addr().String())
	if err != nil {
		return m.srv.Addr().String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if h, _, err := net.SplitHostPort(memberAddr); err == nil {
			host = h
		}
	}
	return net.JoinHostPort(host, port)
}

// close stops the status port.
func (m *memberStatus) close() {
	if m.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.srv.Close(ctx)
}

// pdStatusAddrs returns the pd members' status ports: those given
// (--pd-status), or each pd address's port + pdStatusOffset.
func pdStatusAddrs(pdAddrs, given string) ([]string, error) {
	if given != "" {
		return splitAddrs("pd-status", given)
	}
	addrs, err := splitAddrs("pd", pdAddrs)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		host, p, _ := net.SplitHostPort(a)
		n, err := strconv.Atoi(p)
		if err != nil || n+pdStatusOffset > 65535 {
			return nil, fmt.Errorf("--pd %q: no status port at its port + %d; give --pd-status", a, pdStatusOffset)
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(n+pdStatusOffset)))
	}
	return out, nil
}
