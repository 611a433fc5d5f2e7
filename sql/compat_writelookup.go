package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/percdb/percdb/sql/plancache"
)

// GMS analyzes a one-table UPDATE or DELETE with a short list of rules
// of its own, which chooses the index read from the WHERE clause as
// written; percdb's expression rewrites (sql/compat/rows.go) are put in
// afterwards, by compatBuilder, and change the Filter but not the ranges
// the read was built from. Where GMS's ranges were wrong, the statement
// was too: `UPDATE t SET … WHERE bu >= -5` of an indexed BIGINT UNSIGNED
// read only the rows from 18446744073709551611 on (GMS wrapped -5), and
// `WHERE bi = 'abc'` on an indexed BIGINT failed with 1366 (GMS's range
// could not convert 'abc'), where the rewritten Filter compares as
// MySQL does.
//
// relookupWrites derives the ranges of each static index read right
// under a Filter of such a plan from the rewritten Filter again
// (plancache.RebuildLookup, as the plan cache does); when they cannot be derived,
// the read becomes a scan of the table. The Filter stays above the read
// and decides, as before.
func relookupWrites(ctx *gsql.Context, n gsql.Node) (gsql.Node, error) {
	out, _, err := transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		ita, table, with, ok := plancache.FilteredRead(f)
		if !ok {
			return n, transform.SameTree, nil
		}
		var read gsql.Node = ita.TableNode
		if cur, err := ita.GetLookup(ctx, nil); err == nil && cur.Index != nil && !cur.IsSpatialLookup {
			if lookup, ok := plancache.RebuildLookup(ctx, f.Expression, table, cur); ok {
				r, err := plan.NewStaticIndexedAccessForTableNode(ctx, ita.TableNode, lookup)
				if err != nil {
					return nil, transform.SameTree, err
				}
				read = r
			}
		}
		nf, err := with(read)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return nf, transform.NewTree, nil
	})
	return out, err
}
