// Package inprocess starts a percdb server inside the running process, on a
// fresh store, as a sqllogic.Target: the runner then needs no server set up
// beforehand and no DSN. The runner's connections reach the server over
// in-memory pipes rather than a TCP port: the MySQL protocol is the same,
// byte for byte, without the system calls of a socket and GMS's check,
// with every statement, that a TCP client is still connected. (A record
// that times out is stopped by the runner's KILL QUERY, as on any
// server.)
//
// It is a package of its own so that the runner (package sqllogic) does not
// depend on percdb and can be pointed at any MySQL-protocol server.
package inprocess

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/tests/sqllogic"
)

// Options configure Start.
type Options struct {
	// Dir, when set, holds the store on disk (in a fresh temporary
	// directory under Dir, removed on Close). Default: the store is kept in
	// memory.
	Dir string
}

// Server is a running in-process percdb and a target on it.
type Server struct {
	*sqllogic.ServerTarget
	srv    *sql.Server
	served chan error
	tmp    string
}

// Start opens percdb on a fresh store, serving connections over in-memory
// pipes, and connects a target to it. Writes are not synced: the store is
// thrown away on Close.
func Start(ctx context.Context, opts Options) (s *Server, err error) {
	s = &Server{served: make(chan error, 1)}
	pipes := newPipeListener()
	cfg := sql.Config{Listener: pipes, KV: kv.Options{SyncWrites: kv.SyncNone}}
	if opts.Dir == "" {
		cfg.KV.InMemory = true
	}
	// The server keeps its timestamp oracle's window on disk even when the
	// store is in memory, so it always gets a directory of its own.
	if s.tmp, err = os.MkdirTemp(opts.Dir, "percdb-slt-"); err != nil {
		return nil, fmt.Errorf("start percdb: %w", err)
	}
	cfg.DataDir = s.tmp
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if s.srv, err = sql.Open(ctx, cfg); err != nil {
		return s, fmt.Errorf("start percdb: %w", err)
	}
	go func() { s.served <- s.srv.Serve() }()
	// The DSN's address is not dialled: pipes.Dial makes the connections.
	dsn := "root@tcp(percdb-in-process)/"
	if s.ServerTarget, err = sqllogic.NewServerTarget(ctx, dsn, sqllogic.ServerOptions{Dial: pipes.Dial}); err != nil {
		return s, fmt.Errorf("connect to in-process percdb: %w", err)
	}
	return s, nil
}

// Close disconnects, stops the server and removes its store.
func (s *Server) Close() error {
	var errs []error
	if s.ServerTarget != nil {
		errs = append(errs, s.ServerTarget.Close())
	}
	if s.srv != nil {
		errs = append(errs, s.srv.Close())
		if err := <-s.served; err != nil {
			errs = append(errs, fmt.Errorf("serve: %w", err))
		}
	}
	if s.tmp != "" {
		errs = append(errs, os.RemoveAll(s.tmp))
	}
	return errors.Join(errs...)
}
