package sql

import (
	"context"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS's planner lowercases table aliases, and the column definitions it
// sends name a column's table by the lowercased alias: SELECT * FROM
// (SELECT 1 AS one) AS A gave the table 'a', where MySQL gives 'A' as
// written. Drivers that name columns by table (go-sql-driver's
// columnsWithAlias, JDBC's getTableName, ORMs mapping joined rows) then
// missed the column 'A.one'. The parser wrapper notes, per session, the
// spelling of each alias of the statement it parsed whose lowercase
// differs (noteAliasSpellings), and the handler gives the column
// definitions of the statement's results that spelling
// (fixAliasSpellings). A prepared statement's executions are not parsed
// again: they keep the spellings of the last statement parsed.

// noteAliasSpellings records in the session of ctx the spellings of
// stmt's table aliases that are not all lowercase; nil when there are
// none.
func noteAliasSpellings(ctx context.Context, stmt ast.Statement) {
	gctx, ok := ctx.(*gsql.Context)
	if !ok || gctx == nil || stmt == nil {
		return
	}
	s, ok := gctx.Session.(*Session)
	if !ok {
		return
	}
	var spellings map[string]string
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		t, ok := node.(*ast.AliasedTableExpr)
		if !ok || t.As.IsEmpty() {
			return true, nil
		}
		as := t.As.String()
		if lower := strings.ToLower(as); lower != as {
			if spellings == nil {
				spellings = make(map[string]string)
			}
			spellings[lower] = as
		}
		return true, nil
	}, stmt)
	s.aliasSpellings = spellings
}

// fixAliasSpellings gives the tables of fields the spelling of the
// aliases of c's last parsed statement.
func (h *handler) fixAliasSpellings(c *mysql.Conn, fields []*querypb.Field) {
	if len(fields) == 0 {
		return
	}
	s := h.sessions.get(c.ConnectionID)
	if s == nil || s.aliasSpellings == nil {
		return
	}
	for _, f := range fields {
		if as, ok := s.aliasSpellings[f.Table]; ok {
			f.Table = as
		}
	}
}
