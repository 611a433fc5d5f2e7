package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/percdb/percdb/sql/loaddata"
)

// setLocalInfile sets the global local_infile variable, which allows LOAD
// DATA LOCAL (package loaddata).
func setLocalInfile(on bool) error { return loaddata.SetLocalInfile(on) }

// buildLoadData returns the iterator of n in MySQL's file format (package
// loaddata), which shows the rows it has read in the process list, or nil
// when percdb leaves the statement to GMS.
func buildLoadData(ctx *gsql.Context, n *plan.LoadData) (gsql.RowIter, error) {
	return loaddata.Build(ctx, n, reportProgress)
}
