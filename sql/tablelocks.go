package sql

import (
	"context"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/perfschema"
	"github.com/percdb/percdb/sql/tablelock"
)

// Table locks: LOCK TABLES, UNLOCK TABLES and FLUSH TABLES WITH READ LOCK
// as MySQL runs them (package tablelock says how; it holds the node's
// locks, one tablelock.Manager per DatabaseProvider). This file is the
// session's side: which tables a statement reads and writes, from the
// parser's privilege annotations (the tables GMS checks privileges on),
// parsed again only while some session holds a lock (otherwise a
// statement pays one atomic load), and the statements that take and
// release the locks.

// Error codes and the variable of table locks.
const (
	codeNonUniqTable      = 1066 // ER_NONUNIQ_TABLE
	varLockWaitTimeoutMDL = "lock_wait_timeout"
)

// tableLocks are the table locks held on one SQL node, by session.
type tableLocks = tablelock.Manager

// mdlWaitTimeout returns the session's lock_wait_timeout, which bounds
// waits for table locks (MySQL's metadata locks).
func (s *Session) mdlWaitTimeout() time.Duration {
	const fallback = 31536000 * time.Second // MySQL's default
	v, err := s.GetSessionVariable(nil, varLockWaitTimeoutMDL)
	if err != nil {
		return fallback
	}
	switch n := v.(type) {
	case int64:
		if n > 0 {
			return time.Duration(n) * time.Second
		}
	case uint64:
		if n > 0 {
			return time.Duration(n) * time.Second
		}
	case int32:
		if n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return fallback
}

// admitStatement makes the statement that begins query wait for, or fail
// on, the table locks of the node (see above). It costs one atomic load
// while nobody holds a lock.
func (s *Session) admitStatement(ctx context.Context, query string) error {
	m := &s.provider.tableLocks
	if !m.Active() {
		return nil
	}
	stmt, _, err := ast.ParseOne(ctx, query)
	if err != nil {
		return nil // GMS reports it
	}
	uses, write := s.statementTableUses(stmt)
	if len(uses) == 0 && !write {
		return nil
	}
	return m.Admit(ctx, s.ID(), uses, write, s.mdlWaitTimeout())
}

// statementTableUses returns the tables stmt reads and writes, and
// whether it writes at all (a DML statement or DDL), from the parser's
// privilege annotations. Tables exempt from LOCK TABLES are left out.
func (s *Session) statementTableUses(stmt ast.Statement) (uses []tablelock.Use, write bool) {
	switch stmt.(type) {
	case *ast.Insert, *ast.Update, *ast.Delete, *ast.Load, *ast.DDL, *ast.AlterTable, *ast.DBDDL:
		write = true
	case *ast.LockTables, *ast.UnlockTables:
		return nil, false
	}
	cur := strings.ToLower(s.GetCurrentDatabase())
	add := func(db, name, alias string, w bool) {
		db, name, alias = strings.ToLower(db), strings.ToLower(name), strings.ToLower(alias)
		if db == "" {
			db = cur
		}
		if alias == "" {
			alias = name
		}
		if db == "" || name == "" || db == "information_schema" || perfschema.IsDatabase(db) || s.temps.get(db, name) != nil {
			return
		}
		uses = append(uses, tablelock.Use{DB: db, Name: name, Alias: alias, Write: w})
	}
	written := writtenNames(stmt)
	ast.WalkAuthNodes(stmt, func(n ast.AuthNode, a ast.AuthInformation) {
		var w bool
		switch a.AuthType {
		case ast.AuthType_SELECT:
		case ast.AuthType_INSERT, ast.AuthType_REPLACE, ast.AuthType_UPDATE, ast.AuthType_DELETE,
			ast.AuthType_DROP, ast.AuthType_ALTER, ast.AuthType_INDEX:
			w = true
		default:
			return
		}
		if a.TargetType != ast.AuthTargetType_SingleTableIdentifier && a.TargetType != ast.AuthTargetType_MultipleTableIdentifiers {
			return
		}
		alias := ""
		if t, ok := n.(*ast.AliasedTableExpr); ok {
			alias = t.As.String()
		}
		for i := 0; i+1 < len(a.TargetNames); i += 2 {
			db, name := a.TargetNames[i], a.TargetNames[i+1]
			used := alias
			if used == "" {
				used = name
			}
			ww := w
			if w && written != nil {
				_, ww = written[strings.ToLower(used)]
			}
			add(db, name, alias, ww)
		}
	})
	switch st := stmt.(type) {
	case *ast.Load:
		add(st.Table.DbQualifier.String(), st.Table.Name.String(), "", true)
	case *ast.DDL:
		if st.Action == ast.RenameStr {
			for _, t := range st.FromTables {
				add(t.DbQualifier.String(), t.Name.String(), "", true)
			}
		}
	}
	return uses, write
}

// writtenNames returns the names (aliases, or table names) of the tables
// a multiple-table UPDATE or DELETE writes, lower-cased, or nil when it
// writes every table it names: a DELETE's targets, an UPDATE's tables
// whose columns its SET qualifies (every table when a column is not
// qualified).
func writtenNames(stmt ast.Statement) map[string]struct{} {
	names := make(map[string]struct{})
	switch st := stmt.(type) {
	case *ast.Delete:
		if len(st.Targets) == 0 {
			return nil
		}
		for _, t := range st.Targets {
			names[strings.ToLower(t.Name.String())] = struct{}{}
		}
	case *ast.Update:
		if len(st.TableExprs) == 1 {
			if _, ok := st.TableExprs[0].(*ast.AliasedTableExpr); ok {
				return nil
			}
		}
		for _, e := range st.Exprs {
			q := e.Name.Qualifier.Name.String()
			if q == "" {
				return nil
			}
			names[strings.ToLower(q)] = struct{}{}
		}
	default:
		return nil
	}
	return names
}

// lockTablesStatement runs LOCK TABLES for ctx's session.
func lockTablesStatement(ctx *gsql.Context) error {
	s, err := sessionOf(ctx)
	if err != nil {
		return err
	}
	stmt, _, err := ast.ParseOne(ctx, ctx.Query())
	if err != nil {
		return err
	}
	lt, ok := stmt.(*ast.LockTables)
	if !ok {
		return nil
	}
	cur := strings.ToLower(s.GetCurrentDatabase())
	locks := make([]tablelock.Use, 0, len(lt.Tables))
	for _, e := range lt.Tables {
		at, ok := e.Table.(*ast.AliasedTableExpr)
		if !ok {
			continue
		}
		tn, ok := at.Expr.(ast.TableName)
		if !ok {
			continue
		}
		l := tablelock.Use{
			DB:    strings.ToLower(tn.DbQualifier.String()),
			Name:  strings.ToLower(tn.Name.String()),
			Alias: strings.ToLower(at.As.String()),
			Write: e.Lock == ast.LockWrite || e.Lock == ast.LockLowPriorityWrite,
		}
		if l.DB == "" {
			l.DB = cur
		}
		if l.Alias == "" {
			l.Alias = l.Name
		}
		for _, o := range locks {
			if o.Alias == l.Alias && o.DB == l.DB {
				return mysql.NewSQLError(codeNonUniqTable, "42000", "Not unique table/alias: '%s'", l.Alias)
			}
		}
		locks = append(locks, l)
	}
	return s.provider.tableLocks.Lock(ctx, s.ID(), locks, s.mdlWaitTimeout())
}

// flushStatement runs for session s the FLUSH statements GMS does not
// run: FLUSH TABLES [t, …] WITH READ LOCK (GMS: a statement that does
// nothing), which takes the global read lock or READ locks on the tables
// named, and FLUSH STATUS (GMS: 1105), which resets the session's status
// counters (flushStatus). It reports whether query was one of them.
// Before FLUSH PRIVILEGES, which GMS runs, the grant tables a reload
// staged are applied (applyReload).
func (s *Session) flushStatement(ctx context.Context, query string) (bool, error) {
	if !lexical.LeadingWordIs(query, "flush") {
		return false, nil
	}
	stmt, _, err := ast.ParseOne(ctx, query)
	if err != nil {
		return false, nil
	}
	f, ok := stmt.(*ast.Flush)
	if !ok || f.Option == nil {
		return false, nil
	}
	if strings.EqualFold(f.Option.Name, "status") {
		s.flushStatus()
		return true, nil
	}
	if strings.EqualFold(f.Option.Name, "privileges") {
		// The grant tables a reload staged take effect before GMS's
		// FLUSH PRIVILEGES runs (grantreload.go).
		return false, s.applyReload(ctx)
	}
	if !f.Option.ReadLock {
		return false, nil
	}
	m := &s.provider.tableLocks
	if len(f.Option.Tables) == 0 {
		return true, m.LockGlobal(ctx, s.ID(), s.mdlWaitTimeout())
	}
	cur := strings.ToLower(s.GetCurrentDatabase())
	locks := make([]tablelock.Use, 0, len(f.Option.Tables))
	for _, t := range f.Option.Tables {
		l := tablelock.Use{DB: strings.ToLower(t.DbQualifier.String()), Name: strings.ToLower(t.Name.String())}
		if l.DB == "" {
			l.DB = cur
		}
		l.Alias = l.Name
		locks = append(locks, l)
	}
	return true, m.Lock(ctx, s.ID(), locks, s.mdlWaitTimeout())
}
