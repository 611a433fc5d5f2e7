package sql

import (
	"context"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
)

// The fast path runs the commonest prepared statement, a SELECT of one row
// by its integer primary key, without GMS: GMS binds and analyzes every
// execution of a prepared statement anew, which costs several times the
// two key reads the statement needs. At prepare time the handler
// recognises the statement's shape (pointSelect); at execution it reads
// the row through the executor and answers with the result GMS would
// have sent, whose column definitions it took from GMS's answer to the
// prepare. Anything it is not sure of (another schema version than the
// cached one, a parameter that is not an integer, a table whose key is
// not an integer) falls back to GMS.
//
// In autocommit mode the row is read without a timestamp (a linearizable
// point read, txn.Store.PointGet); inside a transaction it is read through
// the transaction, at its snapshot.

// pointSelect is the shape of a prepared statement the fast path runs:
//
//	SELECT col, ... | * FROM [db.]table WHERE keycol = ?
type pointSelect struct {
	db, table string
	// cols are the selected columns; nil means *.
	cols   []string
	keyCol string
	// param names the statement's parameter in the bind variables.
	param string
	// fields are the column definitions GMS answered the prepare with,
	// for the definition def of the table; another definition (a DDL came
	// in between) sends the statement back to GMS.
	fields []*querypb.Field
	def    *TableDef
}

// maxPointSelects bounds the shapes a session remembers; past it, new
// statements go to GMS.
const maxPointSelects = 256

// pointSelects remembers a session's prepared point selects by statement
// text (statement IDs are not reported when a client closes them).
type pointSelects struct {
	mu sync.Mutex
	m  map[string]*pointSelect
}

func (p *pointSelects) get(query string) *pointSelect {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[query]
}

func (p *pointSelects) put(query string, ps *pointSelect) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[string]*pointSelect)
	}
	if len(p.m) < maxPointSelects {
		p.m[query] = ps
	}
}

// parsePointSelect returns the shape of query, or nil if it is not one the
// fast path runs.
func parsePointSelect(query string, fields []*querypb.Field) *pointSelect {
	if len(fields) == 0 || !hasPrefixFold(strings.TrimSpace(query), "select") {
		return nil
	}
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return nil
	}
	sel, ok := stmt.(*sqlparser.Select)
	if !ok || sel.With != nil || sel.Into != nil || sel.Lock != "" || len(sel.GroupBy) > 0 ||
		sel.Having != nil || len(sel.OrderBy) > 0 || sel.Limit != nil || len(sel.Window) > 0 ||
		sel.QueryOpts.Distinct || sel.QueryOpts.SQLCalcFoundRows || len(sel.From) != 1 || sel.Where == nil {
		return nil
	}
	ate, ok := sel.From[0].(*sqlparser.AliasedTableExpr)
	if !ok || !ate.As.IsEmpty() || ate.Hints != nil || ate.AsOf != nil {
		return nil
	}
	tn, ok := ate.Expr.(sqlparser.TableName)
	if !ok {
		return nil
	}
	ps := &pointSelect{db: tn.DbQualifier.String(), table: tn.Name.String(), fields: fields}
	for _, e := range sel.SelectExprs {
		switch e := e.(type) {
		case *sqlparser.StarExpr:
			if !e.TableName.IsEmpty() || len(sel.SelectExprs) != 1 {
				return nil
			}
		case *sqlparser.AliasedExpr:
			col, ok := e.Expr.(*sqlparser.ColName)
			if !ok || !e.As.IsEmpty() || !col.Qualifier.IsEmpty() {
				return nil
			}
			ps.cols = append(ps.cols, col.Name.String())
		default:
			return nil
		}
	}
	if len(ps.cols) > 0 && len(ps.cols) != len(fields) {
		return nil
	}
	cmp, ok := sel.Where.Expr.(*sqlparser.ComparisonExpr)
	if !ok || cmp.Operator != sqlparser.EqualStr {
		return nil
	}
	col, arg := cmp.Left, cmp.Right
	if _, isCol := col.(*sqlparser.ColName); !isCol {
		col, arg = arg, col
	}
	cn, ok := col.(*sqlparser.ColName)
	if !ok || !cn.Qualifier.IsEmpty() {
		return nil
	}
	v, ok := arg.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.ValArg {
		return nil
	}
	ps.keyCol = cn.Name.String()
	ps.param = strings.TrimPrefix(string(v.Val), ":")
	return ps
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// preparePointSelect remembers query if the fast path can run it. GMS has
// just prepared it with the catalog the cache holds.
func (s *Session) preparePointSelect(query string, fields []*querypb.Field) {
	ps := parsePointSelect(query, fields)
	if ps == nil {
		return
	}
	cat := s.provider.catalogs.cached()
	if cat == nil {
		return
	}
	dbName := ps.db
	if dbName == "" {
		dbName = s.GetCurrentDatabase()
	}
	db, ok := cat.database(dbName)
	if !ok {
		return
	}
	if ps.def, ok = cat.table(db.ID, ps.table); ok {
		s.points.put(query, ps)
	}
}

// runPointSelect answers an execution of ps, reporting false (and doing
// nothing) when the statement must go to GMS instead.
func (s *Session) runPointSelect(ctx context.Context, ps *pointSelect, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) (bool, error) {
	bv := prepare.BindVars[ps.param]
	if bv == nil {
		return false, nil
	}
	val, err := sqltypes.BindVariableToValue(bv)
	if err != nil || !val.IsIntegral() {
		return false, nil
	}
	key, err := sqltypes.ToInt64(val)
	if err != nil {
		return false, nil
	}

	// The catalog and the reader: the transaction's inside one, else the
	// cached catalog if it is still current and reads of the latest data.
	var cat *catalogData
	var reader executor.Reader
	if s.inExplicitTransaction() {
		// The first statement of a transaction fixes its snapshot: leave
		// starting one to GMS.
		t, ok := s.GetTransaction().(*Transaction)
		if !ok || s.forUpdate {
			return false, nil
		}
		if cat, err = t.catalog(ctx); err != nil {
			return false, err
		}
		k, err := t.txn(ctx)
		if err != nil {
			return false, err
		}
		reader = k
	} else {
		if cat, err = s.provider.catalogs.current(ctx, s.provider.store); err != nil || cat == nil {
			return false, err
		}
		reader = executor.LatestReader{Store: s.provider.store}
	}
	dbName := ps.db
	if dbName == "" {
		dbName = s.GetCurrentDatabase()
	}
	db, ok := cat.database(dbName)
	if !ok {
		return false, nil
	}
	def, ok := cat.table(db.ID, ps.table)
	if !ok || def != ps.def {
		return false, nil
	}
	gctx := gsql.NewContext(ctx, gsql.WithSession(s))
	m, err := s.provider.metas.get(gctx, db.Name, def)
	if err != nil {
		return false, err
	}
	if m.exec.HandleKind != executor.HandleInt || !strings.EqualFold(m.schema.Schema[m.primary.ords[0]].Name, ps.keyCol) {
		return false, nil
	}
	offsets, sch, ok := m.projection(ps.cols)
	if !ok {
		return false, nil
	}
	dec, err := m.exec.NewRowDecoder(offsets)
	if err != nil {
		return false, err
	}
	row, found, err := executor.GetRow(ctx, reader, m.exec, dec, tablecodec.IntHandle(key))
	if err != nil {
		return true, toSQLError(err)
	}
	res := &sqltypes.Result{Fields: ps.fields}
	if found {
		vals, err := server.RowToSQL(gctx, sch, row, nil, nil)
		if err != nil {
			return true, err
		}
		res.Rows = [][]sqltypes.Value{vals}
		res.RowsAffected = 1
	}
	s.ClearWarnings()
	return true, callback(res)
}

// projection returns the schema positions and columns named by cols (all
// columns for nil); ok is false when a name is not a column.
func (m *tableMeta) projection(cols []string) ([]int, gsql.Schema, bool) {
	if cols == nil {
		return nil, m.schema.Schema, true
	}
	offsets := make([]int, len(cols))
	sch := make(gsql.Schema, len(cols))
	for i, name := range cols {
		_, ord, ok := m.def.columnByName(name)
		if !ok {
			return nil, nil, false
		}
		offsets[i], sch[i] = ord, m.schema.Schema[ord]
	}
	return offsets, sch, true
}
