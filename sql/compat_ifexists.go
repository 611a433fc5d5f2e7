package sql

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// MySQL answers a CREATE or DROP with IF [NOT] EXISTS that has nothing
// to do with a note naming what exists or is missing. GMS gives no note
// for CREATE TABLE IF NOT EXISTS of a table there is (MySQL: 1050
// "Table 't' already exists"), and its notes for databases leave out
// the quotes of MySQL's messages ("Can't drop database x; database
// doesn't exist " for MySQL's "Can't drop database 'x'; database doesn't
// exist"), which a client matching the text misses.

// existingTableNote answers CREATE TABLE IF NOT EXISTS (also … LIKE and
// … SELECT) of a name a table or view of its database already has: a
// note 1050 and nothing created or inserted, as MySQL's. It returns no
// iterator for any other CREATE TABLE, which GMS builds.
func existingTableNote(ctx *gsql.Context, n *plan.CreateTable) (gsql.RowIter, error) {
	if !n.IfNotExists() || n.Temporary() || n.Db == nil {
		return nil, nil
	}
	_, exists, err := n.Db.GetTableInsensitive(ctx, n.Name())
	if err != nil {
		return nil, fmt.Errorf("create table %s: %w", n.Name(), err)
	}
	if !exists {
		if vdb, ok := n.Db.(gsql.ViewDatabase); ok {
			if _, exists, err = vdb.GetViewDefinition(ctx, n.Name()); err != nil {
				return nil, fmt.Errorf("create table %s: %w", n.Name(), err)
			}
		}
	}
	if !exists {
		return nil, nil
	}
	ctx.Session.Warn(&gsql.Warning{Level: "Note", Code: mysql.ERTableExists,
		Message: fmt.Sprintf("Table '%s' already exists", n.Name())})
	return gsql.RowsToRowIter(gsql.NewRow(types.NewOkResult(0))), nil
}

// GMS's notes for CREATE DATABASE IF NOT EXISTS and DROP DATABASE IF
// EXISTS (sql/rowexec/ddl.go), each the database's name between a prefix
// and a suffix.
var gmsDatabaseNotes = []struct {
	code           int
	prefix, suffix string
	mysql          string // MySQL's message, %s the name
}{
	{mysql.ERDbCreateExists, "Can't create database ", "; database exists ", "Can't create database '%s'; database exists"},
	{mysql.ERDbDropExists, "Can't drop database ", "; database doesn't exist ", "Can't drop database '%s'; database doesn't exist"},
}

// mysqlDatabaseNote returns w with MySQL's message when it is one of
// GMS's database notes, else w.
func mysqlDatabaseNote(w *gsql.Warning) *gsql.Warning {
	for _, g := range gmsDatabaseNotes {
		if w.Code != g.code || !strings.HasPrefix(w.Message, g.prefix) || !strings.HasSuffix(w.Message, g.suffix) {
			continue
		}
		name := w.Message[len(g.prefix) : len(w.Message)-len(g.suffix)]
		return &gsql.Warning{Level: w.Level, Code: w.Code, Message: fmt.Sprintf(g.mysql, name)}
	}
	return w
}
