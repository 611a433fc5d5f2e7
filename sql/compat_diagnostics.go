package sql

import (
	"errors"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// recordError puts the error a statement failed with among the session's
// warnings, at level Error, as MySQL's diagnostics area holds it: SHOW
// WARNINGS after a failed INSERT lists `Error 1264 Out of range value for
// column 'd' at row 1`, after the warnings the statement raised before
// it failed. GMS kept only the warnings, so SHOW WARNINGS after an error
// was empty.
//
// A warning the statement's strict mode made its error (1365 of a
// division by zero under ERROR_FOR_DIVISION_BY_ZERO, raised by GMS as a
// warning and turned into the error by sql/compat) is listed once, as the
// error: MySQL raises such a condition as an error in the first place.
func recordError(s *Session, err error) {
	var se *mysql.SQLError
	if s == nil || !errors.As(err, &se) {
		return
	}
	s.dropKeptDiagnostics() // compat_diagarea.go
	if ws := s.Warnings(); len(ws) > 0 {
		last := ws[len(ws)-1]
		if last.Level == "Warning" && last.Code == se.Num && last.Message == se.Message {
			s.BaseSession.ClearWarnings()
			for _, w := range ws[:len(ws)-1] {
				s.BaseSession.Warn(w)
			}
		}
	}
	s.lastError = se
	s.Warn(&gsql.Warning{Level: "Error", Code: se.Num, Message: se.Message})
}
