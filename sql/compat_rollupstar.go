package sql

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/compat"
)

// catalogColumns returns the compat.TableColumns of cat for the session
// of the *sql.Context a statement is parsed with: the columns of a table
// it sees, for a rollup of * (sql/compat/rollupstar.go); none for a view,
// and GMS's 1146 for a name that is neither.
func catalogColumns(cat gsql.Catalog) compat.TableColumns {
	return func(ctx context.Context, db, table string) ([]string, error) {
		sctx, ok := ctx.(*gsql.Context)
		if !ok || sctx.Session == nil {
			return nil, nil
		}
		if db == "" {
			db = sctx.GetCurrentDatabase()
		}
		d, err := cat.Database(sctx, db)
		if err != nil {
			return nil, err
		}
		t, ok, err := d.GetTableInsensitive(sctx, table)
		if err != nil {
			return nil, err
		}
		if !ok {
			if vdb, isViews := d.(gsql.ViewDatabase); isViews {
				if _, isView, err := vdb.GetViewDefinition(sctx, table); err != nil || isView {
					return nil, err
				}
			}
			return nil, gsql.ErrTableNotFound.New(table)
		}
		sch := t.Schema()
		cols := make([]string, len(sch))
		for i, c := range sch {
			cols[i] = c.Name
		}
		return cols, nil
	}
}
