package sql

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
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
