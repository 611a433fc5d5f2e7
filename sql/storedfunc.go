package sql

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/storedproc"
	"github.com/percdb/percdb/txn"
)

// Stored functions (CREATE FUNCTION). GMS v0.20.0 has none, and vitess's
// grammar no statement for them: storedproc.Rewrite gives GMS CREATE,
// DROP and SHOW CREATE FUNCTION as the same statements of a procedure
// named storedproc.FunctionPrefix + the function's name, which the
// database's procedure methods (routines.go) send here. The catalog keeps
// a function's CREATE FUNCTION text as written (catalog.Functions).
//
// A call of a stored function in an expression is found through the
// provider's FunctionProvider (functions.go), which GMS's catalog asks
// before its built-in functions: a name of a built-in function stays the
// built-in's, as in MySQL. The call runs the body in percdb's interpreter
// (storedproc.Env.CallFunction) each time it is evaluated, its statements
// in the caller's transaction.

// isFunctionName reports whether name is GMS's procedure name of a stored
// function, and returns the function's name.
func isFunctionName(name string) (string, bool) {
	if len(name) > len(storedproc.FunctionPrefix) && strings.EqualFold(name[:len(storedproc.FunctionPrefix)], storedproc.FunctionPrefix) {
		return name[len(storedproc.FunctionPrefix):], true
	}
	return "", false
}

// saveFunction stores the function whose CREATE FUNCTION text spd's
// procedure text carries: 1304 when one of its name exists (a note under
// IF NOT EXISTS), 1320 when the body has no RETURN, 1415 when it returns
// rows.
func (d *Database) saveFunction(ctx *gsql.Context, spd gsql.StoredProcedureDetails) error {
	text, ok := storedproc.FunctionText(spd.CreateStatement)
	if !ok {
		return fmt.Errorf("stored function %q: no CREATE FUNCTION text", spd.Name)
	}
	fn, err := storedproc.ParseFunction(text)
	if err != nil {
		return mysql.NewSQLError(mysql.ERParseError, stateSyntax, "%v", err)
	}
	if err := storedproc.CheckFunction(fn, d.def.Name); err != nil {
		return err
	}
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		if _, ok := c.Function(d.def.ID, fn.Name); ok {
			if fn.IfNotExists {
				ctx.Session.Warn(&gsql.Warning{Level: "Note", Code: codeProcedureExists, Message: fmt.Sprintf("FUNCTION %s already exists", fn.Name)})
				return nil
			}
			return mysql.NewSQLError(codeProcedureExists, stateSyntax, "FUNCTION %s already exists", fn.Name)
		}
		p := &catalog.ProcedureDef{Name: fn.Name, Create: text, CreatedAt: spd.CreatedAt, ModifiedAt: spd.ModifiedAt, SQLMode: spd.SqlMode}
		if err := catalog.PutJSON(k, catalog.FunctionKey(d.def.ID, p.Name), p); err != nil {
			return err
		}
		c.PutFunction(d.def.ID, p)
		return nil
	})
}

// getFunction returns stored function name as GMS's procedure details
// (SHOW CREATE FUNCTION): its text as written.
func (d *Database) getFunction(ctx *gsql.Context, name string) (gsql.StoredProcedureDetails, bool, error) {
	_, cat, err := d.catalog(ctx)
	if err != nil {
		return gsql.StoredProcedureDetails{}, false, err
	}
	p, ok := cat.Function(d.def.ID, name)
	if !ok {
		return gsql.StoredProcedureDetails{}, false, nil
	}
	return gsql.StoredProcedureDetails{Name: storedproc.FunctionPrefix + p.Name, CreateStatement: p.Create,
		CreatedAt: p.CreatedAt, ModifiedAt: p.ModifiedAt, SqlMode: p.SQLMode}, true, nil
}

// dropFunction drops stored function name. A missing one is GMS's
// ErrStoredProcedureDoesNotExist (DROP FUNCTION IF EXISTS: success with
// MySQL's note), which errors.go sends as MySQL's 1305 for a FUNCTION.
func (d *Database) dropFunction(ctx *gsql.Context, name string) error {
	return d.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		p, ok := c.Function(d.def.ID, name)
		if !ok {
			ctx.Session.Warn(&gsql.Warning{Level: "Note", Code: codeProcedureDoesNotExist,
				Message: fmt.Sprintf("FUNCTION %s.%s does not exist", d.def.Name, name)})
			return gsql.ErrStoredProcedureDoesNotExist.New(storedproc.FunctionPrefix + name)
		}
		if err := k.Delete(catalog.FunctionKey(d.def.ID, p.Name)); err != nil {
			return fmt.Errorf("drop function %q: %w", name, err)
		}
		delete(c.Functions[d.def.ID], strings.ToLower(p.Name))
		return nil
	})
}

// builtinNames are the names of GMS's built-in functions, lower case,
// which a stored function does not shadow.
type builtinNames struct {
	once  sync.Once
	names map[string]bool
}

// has reports whether name is a built-in function's.
func (b *builtinNames) has(name string) bool {
	b.once.Do(func() {
		b.names = make(map[string]bool, len(function.BuiltIns))
		for _, f := range function.BuiltIns {
			b.names[strings.ToLower(f.FunctionName())] = true
		}
	})
	return b.names[strings.ToLower(name)]
}

// storedFunction returns the stored function name of the current
// database as GMS's function, if there is one.
func (p *DatabaseProvider) storedFunction(ctx *gsql.Context, name string) (gsql.Function, bool) {
	if ctx == nil || ctx.Session == nil {
		return nil, false
	}
	// Most names are built-in functions', and most databases have no
	// stored function: neither reads the transaction's catalog.
	if cached := p.catalogs.Cached(); cached == nil || !hasFunctions(cached) {
		return nil, false
	}
	db := ctx.GetCurrentDatabase()
	if qualified, ok := isFunctionName(name); ok {
		// db.f(...), renamed by the parser (storedproc.QualifyCalls).
		if db, name, ok = strings.Cut(qualified, "."); !ok {
			return nil, false
		}
	} else if p.builtins.has(name) {
		return nil, false
	}
	if db == "" {
		return nil, false
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, false
	}
	cat, err := tx.catalog(ctx)
	if err != nil {
		return nil, false
	}
	dbDef, ok := cat.Database(db)
	if !ok {
		return nil, false
	}
	def, ok := cat.Function(dbDef.ID, name)
	if !ok {
		return nil, false
	}
	fn, err := storedproc.ParseFunction(def.Create)
	if err != nil {
		return nil, false
	}
	dbName := dbDef.Name
	return gsql.FunctionN{Name: fn.Name, Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		if len(args) != len(fn.Params) {
			return nil, mysql.NewSQLError(1318, stateSyntax, "Incorrect number of arguments for FUNCTION %s.%s; expected %d, got %d", dbName, fn.Name, len(fn.Params), len(args))
		}
		return &storedFunctionCall{provider: p, db: dbName, fn: fn, args: args}, nil
	}}, true
}

// hasFunctions reports whether any database of c has a stored function.
func hasFunctions(c *catalog.Catalog) bool {
	for _, m := range c.Functions {
		if len(m) > 0 {
			return true
		}
	}
	return false
}

// storedFunctionCall is a call of a stored function in an expression.
type storedFunctionCall struct {
	provider *DatabaseProvider
	db       string
	fn       *storedproc.Function
	args     []gsql.Expression
}

var (
	_ gsql.Expression                 = (*storedFunctionCall)(nil)
	_ gsql.NonDeterministicExpression = (*storedFunctionCall)(nil)
)

// Resolved implements sql.Expression.
func (c *storedFunctionCall) Resolved() bool {
	for _, a := range c.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// String implements sql.Expression.
func (c *storedFunctionCall) String() string {
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = a.String()
	}
	return c.fn.Name + "(" + strings.Join(args, ", ") + ")"
}

// Type implements sql.Expression: the function's RETURNS type.
func (c *storedFunctionCall) Type() gsql.Type { return c.fn.Returns }

// IsNullable implements sql.Expression.
func (c *storedFunctionCall) IsNullable() bool { return true }

// IsNonDeterministic implements sql.NonDeterministicExpression: the body
// may read tables and variables, so its value is not cached as a
// constant's (MySQL's DETERMINISTIC is the user's claim, not checked).
func (c *storedFunctionCall) IsNonDeterministic() bool { return true }

// Children implements sql.Expression.
func (c *storedFunctionCall) Children() []gsql.Expression { return c.args }

// WithChildren implements sql.Expression.
func (c *storedFunctionCall) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(c.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), len(c.args))
	}
	n := *c
	n.args = children
	return &n, nil
}

// Eval implements sql.Expression: the arguments, then the body in
// percdb's interpreter, with the session's transaction. A function that
// calls itself, directly or through another, is MySQL's 1424.
func (c *storedFunctionCall) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	args := make([]any, len(c.args))
	for i, a := range c.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil, fmt.Errorf("stored function %s: not a percdb session", c.fn.Name)
	}
	key := strings.ToLower(c.db + "." + c.fn.Name)
	if !s.activeFunctions.enter(key) {
		return nil, mysql.NewSQLError(1424, "HY000", "Recursive stored functions and triggers are not allowed")
	}
	defer s.activeFunctions.leave(key)
	if s.keptDiag && readsTables(c.fn.Body) {
		// The statement kept the previous statement's conditions as one
		// that uses no table (beginDiagnostics); MySQL counts the
		// tables of the functions it calls, and clears them.
		s.dropKeptDiagnostics()
	}
	env := &storedproc.Env{
		Runner:    c.provider.runner,
		Procedure: c.provider.procedureText,
		Error:     procSQLError,
		Result: func(*gsql.Context, gsql.Schema, []gsql.Row) error {
			return mysql.NewSQLError(1415, "0A000", "Not allowed to return a result set from a function")
		},
		NoResultSets: true,
	}
	// As a CALL: the body's statements start from no transaction object
	// of the context; the session's transaction goes on.
	oldTx := ctx.GetTransaction()
	defer ctx.SetTransaction(oldTx)
	ctx.SetTransaction(nil)
	return env.CallFunction(ctx, c.db, c.fn, args)
}

// readsTables reports whether body, a stored function's, names a table
// other than DUAL: a FROM, or an INSERT, UPDATE, DELETE or REPLACE (read
// from its text: the walk of the AST does not enter every statement of
// a routine's body).
func readsTables(body ast.Statement) bool {
	text := ast.String(body)
	if !compat.FromOnlyDual(text) {
		return true
	}
	for _, w := range []string{"INSERT", "UPDATE", "DELETE", "REPLACE"} {
		if compat.HasWord(text, w) {
			return true
		}
	}
	return false
}

// procedureText returns the CREATE PROCEDURE text of procedure name of
// database db (storedproc.Env.Procedure) for a procedure a stored
// function calls.
func (p *DatabaseProvider) procedureText(ctx *gsql.Context, db, name string) (string, bool, error) {
	d, err := p.Database(ctx, db)
	if err != nil {
		return "", false, err
	}
	return procedureTextIn(ctx, d, name)
}

// functionNotFound matches GMS's messages for a function that does not
// exist: a call of an unknown function (1105), and DROP FUNCTION of a
// missing one (the procedure message under FunctionPrefix).
var functionNotFound = regexp.MustCompile("^(?:function: '([^']+)' not found|stored procedure \"" + regexp.QuoteMeta(storedproc.FunctionPrefix) + "([^\"]+)\" does not exist)$")

// functionError returns GMS's error for a missing function as MySQL's
// 1305 naming it in database db (the current one).
func functionError(db string, err error) error {
	if err == nil || db == "" {
		return err
	}
	msg := err.Error()
	if se, ok := err.(*mysql.SQLError); ok {
		msg = se.Message
	}
	m := functionNotFound.FindStringSubmatch(msg)
	if m == nil {
		return err
	}
	name := m[1] + m[2]
	if qualified, ok := isFunctionName(name); ok {
		// db.f(...) (storedproc.QualifyCalls).
		return mysql.NewSQLError(codeProcedureDoesNotExist, stateSyntax, "FUNCTION %s does not exist", qualified)
	}
	return mysql.NewSQLError(codeProcedureDoesNotExist, stateSyntax, "FUNCTION %s.%s does not exist", db, name)
}

// showCreateFunctionSchema is MySQL's columns of SHOW CREATE FUNCTION,
// which name the routine's kind where SHOW CREATE PROCEDURE's say
// Procedure: clients that read the answer by column name (Connector/J's
// DatabaseMetaData, ORMs' schema readers) look for "Create Function".
var showCreateFunctionSchema = gsql.Schema{
	&gsql.Column{Name: "Function", Type: types.LongText},
	&gsql.Column{Name: "sql_mode", Type: types.LongText},
	&gsql.Column{Name: "Create Function", Type: types.LongText},
	&gsql.Column{Name: "character_set_client", Type: types.LongText},
	&gsql.Column{Name: "collation_connection", Type: types.LongText},
	&gsql.Column{Name: "Database Collation", Type: types.LongText},
}

// showCreateFunctionNode is SHOW CREATE FUNCTION: GMS's SHOW CREATE
// PROCEDURE of the function's name under FunctionPrefix with MySQL's
// columns for a function (showCreateFunctionRule).
type showCreateFunctionNode struct {
	*plan.ShowCreateProcedure
	// name is the function's name.
	name string
}

var _ gsql.ExecSourceRel = showCreateFunctionNode{}

// Schema implements sql.Node.
func (n showCreateFunctionNode) Schema() gsql.Schema { return showCreateFunctionSchema }

// String implements fmt.Stringer.
func (n showCreateFunctionNode) String() string { return "SHOW CREATE FUNCTION " + n.name }

// RowIter implements sql.ExecSourceRel.
func (n showCreateFunctionNode) RowIter(ctx *gsql.Context, _ gsql.Row) (gsql.RowIter, error) {
	return showCreateFunction(ctx, n.ShowCreateProcedure, n.name)
}

// WithChildren implements sql.Node.
func (n showCreateFunctionNode) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// WithDatabase implements sql.Databaser.
func (n showCreateFunctionNode) WithDatabase(db gsql.Database) (gsql.Node, error) {
	sc, err := n.ShowCreateProcedure.WithDatabase(db)
	if err != nil {
		return nil, err
	}
	return showCreateFunctionNode{ShowCreateProcedure: sc.(*plan.ShowCreateProcedure), name: n.name}, nil
}

// showCreateFunctionRule gives SHOW CREATE FUNCTION (a SHOW CREATE
// PROCEDURE of a name under FunctionPrefix, storedproc.Rewrite) MySQL's
// column names.
func showCreateFunctionRule(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	sc, ok := n.(*plan.ShowCreateProcedure)
	if !ok {
		return n, transform.SameTree, nil
	}
	name, ok := isFunctionName(sc.ProcedureName)
	if !ok {
		return n, transform.SameTree, nil
	}
	return showCreateFunctionNode{ShowCreateProcedure: sc, name: name}, transform.NewTree, nil
}

// showCreateFunction answers SHOW CREATE FUNCTION: the name, the
// sql_mode, the text as written, the character set and collations of the
// connection and of the server.
func showCreateFunction(ctx *gsql.Context, n *plan.ShowCreateProcedure, name string) (gsql.RowIter, error) {
	spd, ok := n.Database().(gsql.StoredProcedureDatabase)
	if !ok {
		return nil, functionError(n.Database().Name(), gsql.ErrStoredProcedureDoesNotExist.New(n.ProcedureName))
	}
	p, found, err := spd.GetStoredProcedure(ctx, n.ProcedureName)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, mysql.NewSQLError(codeProcedureDoesNotExist, stateSyntax, "FUNCTION %s does not exist", name)
	}
	row := gsql.Row{strings.TrimPrefix(p.Name, storedproc.FunctionPrefix), p.SqlMode, p.CreateStatement}
	for _, v := range []string{"character_set_client", "collation_connection", "collation_server"} {
		val, err := ctx.GetSessionVariable(ctx, v)
		if err != nil {
			return nil, err
		}
		row = append(row, val)
	}
	return gsql.RowsToRowIter(row), nil
}

// routinesTable is GMS's information_schema.ROUTINES (or PARAMETERS: any
// routine table) with a row per stored function after GMS's rows of the
// procedures (GMS's table has procedures only), which SHOW FUNCTION
// STATUS reads and mariadb-dump --routines lists functions by.
type routinesTable struct {
	gsql.Table
	provider *DatabaseProvider
}

var _ gsql.CatalogTable = (*routinesTable)(nil)

// AssignCatalog implements sql.CatalogTable.
func (t *routinesTable) AssignCatalog(cat gsql.Catalog) gsql.Table {
	if c, ok := t.Table.(gsql.CatalogTable); ok {
		return &routinesTable{Table: c.AssignCatalog(cat), provider: t.provider}
	}
	return t
}

// AssignProcedures implements analyzer.RoutineTable.
func (t *routinesTable) AssignProcedures(p map[string][]*plan.Procedure) gsql.Table {
	if r, ok := t.Table.(interface {
		AssignProcedures(map[string][]*plan.Procedure) gsql.Table
	}); ok {
		return &routinesTable{Table: r.AssignProcedures(p), provider: t.provider}
	}
	return t
}

// PartitionRows implements sql.Table.
func (t *routinesTable) PartitionRows(ctx *gsql.Context, p gsql.Partition) (gsql.RowIter, error) {
	iter, err := t.Table.PartitionRows(ctx, p)
	if err != nil {
		return nil, err
	}
	rows, err := gsql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	fns, err := t.provider.functionRoutineRows(ctx)
	if err != nil {
		return nil, err
	}
	return gsql.RowsToRowIter(append(rows, fns...)...), nil
}

// functionRoutineRows returns the ROUTINES rows of every database's
// stored functions, in database and name order, in GMS's columns.
func (p *DatabaseProvider) functionRoutineRows(ctx *gsql.Context) ([]gsql.Row, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	cat, err := tx.catalog(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	if !hasFunctions(cat) {
		return nil, nil
	}
	var vars []any
	for _, v := range []string{"character_set_client", "collation_connection"} {
		val, err := ctx.GetSessionVariable(ctx, v)
		if err != nil {
			return nil, err
		}
		vars = append(vars, val)
	}
	var rows []gsql.Row
	for _, db := range cat.SortedDatabases() {
		for _, def := range cat.SortedFunctions(db.ID) {
			fn, err := storedproc.ParseFunction(def.Create)
			if err != nil {
				continue
			}
			deterministic, access, security, comment := "NO", "CONTAINS SQL", "DEFINER", ""
			for _, c := range fn.Characteristics {
				switch c.Type {
				case ast.CharacteristicValue_Deterministic:
					deterministic = "YES"
				case ast.CharacteristicValue_NotDeterministic:
					deterministic = "NO"
				case ast.CharacteristicValue_ContainsSql, ast.CharacteristicValue_NoSql, ast.CharacteristicValue_ReadsSqlData, ast.CharacteristicValue_ModifiesSqlData:
					access = strings.ToUpper(string(c.Type))
				case ast.CharacteristicValue_SqlSecurityInvoker:
					security = "INVOKER"
				case ast.CharacteristicValue_Comment:
					comment = c.Comment
				}
			}
			dtd := strings.ToLower(fn.Returns.String())
			if i := strings.Index(dtd, " collate "); i >= 0 {
				dtd = dtd[:i]
			}
			dataType := dtd
			if i := strings.IndexAny(dataType, "( "); i >= 0 {
				dataType = dataType[:i]
			}
			collation := db.Collation
			if collation == "" {
				collation = gsql.Collation_Default.String()
			}
			rows = append(rows, gsql.Row{
				def.Name, "def", db.Name, def.Name, "FUNCTION", dataType,
				nil, nil, nil, nil, nil, nil, nil, dtd, "SQL", ast.String(fn.Body),
				nil, "SQL", "SQL", deterministic, access, nil, security,
				def.CreatedAt.UTC(), def.ModifiedAt.UTC(), def.SQLMode, comment, "",
				vars[0], vars[1], collation,
			})
		}
	}
	return rows, nil
}

// functionStack is the stored functions a session is running (db.name,
// lower case), outermost first. Its lock is for the row iterators GMS
// may run in goroutines of their own; a session runs one statement at a
// time.
type functionStack struct {
	mu   sync.Mutex
	keys []string
}

// enter records that function key starts, unless it is running already
// (a recursive call): then it reports false.
func (st *functionStack) enter(key string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if slices.Contains(st.keys, key) {
		return false
	}
	st.keys = append(st.keys, key)
	return true
}

// leave records that function key ended.
func (st *functionStack) leave(key string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if i := slices.Index(st.keys, key); i >= 0 {
		st.keys = slices.Delete(st.keys, i, i+1)
	}
}
