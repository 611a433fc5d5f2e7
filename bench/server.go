package bench

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ServerOptions are what every private server needs. The zero value works.
type ServerOptions struct {
	// Dir is where the server's own temporary directory (data, socket, log)
	// is made. Default: os.TempDir().
	Dir string
	// Port is the TCP port on 127.0.0.1. Default: 0, a free port.
	Port int
	// StartTimeout bounds the wait for the first answered query.
	// Default: 2 minutes (a cold percdb start may replay its store).
	StartTimeout time.Duration
	// StopTimeout bounds the wait for a clean shutdown after SIGTERM,
	// after which the process group is killed. Default: 30 seconds.
	StopTimeout time.Duration
	// Keep leaves the temporary directory in place after Stop.
	Keep bool
}

func (o ServerOptions) withDefaults() ServerOptions {
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 30 * time.Second
	}
	return o
}

// Server is one database server process the harness started and must stop.
type Server struct {
	// Name is the server's name in results ("mariadb", "percdb").
	Name string
	// Port is its TCP port on 127.0.0.1; it takes user root, no password.
	Port int
	// Argv is the command line it runs with, for the report.
	Argv []string
	// Version is its answer to SELECT VERSION().
	Version string
	// StatusAddr is a percdb's status address (host:port: /metrics, for
	// ScrapeKVRequests); empty for MariaDB.
	StatusAddr string

	opts    ServerOptions
	dir     string
	logPath string
	cmd     *exec.Cmd
	db      *sql.DB
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid once done is closed
	stop    sync.Once
	stopErr error
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Dir is the server's temporary directory.
func (s *Server) Dir() string { return s.dir }

// Exited reports whether the process has ended, and how.
func (s *Server) Exited() (bool, error) {
	select {
	case <-s.done:
		return true, s.waitErr
	default:
		return false, nil
	}
}

// OpenDB opens a pool of root connections to the server, for a
// benchmark's own statements; the caller closes it.
func (s *Server) OpenDB() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	return sql.Open("mysql", cfg.FormatDSN())
}

// Exec runs an administrative statement (no result rows).
func (s *Server) Exec(ctx context.Context, query string) error {
	if _, err := s.db.ExecContext(ctx, query); err != nil {
		return fmt.Errorf("%s: %s: %w", s.Name, query, err)
	}
	return nil
}

// QueryRow runs a statement returning one row into dest.
func (s *Server) QueryRow(ctx context.Context, query string, dest ...any) error {
	if err := s.db.QueryRowContext(ctx, query).Scan(dest...); err != nil {
		return fmt.Errorf("%s: %s: %w", s.Name, query, err)
	}
	return nil
}

// Memory reads the server's resident memory now.
func (s *Server) Memory() (ProcStatus, error) {
	return ReadProcStatus(s.PID())
}

// LogTail returns the last n lines the server wrote to its log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	return tail(b, n)
}

// Stop shuts the server down: SIGTERM, then SIGKILL to its process group if
// it has not exited within StopTimeout; then it removes the temporary
// directory unless Keep. It is safe to call more than once and does not
// take a context on purpose: it runs when the caller's context is already
// cancelled (Ctrl-C), and must still finish.
func (s *Server) Stop() error {
	s.stop.Do(func() {
		if s.db != nil {
			s.db.Close()
		}
		// No process when a step before it failed (mariadb-install-db):
		// Stop then only removes the directory (it dereferenced the
		// missing process and panicked, hiding the step's error).
		if exited, _ := s.Exited(); !exited && s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(s.opts.StopTimeout):
				_ = syscall.Kill(-s.PID(), syscall.SIGKILL)
				<-s.done
				s.stopErr = fmt.Errorf("stop %s: no exit %v after SIGTERM, killed", s.Name, s.opts.StopTimeout)
			}
		}
		if !s.opts.Keep {
			if err := os.RemoveAll(s.dir); err != nil && s.stopErr == nil {
				s.stopErr = fmt.Errorf("stop %s: %w", s.Name, err)
			}
		}
	})
	return s.stopErr
}

// newServer makes the server's temporary directory and picks its port.
func newServer(name string, opts ServerOptions) (*Server, error) {
	opts = opts.withDefaults()
	dir, err := os.MkdirTemp(opts.Dir, "percdb-bench-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
	}
	return &Server{Name: name, Port: port, opts: opts, dir: dir, logPath: filepath.Join(dir, "server.log")}, nil
}

// start launches argv and waits until the server answers a query. On
// failure the process is stopped and the error carries the log's tail.
func (s *Server) start(ctx context.Context, argv []string) error {
	s.Argv = argv
	logf, err := os.Create(s.logPath)
	if err != nil {
		return fmt.Errorf("start %s: %w", s.Name, err)
	}
	defer logf.Close() // the child holds its own descriptor
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own process group: a Ctrl-C at the terminal reaches the
		// harness only, which then stops the server in order.
		Setpgid: true,
		// If the harness itself is killed, the server does not outlive it.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.Name, err)
	}
	s.done = make(chan struct{})
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// waitReady polls until SELECT VERSION() answers, the process exits, the
// StartTimeout passes, or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	cfg.Timeout = 2 * time.Second
	cfg.Logger = &mysql.NopLogger{} // connection refused is expected while it starts
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("start %s: %w", s.Name, err)
	}
	s.db = sql.OpenDB(conn)
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err = s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&s.Version)
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("start %s: exited (%v) before answering; log:\n%s", s.Name, s.waitErr, s.LogTail(20))
		case <-ctx.Done():
			return fmt.Errorf("start %s: no answer on port %d: %w (last: %v); log:\n%s", s.Name, s.Port, ctx.Err(), err, s.LogTail(20))
		case <-tick.C:
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// MariaDBOptions configure a private MariaDB.
type MariaDBOptions struct {
	ServerOptions
	// Mariadbd is the server binary. Default: /usr/sbin/mariadbd.
	Mariadbd string
	// InstallDB is the data directory initialiser. Default:
	// mariadb-install-db from $PATH.
	InstallDB string
}

// StartMariaDB initialises a fresh data directory and starts mariadbd on it
// with --no-defaults, so that nothing from /etc/mysql applies: the server
// runs at the compiled-in defaults (InnoDB syncing its redo log at every
// commit, innodb_flush_log_at_trx_commit=1), listening on 127.0.0.1 only,
// with its own socket and pid file.
func StartMariaDB(ctx context.Context, opts MariaDBOptions) (*Server, error) {
	if opts.Mariadbd == "" {
		opts.Mariadbd = "/usr/sbin/mariadbd"
	}
	if opts.InstallDB == "" {
		opts.InstallDB = "mariadb-install-db"
	}
	s, err := newServer("mariadb", opts.ServerOptions)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(s.dir, "data")
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"} // mariadbd refuses root otherwise
	}
	install := append([]string{"--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db"}, asRoot...)
	out, err := exec.CommandContext(ctx, opts.InstallDB, install...).CombinedOutput()
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("start mariadb: %s: %w\n%s", opts.InstallDB, err, tail(out, 20))
	}
	argv := append([]string{opts.Mariadbd, "--no-defaults",
		"--datadir=" + data,
		"--port=" + strconv.Itoa(s.Port),
		"--bind-address=127.0.0.1",
		"--socket=" + filepath.Join(s.dir, "mariadb.sock"),
		"--pid-file=" + filepath.Join(s.dir, "mariadb.pid"),
	}, asRoot...)
	if err := s.start(ctx, argv); err != nil {
		return nil, err
	}
	return s, nil
}

// PercdbOptions configure a private percdb.
type PercdbOptions struct {
	ServerOptions
	// Binary is the percdb server binary (see BuildPercdb). Required.
	Binary string
	// Args are extra command-line arguments (e.g. "--status-port=N" for
	// a profile of the server).
	Args []string
}

// StartPercdb starts the percdb binary on a fresh data directory.
func StartPercdb(ctx context.Context, opts PercdbOptions) (*Server, error) {
	if opts.Binary == "" {
		return nil, errors.New("start percdb: no binary given")
	}
	s, err := newServer("percdb", opts.ServerOptions)
	if err != nil {
		return nil, err
	}
	argv := []string{opts.Binary,
		"--host=127.0.0.1",
		"--port=" + strconv.Itoa(s.Port),
		"--data-dir=" + filepath.Join(s.dir, "data"),
	}
	// A status port of its own: the default (10080) is taken by whichever
	// node started first on a shared machine, and a node that cannot have
	// it runs without one.
	if !slices.ContainsFunc(opts.Args, func(a string) bool { return strings.HasPrefix(a, "--status-") }) {
		sp, err := freePort()
		if err != nil {
			os.RemoveAll(s.dir)
			return nil, fmt.Errorf("start percdb: %w", err)
		}
		s.StatusAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(sp))
		argv = append(argv, "--status-host=127.0.0.1", "--status-port="+strconv.Itoa(sp))
	}
	argv = append(argv, opts.Args...)
	if err := s.start(ctx, argv); err != nil {
		return nil, err
	}
	return s, nil
}

// tail returns the last n lines of out.
func tail(out []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n")))
}
