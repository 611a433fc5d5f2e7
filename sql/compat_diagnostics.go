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
func recordError(s *Session, err error) {
	var se *mysql.SQLError
	if s == nil || !errors.As(err, &se) {
		return
	}
	s.Warn(&gsql.Warning{Level: "Error", Code: se.Num, Message: se.Message})
}
