package sql

import (
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// percdb stores no stored procedures or events (triggers: trigger.go). A
// Database still implements GMS's interfaces for them, answering "none" to
// the reads and refusing the writes: once accounts are on, GMS wraps every
// database in a mysql_db.PrivilegedDatabase, which claims all of these
// interfaces and fails every call the wrapped database does not implement.
var (
	_ gsql.StoredProcedureDatabase = (*Database)(nil)
	_ gsql.EventDatabase           = (*Database)(nil)
)

// GetStoredProcedure implements gsql.StoredProcedureDatabase: there are
// none.
func (d *Database) GetStoredProcedure(*gsql.Context, string) (gsql.StoredProcedureDetails, bool, error) {
	return gsql.StoredProcedureDetails{}, false, nil
}

// GetStoredProcedures implements gsql.StoredProcedureDatabase: there are
// none.
func (d *Database) GetStoredProcedures(*gsql.Context) ([]gsql.StoredProcedureDetails, error) {
	return nil, nil
}

// SaveStoredProcedure implements gsql.StoredProcedureDatabase: not
// supported.
func (d *Database) SaveStoredProcedure(*gsql.Context, gsql.StoredProcedureDetails) error {
	return gsql.ErrStoredProceduresNotSupported.New(d.Name())
}

// DropStoredProcedure implements gsql.StoredProcedureDatabase: not
// supported.
func (d *Database) DropStoredProcedure(*gsql.Context, string) error {
	return gsql.ErrStoredProceduresNotSupported.New(d.Name())
}

// GetEvent implements gsql.EventDatabase: there are none.
func (d *Database) GetEvent(*gsql.Context, string) (gsql.EventDefinition, bool, error) {
	return gsql.EventDefinition{}, false, nil
}

// GetEvents implements gsql.EventDatabase: there are none.
func (d *Database) GetEvents(*gsql.Context) ([]gsql.EventDefinition, interface{}, error) {
	return nil, nil, nil
}

// SaveEvent implements gsql.EventDatabase: not supported.
func (d *Database) SaveEvent(*gsql.Context, gsql.EventDefinition) (bool, error) {
	return false, gsql.ErrEventsNotSupported.New(d.Name())
}

// DropEvent implements gsql.EventDatabase: not supported.
func (d *Database) DropEvent(*gsql.Context, string) error {
	return gsql.ErrEventsNotSupported.New(d.Name())
}

// UpdateEvent implements gsql.EventDatabase: not supported.
func (d *Database) UpdateEvent(*gsql.Context, string, gsql.EventDefinition) (bool, error) {
	return false, gsql.ErrEventsNotSupported.New(d.Name())
}

// UpdateLastExecuted implements gsql.EventDatabase: not supported.
func (d *Database) UpdateLastExecuted(*gsql.Context, string, time.Time) error {
	return gsql.ErrEventsNotSupported.New(d.Name())
}

// NeedsToReloadEvents implements gsql.EventDatabase: never, there are
// none.
func (d *Database) NeedsToReloadEvents(*gsql.Context, interface{}) (bool, error) {
	return false, nil
}
