package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/percdb/percdb/kv"
	percsql "github.com/percdb/percdb/sql"
)

// EnvTxnMode names the transaction mode new sessions of a percdb node
// started here run in (SET GLOBAL percdb_txn_mode: optimistic or
// pessimistic); empty keeps the server's default.
const EnvTxnMode = "PERCDB_TEST_TXN_MODE"

// PercdbOptions configures StartPercdb. The zero value is an in-memory node.
type PercdbOptions struct {
	// Durable keeps the key-value store on disk with synced writes, as the
	// percdb binary does. Default false: an in-memory store, which the
	// isolation and list-append tests do not tell apart and which spares
	// the shared disk.
	Durable bool
	// DisableFastPath sends every statement through go-mysql-server
	// (sql.Config.DisableFastPath). Default false.
	DisableFastPath bool
}

// StartPercdb opens an in-process percdb node on a free port of 127.0.0.1
// with its data in a new temporary directory, creates the test database,
// and returns it serving. Close shuts the node down and removes the
// directory.
func StartPercdb(ctx context.Context, opts PercdbOptions) (s *Server, err error) {
	dir, err := os.MkdirTemp("", "percdb-test-")
	if err != nil {
		return nil, fmt.Errorf("percdb data directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	node, err := percsql.Open(ctx, percsql.Config{
		Addr:    "127.0.0.1:0",
		DataDir: dir,
		KV:      kv.Options{InMemory: !opts.Durable},

		DisableFastPath: opts.DisableFastPath,
	})
	if err != nil {
		return nil, fmt.Errorf("open percdb: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- node.Serve() }()
	stop := func() error {
		err := node.Close()
		if serr := <-served; serr != nil {
			err = errors.Join(err, fmt.Errorf("serve: %w", serr))
		}
		return errors.Join(err, os.RemoveAll(dir))
	}
	defer func() {
		if err != nil {
			_ = stop()
		}
	}()
	cfg, admin, err := openRoot(node.Addr().String())
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if mode := os.Getenv(EnvTxnMode); mode != "" {
		if _, err := admin.ExecContext(ctx, "set global percdb_txn_mode = ?", mode); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", EnvTxnMode, mode, err)
		}
	}
	dsn, err := createTestDatabase(ctx, cfg, admin)
	if err != nil {
		return nil, err
	}
	return &Server{DSN: dsn, Flavor: Percdb, stop: stop}, nil
}
