package sqllogic

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ServerTarget runs files on a MySQL-protocol server: each file gets a
// database of its own (created on Open, dropped on Close) and one pinned
// connection, so that the file's session state stays with it.
type ServerTarget struct {
	db *sql.DB
	// prefix starts every database name; it carries the process id so that
	// two runs against one server do not collide.
	prefix string
	seq    atomic.Int64
	keep   bool
}

// ServerOptions configure NewServerTarget.
type ServerOptions struct {
	// Keep leaves each file's database on the server after the file, for
	// a look at what it left behind. Default false: databases are dropped.
	Keep bool
	// Prefix starts every database name. Default "slt<pid>_".
	Prefix string
	// Dial, when set, makes the connections to the server instead of
	// the driver's dialer (the network and address are the DSN's): an
	// in-process server can be reached without a socket
	// (inprocess.Start). Default nil: the driver dials the DSN.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// NewServerTarget connects to the server named by dsn, a go-sql-driver DSN
// such as "root:pw@tcp(127.0.0.1:3306)/". A database name in the DSN is
// ignored: every file gets a database of its own.
func NewServerTarget(ctx context.Context, dsn string, opts ServerOptions) (*ServerTarget, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn %q: %w", dsn, err)
	}
	cfg.DBName = ""
	// Results are compared as text: keep dates and times as the server
	// sends them.
	cfg.ParseTime = false
	cfg.MultiStatements = false
	cfg.DialFunc = opts.Dial
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("dsn %q: %w", dsn, err)
	}
	db := sql.OpenDB(conn)
	// A connection closes when its file is done, so that no session state
	// (variables, temporary tables) leaks into the next file.
	db.SetMaxIdleConns(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	prefix := opts.Prefix
	if prefix == "" {
		prefix = fmt.Sprintf("slt%d_", os.Getpid())
	}
	return &ServerTarget{db: db, prefix: prefix, keep: opts.Keep}, nil
}

// Close closes the target's connections.
func (t *ServerTarget) Close() error { return t.db.Close() }

// Open creates a fresh database and returns a session on it.
func (t *ServerTarget) Open(ctx context.Context, name string) (Session, error) {
	db := fmt.Sprintf("%s%d", t.prefix, t.seq.Add(1))
	for _, q := range []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db} {
		if _, err := t.db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	s := &serverSession{t: t, db: db}
	if _, err := s.conn(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// serverSession is one file's database and connection.
type serverSession struct {
	t  *ServerTarget
	db string
	// c is the pinned connection, nil after it broke; id is its server
	// connection id, 0 if the server does not tell.
	c  *sql.Conn
	id int64
}

// conn returns the pinned connection, opening one on the file's database
// if there is none.
func (s *serverSession) conn(ctx context.Context) (*sql.Conn, error) {
	if s.c != nil {
		return s.c, nil
	}
	c, err := s.t.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := c.ExecContext(ctx, "USE "+s.db); err != nil {
		c.Close()
		return nil, fmt.Errorf("use %s: %w", s.db, err)
	}
	s.id = 0
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&s.id); err != nil {
		s.id = 0
	}
	s.c = c
	return c, nil
}

// Exec runs a statement on the file's connection.
func (s *serverSession) Exec(ctx context.Context, q string) error {
	c, err := s.conn(ctx)
	if err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, q)
	s.settle(ctx, err)
	return err
}

// Query runs a query on the file's connection and reads all its rows.
func (s *serverSession) Query(ctx context.Context, q string) (*Rows, error) {
	c, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, c, q)
	s.settle(ctx, err)
	return rows, err
}

func (s *serverSession) query(ctx context.Context, c *sql.Conn, q string) (*Rows, error) {
	rs, err := c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	types, err := rs.ColumnTypes()
	if err != nil {
		return nil, err
	}
	kinds := make([]byte, len(types))
	bits := make([]bool, len(types))
	for i, ct := range types {
		kinds[i], bits[i] = kindOf(ct.DatabaseTypeName())
	}
	raw := make([]sql.RawBytes, len(types))
	dest := make([]any, len(types))
	for i := range raw {
		dest[i] = &raw[i]
	}
	out := &Rows{Kinds: string(kinds)}
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return nil, err
		}
		for i, b := range raw {
			switch {
			case b == nil:
				out.Values = append(out.Values, Value{Null: true})
			case bits[i]:
				out.Values = append(out.Values, Value{Text: new(big.Int).SetBytes(b).String()})
			default:
				out.Values = append(out.Values, Value{Text: string(b)})
			}
		}
	}
	return out, rs.Err()
}

// kindOf maps a go-sql-driver column type name to a type letter; the flag
// says the column is a BIT, whose text is a big-endian binary number.
func kindOf(name string) (byte, bool) {
	switch strings.TrimPrefix(name, "UNSIGNED ") {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR":
		return 'I', false
	case "BIT":
		return 'I', true
	case "DECIMAL", "FLOAT", "DOUBLE":
		return 'R', false
	case "NULL":
		return '?', false
	}
	return 'T', false
}

// settle drops the connection after an error that leaves it unusable: a
// record that timed out (the driver closes the socket, the server may still
// be running the query) or a broken connection. The next record reconnects
// to the same database, so the file goes on.
func (s *serverSession) settle(ctx context.Context, err error) {
	if err == nil || s.c == nil {
		return
	}
	if ctx.Err() == nil && !errors.Is(err, driver.ErrBadConn) && !errors.Is(err, sql.ErrConnDone) && !errors.Is(err, mysql.ErrInvalidConn) {
		return
	}
	if s.id != 0 {
		// Best effort: stop the abandoned query so that it does not eat
		// the server while the next records run.
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, _ = s.t.db.ExecContext(kctx, fmt.Sprintf("KILL QUERY %d", s.id))
		cancel()
	}
	s.c.Close()
	s.c = nil
}

// Close drops the file's database (unless the target keeps them) and
// closes the connection.
func (s *serverSession) Close(ctx context.Context) error {
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
	if s.t.keep {
		return nil
	}
	if _, err := s.t.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+s.db); err != nil {
		return fmt.Errorf("drop database %s: %w", s.db, err)
	}
	return nil
}
