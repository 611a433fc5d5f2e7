package testserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Flavor is the kind of server behind a DSN.
type Flavor string

const (
	// Percdb promises snapshot isolation: conflicts abort the second
	// committer with error 1213.
	Percdb Flavor = "percdb"
	// MariaDB is InnoDB's REPEATABLE READ: row locks, lost updates allowed.
	MariaDB Flavor = "mariadb"
)

// Environment variables read by ForTest.
const (
	EnvDSN     = "PERCDB_TEST_DSN"
	EnvFlavor  = "PERCDB_TEST_FLAVOR"
	EnvMariaDB = "PERCDB_TEST_MARIADB"
)

// Database is the database a started server's DSN points at.
const Database = "percdb_test"

// Server is a server the tests can connect to.
type Server struct {
	// DSN is a go-sql-driver/mysql DSN that selects the test database.
	DSN    string
	Flavor Flavor
	stop   func() error
}

// Close stops the server if this package started it.
func (s *Server) Close() error {
	if s.stop == nil {
		return nil
	}
	return s.stop()
}

// FromEnv returns the server the environment asks for (see the package
// documentation), started if need be; the caller must Close it.
func FromEnv(ctx context.Context) (*Server, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		flavor := Flavor(os.Getenv(EnvFlavor))
		switch flavor {
		case "":
			flavor = Percdb
		case Percdb, MariaDB:
		default:
			return nil, fmt.Errorf("%s=%q: want %q or %q", EnvFlavor, flavor, Percdb, MariaDB)
		}
		return &Server{DSN: dsn, Flavor: flavor}, nil
	}
	if m := os.Getenv(EnvMariaDB); m != "" {
		opts := MariaDBOptions{}
		if m != "1" {
			opts.Mariadbd = m
		}
		return StartMariaDB(ctx, opts)
	}
	return StartPercdb(ctx, PercdbOptions{})
}

// ForTest returns the server t should use, stopped at the end of the test.
func ForTest(t testing.TB) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := FromEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	return s
}

// Shared is one server for all the tests of a package, started by the
// first test that asks for it. Its zero value is ready to use; the
// package's TestMain closes it after m.Run.
type Shared struct {
	mu      sync.Mutex
	started bool
	srv     *Server
	err     error
}

// Get returns the shared server, starting it on first use.
func (s *Shared) Get(t testing.TB) *Server {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started = true
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		s.srv, s.err = FromEnv(ctx)
		cancel()
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.srv
}

// Close stops the server if Get started one.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return nil
	}
	err := s.srv.Close()
	s.srv = nil
	return err
}

// MariaDBOptions configures StartMariaDB. The zero value runs the Debian
// package's binaries.
type MariaDBOptions struct {
	// Mariadbd is the server binary. Default /usr/sbin/mariadbd.
	Mariadbd string
	// InstallDB is the data directory initialiser. Default
	// mariadb-install-db from PATH.
	InstallDB string
}

// StartMariaDB initialises a fresh data directory under the system's
// temporary directory, starts mariadbd on a free port of 127.0.0.1 with its
// own socket, creates the test database, and returns once the server
// answers. Close stops the server and removes the directory.
func StartMariaDB(ctx context.Context, opts MariaDBOptions) (s *Server, err error) {
	if opts.Mariadbd == "" {
		opts.Mariadbd = "/usr/sbin/mariadbd"
	}
	if opts.InstallDB == "" {
		opts.InstallDB = "mariadb-install-db"
	}
	// A short directory of our own: the socket path must fit in 108 bytes,
	// which a test's TempDir does not promise.
	dir, err := os.MkdirTemp("", "percdb-mariadb-")
	if err != nil {
		return nil, fmt.Errorf("mariadb data directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	data := filepath.Join(dir, "data")
	root := []string{}
	if os.Geteuid() == 0 {
		root = []string{"--user=root"} // mariadbd refuses to run as root otherwise
	}
	install := exec.CommandContext(ctx, opts.InstallDB, append([]string{
		"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db",
	}, root...)...)
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", opts.InstallDB, err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, "error.log")
	cmd := exec.Command(opts.Mariadbd, append([]string{
		"--no-defaults",
		"--datadir=" + data,
		"--socket=" + filepath.Join(dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(dir, "mysqld.pid"),
		"--log-error=" + logFile,
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(port),
		"--skip-log-bin",
		"--innodb-buffer-pool-size=64M",
	}, root...)...)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", opts.Mariadbd, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		defer os.RemoveAll(dir)
		select {
		case err := <-exited:
			return fmt.Errorf("mariadbd had already exited: %v", err)
		default:
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return fmt.Errorf("stop mariadbd: %w", err)
		}
		select {
		case <-exited:
			return nil
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-exited
			return errors.New("mariadbd ignored SIGTERM for a minute; killed")
		}
	}
	defer func() {
		if err != nil {
			_ = stop()
		}
	}()

	cfg, admin, err := openRoot(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	// Wait for the server to answer, or to die.
	for {
		if err = admin.PingContext(ctx); err == nil {
			break
		}
		select {
		case werr := <-exited:
			log, _ := os.ReadFile(logFile)
			return nil, fmt.Errorf("mariadbd exited before answering (%v):\n%s", werr, log)
		case <-ctx.Done():
			return nil, fmt.Errorf("mariadbd did not answer: %w (last error %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	dsn, err := createTestDatabase(ctx, cfg, admin)
	if err != nil {
		return nil, err
	}
	return &Server{DSN: dsn, Flavor: MariaDB, stop: stop}, nil
}

// openRoot connects as root, without a password or a database, to the
// server at addr (host:port).
func openRoot(addr string) (*mysql.Config, *sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = addr
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	return cfg, db, nil
}

// createTestDatabase creates Database through admin and returns the DSN
// of cfg that selects it.
func createTestDatabase(ctx context.Context, cfg *mysql.Config, admin *sql.DB) (string, error) {
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+Database); err != nil {
		return "", fmt.Errorf("create test database: %w", err)
	}
	cfg = cfg.Clone()
	cfg.DBName = Database
	return cfg.FormatDSN(), nil
}

// freePort asks the kernel for a free TCP port on 127.0.0.1. Another
// process could take it before mariadbd binds it; mariadbd then fails to
// start and StartMariaDB says so.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
