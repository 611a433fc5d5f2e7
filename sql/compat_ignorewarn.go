package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/compat"
)

// Warn implements sql.Session. GMS raises the duplicate key of a row that
// INSERT IGNORE skipped as a Note with its own message ("duplicate
// primary key given: Duplicate entry '1' for key 'PRIMARY'"); MySQL's is
// a Warning, 1062 "Duplicate entry '1' for key 't.PRIMARY'", which a
// stored procedure's SQLWARNING handler takes. GMS's notes 1007 and 1008
// get MySQL's text (compat_ifexists.go).
func (s *Session) Warn(w *gsql.Warning) {
	if w != nil && w.Code == codeDupEntry && w.Level == "Note" {
		msg := strings.TrimPrefix(strings.TrimPrefix(w.Message, dupPrimaryKeyPrefix), dupUniqueKeyPrefix)
		w = &gsql.Warning{Level: "Warning", Code: w.Code, Message: msg}
	}
	if w != nil {
		w = mysqlDatabaseNote(w) // compat_ifexists.go
		if w.Code == compat.CodeDivisionByZero {
			s.divisionsByZero++
		}
	}
	s.BaseSession.Warn(w)
}

// DivisionsByZero implements compat.DivisionCounter: the warnings 1365
// the session has raised.
func (s *Session) DivisionsByZero() int { return s.divisionsByZero }
