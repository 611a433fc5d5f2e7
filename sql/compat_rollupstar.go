package sql

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/compat"
)

// maxViewDepth bounds the views a rollup of * reads through (a view of
// a view ...), as a guard: past it the star stays 1235.
const maxViewDepth = 16

// catalogColumns returns the compat.TableColumns of cat for the session
// of the *sql.Context a statement is parsed with: the columns of a table
// it sees, or of a view (the names of its select list, or its column
// list), for a rollup of * (sql/compat/rollupstar.go); GMS's 1146 for a
// name that is neither.
func catalogColumns(cat gsql.Catalog) compat.TableColumns {
	return func(ctx context.Context, db, table string) ([]string, error) {
		sctx, ok := ctx.(*gsql.Context)
		if !ok || sctx.Session == nil {
			return nil, nil
		}
		if db == "" {
			db = sctx.GetCurrentDatabase()
		}
		return relationColumns(sctx, cat, db, table, 0)
	}
}

// relationColumns returns the columns of table or view table of
// database db; depth counts the views it reads through.
func relationColumns(sctx *gsql.Context, cat gsql.Catalog, db, table string, depth int) ([]string, error) {
	d, err := cat.Database(sctx, db)
	if err != nil {
		return nil, err
	}
	t, ok, err := d.GetTableInsensitive(sctx, table)
	if err != nil {
		return nil, err
	}
	if ok {
		sch := t.Schema()
		cols := make([]string, len(sch))
		for i, c := range sch {
			cols[i] = c.Name
		}
		return cols, nil
	}
	if vdb, isViews := d.(gsql.ViewDatabase); isViews {
		view, isView, err := vdb.GetViewDefinition(sctx, table)
		if err != nil {
			return nil, err
		}
		if isView {
			if depth >= maxViewDepth {
				return nil, nil
			}
			// The view's unqualified names are of its own database.
			return compat.ViewColumns(view.CreateViewStatement, func(vdb, vtable string) ([]string, error) {
				if vdb == "" {
					vdb = d.Name()
				}
				return relationColumns(sctx, cat, vdb, vtable, depth+1)
			})
		}
	}
	return nil, gsql.ErrTableNotFound.New(table)
}
