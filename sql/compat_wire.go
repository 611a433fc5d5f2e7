package sql

import (
	"context"
	"math"
	"net"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/netutil"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/wire"
)

// vitess reads some client commands wrongly before any handler method
// runs, so percdb reads the connection's bytes first (package wire), which
// means it also terminates TLS. What that needs from this package:
//
//   - the handler attaches vitess's connection to percdb's (NewConnection),
//     so that the executes of statements with more than 65,528 parameters
//     are decoded with their statements' parameter counts;
//   - a COM_STMT_PREPARE of `DO expr[, expr...]` (which vitess's grammar
//     refuses) reaches vitess as the SELECT of its expressions; ComPrepare
//     prepares that SELECT with GMS, answers with no columns, and gives the
//     statement its DO text back, by which ComStmtExecute runs it as a DO:
//     the SELECT's rows dropped, an OK packet sent (doPrepared below);
//   - a COM_STMT_PREPARE with syntax vitess's grammar refuses (a compound
//     INTERVAL unit: DATE_ADD(?, INTERVAL ? HOUR_MINUTE)) reaches vitess
//     rewritten as SyntaxParser rewrites it, so that vitess counts its
//     parameters; GMS prepares and runs the client's text (clientPrepare);
//   - a client packet longer than max_allowed_packet is refused with 1153
//     and the connection closed, as in MySQL (maxAllowedPacket);
//   - vitess is given no TLS configuration, so its connection does not
//     know the client switched to TLS, which caching_sha2_password needs
//     (it sends the password in clear only over TLS): the authentication
//     methods mark vitess's connection as TLS when percdb's is
//     (secureMethod); Ssl_cipher and the client watcher find the TLS
//     state and the socket through wire.Conn.

// maxAllowedPacket returns the global max_allowed_packet, which GMS keeps
// but checks no packet against (package wire does); 0 when unknown.
func maxAllowedPacket() int {
	_, v, ok := gsql.SystemVariables.GetGlobal("max_allowed_packet")
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return int(n)
	case uint64:
		return int(min(n, math.MaxInt32))
	case int:
		return n
	}
	return 0
}

// wireConn returns percdb's connection under nc (vitess's connection's
// net.Conn), nil when there is none.
func wireConn(nc net.Conn) *wire.Conn {
	for {
		switch c := nc.(type) {
		case *wire.Conn:
			return c
		case netutil.ConnWithTimeouts:
			nc = c.Conn
		case *netutil.ConnWithTimeouts:
			nc = c.Conn
		default:
			return nil
		}
	}
}

// attachWire tells percdb's connection under c about c.
func attachWire(c *mysql.Conn) {
	if wc := wireConn(c.Conn); wc != nil {
		wc.Attach(c)
	}
}

// secureMethod is an authentication method that first marks vitess's
// connection as TLS when percdb's connection under it is (vitess
// decides by its capability flags whether caching_sha2_password may take
// a password in clear). vitess asks a method whether it handles the user
// before anything in the login reads those flags.
type secureMethod struct {
	mysql.AuthMethod
}

// HandleUser implements mysql.AuthMethod.
func (m secureMethod) HandleUser(c *mysql.Conn, user string) bool {
	if wc := wireConn(c.Conn); wc != nil && wc.Secure() {
		c.Capabilities |= mysql.CapabilityClientSSL
	}
	return m.AuthMethod.HandleUser(c, user)
}

// secureMethods wraps each of methods in a secureMethod.
func secureMethods(methods []mysql.AuthMethod) []mysql.AuthMethod {
	out := make([]mysql.AuthMethod, len(methods))
	for i, m := range methods {
		out[i] = secureMethod{AuthMethod: m}
	}
	return out
}

// doPrepared returns the SELECT a prepared statement runs when it is a DO
// statement that reached vitess as that SELECT (prepareDo), and whether
// it is one.
func doPrepared(prepare *mysql.PrepareData) (string, bool) {
	return doAsSelect(prepare.PrepareStmt)
}

// rewritePrepare is the text vitess parses of a client's COM_STMT_PREPARE
// (wire.Config.RewritePrepare), and true when it is not the client's: a
// DO statement becomes the SELECT of its expressions, and syntax vitess's
// grammar refuses (compound INTERVAL units) is written as it takes it
// (compat.PrepareSyntax), and an account statement the handler serves
// becomes a stand-in (ownprepared.go). GMS then prepares the client's
// text (clientPrepare).
func rewritePrepare(query string) (string, bool) {
	if isOwnPrepared(query) {
		return ownPreparedStandIn, true
	}
	text, do := doAsSelect(query)
	if !do {
		text = query
	}
	if fixed, ok := compat.PrepareSyntax(text); ok {
		return fixed, true
	}
	return text, do
}

// clientPrepare returns the text GMS prepares for a COM_STMT_PREPARE that
// vitess parsed as query: the client's text when rewritePrepare changed
// it (a DO statement as its SELECT), which prepare then runs.
func clientPrepare(c *mysql.Conn, query string, prepare *mysql.PrepareData) string {
	original, ok := rewrittenPrepare(c)
	if !ok {
		return query
	}
	if sel, do := doAsSelect(original); do {
		original = sel
	}
	prepare.PrepareStmt = original
	return original
}

// prepareDo finishes the prepare of a statement the client sent as DO and
// vitess parsed as the SELECT of its expressions (GMS has just prepared
// that SELECT): the statement keeps the client's text, and its answer has
// no columns, as MySQL's.
func prepareDo(c *mysql.Conn, prepare *mysql.PrepareData) bool {
	original, ok := rewrittenPrepare(c)
	if !ok {
		return false
	}
	if _, do := doAsSelect(original); !do {
		return false
	}
	prepare.PrepareStmt = original
	return true
}

// rewrittenPrepare returns the client's text of the COM_STMT_PREPARE c
// runs, when rewritePrepare gave vitess another.
func rewrittenPrepare(c *mysql.Conn) (string, bool) {
	wc := wireConn(c.Conn)
	if wc == nil {
		return "", false
	}
	return wc.RewrittenPrepare()
}

// executeDo runs a prepared DO statement: its SELECT with the rows
// dropped (from the session's plan cache as the SELECT's would be, through
// GMS otherwise), then an OK packet (through callback, which sets the
// status flags).
func (h *handler) executeDo(ctx context.Context, c *mysql.Conn, sel string, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	p := *prepare
	p.PrepareStmt = sel
	drop := func(*sqltypes.Result) error { return nil }
	ran := false
	if s := h.cacheSession(c); s != nil {
		var err error
		if ran, err = h.cachedExecute(ctx, c, s, &p, drop); err != nil {
			return err
		}
	}
	if !ran {
		if err := h.Handler.ComStmtExecute(ctx, c, &p, drop); err != nil {
			return err
		}
	}
	return callback(&sqltypes.Result{})
}
