package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/compat"
)

var _ gsql.IndexSearchable = (*Table)(nil)

// SkipIndexCosting implements sql.IndexSearchable: GMS costs percdb's
// indexes itself whenever LookupForExpressions makes no lookup.
func (t *Table) SkipIndexCosting() bool { return false }

// LookupForExpressions implements sql.IndexSearchable. It makes no
// lookup of its own, but when a conjunct compares a numeric column with
// a string GMS cannot convert to that column's type for an index range
// (sql/compat/keyconvert.go) it answers with an empty lookup, which GMS
// takes for "read the table": the WHERE clause decides instead of a
// range that failed the statement or read other rows.
func (t *Table) LookupForExpressions(_ *gsql.Context, exprs ...gsql.Expression) (gsql.IndexLookup, *gsql.FuncDepSet, gsql.Expression, bool, error) {
	if compat.UnconvertibleKeys(exprs) {
		return gsql.IndexLookup{}, nil, nil, true, nil
	}
	return gsql.IndexLookup{}, nil, nil, false, nil
}
