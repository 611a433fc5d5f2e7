package sql

import (
	"slices"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// Warnings implements sql.Session: the last statement's warnings in the
// order they were raised, as MySQL's SHOW WARNINGS lists them. GMS's
// BaseSession lists the latest first, so an INSERT of three rows out of
// range showed row 3's warning first.
func (s *Session) Warnings() []*gsql.Warning {
	w := s.BaseSession.Warnings() // a copy, reversed
	slices.Reverse(w)
	return w
}
