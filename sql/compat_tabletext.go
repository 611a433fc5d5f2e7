package sql

import (
	"context"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS's 1146 reads "table not found: t" (sql.ErrTableNotFound, the
// name alone), where MySQL's ER_NO_SUCH_TABLE reads "Table 'db.t'
// doesn't exist": a client or a test matching MySQL's text (ORMs look
// for "doesn't exist" to tell a missing table from other failures)
// missed it. The error carries no database, so the statement's text
// gives it: the qualifier of the table reference of that name, else the
// session's current database.

// gmsMissingTablePrefix is the start of sql.ErrTableNotFound's message.
const gmsMissingTablePrefix = "table not found: "

// missingTableText returns err, when it is GMS's 1146 of query, with
// MySQL's message; any other err unchanged.
func (s *Session) missingTableText(ctx context.Context, query string, err error) error {
	se, ok := err.(*mysql.SQLError)
	if !ok || se.Num != mysql.ERNoSuchTable {
		return err
	}
	name, ok := strings.CutPrefix(se.Message, gmsMissingTablePrefix)
	if !ok || name == "" {
		return err
	}
	if db := missingTableDatabase(query, name, s.GetCurrentDatabase()); db != "" {
		name = db + "." + name
	}
	return mysql.NewSQLError(mysql.ERNoSuchTable, se.State, "Table '%s' doesn't exist", name)
}

// missingTableDatabase returns the database query names table name in:
// the qualifier of its first reference to name that has one, else
// current (also when query does not parse).
func missingTableDatabase(query, name, current string) string {
	stmt, err := ast.Parse(query)
	if err != nil {
		return current
	}
	db := ""
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		var t ast.TableName
		switch n := node.(type) {
		case ast.TableName:
			t = n
		case *ast.TableName:
			if n == nil {
				return true, nil
			}
			t = *n
		default:
			return true, nil
		}
		if strings.EqualFold(t.Name.String(), name) && !t.DbQualifier.IsEmpty() {
			db = t.DbQualifier.String()
		}
		return db == "", nil
	}, stmt)
	if db == "" {
		return current
	}
	return db
}
