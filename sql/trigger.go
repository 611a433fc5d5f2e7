package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/txn"
)

// GMS parses, plans and runs triggers itself (BEFORE/AFTER, INSERT/UPDATE/
// DELETE, FOLLOWS/PRECEDES, SHOW TRIGGERS, information_schema.TRIGGERS): a
// backend only keeps each trigger's CREATE TRIGGER statement, which GMS
// parses again whenever it plans a write to the database. percdb keeps them
// in the catalog, changed in the DDL's transaction like every other
// definition. Beyond storing them, percdb:
//   - refuses a second trigger of the same name in a database (1359), and
//     FOLLOWS or PRECEDES naming no trigger of the same table, time and
//     event (3011), which GMS leaves to the backend;
//   - answers DROP TRIGGER of a missing trigger with 1360, a note under IF
//     EXISTS;
//   - rewrites the table name in the statements of a renamed table's
//     triggers: GMS would otherwise look for the old table when it parses
//     them, and fail every write to the database;
//   - drops a database's triggers with the database (GMS drops a table's
//     triggers itself, by DropTrigger, after DROP TABLE);
//   - keeps the fast path off tables with triggers (fastpath.Resolve).

// MySQL's errors for triggers.
const (
	codeTriggerExists       = 1359 // ER_TRG_ALREADY_EXISTS
	codeTriggerDoesNotExist = 1360 // ER_TRG_DOES_NOT_EXIST
	msgTriggerExists        = "Trigger already exists"
	msgTriggerDoesNotExist  = "Trigger does not exist"
	// ER_REFERENCED_TRG_DOES_NOT_EXIST: FOLLOWS or PRECEDES names no
	// trigger of the same table, time and event.
	codeReferencedTriggerMissing = 3011
	msgReferencedTriggerMissing  = "Referenced trigger '%s' for the given action time and event type does not exist."
)

var _ gsql.TriggerDatabase = (*Database)(nil)

func triggerToGMS(t *catalog.TriggerDef) gsql.TriggerDefinition {
	return gsql.TriggerDefinition{
		Name:            t.Name,
		CreateStatement: t.Create,
		CreatedAt:       t.CreatedAt,
		SqlMode:         t.SQLMode,
	}
}

// GetTriggers implements sql.TriggerDatabase: the database's triggers in
// the order they were created.
//
// GMS parses a trigger's statement in the session's current database, so
// an unqualified table name would be looked up in the wrong one when the
// current database is another (a write to, or DROP TABLE of, db.t from
// elsewhere would fail with 1146 for every trigger of db). The statements
// are then handed out with the table qualified by this database.
func (d *Database) GetTriggers(ctx *gsql.Context) ([]gsql.TriggerDefinition, error) {
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return nil, err
	}
	defs := cat.SortedTriggers(d.def.ID)
	if len(defs) == 0 {
		return nil, nil
	}
	qualify := !strings.EqualFold(ctx.GetCurrentDatabase(), d.def.Name)
	out := make([]gsql.TriggerDefinition, len(defs))
	for i, t := range defs {
		out[i] = triggerToGMS(t)
		if qualify {
			if out[i].CreateStatement, err = retargetTrigger(t.Create, t.SQLMode, d.def.Name, t.Table); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// CreateTrigger implements sql.TriggerDatabase. GMS has checked the
// statement (the table exists in this database, NEW and OLD are used as
// the event allows) before it calls.
func (d *Database) CreateTrigger(ctx *gsql.Context, definition gsql.TriggerDefinition) error {
	spec, err := parseTrigger(ctx, definition.CreateStatement, definition.SqlMode)
	if err != nil {
		return err
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		if _, ok := c.Trigger(d.def.ID, definition.Name); ok {
			return mysql.NewSQLError(codeTriggerExists, stateGeneral, "%s", msgTriggerExists)
		}
		tdef, ok := c.Table(d.def.ID, spec.table)
		if !ok {
			return gsql.ErrTableNotFound.New(spec.table)
		}
		if spec.order != "" {
			// GMS accepts any name here, then panics at every write
			// to the table when it orders triggers by it.
			ref, ok := c.Trigger(d.def.ID, spec.order)
			if !ok || !strings.EqualFold(ref.Table, tdef.Name) || ref.Timing != spec.timing || ref.Event != spec.event {
				return mysql.NewSQLError(codeReferencedTriggerMissing, stateGeneral, msgReferencedTriggerMissing, spec.order)
			}
		}
		id, err := catalog.NextID(ctx, k)
		if err != nil {
			return err
		}
		return putTriggerDef(c, k, d.def.ID, &catalog.TriggerDef{
			ID:        id,
			Name:      definition.Name,
			Table:     tdef.Name,
			Timing:    spec.timing,
			Event:     spec.event,
			Create:    definition.CreateStatement,
			CreatedAt: definition.CreatedAt,
			SQLMode:   definition.SqlMode,
		})
	})
}

// DropTrigger implements sql.TriggerDatabase. A missing trigger is GMS's
// ErrTriggerDoesNotExist, which GMS turns into success under DROP TRIGGER
// IF EXISTS and which reaches the client as MySQL's 1360 otherwise
// (errors.go). The note MySQL gives under IF EXISTS is added here, where
// whether the statement said IF EXISTS is not known; after the error it
// is a note where MySQL lists the error itself.
func (d *Database) DropTrigger(ctx *gsql.Context, name string) error {
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		t, ok := c.Trigger(d.def.ID, name)
		if !ok {
			ctx.Session.Warn(&gsql.Warning{Level: "Note", Code: codeTriggerDoesNotExist, Message: msgTriggerDoesNotExist})
			return gsql.ErrTriggerDoesNotExist.New(name)
		}
		if err := k.Delete(catalog.TriggerKey(d.def.ID, t.Name)); err != nil {
			return fmt.Errorf("drop trigger %q: %w", name, err)
		}
		delete(c.Triggers[d.def.ID], strings.ToLower(t.Name))
		return nil
	})
}

// renameTableTriggers moves the triggers of table oldName of database dbID
// to newName: their statements name the new table.
func renameTableTriggers(c *catalog.Catalog, k *txn.Txn, dbID int64, oldName, newName string) error {
	for _, t := range c.SortedTriggers(dbID) {
		if !strings.EqualFold(t.Table, oldName) {
			continue
		}
		create, err := retargetTrigger(t.Create, t.SQLMode, "", newName)
		if err != nil {
			return fmt.Errorf("rename table %q: trigger %q: %w", oldName, t.Name, err)
		}
		n := *t
		n.Table, n.Create = newName, create
		if err := putTriggerDef(c, k, dbID, &n); err != nil {
			return err
		}
	}
	return nil
}

// putTriggerDef stores t in the transaction and in the catalog copy.
func putTriggerDef(c *catalog.Catalog, k *txn.Txn, dbID int64, t *catalog.TriggerDef) error {
	if err := catalog.PutJSON(k, catalog.TriggerKey(dbID, t.Name), t); err != nil {
		return err
	}
	c.PutTrigger(dbID, t)
	return nil
}

// parserOptions returns how statements stored under sqlMode parse.
func parserOptions(sqlMode string) sqlparser.ParserOptions {
	return gsql.NewSqlModeFromString(sqlMode).ParserOptions()
}

// triggerSpec is what a CREATE TRIGGER statement says besides its body.
type triggerSpec struct {
	// table is the name of the table the trigger is on; timing and event
	// are lower-case.
	table, timing, event string
	// order is the trigger named by FOLLOWS or PRECEDES, if any.
	order string
}

// parseTrigger parses a CREATE TRIGGER statement.
func parseTrigger(ctx context.Context, create, sqlMode string) (triggerSpec, error) {
	stmt, err := sqlparser.ParseWithOptions(ctx, create, parserOptions(sqlMode))
	if err != nil {
		return triggerSpec{}, fmt.Errorf("parse trigger %q: %w", create, err)
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.TriggerSpec == nil {
		return triggerSpec{}, gsql.ErrTriggerCreateStatementInvalid.New(create)
	}
	spec := triggerSpec{
		table:  ddl.Table.Name.String(),
		timing: strings.ToLower(ddl.TriggerSpec.Time),
		event:  strings.ToLower(ddl.TriggerSpec.Event),
	}
	if o := ddl.TriggerSpec.Order; o != nil {
		spec.order = o.OtherTriggerName
	}
	return spec, nil
}

// retargetTrigger returns the CREATE TRIGGER statement create with the
// table it is on renamed to table, and qualified by database db unless db
// is empty (then a qualifier written in the statement stays). The name
// follows the ON keyword (the first: the definer and the trigger name,
// before it, are identifiers or strings, never the keyword). The rest of
// the statement, the body included, is kept as written: MySQL does not
// rewrite a body's references either.
func retargetTrigger(create, sqlMode, db, table string) (string, error) {
	tk := sqlparser.NewStringTokenizer(create)
	if parserOptions(sqlMode).AnsiQuotes {
		tk = sqlparser.NewStringTokenizerForAnsiQuotes(create)
	}
	// The tokenizer reads one character ahead: a token ends one before
	// its Position.
	on := -1
	for on < 0 {
		switch typ, _ := tk.Scan(); typ {
		case 0, sqlparser.LEX_ERROR:
			return "", gsql.ErrTriggerCreateStatementInvalid.New(create)
		case sqlparser.ON:
			on = tk.Position - 1
		}
	}
	// The table name ends at nameEnd; a qualifier ends at dot.
	dot, nameEnd := -1, -1
	for {
		if typ, _ := tk.Scan(); typ != sqlparser.ID {
			return "", gsql.ErrTriggerCreateStatementInvalid.New(create)
		}
		nameEnd = tk.Position - 1
		if typ, _ := tk.Scan(); typ != '.' || dot >= 0 {
			break
		}
		dot = tk.Position - 1
	}
	var out string
	switch {
	case db != "":
		out = create[:on] + " " + quoteIdentifier(db) + "." + quoteIdentifier(table) + create[nameEnd:]
	case dot >= 0:
		start := dot
		for start < nameEnd && strings.IndexByte(" \t\r\n", create[start]) >= 0 {
			start++
		}
		out = create[:start] + quoteIdentifier(table) + create[nameEnd:]
	default:
		out = create[:on] + " " + quoteIdentifier(table) + create[nameEnd:]
	}
	got, err := parseTrigger(context.Background(), out, sqlMode)
	if err != nil || got.table != table {
		// Never hand out a statement that names another table.
		return "", gsql.ErrTriggerCreateStatementInvalid.New(out)
	}
	return out, nil
}

// quoteIdentifier quotes name with backquotes, which every sql_mode reads
// as an identifier.
func quoteIdentifier(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
