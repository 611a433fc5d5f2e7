// Package node starts the in-process percdb node the examples run their
// observers in, and a MySQL client pool connected to it.
package node

import (
	"context"
	"database/sql"
	"os"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/kv"
	percsql "github.com/percdb/percdb/sql"
)

// Node is a running percdb node and a client pool of user root.
type Node struct {
	Srv *percsql.Server
	DB  *sql.DB
	// Dir is the data directory.
	Dir string
	tmp bool
}

// Start opens a node on dir (a temporary directory removed by Close when
// empty), serving MySQL on addr, with the store's writes synced unless
// noSync.
func Start(ctx context.Context, dir, addr string, noSync bool) (*Node, error) {
	n := &Node{Dir: dir}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "percdb-example-")
		if err != nil {
			return nil, err
		}
		n.Dir, n.tmp = tmp, true
	}
	opts := kv.Options{ReserveSpace: -1}
	if noSync {
		opts.SyncWrites = kv.SyncNone
	}
	srv, err := percsql.Open(ctx, percsql.Config{DataDir: n.Dir, Addr: addr, KV: opts, DisableAutoCerts: true})
	if err != nil {
		n.removeTemp()
		return nil, err
	}
	n.Srv = srv
	go func() { _ = srv.Serve() }()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", srv.Addr().String()
	if n.DB, err = sql.Open("mysql", cfg.FormatDSN()); err != nil {
		_ = n.Close()
		return nil, err
	}
	return n, nil
}

// Close closes the pool and the node, and removes a temporary directory.
func (n *Node) Close() error {
	if n.DB != nil {
		_ = n.DB.Close()
	}
	err := n.Srv.Close()
	n.removeTemp()
	return err
}

func (n *Node) removeTemp() {
	if n.tmp {
		_ = os.RemoveAll(n.Dir)
	}
}
