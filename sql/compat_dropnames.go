package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// DROP TABLE and DROP VIEW of names that do not exist. MySQL 8
// (mysql_rm_table_no_locks, mysql_drop_view) names each missing one as
// 'db.name': with IF EXISTS a note 1051 "Unknown table 'db.t'" for each,
// in the statement's order (for a view too); without it error 1051
// "Unknown table 'db.t1,db.t2'" listing them all, and nothing is dropped.
// GMS's note named the table alone ('t'), it gave no note for a missing
// view, and its error was 1146 "table not found: t" (a view's "the view
// db.v does not exist").

// dropStatement is what beginDrop learned of a DROP TABLE or DROP VIEW.
type dropStatement struct {
	db       string
	names    []string // as written, in order
	view     bool
	ifExists bool
}

// beginDrop parses query when it is DROP TABLE or DROP VIEW and keeps
// what the statement's notes and errors need; any other statement costs
// a look at its first word.
func (s *Session) beginDrop(ctx context.Context, query string) {
	s.drop = nil
	if !lexical.LeadingWordIs(query, "drop") {
		return
	}
	stmt, err := ast.Parse(query)
	if err != nil {
		return
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.Action != ast.DropStr {
		return
	}
	list, view := ddl.FromTables, false
	if len(ddl.FromViews) > 0 {
		list, view = ddl.FromViews, true
	}
	if len(list) == 0 {
		return
	}
	d := &dropStatement{db: list[0].DbQualifier.String(), view: view, ifExists: ddl.IfExists}
	if d.db == "" {
		d.db = s.GetCurrentDatabase()
	}
	for _, t := range list {
		d.names = append(d.names, t.Name.String())
	}
	s.drop = d
}

// missingOf returns the names of d its database has no view of (views)
// or no table or view of.
func (s *Session) missingOf(ctx context.Context, d *dropStatement, views bool) []string {
	sctx := gsql.NewContext(ctx, gsql.WithSession(s))
	db, err := s.provider.Database(sctx, d.db)
	var missing []string
	for _, name := range d.names {
		found := false
		if err == nil {
			if !views {
				_, found, _ = db.GetTableInsensitive(sctx, name)
			}
			if vdb, ok := db.(gsql.ViewDatabase); ok && !found {
				_, found, _ = vdb.GetViewDefinition(sctx, name)
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing
}

// qualify returns the names as MySQL's messages write them.
func (d *dropStatement) qualify(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = d.db + "." + n
	}
	return strings.Join(q, ",")
}

// dropNote returns GMS's note 1051 of a DROP TABLE IF EXISTS with the
// table named as MySQL names it, or w.
func (s *Session) dropNote(w *gsql.Warning) *gsql.Warning {
	if s.drop == nil || w.Code != mysql.ERBadTable || w.Level != "Note" {
		return w
	}
	name, ok := strings.CutPrefix(w.Message, "Unknown table '")
	if !ok || !strings.HasSuffix(name, "'") || strings.Contains(name, ".") {
		return w
	}
	return &gsql.Warning{Level: w.Level, Code: w.Code, Message: fmt.Sprintf("Unknown table '%s.%s'", s.drop.db, strings.TrimSuffix(name, "'"))}
}

// missingViewNote raises the note of DROP VIEW IF EXISTS for view name
// of database db, which does not exist (Database.DropView).
func missingViewNote(ctx *gsql.Context, db, name string) {
	if s, ok := ctx.Session.(*Session); ok && s.drop != nil && s.drop.view && s.drop.ifExists {
		s.Warn(&gsql.Warning{Level: "Note", Code: mysql.ERBadTable, Message: fmt.Sprintf("Unknown table '%s.%s'", db, name)})
	}
}

// notViewError is MySQL's ER_WRONG_OBJECT for DROP VIEW [IF EXISTS] of
// db.name, a base table (mysql_drop_view): GMS found no view of that
// name and dropped nothing, without a word (or, with IF EXISTS, the note
// of a missing view).
func notViewError(db, name string) error {
	return mysql.NewSQLError(codeWrongObject, stateGeneral, "'%s.%s' is not VIEW", db, name)
}

// codeWrongObject is ER_WRONG_OBJECT.
const codeWrongObject = 1347

// endDrop finishes the DROP statement beginDrop saw, whose outcome is
// err: MySQL's error 1051 naming every missing table or view for GMS's
// 1146; on success the notes of the missing tables in the statement's
// order.
func (s *Session) endDrop(ctx context.Context, err error) error {
	d := s.drop
	if d == nil || err == nil {
		s.drop = nil
		if d != nil && d.ifExists && len(d.names) > 1 {
			s.orderDropNotes(d)
		}
		return err
	}
	s.drop = nil
	se, ok := err.(*mysql.SQLError)
	if !ok || se.Num != mysql.ERNoSuchTable {
		return err
	}
	missing := s.missingOf(ctx, d, d.view)
	if len(missing) == 0 {
		return err
	}
	return mysql.NewSQLError(mysql.ERBadTable, "42S02", "Unknown table '%s'", d.qualify(missing))
}

// orderDropNotes puts the notes 1051 of d, a DROP TABLE IF EXISTS that
// succeeded, in the order d names the tables, as MySQL raises them. GMS
// raised them while planning, in reverse (DROP TABLE IF EXISTS a, b
// noted b first).
func (s *Session) orderDropNotes(d *dropStatement) {
	ws := s.Warnings() // in the order raised
	pos := func(w *gsql.Warning) int {
		if w.Code != mysql.ERBadTable || w.Level != "Note" {
			return -1
		}
		for i, n := range d.names {
			if strings.EqualFold(w.Message, fmt.Sprintf("Unknown table '%s.%s'", d.db, n)) {
				return i
			}
		}
		return -1
	}
	var notes []*gsql.Warning
	for _, w := range ws {
		if pos(w) >= 0 {
			notes = append(notes, w)
		}
	}
	if len(notes) < 2 {
		return
	}
	slices.SortStableFunc(notes, func(a, b *gsql.Warning) int { return pos(a) - pos(b) })
	s.BaseSession.ClearWarnings()
	for _, w := range ws {
		if pos(w) >= 0 {
			w, notes = notes[0], notes[1:]
		}
		s.BaseSession.Warn(w)
	}
}
