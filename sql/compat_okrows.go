package sql

import "github.com/dolthub/vitess/go/sqltypes"

// GMS answers a statement whose result has no columns but that its
// analyzer marks as giving at most one row (SET, among others) with that
// one empty row and RowsAffected 1 (server.resultForMax1RowIter), which
// the wire sends as an OK packet: `SET SESSION sql_mode = …` and `SET @x
// = 1` reported 1 row affected. MySQL reports 0: a statement without
// columns sends no rows, and a SET changes none.
//
// okWithoutRows drops such empty rows from a result without columns and
// their count with them. A data change's OK result carries no rows (its
// count is its own), so it is left as it is.
func okWithoutRows(res *sqltypes.Result) {
	if res == nil || len(res.Fields) != 0 || len(res.Rows) == 0 {
		return
	}
	for _, r := range res.Rows {
		if len(r) != 0 {
			return
		}
	}
	res.Rows = nil
	res.RowsAffected = 0
}
