// Package sqltest starts percdb servers inside a test process, as
// net/http/httptest does for HTTP servers: on a free port of 127.0.0.1, on
// a data directory of the test's, stopped when the test ends.
package sqltest

import (
	"context"
	"database/sql"
	"net"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/kv"
	percsql "github.com/percdb/percdb/sql"
)

// Server is a percdb server running in the test process.
type Server struct {
	// Dir is the server's data directory.
	Dir string

	t      testing.TB
	srv    *percsql.Server
	served chan error
}

// Start starts percdb on data directory dir (a fresh temporary one when
// empty) and stops it when the test ends. Writes are not synced, which
// keeps tests fast; a clean stop still keeps every commit.
func Start(t testing.TB, dir string) *Server {
	t.Helper()
	return StartConfig(t, percsql.Config{DataDir: dir})
}

// StartConfig is Start with the settings of cfg; an empty Addr is a free
// port of 127.0.0.1, an empty DataDir a fresh temporary directory, and
// writes are not synced unless cfg.KV says otherwise.
func StartConfig(t testing.TB, cfg percsql.Config) *Server {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.KV == (kv.Options{}) {
		// Unsynced, and without the disk protection's ballast (2% of
		// the file system, up to 2 GiB, for each test's store).
		cfg.KV = kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: -1}
	}
	srv, err := percsql.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start percdb: %v", err)
	}
	s := &Server{Dir: cfg.DataDir, t: t, srv: srv, served: make(chan error, 1)}
	go func() { s.served <- srv.Serve() }()
	t.Cleanup(s.Stop)
	return s
}

// Stop stops the server; later calls do nothing. Connections still open
// are closed.
func (s *Server) Stop() {
	if s.srv == nil {
		return
	}
	if err := s.srv.Close(); err != nil {
		s.t.Errorf("close percdb: %v", err)
	}
	if err := <-s.served; err != nil {
		s.t.Errorf("serve: %v", err)
	}
	s.srv = nil
}

// Percdb returns the server itself, for what tests do in process (the
// observers of package observe).
func (s *Server) Percdb() *percsql.Server { return s.srv }

// Addr returns the server's host:port.
func (s *Server) Addr() string { return s.srv.Addr().String() }

// HostPort returns the server's host and port apart.
func (s *Server) HostPort() (host, port string) {
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		s.t.Fatalf("server address %q: %v", s.Addr(), err)
	}
	return host, port
}

// DSN returns a go-sql-driver/mysql DSN for user root and database db
// ("" for none).
func (s *Server) DSN(db string) string { return s.dsnAs("root", "", db) }

// dsnAs returns a DSN for user with password and database db.
func (s *Server) dsnAs(user, password, db string) string {
	cfg := mysql.NewConfig()
	cfg.User = user
	cfg.Passwd = password
	cfg.Net = "tcp"
	cfg.Addr = s.Addr()
	cfg.DBName = db
	return cfg.FormatDSN()
}

// Open connects to database db ("" for none), closing the pool when the
// test ends. Statements with arguments use server-side prepared
// statements, the driver's default.
func (s *Server) Open(db string) *sql.DB {
	s.t.Helper()
	return s.OpenAs("root", "", db)
}

// OpenAs is Open for another account.
func (s *Server) OpenAs(user, password, db string) *sql.DB {
	s.t.Helper()
	conn, err := sql.Open("mysql", s.dsnAs(user, password, db))
	if err != nil {
		s.t.Fatalf("open: %v", err)
	}
	s.t.Cleanup(func() { conn.Close() })
	return conn
}
