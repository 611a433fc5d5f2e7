package sql

import (
	"fmt"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/storedproc"
	"github.com/percdb/percdb/txn"
)

// Stored procedures, like triggers, are GMS's to parse and plan (CREATE
// and DROP PROCEDURE, CALL, SHOW CREATE PROCEDURE, SHOW PROCEDURE STATUS,
// information_schema.ROUTINES), and percdb's interpreter runs them
// (procexec.go, sql/storedproc): percdb keeps each one's CREATE
// PROCEDURE statement in the catalog, changed in the DDL's transaction,
// and refuses a second procedure of the same name (1304), which GMS leaves
// to the backend. A CALL's statements run in the caller's transaction.
//
// percdb stores no events. A Database still implements GMS's interface for
// them, answering "none" to the reads and refusing the writes: once
// accounts are on, GMS wraps every database in a
// mysql_db.PrivilegedDatabase, which claims the interface and fails every
// call the wrapped database does not implement.
var (
	_ gsql.StoredProcedureDatabase = (*Database)(nil)
	_ gsql.EventDatabase           = (*Database)(nil)
)

// MySQL's errors for stored procedures.
const (
	codeProcedureExists       = 1304 // ER_SP_ALREADY_EXISTS
	codeProcedureDoesNotExist = 1305 // ER_SP_DOES_NOT_EXIST
	stateSyntax               = "42000"
)

// procedureToGMS returns procedure p as GMS reads it: its text one GMS's
// parser and planner accept (storedproc.GMSText; the interpreter and SHOW
// CREATE PROCEDURE read the text as written from it).
func procedureToGMS(p *catalog.ProcedureDef) gsql.StoredProcedureDetails {
	return gsql.StoredProcedureDetails{
		Name:            p.Name,
		CreateStatement: storedproc.GMSText(p.Create),
		CreatedAt:       p.CreatedAt,
		ModifiedAt:      p.ModifiedAt,
		SqlMode:         p.SQLMode,
	}
}

// GetStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) GetStoredProcedure(ctx *gsql.Context, name string) (gsql.StoredProcedureDetails, bool, error) {
	if fn, ok := isFunctionName(name); ok {
		return d.getFunction(ctx, fn)
	}
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return gsql.StoredProcedureDetails{}, false, err
	}
	p, ok := cat.Procedure(d.def.ID, name)
	if !ok {
		return gsql.StoredProcedureDetails{}, false, nil
	}
	return procedureToGMS(p), true, nil
}

// GetStoredProcedures implements sql.StoredProcedureDatabase: the
// database's procedures in name order.
func (d *Database) GetStoredProcedures(ctx *gsql.Context) ([]gsql.StoredProcedureDetails, error) {
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return nil, err
	}
	defs := cat.SortedProcedures(d.def.ID)
	out := make([]gsql.StoredProcedureDetails, len(defs))
	for i, p := range defs {
		out[i] = procedureToGMS(p)
	}
	return out, nil
}

// SaveStoredProcedure implements sql.StoredProcedureDatabase.
func (d *Database) SaveStoredProcedure(ctx *gsql.Context, spd gsql.StoredProcedureDetails) error {
	if _, ok := isFunctionName(spd.Name); ok {
		return d.saveFunction(ctx, spd)
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		if _, ok := c.Procedure(d.def.ID, spd.Name); ok {
			return mysql.NewSQLError(codeProcedureExists, stateSyntax, "PROCEDURE %s already exists", spd.Name)
		}
		p := &catalog.ProcedureDef{
			Name:       spd.Name,
			Create:     storedproc.Restore(spd.CreateStatement), // as written (parser.go)
			CreatedAt:  spd.CreatedAt,
			ModifiedAt: spd.ModifiedAt,
			SQLMode:    spd.SqlMode,
		}
		if err := catalog.PutJSON(k, catalog.ProcedureKey(d.def.ID, p.Name), p); err != nil {
			return err
		}
		c.PutProcedure(d.def.ID, p)
		return nil
	})
}

// DropStoredProcedure implements sql.StoredProcedureDatabase. A missing
// procedure is GMS's ErrStoredProcedureDoesNotExist, which GMS turns into
// success under DROP PROCEDURE IF EXISTS (with MySQL's note, added here)
// and which reaches the client as 1305 otherwise (errors.go).
func (d *Database) DropStoredProcedure(ctx *gsql.Context, name string) error {
	if fn, ok := isFunctionName(name); ok {
		return d.dropFunction(ctx, fn)
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		p, ok := c.Procedure(d.def.ID, name)
		if !ok {
			ctx.Session.Warn(&gsql.Warning{
				Level:   "Note",
				Code:    codeProcedureDoesNotExist,
				Message: fmt.Sprintf("PROCEDURE %s.%s does not exist", d.def.Name, name),
			})
			return gsql.ErrStoredProcedureDoesNotExist.New(name)
		}
		if err := k.Delete(catalog.ProcedureKey(d.def.ID, p.Name)); err != nil {
			return fmt.Errorf("drop procedure %q: %w", name, err)
		}
		delete(c.Procedures[d.def.ID], strings.ToLower(p.Name))
		return nil
	})
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

// DropEvent implements gsql.EventDatabase: there are none, so the event
// does not exist (GMS's DROP EVENT IF EXISTS notes it, 1305, and DROP
// EVENT fails with MySQL's 1539, errors.go), as MySQL answers for an
// event nobody created. The error of an unsupported feature was 1105
// for both.
func (d *Database) DropEvent(_ *gsql.Context, name string) error {
	return gsql.ErrEventDoesNotExist.New(name)
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
