package sql

import (
	"context"
	"github.com/percdb/percdb/sql/memtable"
	"strings"
	"sync"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS's planner asks for the session's current database in places where
// MySQL needs none, or where the database that matters is another one:
//
//   - A view is bound from its stored CREATE VIEW statement, after the
//     planner saved its current database (planbuilder's
//     bindOnlyWithDatabase), and the statement's view name is resolved in
//     the session's current database. With none selected, SELECT * FROM
//     db.v failed with 1105 "no database selected", whatever the view.
//   - RENAME TABLE renames in the current database, whatever database
//     its names carry: RENAME TABLE db.v TO db.v2 failed with 1046 with
//     no current database, and with another one renamed that database's
//     table of the same name, or failed with 1146.
//   - information_schema.VIEWS and COLUMNS bind each view's statement in
//     the session's current database rather than the view's: a view whose
//     statement names a table without its database was left out unless
//     its database was the current one.
//
// The session's planning databases (planDatabases) answer those
// questions: while one is set, Session.GetCurrentDatabase returns it. Each
// is set for exactly the planning step that needs it:
//
//   - a view: Database.GetViewDefinition offers the view's database when
//     the session has none; when the planner then parses that same stored
//     statement (through planParser), the database is pushed, and the
//     statement's view name is given viewEndMarker as its database. The
//     planner resolves that name as the last step of binding the view,
//     and the provider, asked for viewEndMarker, pops the view's database
//     and answers with it. Unqualified names outside the view still fail
//     with 1046.
//   - RENAME TABLE whose names all carry one database: that database, for
//     the statement (renames across databases fail with 1235).
//   - information_schema.VIEWS and COLUMNS: the database whose views GMS
//     asked for last (Database.AllViews), while GMS builds their rows.
//
// Whatever is left when a command ends (a view whose binding failed) is
// dropped in Session.CommandEnd.
type planDatabases struct {
	// active is set while stack is not empty, so that GetCurrentDatabase,
	// called for every statement, takes no lock otherwise.
	active atomic.Bool
	mu     sync.Mutex
	stack  []string
	// candidate is the view whose definition was handed out last while
	// the session had no current database.
	candidate viewCandidate
	// following is set while GMS builds the rows of information_schema
	// VIEWS or COLUMNS: AllViews then sets the top of the stack.
	following bool
	// handedOut is the stored statement of the view whose definition
	// was handed to the planner last (compat_viewcommit.go).
	handedOut string
}

// viewCandidate is a view definition handed to the planner.
type viewCandidate struct {
	db, stmt string
}

// Markers the planner is given as database names. A NUL byte cannot
// start a database name that reaches the provider otherwise.
const (
	// viewEndMarker is the database of a view's name in its stored
	// statement while the planner binds it.
	viewEndMarker = "\x00percdb view end"
	// renameAcrossMarker is the planning database of a RENAME TABLE
	// between databases.
	renameAcrossMarker = "\x00percdb rename across databases"
)

// top returns the planning database, if one is set.
func (p *planDatabases) top() (string, bool) {
	if !p.active.Load() {
		return "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.stack) == 0 || p.stack[len(p.stack)-1] == "" {
		return "", false
	}
	return p.stack[len(p.stack)-1], true
}

// push sets db as the planning database until the matching pop.
func (p *planDatabases) push(db string) {
	p.mu.Lock()
	p.stack = append(p.stack, db)
	p.active.Store(true)
	p.mu.Unlock()
}

// pop removes the planning database push set last and returns it.
func (p *planDatabases) pop() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.stack) == 0 {
		return "", false
	}
	db := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	p.active.Store(len(p.stack) > 0)
	return db, true
}

// offer records that the view definition stmt of database db was handed
// to the planner.
func (p *planDatabases) offer(db, stmt string) {
	p.mu.Lock()
	p.candidate = viewCandidate{db: db, stmt: stmt}
	p.mu.Unlock()
}

// take returns the database of the view offered last if its statement is
// stmt, and forgets it.
func (p *planDatabases) take(stmt string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.candidate
	if c.stmt == "" || c.stmt != stmt {
		return "", false
	}
	p.candidate = viewCandidate{}
	return c.db, true
}

// follow makes AllViews set the planning database while fn runs.
func (p *planDatabases) follow(fn func() error) error {
	p.mu.Lock()
	p.following = true
	p.stack = append(p.stack, "")
	p.active.Store(true)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.following = false
		p.mu.Unlock()
		p.pop()
	}()
	return fn()
}

// listing tells AllViews that it lists db's views for follow.
func (p *planDatabases) listing(db string) {
	p.mu.Lock()
	if p.following && len(p.stack) > 0 {
		p.stack[len(p.stack)-1] = db
	}
	p.mu.Unlock()
}

// reset forgets everything.
func (p *planDatabases) reset() {
	p.mu.Lock()
	p.stack, p.candidate, p.following, p.handedOut = nil, viewCandidate{}, false, ""
	p.active.Store(false)
	p.mu.Unlock()
}

// GetCurrentDatabase implements sql.Session: the planning database while
// one is set (see planDatabases), else the session's current database.
func (s *Session) GetCurrentDatabase() string {
	if db, ok := s.planDBs.top(); ok {
		return db
	}
	return s.BaseSession.GetCurrentDatabase()
}

// offerView is called by GetViewDefinition: the view's statement is
// about to be bound (compat_viewcommit.go), with no current database
// in the view's database (planDatabases).
func offerView(ctx *gsql.Context, db, stmt string) {
	s, ok := ctx.Session.(*Session)
	if ok {
		s.planDBs.handOut(stmt)
	}
	if ok && s.BaseSession.GetCurrentDatabase() == "" {
		s.planDBs.offer(db, stmt)
	}
}

// listingViews is called by AllViews (planDatabases.follow).
func listingViews(ctx *gsql.Context, db string) {
	if s, ok := ctx.Session.(*Session); ok {
		s.planDBs.listing(db)
	}
}

// planMarkerDatabase answers the provider's Database for the markers of
// planDatabases; ok is false for any other name.
func (p *DatabaseProvider) planMarkerDatabase(ctx *gsql.Context, name string) (db gsql.Database, ok bool, err error) {
	if name == "" || name[0] != 0 {
		return nil, false, nil
	}
	if d, ok := p.missingTablesDatabase(name); ok {
		return d, true, nil
	}
	switch name {
	case viewEndMarker:
		s, err := sessionOf(ctx)
		if err != nil {
			return nil, true, err
		}
		viewDB, found := s.planDBs.pop()
		if !found {
			return nil, true, gsql.ErrNoDatabaseSelected.New()
		}
		d, err := p.Database(ctx, viewDB)
		if err != nil {
			return nil, true, err
		}
		if pd, isPercdb := d.(*Database); isPercdb {
			return viewOwnerDB{pd}, true, nil
		}
		return d, true, nil
	case renameAcrossMarker:
		s, err := sessionOf(ctx)
		if err != nil {
			return nil, true, err
		}
		if s.renameAcross == nil || len(s.renameAcross.pairs) == 0 {
			return nil, true, gsql.ErrUnsupportedFeature.New("RENAME TABLE from one database to another here")
		}
		return renameAcrossDB{provider: p, first: s.renameAcross.pairs[0].fromDB}, true, nil
	case mysqlExtraMarker:
		return mysqlExtraDB{SystemDatabase: memtable.SystemDatabase{DBName: "mysql"}, grants: p.accounts}, true, nil
	case mysqlReloadMarker:
		s, err := sessionOf(ctx)
		if err != nil {
			return nil, true, err
		}
		return reloadDB{SystemDatabase: memtable.SystemDatabase{DBName: "mysql"}, s: s}, true, nil
	}
	return nil, false, nil
}

// viewOwnerDB is the database of a view, answered for viewEndMarker: its
// privileges are checked under its own name, not the marker's.
type viewOwnerDB struct{ *Database }

// AliasedName implements sql.AliasedDatabase.
func (d viewOwnerDB) AliasedName() string { return d.Name() }

// planParser is the parser GMS's engine uses (wrapping literalParser):
// it sets what GMS's planner needs before it binds a statement: the
// planning databases of a view's stored statement and of RENAME TABLE
// (planDatabases), and the types of TIME(n) columns (columnTypes,
// sql/compat/timefsp.go), and the tables of mysql that percdb serves
// (extraMysqlTables, mysqlextra.go), and the writes of grant tables
// (grantTableWrites, grantreload.go), and the missing tables of ANALYZE
// TABLE (markMissingAnalyzeTables, analyzemissing.go).
type planParser struct {
	gsql.Parser
}

// Parse implements sql.Parser.
func (p planParser) Parse(ctx *gsql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	stmt, q, rest, err := p.Parser.Parse(ctx, query, multi)
	if err == nil {
		planDatabaseOf(ctx, query, stmt)
		columnTypes(stmt)
		extraMysqlTables(ctx, query, stmt)
		grantTableWrites(ctx, query, stmt)
		markMissingAnalyzeTables(ctx, stmt)
	}
	return stmt, q, rest, err
}

// ParseWithOptions implements sql.Parser.
func (p planParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	stmt, q, rest, err := p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
	if err == nil {
		planDatabaseOf(ctx, query, stmt)
		columnTypes(stmt)
		extraMysqlTables(ctx, query, stmt)
		grantTableWrites(ctx, query, stmt)
		markMissingAnalyzeTables(ctx, stmt)
	}
	return stmt, q, rest, err
}

// ParseOneWithOptions implements sql.Parser.
func (p planParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	stmt, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
	if err == nil {
		planDatabaseOf(ctx, query, stmt)
		columnTypes(stmt)
		extraMysqlTables(ctx, query, stmt)
		grantTableWrites(ctx, query, stmt)
		markMissingAnalyzeTables(ctx, stmt)
	}
	return stmt, n, err
}

// planDatabaseOf sets the planning database stmt needs, if any.
func planDatabaseOf(ctx context.Context, query string, stmt ast.Statement) {
	sctx, ok := ctx.(*gsql.Context)
	if !ok {
		return
	}
	s, ok := sctx.Session.(*Session)
	if !ok {
		return
	}
	if ddl, ok := stmt.(*ast.DDL); ok && ddl.ViewSpec != nil {
		markStoredView(sctx, query, ddl)
		if db, ok := s.planDBs.take(query); ok {
			ddl.ViewSpec.ViewName.DbQualifier = ast.NewTableIdent(viewEndMarker)
			s.planDBs.push(db)
		}
		return
	}
	if rename, ok := renameOf(stmt); ok {
		s.planRename(rename)
	}
}

// renameOf returns the renames of a RENAME TABLE, or the rename clause of
// an ALTER TABLE ... RENAME [TO], which GMS plans as a RENAME TABLE, in
// its current database whatever the names say. GMS runs an ALTER TABLE's
// clauses in their order, each on the table by name, so a clause after
// the rename would find no table: MySQL's ALTER TABLE changes the table
// as one, so renameOf moves the rename last.
func renameOf(stmt ast.Statement) (*ast.DDL, bool) {
	switch st := stmt.(type) {
	case *ast.DDL:
		return st, st.Action == ast.RenameStr
	case *ast.AlterTable:
		var rename *ast.DDL
		kept := st.Statements[:0:0]
		for _, clause := range st.Statements {
			if clause.Action == ast.RenameStr && rename == nil {
				rename = clause
				continue
			}
			kept = append(kept, clause)
		}
		if rename != nil {
			st.Statements = append(kept, rename)
			return rename, true
		}
	}
	return nil, false
}

// planRename gives GMS's planner, for a RENAME TABLE, the database its
// names are in, or, for names in several, renameAcrossMarker and the
// session the renames with their databases (renameacross.go).
func (s *Session) planRename(ddl *ast.DDL) {
	current := s.BaseSession.GetCurrentDatabase()
	db := renameDatabase(ddl, current)
	if db == "" {
		return
	}
	if db == renameAcrossMarker {
		s.renameAcross = &renameAcross{pairs: renamePairs(ddl, current)}
	}
	s.planDBs.push(db)
}

// renameDatabase returns the database the names of a RENAME TABLE are in
// (current for names without one), renameAcrossMarker when they are in
// several, or "" when they are all in the current database or name none
// (GMS then does as it did).
func renameDatabase(ddl *ast.DDL, current string) string {
	db, across := "", false
	for _, names := range [][]ast.TableName{ddl.FromTables, ddl.ToTables} {
		for _, n := range names {
			d := n.DbQualifier.String()
			if d == "" {
				d = current
			}
			switch {
			case d == "":
				// No current database: GMS answers 1046.
				return ""
			case db == "":
				db = d
			case !strings.EqualFold(db, d):
				across = true
			}
		}
	}
	switch {
	case across:
		return renameAcrossMarker
	case strings.EqualFold(db, current):
		return ""
	}
	return db
}

// followViews runs read, which builds the rows of an information_schema
// table from views' statements, with each view's database as the planning
// one (planDatabases.follow).
func followViews(ctx *gsql.Context, read func() (gsql.RowIter, error)) (gsql.RowIter, error) {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return read()
	}
	var it gsql.RowIter
	err := s.planDBs.follow(func() (err error) {
		it, err = read()
		return err
	})
	return it, err
}

// viewsName is information_schema.VIEWS.
const viewsName = "VIEWS"

// viewsTable is GMS's information_schema.VIEWS, with each view's
// statement bound in its own database (followViews).
type viewsTable struct {
	gsql.Table
}

var _ gsql.CatalogTable = (*viewsTable)(nil)

// AssignCatalog implements sql.CatalogTable.
func (t *viewsTable) AssignCatalog(cat gsql.Catalog) gsql.Table {
	if c, ok := t.Table.(gsql.CatalogTable); ok {
		return &viewsTable{Table: c.AssignCatalog(cat)}
	}
	return t
}

// PartitionRows implements sql.Table.
func (t *viewsTable) PartitionRows(ctx *gsql.Context, p gsql.Partition) (gsql.RowIter, error) {
	return followViews(ctx, func() (gsql.RowIter, error) { return t.Table.PartitionRows(ctx, p) })
}
