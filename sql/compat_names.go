package sql

import (
	"context"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// SET NAMES cs COLLATE coll sets character_set_client, _connection and
// _results to cs and collation_connection to coll; GMS parses the COLLATE
// clause and drops it, leaving cs's default collation. The handler checks
// the pair before GMS runs the statement (MySQL's errors 1115, 1273 and
// 1253, with nothing changed) and sets collation_connection after it.

// setNamesCollate returns the character set and collation of query when
// it is SET NAMES cs COLLATE coll (as the first statement of the text).
func setNamesCollate(query string) (cs, coll string, ok bool) {
	q := lexical.TrimLeading(query, " \t\r\n")
	var w string
	if w, q = nextToken(q); !strings.EqualFold(w, "set") {
		return "", "", false
	}
	if w, q = nextToken(q); !strings.EqualFold(w, "names") {
		return "", "", false
	}
	if cs, q = nextToken(q); cs == "" {
		return "", "", false
	}
	if w, q = nextToken(q); !strings.EqualFold(w, "collate") {
		return "", "", false
	}
	if coll, q = nextToken(q); coll == "" {
		return "", "", false
	}
	q = strings.TrimLeft(q, " \t\r\n")
	return cs, coll, q == "" || q[0] == ';'
}

// nextToken returns the word or quoted name at the start of q, and the
// rest of q (lexical.NextToken).
func nextToken(q string) (string, string) { return lexical.NextToken(q) }

// setNames runs SET NAMES cs COLLATE coll with fn, GMS's run of the
// statement: it checks the pair first and sets collation_connection
// after.
func (h *handler) setNames(ctx context.Context, c *mysql.Conn, cs, coll string, fn func() error) error {
	id, err := gsql.ParseCollation(cs, coll, false)
	switch {
	case gsql.ErrCharSetUnknown.Is(err):
		return mysql.NewSQLError(1115, stateSyntax, "Unknown character set: '%s'", cs) // ER_UNKNOWN_CHARACTER_SET
	case gsql.ErrCollationUnknown.Is(err):
		return mysql.NewSQLError(1273, stateGeneral, "Unknown collation: '%s'", coll) // ER_UNKNOWN_COLLATION
	case err != nil:
		return mysql.NewSQLError(1253, stateSyntax, "COLLATION '%s' is not valid for CHARACTER SET '%s'", coll, cs) // ER_COLLATION_CHARSET_MISMATCH
	}
	if err := fn(); err != nil {
		return err
	}
	s := h.sessions.get(c.ConnectionID)
	if s == nil {
		return nil
	}
	return s.SetSessionVariable(gsql.NewContext(ctx, gsql.WithSession(s)), "collation_connection", id.Name())
}
