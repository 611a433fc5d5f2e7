package sql

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// CHECK TABLE (MySQL's, as mysqlcheck sends it) and ADMIN CHECK TABLE
// (TiDB's) compare every public index of a table with its rows: each
// index entry must be the entry its row would have now, and each index
// must have as many entries as the table has rows. GMS does not parse
// either statement, so the handler runs them (handler.go).

// codeDataInconsistent is TiDB's ErrDataInconsistent, ADMIN CHECK
// TABLE's error for an index that disagrees with its table.
const codeDataInconsistent = 8223

// checkTableOptions are CHECK TABLE's options, which change nothing here:
// every check is the full one.
var checkTableOptions = regexp.MustCompile(`(?i)\s+(for\s+upgrade|quick|fast|medium|extended|changed)(\s+(for\s+upgrade|quick|fast|medium|extended|changed))*\s*;?\s*$`)

// adminStatement is a statement the handler runs itself: CHECK TABLE,
// TiDB's ADMIN CHECK TABLE, ADMIN SHOW DDL JOBS and ADMIN CANCEL DDL
// JOBS, and percdb's ADMIN SHOW LOCK WAITS (pessimistic.go), none of which
// GMS parses.
type adminStatement struct {
	tp ast.AdminStmtType
	// lockWaits: ADMIN SHOW LOCK WAITS, which the TiDB parser does not
	// know (tp is then unset).
	lockWaits bool
	// observers: ADMIN SHOW OBSERVERS (observers.go), which the TiDB
	// parser does not know either.
	observers bool
	// tables are CHECK TABLE's; mysqlStyle: it was MySQL's CHECK TABLE
	// (a result set), not ADMIN CHECK TABLE (OK or an error).
	tables     []*ast.TableName
	mysqlStyle bool
	// jobIDs are ADMIN CANCEL DDL JOBS's.
	jobIDs []int64
}

// parseAdmin recognises the statements of adminStatement.
func parseAdmin(query string) (adminStatement, bool) {
	if isShowLockWaits(query) {
		return adminStatement{lockWaits: true}, true
	}
	if isShowObservers(query) {
		return adminStatement{observers: true}, true
	}
	q := strings.TrimSpace(query)
	mysqlStyle := false
	switch {
	case startsWithWord(q, "admin"):
	case startsWithWord(q, "check"):
		q = "ADMIN " + checkTableOptions.ReplaceAllString(q, "")
		mysqlStyle = true
	default:
		return adminStatement{}, false
	}
	stmts, _, err := parser.New().Parse(q, "", "")
	if err != nil || len(stmts) != 1 {
		return adminStatement{}, false
	}
	st, isAdmin := stmts[0].(*ast.AdminStmt)
	if !isAdmin {
		return adminStatement{}, false
	}
	switch st.Tp {
	case ast.AdminCheckTable, ast.AdminShowDDLJobs, ast.AdminCancelDDLJobs:
		return adminStatement{tp: st.Tp, tables: st.Tables, mysqlStyle: mysqlStyle, jobIDs: st.JobIDs}, true
	}
	return adminStatement{}, false
}

// tableInconsistency is a disagreement between a table and an index.
type tableInconsistency struct {
	index  string
	detail string
}

func (e *tableInconsistency) Error() string {
	return fmt.Sprintf("data inconsistency in index %s: %s", e.index, e.detail)
}

// checkTable compares the public indexes of def with its rows at one
// snapshot. A disagreement is a *tableInconsistency.
func (p *DatabaseProvider) checkTable(ctx context.Context, k *txn.Txn, m *tablemeta.Table) error {
	et := m.Exec
	dec, err := et.NewRowDecoder(nil)
	if err != nil {
		return err
	}
	rows, err := countRange(ctx, k, et.RowRange().Start, et.RowRange().End)
	if err != nil {
		return err
	}
	for _, im := range m.Indexes {
		ix := im.Exec
		start, end := tablecodec.IndexRange(et.ID, ix.ID)
		it, err := k.Iter(ctx, start, end)
		if err != nil {
			return err
		}
		entries := 0
		for ; it.Valid(); entries++ {
			key, value := it.Key(), it.Value()
			h, err := tablecodec.DecodeIndexHandle(key, value, len(ix.Columns), et.HandleKind == executor.HandleCommon)
			if err != nil {
				it.Close()
				return &tableInconsistency{index: ix.Name, detail: fmt.Sprintf("undecodable entry %x: %v", key, err)}
			}
			row, found, err := executor.GetRow(ctx, k, et, dec, h)
			if err != nil {
				it.Close()
				return err
			}
			if !found {
				it.Close()
				return &tableInconsistency{index: ix.Name, detail: fmt.Sprintf("an entry points to row %v, which does not exist", h)}
			}
			want, wantValue, _, err := executor.IndexEntry(et, ix, h, row)
			if err != nil {
				it.Close()
				return err
			}
			if !bytes.Equal(want, key) || !bytes.Equal(wantValue, value) {
				it.Close()
				return &tableInconsistency{index: ix.Name, detail: fmt.Sprintf("the entry of row %v does not match the row's values %v", h, row)}
			}
			if err := it.Next(ctx); err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
		if entries != rows {
			return p.findMissingEntry(ctx, k, et, ix, dec, entries, rows)
		}
	}
	return nil
}

// findMissingEntry names a row of et whose entry in ix is missing, after
// the counts disagreed.
func (p *DatabaseProvider) findMissingEntry(ctx context.Context, k *txn.Txn, et *executor.Table, ix *executor.Index, dec *executor.RowDecoder, entries, rows int) error {
	it, err := executor.ScanTable(ctx, k, et, dec, et.RowRange(), executor.ScanOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		row, err := it.Next(ctx)
		if err != nil {
			break
		}
		key, _, _, err := executor.IndexEntry(et, ix, row.Handle, row.Values)
		if err != nil {
			return err
		}
		if _, found, err := k.Get(ctx, key); err != nil {
			return err
		} else if !found {
			return &tableInconsistency{index: ix.Name, detail: fmt.Sprintf("row %v (values %v) has no entry", row.Handle, row.Values)}
		}
	}
	return &tableInconsistency{index: ix.Name, detail: fmt.Sprintf("%d entries for %d rows", entries, rows)}
}

// runCheckTable answers CHECK TABLE / ADMIN CHECK TABLE for session s.
func (p *DatabaseProvider) runCheckTable(ctx context.Context, currentDB string, tables []*ast.TableName, admin bool) (*sqltypes.Result, error) {
	k, err := p.store.Begin(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	defer func() { _ = k.Rollback(ctx) }()
	cat, err := p.catalogs.Load(ctx, k)
	if err != nil {
		return nil, toSQLError(err)
	}
	res := &sqltypes.Result{Fields: []*querypb.Field{
		{Name: "Table", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Op", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Msg_type", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Msg_text", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
	}}
	add := func(name, typ, text string) {
		res.Rows = append(res.Rows, []sqltypes.Value{
			sqltypes.NewVarChar(name), sqltypes.NewVarChar("check"), sqltypes.NewVarChar(typ), sqltypes.NewVarChar(text),
		})
	}
	for _, tn := range tables {
		dbName := tn.Schema.O
		if dbName == "" {
			dbName = currentDB
		}
		if dbName == "" {
			return nil, mysql.NewSQLError(mysql.ERNoDb, mysql.SSNoDB, "No database selected")
		}
		full := dbName + "." + tn.Name.O
		db, ok := cat.Database(dbName)
		var def *catalog.TableDef
		if ok {
			def, ok = cat.Table(db.ID, tn.Name.O)
		}
		if !ok {
			if admin {
				return nil, mysql.NewSQLError(mysql.ERNoSuchTable, mysql.SSUnknownTable, "Table '%s' doesn't exist", full)
			}
			add(full, "Error", fmt.Sprintf("Table '%s' doesn't exist", full))
			add(full, "status", "Operation failed")
			continue
		}
		m, err := p.metas.Get(gsql.NewEmptyContext(), db.Name, def)
		if err != nil {
			return nil, err
		}
		err = p.checkTable(ctx, k, m)
		var bad *tableInconsistency
		switch {
		case err == nil:
			add(full, "status", "OK")
		case asInconsistency(err, &bad):
			if admin {
				return nil, mysql.NewSQLError(codeDataInconsistent, stateGeneral, "data inconsistency in table: %s, %s", def.Name, bad.Error())
			}
			add(full, "error", bad.Error())
			add(full, "error", "Corrupt")
		default:
			return nil, toSQLError(err)
		}
	}
	if admin {
		return &sqltypes.Result{}, nil
	}
	return res, nil
}

func asInconsistency(err error, bad **tableInconsistency) bool {
	b, ok := err.(*tableInconsistency)
	if ok {
		*bad = b
	}
	return ok
}
