package split

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/tablemeta"
)

// TiDB's region statements, which GMS does not parse and the handler
// runs itself (handler.go's ownStatement):
//
//	SPLIT TABLE t [INDEX i] BETWEEN (lo, ...) AND (hi, ...) REGIONS n
//	SPLIT TABLE t [INDEX i] BY (v1, ...), (v2, ...), ...
//	SHOW TABLE t [INDEX i] REGIONS
//
// A split cuts the region holding a key there, so that the rows (or
// index entries) from those values on start a region of their own
// (kv.Splitter: on the single node the store's region map, in a cluster
// the region's leader through raft). For a table whose rows are keyed by
// an integer (an integer primary key, or the hidden row id), BETWEEN cuts
// [lo, hi) into n ranges of equal width and splits at the start of each
// (TiDB's). For an index, or the rows of a table with a composite or
// non-integer primary key (a clustered key), values are given for a
// prefix of the key's columns, converted to their types; BETWEEN then
// cuts the key range between the two keys into n shares of equal width
// by the keys' bytes (as TiDB does for an index). Keys that already start
// a region are skipped; TOTAL_SPLIT_REGION counts the splits made.

// Statement is a parsed SPLIT TABLE or SHOW TABLE ... REGIONS.
type Statement struct {
	table *ast.TableName
	// show: SHOW TABLE t REGIONS; else split (at splits, or between).
	show bool
	opt  *ast.SplitOption
	// index names the index of TiDB's index forms, which are refused.
	index string
}

// Parse recognises the statements of Statement. A statement that starts
// like one but does not parse is left to GMS (whose error is the parse
// error).
func Parse(query string) (Statement, bool) {
	q := strings.TrimSpace(query)
	if !lexical.LeadingWordIs(q, "split") && !(lexical.LeadingWordIs(q, "show") && strings.Contains(strings.ToLower(q), "regions")) {
		return Statement{}, false
	}
	stmts, _, err := parser.New().Parse(q, "", "")
	if err != nil || len(stmts) != 1 {
		return Statement{}, false
	}
	switch st := stmts[0].(type) {
	case *ast.SplitRegionStmt:
		return Statement{table: st.Table, opt: st.SplitOpt, index: st.IndexName.O}, true
	case *ast.ShowStmt:
		if st.Tp == ast.ShowRegions && st.Table != nil {
			return Statement{table: st.Table, show: true, index: st.IndexName.O}, true
		}
	}
	return Statement{}, false
}

// errNotSupported is MySQL's ER_NOT_SUPPORTED_YET.
func errNotSupported(what string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSUnknownSQLState, "This version of percdb doesn't yet support '%s'", what)
}

// Node is what running a statement needs of the SQL node (package sql's
// DatabaseProvider).
type Node interface {
	// Catalog returns the newest catalog version.
	Catalog(ctx context.Context) (*catalog.Catalog, error)
	// Meta returns what reads of the table def of database dbName need.
	Meta(dbName string, def *catalog.TableDef) (*tablemeta.Table, error)
	// Client returns the node's key-value client.
	Client() kv.Client
	// SQLError returns err, an error of the layers below the SQL node,
	// as MySQL's.
	SQLError(err error) error
}

// Run answers SPLIT TABLE and SHOW TABLE ... REGIONS on node for the
// session whose current database is currentDB. TiDB's forms for an index
// (SPLIT TABLE t INDEX i ..., SHOW TABLE t INDEX i REGIONS) are refused
// with 1235.
func Run(ctx context.Context, node Node, currentDB string, st Statement) (*sqltypes.Result, error) {
	dbName := st.table.Schema.O
	if dbName == "" {
		dbName = currentDB
	}
	if dbName == "" {
		return nil, mysql.NewSQLError(mysql.ERNoDb, mysql.SSNoDB, "No database selected")
	}
	cat, err := node.Catalog(ctx)
	if err != nil {
		return nil, node.SQLError(err)
	}
	db, ok := cat.Database(dbName)
	if !ok {
		return nil, mysql.NewSQLError(mysql.ERBadDb, mysql.SSUnknownSQLState, "Unknown database '%s'", dbName)
	}
	def, ok := cat.Table(db.ID, st.table.Name.O)
	if !ok {
		return nil, mysql.NewSQLError(mysql.ERNoSuchTable, mysql.SSUnknownTable, "Table '%s.%s' doesn't exist", dbName, st.table.Name.O)
	}
	m, err := node.Meta(db.Name, def)
	if err != nil {
		return nil, err
	}
	client := node.Client()
	im, start, end, err := splitTarget(m, st)
	if err != nil {
		return nil, err
	}
	if st.show {
		return showRegions(ctx, node, client, start, end)
	}
	sp, ok := kv.AsSplitter(client)
	if !ok {
		return nil, errNotSupported("SPLIT TABLE on this storage")
	}
	var keys [][]byte
	if im == nil {
		handles, err := splitHandles(st.table.Name.O, st.opt)
		if err != nil {
			return nil, err
		}
		for _, h := range handles {
			keys = append(keys, tablecodec.RowKey(nil, m.Exec.ID, tablecodec.IntHandle(h)))
		}
	} else if keys, err = splitKeys(m, im, st.opt); err != nil {
		return nil, err
	}
	done := 0
	for _, key := range keys {
		r, err := client.LocateKey(ctx, key)
		if err != nil {
			return nil, node.SQLError(err)
		}
		if string(r.Start) == string(key) {
			continue // a region starts there already
		}
		if _, _, err := sp.SplitRegion(ctx, key); err != nil {
			// A call that broke in flight may have split: then the key
			// starts a region now.
			if r, lerr := client.LocateKey(ctx, key); lerr != nil || string(r.Start) != string(key) {
				return nil, node.SQLError(fmt.Errorf("split table %s at %s: %w", st.table.Name.O, KeyString(key), err))
			}
		}
		done++
	}
	return &sqltypes.Result{
		Fields: []*querypb.Field{
			{Name: "TOTAL_SPLIT_REGION", Type: sqltypes.Int64},
			{Name: "SCATTER_FINISH_RATIO", Type: sqltypes.Float64},
		},
		Rows: [][]sqltypes.Value{{sqltypes.NewInt64(int64(done)), sqltypes.NewFloat64(1)}},
	}, nil
}

// maxSplitRegions bounds REGIONS n (TiDB's limit, 1000 by default).
const maxSplitRegions = 1000

// splitHandles returns the handles a split option cuts at: BY's values,
// or BETWEEN's lo and the starts of the n-1 ranges after it.
func splitHandles(table string, opt *ast.SplitOption) ([]int64, error) {
	if opt == nil {
		return nil, errNotSupported("SPLIT without BETWEEN or BY")
	}
	if len(opt.ValueLists) > 0 {
		out := make([]int64, 0, len(opt.ValueLists))
		for _, vs := range opt.ValueLists {
			if len(vs) != 1 {
				return nil, mysql.NewSQLError(mysql.ERWrongValueCountOnRow, mysql.SSUnknownSQLState, "Split table region value count should be 1")
			}
			h, err := handleValue(vs[0])
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
		return out, nil
	}
	if len(opt.Lower) != 1 || len(opt.Upper) != 1 {
		return nil, mysql.NewSQLError(mysql.ERWrongValueCountOnRow, mysql.SSUnknownSQLState, "Split table region lower and upper value count should be 1")
	}
	lo, err := handleValue(opt.Lower[0])
	if err != nil {
		return nil, err
	}
	hi, err := handleValue(opt.Upper[0])
	if err != nil {
		return nil, err
	}
	if hi <= lo {
		return nil, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Split table `%s` region lower value %d should less than the upper value %d", table, lo, hi)
	}
	if opt.Num < 1 || opt.Num > maxSplitRegions {
		return nil, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Split table region num exceeded the limit %d", maxSplitRegions)
	}
	width := new(big.Int).Sub(big.NewInt(hi), big.NewInt(lo))
	out := make([]int64, 0, opt.Num)
	for i := int64(0); i < opt.Num; i++ {
		// lo + i*(hi-lo)/n, in big integers: hi-lo may overflow int64.
		step := new(big.Int).Mul(width, big.NewInt(i))
		step.Quo(step, big.NewInt(opt.Num))
		h := step.Add(step, big.NewInt(lo)).Int64()
		if len(out) == 0 || out[len(out)-1] != h {
			out = append(out, h)
		}
	}
	return out, nil
}

// handleValue reads an integer literal (maybe negated) of a split value.
func handleValue(e ast.ExprNode) (int64, error) {
	neg := false
	if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
		neg, e = true, u.V
	}
	v, ok := e.(*driver.ValueExpr)
	if ok {
		switch v.Kind() {
		case driver.KindInt64:
			h := v.GetInt64()
			if neg {
				if h == math.MinInt64 {
					break
				}
				h = -h
			}
			return h, nil
		case driver.KindUint64:
			if u := v.GetUint64(); !neg && u <= math.MaxInt64 {
				return int64(u), nil
			}
		}
	}
	return 0, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Split table region value must be an integer within the range of the table's handle")
}

// splitTarget returns what a SPLIT TABLE or SHOW TABLE ... REGIONS
// statement cuts or lists: the key index whose values it is given (nil:
// the integer handles of the table's rows) and the key range of the
// table (SHOW TABLE t REGIONS), or of its index (INDEX i, including
// PRIMARY). Without INDEX, a table whose primary key is not one integer
// column is split by its primary key's values (a clustered key).
func splitTarget(m *tablemeta.Table, st Statement) (im *tablemeta.Index, start, end []byte, err error) {
	if st.index == "" {
		if m.Exec.HandleKind == executor.HandleCommon {
			im = m.Primary
		}
		start, end = tablecodec.TableRange(m.Exec.ID)
		return im, start, end, nil
	}
	if strings.EqualFold(st.index, "PRIMARY") && m.Primary != nil {
		start, end = tablecodec.RecordRange(m.Exec.ID)
		if m.Exec.HandleKind == executor.HandleCommon {
			im = m.Primary
		}
		return im, start, end, nil
	}
	for _, ix := range m.Indexes {
		if strings.EqualFold(ix.Def.Name, st.index) {
			start, end = tablecodec.IndexRange(m.Exec.ID, ix.Def.ID)
			return ix, start, end, nil
		}
	}
	return nil, nil, nil, mysql.NewSQLError(mysql.ERKeyDoesNotExist, mysql.SSUnknownSQLState, "Key '%s' doesn't exist in table '%s'", st.index, st.table.Name.O)
}

// splitKeys returns the keys a split option cuts index im of m at (the
// primary key's row keys for a clustered primary key): BY's value lists,
// each a prefix of the index's columns converted to their types, or
// BETWEEN's lower key and the starts of the n-1 equal shares of the key
// space after it up to the upper key (TiDB splits an index range the
// same way: by the keys' bytes, as the values' distribution is unknown).
func splitKeys(m *tablemeta.Table, im *tablemeta.Index, opt *ast.SplitOption) ([][]byte, error) {
	if opt == nil {
		return nil, errNotSupported("SPLIT without BETWEEN or BY")
	}
	key := func(exprs []ast.ExprNode) ([]byte, error) {
		if len(exprs) == 0 || len(exprs) > len(im.Types) {
			return nil, mysql.NewSQLError(mysql.ERWrongValueCountOnRow, mysql.SSUnknownSQLState,
				"Split index `%s` region column count %d exceeds index column count %d", im.Def.Name, len(exprs), len(im.Types))
		}
		vals := make([]any, len(exprs))
		for i, e := range exprs {
			v, err := literalValue(e)
			if err == nil {
				var inRange gsql.ConvertInRange
				vals[i], inRange, err = im.Types[i].Convert(gsql.NewEmptyContext(), v)
				if err == nil && !inRange {
					err = fmt.Errorf("out of range")
				}
			}
			if err != nil {
				return nil, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState,
					"Split index `%s` region value %d: %v", im.Def.Name, i+1, err)
			}
		}
		lo := executor.Bound{Values: vals, Inclusive: true}
		var r executor.KeyRange
		var err error
		if im.IsPrimary {
			r, err = m.Exec.HandleRange(lo, executor.Bound{})
		} else {
			r, err = m.Exec.IndexRange(im.Exec, lo, executor.Bound{})
		}
		return r.Start, err
	}
	if len(opt.ValueLists) > 0 {
		out := make([][]byte, 0, len(opt.ValueLists))
		for _, vs := range opt.ValueLists {
			k, err := key(vs)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		return out, nil
	}
	lo, err := key(opt.Lower)
	if err != nil {
		return nil, err
	}
	hi, err := key(opt.Upper)
	if err != nil {
		return nil, err
	}
	if string(hi) <= string(lo) {
		return nil, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Split index `%s` region lower value should less than the upper value", im.Def.Name)
	}
	if opt.Num < 1 || opt.Num > maxSplitRegions {
		return nil, mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "Split table region num exceeded the limit %d", maxSplitRegions)
	}
	return shareKeys(lo, hi, opt.Num), nil
}

// shareKeys returns lo and the starts of the n-1 equal shares of [lo, hi)
// after it, the keys read as big-endian numbers of the longer key's
// length (the shorter padded with zero bytes), duplicates dropped.
func shareKeys(lo, hi []byte, n int64) [][]byte {
	l := max(len(lo), len(hi))
	pad := func(b []byte) *big.Int {
		return new(big.Int).SetBytes(append(append([]byte{}, b...), make([]byte, l-len(b))...))
	}
	a, b := pad(lo), pad(hi)
	width := new(big.Int).Sub(b, a)
	out := [][]byte{lo}
	for i := int64(1); i < n; i++ {
		k := new(big.Int).Mul(width, big.NewInt(i))
		k.Quo(k, big.NewInt(n)).Add(k, a)
		key := k.FillBytes(make([]byte, l))
		if string(key) > string(out[len(out)-1]) {
			out = append(out, key)
		}
	}
	return out
}

// literalValue reads a split value: a literal, maybe negated, as the Go
// value a GMS type converts (a decimal as its text).
func literalValue(e ast.ExprNode) (any, error) {
	neg := false
	if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
		neg, e = true, u.V
	}
	v, ok := e.(*driver.ValueExpr)
	if !ok {
		return nil, fmt.Errorf("not a literal")
	}
	switch v.Kind() {
	case driver.KindInt64:
		if neg {
			return -v.GetInt64(), nil
		}
		return v.GetInt64(), nil
	case driver.KindUint64:
		if neg {
			return nil, fmt.Errorf("out of range")
		}
		return v.GetUint64(), nil
	case driver.KindFloat64:
		if neg {
			return -v.GetFloat64(), nil
		}
		return v.GetFloat64(), nil
	case driver.KindMysqlDecimal:
		s := v.GetMysqlDecimal().String()
		if neg {
			s = "-" + s
		}
		return s, nil
	case driver.KindString, driver.KindBytes:
		if neg {
			return nil, fmt.Errorf("a negated string")
		}
		return v.GetString(), nil
	case driver.KindNull:
		return nil, fmt.Errorf("NULL")
	}
	return nil, fmt.Errorf("a literal of kind %d", v.Kind())
}

// showRegions lists the regions that hold keys in [start, end) (TiDB's
// SHOW TABLE t [INDEX i] REGIONS, with the columns percdb knows of a
// region: its id, its range with the keys written as TiDB writes them,
// its epoch version and the address of the store serving it, empty on
// the single node).
func showRegions(ctx context.Context, node Node, c kv.Client, start, end []byte) (*sqltypes.Result, error) {
	res := &sqltypes.Result{Fields: []*querypb.Field{
		{Name: "REGION_ID", Type: sqltypes.Int64},
		{Name: "START_KEY", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "END_KEY", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "EPOCH_VERSION", Type: sqltypes.Int64},
		{Name: "LEADER_ADDR", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
	}}
	for key := start; ; {
		r, err := c.LocateKey(ctx, key)
		if err == nil {
			// Fresh from the router's source (pd), not a cached route
			// that may predate splits and leader moves.
			c.InvalidateRegion(r.ID)
			r, err = c.LocateKey(ctx, key)
		}
		if err != nil {
			return nil, node.SQLError(err)
		}
		res.Rows = append(res.Rows, []sqltypes.Value{
			sqltypes.NewInt64(int64(r.ID)), sqltypes.NewVarChar(KeyString(r.Start)), sqltypes.NewVarChar(KeyString(r.End)),
			sqltypes.NewInt64(int64(r.Epoch.Version)), sqltypes.NewVarChar(r.Addr),
		})
		if len(r.End) == 0 || string(r.End) >= string(end) || string(r.End) <= string(key) {
			return res, nil
		}
		key = r.End
	}
}

// KeyString writes a region boundary as TiDB does: t_<table>_r_<handle>
// for an integer row key, t_<table>_i_<index>_<hex> for an index key,
// t_<table>_ for a table's start, the hex of anything else ("" for the
// key space's ends).
func KeyString(key []byte) string {
	if len(key) == 0 {
		return ""
	}
	if tid, err := tablecodec.DecodeTableID(key); err == nil {
		switch {
		case tablecodec.IsRowKey(key):
			if _, h, err := tablecodec.DecodeRowKey(key, false); err == nil {
				return fmt.Sprintf("t_%d_r_%d", tid, h.Int)
			}
		case tablecodec.IsIndexKey(key):
			if _, iid, vals, err := tablecodec.DecodeIndexKey(key); err == nil {
				return fmt.Sprintf("t_%d_i_%d_%s", tid, iid, hex.EncodeToString(vals))
			}
		case string(key) == string(tablecodec.TablePrefix(nil, tid)):
			return fmt.Sprintf("t_%d_", tid)
		}
	}
	return hex.EncodeToString(key)
}
