package sql

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/compat"
)

// Warn implements sql.Session. GMS raises the duplicate key of a row that
// INSERT IGNORE skipped as a Note with its own message ("duplicate
// primary key given: Duplicate entry '1' for key 'PRIMARY'"); MySQL's is
// a Warning, 1062 "Duplicate entry '1' for key 't.PRIMARY'", which a
// stored procedure's SQLWARNING handler takes. GMS's notes 1007 and 1008
// get MySQL's text (compat_ifexists.go).
//
// GMS warns 1365 "Division by 0" for every x / 0, x DIV 0, x % 0 and
// MOD(x, 0); MySQL only when the sql_mode has ERROR_FOR_DIVISION_BY_ZERO
// (Item_func::signal_divide_by_null: without the mode the result is NULL
// and nothing is said). The warning is counted all the same (the strict
// check in sql/compat/zerodates.go reads the mode itself).
func (s *Session) Warn(w *gsql.Warning) {
	s.dropKeptDiagnostics() // compat_diagarea.go
	if w != nil && w.Code == codeDupEntry && w.Level == "Note" {
		msg := strings.TrimPrefix(strings.TrimPrefix(w.Message, dupPrimaryKeyPrefix), dupUniqueKeyPrefix)
		w = &gsql.Warning{Level: "Warning", Code: w.Code, Message: msg}
	}
	if w != nil && w.Code == mysql.ERBadNullError && w.Level == "Note" {
		w = badNullWarning(w)
	}
	if w != nil {
		w = mysqlDatabaseNote(w) // compat_ifexists.go
		w = s.dropNote(w)        // compat_dropnames.go
		if w.Code == compat.CodeDivisionByZero {
			s.divisionsByZero++
			if !s.divisionByZeroWarns() {
				return
			}
		}
	}
	s.BaseSession.Warn(w)
}

// GMS's note for the NULL an INSERT IGNORE or UPDATE IGNORE stored as
// a NOT NULL column's implicit default: "column name 'c' is non-nullable
// but attempted to set a value of null" (ErrInsertIntoNonNullableProvidedNull).
const (
	gmsBadNullPrefix = "column name '"
	gmsBadNullSuffix = "' is non-nullable but attempted to set a value of null"
)

// badNullWarning returns GMS's note 1048 as MySQL's warning: Warning 1048
// "Column 'c' cannot be null" (a stored procedure's SQLWARNING handler
// takes it; a note runs none).
func badNullWarning(w *gsql.Warning) *gsql.Warning {
	if !strings.HasPrefix(w.Message, gmsBadNullPrefix) || !strings.HasSuffix(w.Message, gmsBadNullSuffix) {
		return w
	}
	name := w.Message[len(gmsBadNullPrefix) : len(w.Message)-len(gmsBadNullSuffix)]
	return &gsql.Warning{Level: "Warning", Code: w.Code, Message: fmt.Sprintf("Column '%s' cannot be null", name)}
}

// DivisionsByZero implements compat.DivisionCounter: the warnings 1365
// the session has raised.
func (s *Session) DivisionsByZero() int { return s.divisionsByZero }

// divisionByZeroWarns reports whether the session's sql_mode has
// ERROR_FOR_DIVISION_BY_ZERO. (GMS's session reads its variables without
// the context; a warning has none at hand.)
func (s *Session) divisionByZeroWarns() bool {
	mode, err := s.BaseSession.GetSessionVariable(nil, "sql_mode")
	if err != nil {
		return true
	}
	m, _ := mode.(string)
	return strings.Contains(strings.ToUpper(m), "ERROR_FOR_DIVISION_BY_ZERO")
}
