package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/pingcap/tidb/pkg/parser"
	tidbast "github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// Account statements the handler serves itself (SHOW CREATE USER, ALTER
// USER ... ACCOUNT LOCK | UNLOCK) prepared with COM_STMT_PREPARE, as
// drivers that prepare every statement send them (node's mysql2
// execute(), Connector/J with useServerPrepStmts, go-sql-driver with
// arguments). vitess parses every COM_STMT_PREPARE before the handler
// sees it and answered these with 1064. They take no parameters, so
// rewritePrepare gives vitess a stand-in it parses with none
// (ownPreparedStandIn), ComPrepare answers for the client's text
// (prepareOwn) and ComStmtExecute runs it as the query would be run
// (executeOwn).

// ownPreparedStandIn is the statement vitess parses for a prepared
// account statement: no parameters, never run.
const ownPreparedStandIn = "SELECT 1"

// isOwnPrepared reports whether query is an account statement the
// handler serves itself when prepared.
func isOwnPrepared(query string) bool {
	if _, ok := parseShowCreateUser(query); ok {
		return true
	}
	_, ok := parseAccountLock(query)
	return ok
}

// prepareOwn answers the COM_STMT_PREPARE of an account statement the
// handler serves: the columns its execution would answer with now (none
// when it would fail: the error comes at execution, from the state
// then). It reports whether query was one.
func (h *handler) prepareOwn(ctx context.Context, c *mysql.Conn, query string) ([]*querypb.Field, bool) {
	if account, ok := parseShowCreateUser(query); ok {
		var fields []*querypb.Field
		_ = h.showCreateUser(ctx, c, account, func(res *sqltypes.Result, _ bool) error {
			fields = res.Fields
			return nil
		})
		return fields, true
	}
	if _, ok := parseAccountLock(query); ok {
		return nil, true
	}
	return nil, false
}

// executeOwn runs a prepared account statement the handler serves and
// reports whether the statement was one.
func (h *handler) executeOwn(ctx context.Context, c *mysql.Conn, query string, callback func(*sqltypes.Result) error) (bool, error) {
	cb := func(res *sqltypes.Result, _ bool) error { return callback(res) }
	if account, ok := parseShowCreateUser(query); ok {
		return true, h.showCreateUser(ctx, c, account, cb)
	}
	if st, ok := parseAccountLock(query); ok {
		return true, h.alterUserLock(ctx, c, st, cb)
	}
	return false, nil
}

// The same statements prepared with SQL: PREPARE name FROM 'SHOW CREATE
// USER ...' (or FROM @var), EXECUTE name, DEALLOCATE PREPARE name. GMS
// prepares the text with vitess, which answered them with 1064. The
// handler keeps their text by name in the session (Session.ownPrepared)
// and runs it at EXECUTE; a PREPARE of any other text under the same
// name drops it, as a PREPARE replaces the statement of its name in
// MySQL, and GMS's statement of that name is deallocated when one of
// these takes the name.

// sqlPrepared is a PREPARE, EXECUTE or DEALLOCATE statement.
type sqlPrepared struct {
	prepare, execute, deallocate bool
	// name is the statement's name, lower case (names are not case
	// sensitive).
	name string
	// text is PREPARE's statement text, or varName the user variable
	// holding it.
	text, varName string
	// using counts EXECUTE's USING variables.
	using int
}

// parseSQLPrepared parses query as a PREPARE, EXECUTE or DEALLOCATE
// statement.
func parseSQLPrepared(query string) (sqlPrepared, bool) {
	if !lexical.LeadingWordIs(query, "prepare") && !lexical.LeadingWordIs(query, "execute") &&
		!lexical.LeadingWordIs(query, "deallocate") && !lexical.LeadingWordIs(query, "drop") {
		return sqlPrepared{}, false
	}
	if lexical.LeadingWordIs(query, "drop") {
		if _, q := nextToken(lexical.TrimLeading(query, " \t\r\n")); !lexical.LeadingWordIs(q, "prepare") {
			return sqlPrepared{}, false
		}
	}
	stmts, _, err := parser.New().Parse(query, "", "")
	if err != nil || len(stmts) != 1 {
		return sqlPrepared{}, false
	}
	switch st := stmts[0].(type) {
	case *tidbast.PrepareStmt:
		return sqlPrepared{prepare: true, name: strings.ToLower(st.Name), text: st.SQLText, varName: varName(st.SQLVar)}, true
	case *tidbast.ExecuteStmt:
		if st.BinaryArgs != nil || st.PrepStmt != nil {
			return sqlPrepared{}, false
		}
		return sqlPrepared{execute: true, name: strings.ToLower(st.Name), using: len(st.UsingVars)}, true
	case *tidbast.DeallocateStmt:
		return sqlPrepared{deallocate: true, name: strings.ToLower(st.Name)}, true
	}
	return sqlPrepared{}, false
}

// varName returns the name of a user variable expression, "" for none.
func varName(v *tidbast.VariableExpr) string {
	if v == nil {
		return ""
	}
	return v.Name
}

// sqlPreparedOwn runs for c's session a PREPARE of a statement the
// handler serves, and EXECUTE and DEALLOCATE of one it prepared. It
// reports whether query was one of them; any other goes to GMS (a
// PREPARE of another statement after the name is dropped here).
func (h *handler) sqlPreparedOwn(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (bool, error) {
	st, ok := parseSQLPrepared(query)
	if !ok {
		return false, nil
	}
	s := h.sessions.get(c.ConnectionID)
	if s == nil {
		return false, nil
	}
	switch {
	case st.prepare:
		text := st.text
		if st.varName != "" {
			sctx := gsql.NewContext(ctx, gsql.WithSession(s))
			_, v, err := s.GetUserVariable(sctx, st.varName)
			if err != nil {
				return false, nil
			}
			str, ok := v.(string)
			if !ok {
				return false, nil
			}
			text = str
		}
		if !isOwnPrepared(text) {
			delete(s.ownPrepared, st.name)
			return false, nil
		}
		// GMS's statement of this name, if any, goes (1243 when none).
		_ = h.Handler.ComQuery(ctx, c, "DEALLOCATE PREPARE `"+strings.ReplaceAll(st.name, "`", "``")+"`", func(*sqltypes.Result, bool) error { return nil })
		if s.ownPrepared == nil {
			s.ownPrepared = map[string]string{}
		}
		s.ownPrepared[st.name] = text
		return true, cb(&sqltypes.Result{Info: "Statement prepared"}, false)
	case st.execute:
		text, ok := s.ownPrepared[st.name]
		if !ok {
			return false, nil
		}
		if st.using != 0 {
			return true, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Incorrect arguments to EXECUTE")
		}
		return true, h.runOwnPrepared(ctx, c, text, cb)
	default:
		if _, ok := s.ownPrepared[st.name]; !ok {
			return false, nil
		}
		delete(s.ownPrepared, st.name)
		return true, cb(&sqltypes.Result{}, false)
	}
}

// runOwnPrepared runs text, a statement isOwnPrepared accepts.
func (h *handler) runOwnPrepared(ctx context.Context, c *mysql.Conn, text string, cb mysql.ResultSpoolFn) error {
	if account, ok := parseShowCreateUser(text); ok {
		return h.showCreateUser(ctx, c, account, cb)
	}
	if st, ok := parseAccountLock(text); ok {
		return h.alterUserLock(ctx, c, st, cb)
	}
	return fmt.Errorf("prepared statement %q is not one the handler serves", text)
}
