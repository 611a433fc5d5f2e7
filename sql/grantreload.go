package sql

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/memtable"
)

// Reloading a dump of the mysql database (mariadb-dump --all-databases,
// mysqldump --all-databases). The dump writes each grant table as
//
//	DROP TABLE IF EXISTS `user`; CREATE TABLE `user` (...);
//	LOCK TABLES `user` WRITE; INSERT INTO `user` VALUES (...), ...;
//	UNLOCK TABLES;
//
// and the log tables as CREATE TABLE IF NOT EXISTS `general_log` (...).
// MySQL drops and creates the tables and fills them; the server's
// in-memory accounts stay as they were until FLUSH PRIVILEGES (the dump
// writes it with --flush-privileges) or a restart. GMS's mysql database
// is its in-memory accounts: a fixed set of tables (mysql_db.MySQLDb)
// that cannot be dropped or created (1105), whose rows are the accounts
// themselves, and whose db, tables_priv and procs_priv rows can only be
// added to an account that exists (the dump writes db before user).
// percdb therefore:
//   - runs DROP TABLE and CREATE TABLE of a table of mysql it serves
//     (GMS's and mysqlExtraTables) as statements that keep the table:
//     DROP marks it dropped for the session, CREATE after it succeeds
//     and keeps the dump's column names; CREATE of a table not dropped
//     is MySQL's 1050, a note with IF NOT EXISTS, as MySQL answers for
//     a table that exists; DROP of one already dropped is 1051, a note
//     with IF EXISTS;
//   - for the grant tables (user, db, tables_priv, procs_priv,
//     role_edges), DROP begins the table's replacement: the INSERTs that
//     follow go to a table of the session's (stagedTable, through the
//     marker database mysqlReloadMarker), which checks each row as GMS
//     would take it, and the accounts stay as they are, so that the
//     session keeps its privileges while it loads;
//   - the staged tables replace the accounts' contents together
//     (applyReload): at UNLOCK TABLES, which ends each table of the
//     dump, at FLUSH PRIVILEGES and at the end of the session. A row of
//     db, tables_priv, procs_priv or role_edges whose account is not
//     there yet is kept and added at a later one, once the dump's user
//     rows are in; rows still without an account when the session ends
//     are dropped (MySQL keeps such rows in its table and ignores them).
//
// The new accounts take effect when they are applied, not at FLUSH
// PRIVILEGES, and a SELECT from a grant table in the middle of a reload
// reads the accounts in force (docs/compatibility.md). Until they are
// applied the staged rows live in the session only: a crash loses them,
// as a crash in the middle of the reload of any table loses its rows.

// mysqlReloadMarker is the database name the parser gives a grant table
// an INSERT writes while the session replaces it (stagedMysqlInserts);
// the provider answers it with the session's reloadDB.
const mysqlReloadMarker = "\x00percdb mysql reload"

// codeTableAccessDenied is MySQL's ER_TABLEACCESS_DENIED_ERROR.
const codeTableAccessDenied = 1142

// reloadOrder are the grant tables a reload replaces, in the order they
// are applied: the accounts first, then what hangs on them.
var reloadOrder = []string{"user", "db", "tables_priv", "procs_priv", "role_edges"}

// reloadable reports whether name (lower case) is one of reloadOrder.
func reloadable(name string) bool {
	for _, n := range reloadOrder {
		if n == name {
			return true
		}
	}
	return false
}

// grantReload is a session's reload of mysql tables. It belongs to its
// session; mu guards it because GMS may run a statement's row iterators
// in goroutines of their own.
type grantReload struct {
	mu sync.Mutex
	// dropped are the tables DROP TABLE dropped and no CREATE TABLE
	// created again, by lower-case name.
	dropped map[string]bool
	// staged are the grant tables being replaced, with the rows
	// inserted since their DROP.
	staged map[string]*stagedTable
	// columns are the column names of the dump's CREATE TABLE of each
	// table, for its INSERTs without a column list.
	columns map[string][]string
	// pending are rows of a privilege table whose account was not there
	// when they were applied, by table.
	pending map[string][]gsql.Row
	// inPlace are the staged tables that are copies of grant tables the
	// running statement writes in place (writesGrantTables).
	inPlace map[string]bool
}

// active reports whether the session replaces any grant table or holds
// rows waiting for their accounts.
func (r *grantReload) active() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.staged) > 0 || len(r.pending) > 0
}

// stagedTableFor returns the table staging name's rows, nil when name is
// not being replaced.
func (r *grantReload) stagedTableFor(name string) *stagedTable {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.staged[strings.ToLower(name)]
}

// mysqlTableDDL reports whether query is a DROP TABLE or CREATE TABLE of
// tables of mysql percdb serves, and runs it for c's session (see
// above).
func (h *handler) mysqlTableDDL(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (bool, error) {
	if !lexical.LeadingWordIs(query, "drop") && !lexical.LeadingWordIs(query, "create") && !lexical.LeadingWordIs(query, "alter") {
		return false, nil
	}
	s := h.sessions.get(c.ConnectionID)
	if s == nil || h.accounts == nil || !h.accounts.Enabled() {
		return false, nil
	}
	cur := s.GetCurrentDatabase()
	if indexFold(query, "mysql") < 0 && !strings.EqualFold(cur, "mysql") {
		return false, nil
	}
	stmt, _, err := ast.ParseOne(ctx, query)
	if err != nil {
		return false, nil
	}
	sctx := gsql.NewContext(ctx, gsql.WithSession(s))
	if alter, ok := stmt.(*ast.AlterTable); ok {
		return h.mysqlTableKeys(sctx, cur, alter, cb)
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.Temporary {
		return false, nil
	}
	switch {
	case ddl.Action == ast.DropStr && len(ddl.FromTables) > 0 && len(ddl.FromViews) == 0:
		names, ok := h.servedMysqlTables(sctx, cur, ddl.FromTables...)
		if !ok {
			return false, nil
		}
		if err := h.mayChangeMysqlTables(sctx, s, "DROP", names); err != nil {
			return true, err
		}
		if err := s.reload.drop(sctx, h.accounts, names, ddl.IfExists); err != nil {
			return true, err
		}
	case ddl.Action == ast.CreateStr && ddl.TableSpec != nil && ddl.OptLike == nil && ddl.OptSelect == nil:
		names, ok := h.servedMysqlTables(sctx, cur, ddl.Table)
		if !ok {
			return false, nil
		}
		if err := h.mayChangeMysqlTables(sctx, s, "CREATE", names); err != nil {
			return true, err
		}
		cols := make([]string, len(ddl.TableSpec.Columns))
		for i, col := range ddl.TableSpec.Columns {
			cols[i] = col.Name.String()
		}
		if err := s.reload.create(sctx, names[0], cols, ddl.IfNotExists); err != nil {
			return true, err
		}
	default:
		return false, nil
	}
	return true, cb(&sqltypes.Result{}, false)
}

// mysqlTableKeys runs ALTER TABLE ... DISABLE KEYS and ENABLE KEYS of a
// table of mysql percdb serves, which dumps write around each table's
// INSERTs: they change nothing, with MySQL's note 1031 for an InnoDB
// table. GMS answered 1105 (the table is not indexable). It reports
// whether alter was one.
func (h *handler) mysqlTableKeys(ctx *gsql.Context, cur string, alter *ast.AlterTable, cb mysql.ResultSpoolFn) (bool, error) {
	if len(alter.Statements) == 0 {
		return false, nil
	}
	for _, st := range alter.Statements {
		if st.IndexSpec == nil || (!strings.EqualFold(st.IndexSpec.Action, "disable") && !strings.EqualFold(st.IndexSpec.Action, "enable")) {
			return false, nil
		}
	}
	names, ok := h.servedMysqlTables(ctx, cur, alter.Table)
	if !ok {
		return false, nil
	}
	ctx.Session.Warn(&gsql.Warning{Level: "Note", Code: codeIllegalHaOption, Message: fmt.Sprintf("Table storage engine for '%s' doesn't have this option", names[0])})
	return true, cb(&sqltypes.Result{}, false)
}

// codeIllegalHaOption is MySQL's ER_ILLEGAL_HA.
const codeIllegalHaOption = 1031

// servedMysqlTables returns the lower-case names of tables, each of which
// must be a table of mysql percdb serves (GMS's or mysqlExtraTables), cur
// being the session's current database; ok is false otherwise.
func (h *handler) servedMysqlTables(ctx *gsql.Context, cur string, tables ...ast.TableName) ([]string, bool) {
	names := make([]string, 0, len(tables))
	for _, tn := range tables {
		db := tn.DbQualifier.String()
		if db == "" {
			db = cur
		}
		name := strings.ToLower(tn.Name.String())
		if !strings.EqualFold(db, "mysql") {
			return nil, false
		}
		if _, ok, _ := h.accounts.GetTableInsensitive(ctx, name); !ok && mysqlExtraTables[name] == nil {
			return nil, false
		}
		names = append(names, name)
	}
	return names, true
}

// mayChangeMysqlTables checks that s's account holds privilege verb
// (DROP or CREATE) on each of tables of mysql: MySQL's 1142 otherwise.
func (h *handler) mayChangeMysqlTables(ctx *gsql.Context, s *Session, verb string, tables []string) error {
	p := gsql.PrivilegeType_Drop
	if verb == "CREATE" {
		p = gsql.PrivilegeType_Create
	}
	ps := h.accounts.UserActivePrivilegeSet(ctx)
	for _, t := range tables {
		if ps.Has(p) || ps.Database("mysql").Has(p) || ps.Database("mysql").Table(t).Has(p) {
			continue
		}
		client := s.Client()
		return mysql.NewSQLError(codeTableAccessDenied, "42000", "%s command denied to user '%s'@'%s' for table '%s'", verb, client.User, client.Address, t)
	}
	return nil
}

// drop runs DROP TABLE of names, tables of mysql percdb serves.
func (r *grantReload) drop(ctx *gsql.Context, accounts *mysql_db.MySQLDb, names []string, ifExists bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var unknown []string
	for _, n := range names {
		if r.dropped[n] {
			unknown = append(unknown, "mysql."+n)
		}
	}
	if len(unknown) > 0 && !ifExists {
		return mysql.NewSQLError(mysql.ERBadTable, "42S02", "Unknown table '%s'", strings.Join(unknown, ","))
	}
	for _, u := range unknown {
		ctx.Session.Warn(&gsql.Warning{Level: "Note", Code: mysql.ERBadTable, Message: fmt.Sprintf("Unknown table '%s'", u)})
	}
	for _, n := range names {
		if r.dropped == nil {
			r.dropped = map[string]bool{}
		}
		r.dropped[n] = true
		delete(r.columns, n)
		if !reloadable(n) {
			continue
		}
		t, _, err := accounts.GetTableInsensitive(ctx, n)
		if err != nil {
			return fmt.Errorf("drop table mysql.%s: %w", n, err)
		}
		if r.staged == nil {
			r.staged = map[string]*stagedTable{}
		}
		r.staged[n] = newStagedTable(n, t.Schema())
	}
	return nil
}

// create runs CREATE TABLE of name, a table of mysql percdb serves, with
// the columns cols.
func (r *grantReload) create(ctx *gsql.Context, name string, cols []string, ifNotExists bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.dropped[name] {
		if !ifNotExists {
			return mysql.NewSQLError(mysql.ERTableExists, "42S01", "Table '%s' already exists", name)
		}
		ctx.Session.Warn(&gsql.Warning{Level: "Note", Code: mysql.ERTableExists, Message: fmt.Sprintf("Table '%s' already exists", name)})
		return nil
	}
	delete(r.dropped, name)
	if r.columns == nil {
		r.columns = map[string][]string{}
	}
	r.columns[name] = cols
	return nil
}

// grantTableWrites points the grant tables an INSERT, UPDATE or DELETE
// writes at staged tables (stagedMysqlInserts, writesGrantTables). A
// statement whose text does not name mysql, run outside it, is not
// looked at further: this runs for every statement GMS parses.
func grantTableWrites(ctx context.Context, query string, stmt ast.Statement) {
	switch stmt.(type) {
	case *ast.Insert, *ast.Update, *ast.Delete:
	default:
		return
	}
	if indexFold(query, "mysql") < 0 && !strings.EqualFold(currentDatabase(ctx), "mysql") {
		return
	}
	stagedMysqlInserts(ctx, stmt)
	writesGrantTables(ctx, stmt)
}

// writesGrantTables runs stmt, an INSERT, UPDATE or DELETE naming a
// grant table in place (not one a reload replaces), on copies of the
// grant tables it names: the parser points them at staged tables filled
// with the tables' rows, and the handler applies those as a reload's
// (applyReload) when the statement succeeds, and stores the accounts
// (persistGrantWrites). GMS wrote its grant tables itself, which went
// wrong in two ways: an UPDATE of mysql.user rebuilt the account from the
// row alone and left the old one beside it, with the account's database
// and table privileges on one of them only (two rows for the account,
// and a later write of mysql.db failed with 1105); and GMS stored the
// accounts only at its next account statement (CREATE USER, GRANT, FLUSH
// PRIVILEGES, ...), so a restart before one lost the change.
func writesGrantTables(ctx context.Context, stmt ast.Statement) {
	var exprs ast.TableExprs
	var insert *ast.Insert
	switch st := stmt.(type) {
	case *ast.Insert:
		insert = st
		exprs = ast.TableExprs{&ast.AliasedTableExpr{Expr: st.Table}}
	case *ast.Update:
		exprs = st.TableExprs
	case *ast.Delete:
		exprs = st.TableExprs
	default:
		return
	}
	s, sctx, ok := parsingSession(ctx)
	if !ok || s.provider.accounts == nil {
		return
	}
	cur := s.GetCurrentDatabase()
	grantTable := func(tn ast.TableName) (string, bool) {
		db := tn.DbQualifier.String()
		if db == "" {
			db = cur
		}
		name := strings.ToLower(tn.Name.String())
		return name, strings.EqualFold(db, "mysql") && reloadable(name)
	}
	var named []*ast.AliasedTableExpr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if at, ok := node.(*ast.AliasedTableExpr); ok {
			if tn, ok := at.Expr.(ast.TableName); ok {
				if _, ok := grantTable(tn); ok {
					named = append(named, at)
				}
			}
		}
		return true, nil
	}, exprs)
	if len(named) == 0 {
		return
	}
	r := &s.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, at := range named {
		tn := at.Expr.(ast.TableName)
		name, _ := grantTable(tn)
		if _, ok := r.staged[name]; !ok || r.inPlace[name] {
			t, ok, err := s.provider.accounts.GetTableInsensitive(sctx, name)
			if err != nil || !ok {
				return
			}
			st := newStagedTable(name, t.Schema())
			if st.rows, err = grantTableRows(sctx, t); err != nil {
				return
			}
			if r.staged == nil {
				r.staged = map[string]*stagedTable{}
			}
			if r.inPlace == nil {
				r.inPlace = map[string]bool{}
			}
			r.staged[name], r.inPlace[name] = st, true
		}
		// Column references keep the table's name.
		if at.As.IsEmpty() {
			at.As = ast.NewTableIdent(tn.Name.String())
		}
		tn.DbQualifier = ast.NewTableIdent(mysqlReloadMarker)
		at.Expr = tn
	}
	if insert != nil {
		insert.Table = exprs[0].(*ast.AliasedTableExpr).Expr.(ast.TableName)
	}
}

// grantTableRows returns the rows of t.
func grantTableRows(ctx *gsql.Context, t gsql.Table) ([]gsql.Row, error) {
	parts, err := t.Partitions(ctx)
	if err != nil {
		return nil, err
	}
	defer parts.Close(ctx)
	var rows []gsql.Row
	for {
		p, err := parts.Next(ctx)
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		iter, err := t.PartitionRows(ctx, p)
		if err != nil {
			return nil, err
		}
		for {
			row, err := iter.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				_ = iter.Close(ctx)
				return nil, err
			}
			rows = append(rows, row)
		}
		if err := iter.Close(ctx); err != nil {
			return nil, err
		}
	}
}

// persistGrantWrites ends a statement that wrote grant tables in place
// (writesGrantTables): when it succeeded, their copies replace them and
// the accounts are stored; when it failed, the copies go.
func (s *Session) persistGrantWrites(ctx context.Context, failed bool) error {
	r := &s.reload
	r.mu.Lock()
	if len(r.inPlace) == 0 {
		r.mu.Unlock()
		return nil
	}
	tables := make([]string, 0, len(r.inPlace))
	for n := range r.inPlace {
		tables = append(tables, n)
	}
	r.mu.Unlock()
	if failed {
		r.mu.Lock()
		for _, n := range tables {
			delete(r.staged, n)
		}
		r.inPlace = nil
		r.mu.Unlock()
		return nil
	}
	return s.applyTables(ctx, tables)
}

// parsingSession returns the percdb session of ctx, the context GMS
// parses a statement with; ok is false when it has none.
func parsingSession(ctx context.Context) (s *Session, sctx *gsql.Context, ok bool) {
	if sctx, ok = ctx.(*gsql.Context); !ok {
		return nil, nil, false
	}
	s, ok = sctx.Session.(*Session)
	return s, sctx, ok
}

// stagedMysqlInserts points an INSERT (or REPLACE) into a grant table
// the session replaces at the session's staged table, and gives one
// without a column list the columns of the dump's CREATE TABLE, leaving
// out the values of columns percdb's table does not have (a dump of
// another server's mysql database).
func stagedMysqlInserts(ctx context.Context, stmt ast.Statement) {
	ins, ok := stmt.(*ast.Insert)
	if !ok {
		return
	}
	s, _, ok := parsingSession(ctx)
	if !ok || !s.reload.active() {
		return
	}
	db := ins.Table.DbQualifier.String()
	if db == "" {
		db = s.GetCurrentDatabase()
	}
	if !strings.EqualFold(db, "mysql") {
		return
	}
	name := strings.ToLower(ins.Table.Name.String())
	t := s.reload.stagedTableFor(name)
	if t == nil {
		return
	}
	ins.Table.DbQualifier = ast.NewTableIdent(mysqlReloadMarker)
	if len(ins.Columns) > 0 {
		return
	}
	s.reload.mu.Lock()
	cols := s.reload.columns[name]
	s.reload.mu.Unlock()
	if len(cols) == 0 {
		return
	}
	keep := make([]int, 0, len(cols))
	for i, c := range cols {
		if t.schema.IndexOfColName(c) >= 0 {
			keep = append(keep, i)
		}
	}
	values, ok := ins.Rows.(ast.Values)
	if len(keep) < len(cols) {
		if !ok {
			return
		}
		for _, tuple := range values {
			if len(tuple) != len(cols) {
				return // GMS answers the count that does not match
			}
		}
		for i, tuple := range values {
			kept := make(ast.ValTuple, len(keep))
			for j, k := range keep {
				kept[j] = tuple[k]
			}
			values[i] = kept
		}
	}
	ins.Columns = make(ast.Columns, len(keep))
	for j, k := range keep {
		ins.Columns[j] = ast.NewColIdent(cols[k])
	}
}

// reloadDB is the database of a session's staged tables, answered for
// mysqlReloadMarker; privileges are checked as on mysql (AliasedName).
type reloadDB struct {
	memtable.SystemDatabase
	s *Session
}

// Name implements sql.Database.
func (reloadDB) Name() string { return mysqlReloadMarker }

// AliasedName implements sql.AliasedDatabase.
func (reloadDB) AliasedName() string { return "mysql" }

// GetTableInsensitive implements sql.Database.
func (d reloadDB) GetTableInsensitive(_ *gsql.Context, name string) (gsql.Table, bool, error) {
	t := d.s.reload.stagedTableFor(name)
	return t, t != nil, nil
}

// GetTableNames implements sql.Database.
func (d reloadDB) GetTableNames(*gsql.Context) ([]string, error) {
	d.s.reload.mu.Lock()
	defer d.s.reload.mu.Unlock()
	names := make([]string, 0, len(d.s.reload.staged))
	for n := range d.s.reload.staged {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// stagedTable holds the rows a reload inserts into a grant table, in the
// grant table's schema, until they are applied. Its primary key is the
// grant table's.
type stagedTable struct {
	name   string
	schema gsql.Schema
	// pk are the positions of the primary key's columns.
	pk []int
	mu sync.Mutex
	// rows are the rows inserted, in order.
	rows []gsql.Row
}

var (
	_ gsql.InsertableTable  = (*stagedTable)(nil)
	_ gsql.ReplaceableTable = (*stagedTable)(nil)
	_ gsql.UpdatableTable   = (*stagedTable)(nil)
	_ gsql.DeletableTable   = (*stagedTable)(nil)
)

// newStagedTable returns an empty staged table of grant table name.
func newStagedTable(name string, sch gsql.Schema) *stagedTable {
	sch = sch.Copy()
	t := &stagedTable{name: name, schema: sch}
	for i, c := range sch {
		c.Source = name
		c.DatabaseSource = "mysql"
		if c.PrimaryKey {
			t.pk = append(t.pk, i)
		}
	}
	return t
}

// Name implements sql.Nameable.
func (t *stagedTable) Name() string { return t.name }

// String implements fmt.Stringer.
func (t *stagedTable) String() string { return t.name }

// Schema implements sql.Table.
func (t *stagedTable) Schema() gsql.Schema { return t.schema }

// Collation implements sql.Table.
func (*stagedTable) Collation() gsql.CollationID { return gsql.Collation_utf8mb3_bin }

// Partitions implements sql.Table: one partition.
func (*stagedTable) Partitions(*gsql.Context) (gsql.PartitionIter, error) {
	return gsql.PartitionsToPartitionIter(memtable.Partition{}), nil
}

// PartitionRows implements sql.Table: the rows staged so far.
func (t *stagedTable) PartitionRows(*gsql.Context, gsql.Partition) (gsql.RowIter, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return gsql.RowsToRowIter(append([]gsql.Row(nil), t.rows...)...), nil
}

// Inserter implements sql.InsertableTable.
func (t *stagedTable) Inserter(*gsql.Context) gsql.RowInserter { return &stagedEditor{t: t} }

// Replacer implements sql.ReplaceableTable.
func (t *stagedTable) Replacer(*gsql.Context) gsql.RowReplacer { return &stagedEditor{t: t} }

// Updater implements sql.UpdatableTable.
func (t *stagedTable) Updater(*gsql.Context) gsql.RowUpdater { return &stagedEditor{t: t} }

// Deleter implements sql.DeletableTable.
func (t *stagedTable) Deleter(*gsql.Context) gsql.RowDeleter { return &stagedEditor{t: t} }

// key returns row's primary key, as the text of its values.
func (t *stagedTable) key(row gsql.Row) string {
	var b strings.Builder
	for _, i := range t.pk {
		fmt.Fprintf(&b, "%v\x00", row[i])
	}
	return b.String()
}

// checkRow returns the error GMS's grant table would give row.
func (t *stagedTable) checkRow(ctx *gsql.Context, row gsql.Row) error {
	var err error
	switch t.name {
	case "user":
		_, err = mysql_db.UserFromRow(ctx, row)
	case "db":
		_, err = mysql_db.UserFromDBRow(ctx, row)
	case "tables_priv":
		_, err = mysql_db.UserFromTablesRow(ctx, row)
	case "procs_priv":
		_, err = mysql_db.UserFromProcsPrivRow(ctx, row)
	case "role_edges":
		_, err = mysql_db.RoleEdgeFromRow(ctx, row)
	}
	return err
}

// stagedEditor inserts into and deletes from a staged table. Rows are
// staged as they come: a statement that fails part way leaves the rows
// it inserted before, as an autocommit statement on a table without
// transactions does (the dump's INSERTs run in autocommit).
type stagedEditor struct {
	t *stagedTable
}

// StatementBegin implements sql.EditOpenerCloser.
func (*stagedEditor) StatementBegin(*gsql.Context) {}

// DiscardChanges implements sql.EditOpenerCloser.
func (*stagedEditor) DiscardChanges(*gsql.Context, error) error { return nil }

// StatementComplete implements sql.EditOpenerCloser.
func (*stagedEditor) StatementComplete(*gsql.Context) error { return nil }

// Close implements sql.Closer.
func (*stagedEditor) Close(*gsql.Context) error { return nil }

// Insert implements sql.RowInserter: 1062 for a row whose primary key is
// staged already.
func (e *stagedEditor) Insert(ctx *gsql.Context, row gsql.Row) error {
	if err := e.t.checkRow(ctx, row); err != nil {
		return fmt.Errorf("row for mysql.%s: %w", e.t.name, err)
	}
	e.t.mu.Lock()
	defer e.t.mu.Unlock()
	k := e.t.key(row)
	for _, r := range e.t.rows {
		if e.t.key(r) == k {
			return gsql.NewUniqueKeyErr(fmt.Sprintf("Duplicate entry '%s' for key '%s.PRIMARY'", strings.ReplaceAll(strings.TrimSuffix(k, "\x00"), "\x00", "-"), e.t.name), true, r)
		}
	}
	e.t.rows = append(e.t.rows, row.Copy())
	return nil
}

// Update implements sql.RowUpdater: old's row becomes new (1062 when
// new's primary key is another staged row's).
func (e *stagedEditor) Update(ctx *gsql.Context, old, new gsql.Row) error {
	if err := e.t.checkRow(ctx, new); err != nil {
		return fmt.Errorf("row for mysql.%s: %w", e.t.name, err)
	}
	e.t.mu.Lock()
	defer e.t.mu.Unlock()
	ok, nk := e.t.key(old), e.t.key(new)
	at := -1
	for i, r := range e.t.rows {
		switch k := e.t.key(r); {
		case k == ok:
			at = i
		case k == nk:
			return gsql.NewUniqueKeyErr(fmt.Sprintf("Duplicate entry '%s' for key '%s.PRIMARY'", strings.ReplaceAll(strings.TrimSuffix(nk, "\x00"), "\x00", "-"), e.t.name), true, r)
		}
	}
	if at >= 0 {
		e.t.rows[at] = new.Copy()
	}
	return nil
}

// Delete implements sql.RowDeleter (REPLACE deletes the row it replaces).
func (e *stagedEditor) Delete(_ *gsql.Context, row gsql.Row) error {
	e.t.mu.Lock()
	defer e.t.mu.Unlock()
	k := e.t.key(row)
	for i, r := range e.t.rows {
		if e.t.key(r) == k {
			e.t.rows = append(e.t.rows[:i], e.t.rows[i+1:]...)
			return nil
		}
	}
	return nil
}

// applyReload replaces the grant tables s replaces with their staged
// rows and adds the rows still waiting for their accounts, in one edit of
// the accounts, which it persists. A session with nothing staged does
// nothing.
func (s *Session) applyReload(ctx context.Context) error {
	return s.applyTables(ctx, nil)
}

// applyTables is applyReload of the staged tables named, all of them
// when tables is nil.
func (s *Session) applyTables(ctx context.Context, tables []string) error {
	accounts := s.provider.accounts
	if accounts == nil || !s.reload.active() {
		return nil
	}
	r := &s.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	sctx := gsql.NewContext(ctx, gsql.WithSession(s))
	staged := make(map[string][]gsql.Row, len(r.staged))
	for n, t := range r.staged {
		if tables != nil && !slices.Contains(tables, n) {
			continue
		}
		t.mu.Lock()
		staged[n] = t.rows
		t.mu.Unlock()
	}
	ed := accounts.Editor()
	defer ed.Close()
	pending, err := rebuildAccounts(sctx, ed, staged, r.pending)
	if err != nil {
		return err
	}
	for n := range staged {
		delete(r.staged, n)
		delete(r.inPlace, n)
	}
	r.pending = pending
	if err := accounts.Persist(sctx, ed); err != nil {
		return fmt.Errorf("store the reloaded accounts: %w", err)
	}
	return nil
}

// rebuildAccounts rebuilds the accounts of ed from rows: for each grant
// table, its staged rows when it has some (an empty slice for a table
// replaced by none), its current rows otherwise, plus the rows waiting
// for their accounts. It returns the rows of staged or waiting tables
// whose account is still missing.
func rebuildAccounts(ctx *gsql.Context, ed *mysql_db.Editor, staged, waiting map[string][]gsql.Row) (map[string][]gsql.Row, error) {
	type userFlags struct{ role, super, ephemeral bool }
	old := map[mysql_db.UserPrimaryKey]userFlags{}
	current := map[string][]gsql.Row{}
	var globalGrants []gsql.Row
	var convErr error
	ed.VisitUsers(func(u *mysql_db.User) {
		old[mysql_db.UserPrimaryKey{User: u.User, Host: u.Host}] = userFlags{u.IsRole, u.IsSuperUser, u.IsEphemeral}
		for _, add := range []struct {
			table string
			rows  func(*gsql.Context, *mysql_db.User) ([]gsql.Row, error)
		}{
			{"user", func(ctx *gsql.Context, u *mysql_db.User) ([]gsql.Row, error) {
				row, err := mysql_db.UserToRow(ctx, u)
				return []gsql.Row{row}, err
			}},
			{"db", mysql_db.UserToDBRows},
			{"tables_priv", mysql_db.UserToTablesRows},
			{"procs_priv", mysql_db.UserToProcsPrivRows},
		} {
			rows, err := add.rows(ctx, u)
			if err != nil && convErr == nil {
				convErr = err
			}
			current[add.table] = append(current[add.table], rows...)
		}
		rows, err := mysql_db.UserToGlobalGrantsRows(ctx, u)
		if err != nil && convErr == nil {
			convErr = err
		}
		globalGrants = append(globalGrants, rows...)
	})
	var edges []*mysql_db.RoleEdge
	ed.VisitRoleEdges(func(e *mysql_db.RoleEdge) {
		edges = append(edges, e)
		row, err := mysql_db.RoleEdgeToRow(ctx, e)
		if err != nil && convErr == nil {
			convErr = err
		}
		current["role_edges"] = append(current["role_edges"], row)
	})
	if convErr != nil {
		return nil, fmt.Errorf("read the accounts: %w", convErr)
	}
	rowsOf := func(table string) (rows []gsql.Row, replaced bool) {
		if st, ok := staged[table]; ok {
			return st, true
		}
		return current[table], false
	}
	// The accounts and the roles among them: an account that is granted
	// as a role, locked and without a password is one.
	edgeRows, _ := rowsOf("role_edges")
	granted := map[mysql_db.UserPrimaryKey]bool{}
	for _, row := range append(append([]gsql.Row(nil), edgeRows...), waiting["role_edges"]...) {
		if e, err := mysql_db.RoleEdgeFromRow(ctx, row); err == nil {
			granted[mysql_db.UserPrimaryKey{User: e.FromUser, Host: e.FromHost}] = true
		}
	}
	userRows, _ := rowsOf("user")
	users := map[mysql_db.UserPrimaryKey]*mysql_db.User{}
	for _, row := range userRows {
		u, err := mysql_db.UserFromRow(ctx, row)
		if err != nil {
			return nil, fmt.Errorf("row of mysql.user: %w", err)
		}
		pk := mysql_db.UserPrimaryKey{User: u.User, Host: u.Host}
		if f, ok := old[pk]; ok {
			u.IsRole, u.IsSuperUser, u.IsEphemeral = f.role, f.super, f.ephemeral
		} else {
			u.IsRole = granted[pk] && u.Locked && u.AuthString == ""
		}
		users[pk] = u
	}
	// What hangs on the accounts: rows of a missing account wait.
	left := map[string][]gsql.Row{}
	attach := func(table string, rows []gsql.Row, keep bool, from func(*gsql.Context, gsql.Row) (*mysql_db.User, error), add func(*gsql.Context, gsql.Row, *mysql_db.User) (*mysql_db.User, error)) error {
		for _, row := range rows {
			k, err := from(ctx, row)
			if err != nil {
				return fmt.Errorf("row of mysql.%s: %w", table, err)
			}
			pk := mysql_db.UserPrimaryKey{User: k.User, Host: k.Host}
			u, ok := users[pk]
			if !ok {
				if keep {
					left[table] = append(left[table], row)
				}
				continue
			}
			if users[pk], err = add(ctx, row, u); err != nil {
				return fmt.Errorf("row of mysql.%s: %w", table, err)
			}
		}
		return nil
	}
	for _, p := range []struct {
		table string
		from  func(*gsql.Context, gsql.Row) (*mysql_db.User, error)
		add   func(*gsql.Context, gsql.Row, *mysql_db.User) (*mysql_db.User, error)
	}{
		{"db", mysql_db.UserFromDBRow, mysql_db.UserAddDBRow},
		{"tables_priv", mysql_db.UserFromTablesRow, mysql_db.UserAddTablesRow},
		{"procs_priv", mysql_db.UserFromProcsPrivRow, mysql_db.UserAddProcsPrivRow},
	} {
		rows, replaced := rowsOf(p.table)
		if err := attach(p.table, rows, replaced, p.from, p.add); err != nil {
			return nil, err
		}
		if err := attach(p.table, waiting[p.table], true, p.from, p.add); err != nil {
			return nil, err
		}
	}
	// Dynamic privileges (mysql.global_grants, which GMS does not show as
	// a table) stay with their accounts.
	if err := attach("global_grants", globalGrants, false, mysql_db.UserFromGlobalGrantsRow, mysql_db.UserAddGlobalGrantsRow); err != nil {
		return nil, err
	}
	var newEdges []*mysql_db.RoleEdge
	edgesReplaced := false
	if _, ok := staged["role_edges"]; ok {
		edgesReplaced = true
	}
	for i, row := range append(append([]gsql.Row(nil), edgeRows...), waiting["role_edges"]...) {
		e, err := mysql_db.RoleEdgeFromRow(ctx, row)
		if err != nil {
			return nil, fmt.Errorf("row of mysql.role_edges: %w", err)
		}
		_, from := users[mysql_db.UserPrimaryKey{User: e.FromUser, Host: e.FromHost}]
		_, to := users[mysql_db.UserPrimaryKey{User: e.ToUser, Host: e.ToHost}]
		if !from || !to {
			if edgesReplaced || i >= len(edgeRows) {
				left["role_edges"] = append(left["role_edges"], row)
			}
			continue
		}
		newEdges = append(newEdges, e)
	}
	// Swap, under the caller's one edit.
	for pk := range old {
		ed.RemoveUser(pk)
	}
	for _, u := range users {
		ed.PutUser(u)
	}
	for _, e := range edges {
		ed.RemoveRoleEdge(mysql_db.RoleEdgesPrimaryKey{FromHost: e.FromHost, FromUser: e.FromUser, ToHost: e.ToHost, ToUser: e.ToUser})
	}
	for _, e := range newEdges {
		ed.PutRoleEdge(e)
	}
	return left, nil
}
