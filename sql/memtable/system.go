package memtable

import (
	"net"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// SystemDatabase is what a database served from memory embeds: it has no
// views, triggers, stored procedures or events, and none can be created
// in it (ErrSystemDatabase).
type SystemDatabase struct {
	// DBName is the database's name in errors.
	DBName string
}

// CreateView implements sql.ViewDatabase (GMS asks a database that
// TRUNCATE names for its views): none can be created.
func (d SystemDatabase) CreateView(ctx *gsql.Context, name, _, _ string) error {
	return ErrSystemDatabase(ctx, d.DBName)
}

// DropView implements sql.ViewDatabase.
func (d SystemDatabase) DropView(_ *gsql.Context, name string) error {
	return gsql.ErrViewDoesNotExist.New(d.DBName, name)
}

// GetViewDefinition implements sql.ViewDatabase: it has no views.
func (d SystemDatabase) GetViewDefinition(*gsql.Context, string) (gsql.ViewDefinition, bool, error) {
	return gsql.ViewDefinition{}, false, nil
}

// AllViews implements sql.ViewDatabase.
func (d SystemDatabase) AllViews(*gsql.Context) ([]gsql.ViewDefinition, error) { return nil, nil }

// GMS's information_schema tables ask every database for its triggers,
// stored procedures and events and fail the query on a database that
// cannot say.

// GetTriggers implements sql.TriggerDatabase.
func (d SystemDatabase) GetTriggers(*gsql.Context) ([]gsql.TriggerDefinition, error) { return nil, nil }

// CreateTrigger implements sql.TriggerDatabase.
func (d SystemDatabase) CreateTrigger(ctx *gsql.Context, _ gsql.TriggerDefinition) error {
	return ErrSystemDatabase(ctx, d.DBName)
}

// DropTrigger implements sql.TriggerDatabase.
func (d SystemDatabase) DropTrigger(_ *gsql.Context, name string) error {
	return gsql.ErrTriggerDoesNotExist.New(name)
}

// GetStoredProcedure implements sql.StoredProcedureDatabase.
func (d SystemDatabase) GetStoredProcedure(*gsql.Context, string) (gsql.StoredProcedureDetails, bool, error) {
	return gsql.StoredProcedureDetails{}, false, nil
}

// GetStoredProcedures implements sql.StoredProcedureDatabase.
func (d SystemDatabase) GetStoredProcedures(*gsql.Context) ([]gsql.StoredProcedureDetails, error) {
	return nil, nil
}

// SaveStoredProcedure implements sql.StoredProcedureDatabase.
func (d SystemDatabase) SaveStoredProcedure(ctx *gsql.Context, _ gsql.StoredProcedureDetails) error {
	return ErrSystemDatabase(ctx, d.DBName)
}

// DropStoredProcedure implements sql.StoredProcedureDatabase.
func (d SystemDatabase) DropStoredProcedure(_ *gsql.Context, name string) error {
	return gsql.ErrStoredProcedureDoesNotExist.New(name)
}

// GetEvent implements sql.EventDatabase.
func (d SystemDatabase) GetEvent(*gsql.Context, string) (gsql.EventDefinition, bool, error) {
	return gsql.EventDefinition{}, false, nil
}

// GetEvents implements sql.EventDatabase.
func (d SystemDatabase) GetEvents(*gsql.Context) ([]gsql.EventDefinition, any, error) {
	return nil, nil, nil
}

// SaveEvent implements sql.EventDatabase.
func (d SystemDatabase) SaveEvent(ctx *gsql.Context, _ gsql.EventDefinition) (bool, error) {
	return false, ErrSystemDatabase(ctx, d.DBName)
}

// DropEvent implements sql.EventDatabase.
func (d SystemDatabase) DropEvent(_ *gsql.Context, name string) error {
	return gsql.ErrEventDoesNotExist.New(name)
}

// UpdateEvent implements sql.EventDatabase.
func (d SystemDatabase) UpdateEvent(ctx *gsql.Context, _ string, _ gsql.EventDefinition) (bool, error) {
	return false, ErrSystemDatabase(ctx, d.DBName)
}

// UpdateLastExecuted implements sql.EventDatabase.
func (d SystemDatabase) UpdateLastExecuted(_ *gsql.Context, name string, _ time.Time) error {
	return gsql.ErrEventDoesNotExist.New(name)
}

// NeedsToReloadEvents implements sql.EventDatabase.
func (d SystemDatabase) NeedsToReloadEvents(*gsql.Context, any) (bool, error) { return false, nil }

// ErrSystemDatabase is MySQL's error for dropping a system database
// (1044, as MySQL answers DROP DATABASE performance_schema).
func ErrSystemDatabase(ctx *gsql.Context, name string) error {
	c := ctx.Session.Client()
	host := c.Address
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return mysql.NewSQLError(mysql.ERDBAccessDenied, mysql.SSClientError,
		"Access denied for user '%s'@'%s' to database '%s'", c.User, host, strings.ToLower(name))
}
