package sql

import (
	"context"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// DO expr[, expr...] evaluates its expressions and returns nothing;
// connection pools and go-sql-driver's tests send DO 1, alone or inside a
// multi-statement query. GMS's parser (vitess's grammar) has no DO
// statement, so the handler runs one as the SELECT of the same
// expressions, drops its rows and answers with an OK packet, as MySQL
// does. Only the first statement of the text is changed: in a
// multi-statement query the rest, parsed after it, goes through the
// handler again.

// doAsSelect returns query as a SELECT when its first statement is a DO
// statement, and whether it is.
func doAsSelect(query string) (string, bool) {
	q := lexical.TrimLeading(query, " \t\r\n")
	if len(q) < 3 || !strings.EqualFold(q[:2], "do") || lexical.IsWordByte(q[2]) {
		return "", false
	}
	return "SELECT" + q[2:], true
}

// doQuery runs the SELECT sel of a text DO statement with its rows
// dropped: from the session's text plan cache as the SELECT's would be
// (a pool's DO 1 is not analysed again each time), through GMS otherwise.
func (h *handler) doQuery(ctx context.Context, c *mysql.Conn, sel string) error {
	if s := h.cacheSession(c); s != nil {
		drop := func(*sqltypes.Result) error { return nil }
		if ok, err := h.cachedQuery(ctx, c, s, templateFor(s, sel), sel, drop); ok {
			return err
		}
	}
	return h.Handler.ComQuery(ctx, c, sel, dropRows)
}

// dropRows is the result callback of a DO statement's SELECT.
func dropRows(*sqltypes.Result, bool) error { return nil }
