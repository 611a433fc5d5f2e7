package sql

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/split"
	"github.com/percdb/percdb/sql/tablemeta"
)

// parseSplit recognises SPLIT TABLE and SHOW TABLE ... REGIONS (package
// split).
func parseSplit(query string) (split.Statement, bool) { return split.Parse(query) }

// split runs a split.Statement for the session of c.
func (h *handler) split(ctx context.Context, c *mysql.Conn, st split.Statement, callback mysql.ResultSpoolFn) error {
	s, err := h.sessionFor(c)
	if err != nil {
		return err
	}
	res, err := split.Run(ctx, splitNode{s.provider}, s.GetCurrentDatabase(), st)
	if err != nil {
		return err
	}
	return callback(res, false)
}

// splitNode is the provider as package split sees it.
type splitNode struct{ p *DatabaseProvider }

// Catalog implements split.Node.
func (n splitNode) Catalog(ctx context.Context) (*catalog.Catalog, error) {
	return n.p.readCatalog(ctx)
}

// Meta implements split.Node.
func (n splitNode) Meta(dbName string, def *catalog.TableDef) (*tablemeta.Table, error) {
	return n.p.metas.Get(gsql.NewEmptyContext(), dbName, def)
}

// Client implements split.Node.
func (n splitNode) Client() kv.Client { return n.p.store.Client() }

// SQLError implements split.Node.
func (splitNode) SQLError(err error) error { return toSQLError(err) }
