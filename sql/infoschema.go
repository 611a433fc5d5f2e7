package sql

import (
	"fmt"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/pingcap/tidb/pkg/parser"

	"github.com/percdb/percdb/sql/memtable"
	"github.com/percdb/percdb/sql/safepoint"
)

// infoSchema is GMS's information_schema with percdb's tables in front:
// PROCESSLIST from percdb's process list (processlist.go) in place of
// GMS's, and TIDB_TRX, the open transactions, under TiDB's name and
// columns, DATA_LOCK_WAITS (lockwaits.go), and TiDB's TIKV_REGION_STATUS
// (regionstatus.go).
type infoSchema struct {
	gsql.Database
	provider *DatabaseProvider
	sessions *sessionRegistry
}

// Names of the tables percdb adds or replaces.
const (
	processListTable = "PROCESSLIST"
	trxTable         = "TIDB_TRX"
	columnsTableName = "COLUMNS"
	// statisticsTableName is information_schema.STATISTICS.
	statisticsTableName = "STATISTICS"
	// routinesName is information_schema.ROUTINES.
	routinesName = "ROUTINES"
	// tablesName is information_schema.TABLES.
	tablesName = "TABLES"
)

// GetTableInsensitive implements sql.Database.
func (d *infoSchema) GetTableInsensitive(ctx *gsql.Context, name string) (gsql.Table, bool, error) {
	switch {
	case strings.EqualFold(name, processListTable):
		return &memTable{name: processListTable, schema: processListSchema, rows: d.processListRows}, true, nil
	case strings.EqualFold(name, trxTable):
		return &memTable{name: trxTable, schema: trxSchema, rows: d.trxRows}, true, nil
	case strings.EqualFold(name, safepoint.TableName):
		return &memTable{name: safepoint.TableName, schema: safepoint.Schema, read: func(ctx *gsql.Context) ([]gsql.Row, error) { return safepoint.Rows(ctx, d.provider.store) }}, true, nil
	case strings.EqualFold(name, regionStatusTable):
		return &memTable{name: regionStatusTable, schema: regionStatusSchema, read: d.provider.regionStatusRows}, true, nil
	case strings.EqualFold(name, dataLockWaitsName):
		return dataLockWaitsTable(&d.provider.lockWaits), true, nil
	case strings.EqualFold(name, statisticsTableName):
		// CARDINALITY from ANALYZE TABLE's statistics (statsinfo.go).
		t, ok, err := d.Database.GetTableInsensitive(ctx, name)
		if err != nil || !ok {
			return t, ok, err
		}
		return &statisticsTable{Table: t, provider: d.provider}, true, nil
	case strings.EqualFold(name, columnsTableName):
		// GENERATION_EXPRESSION filled in (generated.go).
		t, ok, err := d.Database.GetTableInsensitive(ctx, name)
		if err != nil || !ok {
			return t, ok, err
		}
		return &columnsTable{Table: t, provider: d.provider}, true, nil
	case strings.EqualFold(name, routinesName):
		// Stored functions after GMS's procedures (storedfunc.go).
		t, ok, err := d.Database.GetTableInsensitive(ctx, name)
		if err != nil || !ok {
			return t, ok, err
		}
		return &routinesTable{Table: t, provider: d.provider}, true, nil
	case strings.EqualFold(name, tablesName):
		// mysql's tables too (mysqllisted.go).
		t, ok, err := d.Database.GetTableInsensitive(ctx, name)
		if err != nil || !ok {
			return t, ok, err
		}
		return mysqlListedTable{t}, true, nil
	case strings.EqualFold(name, viewsName):
		// Each view bound in its own database (compat_viewdb.go).
		t, ok, err := d.Database.GetTableInsensitive(ctx, name)
		if err != nil || !ok {
			return t, ok, err
		}
		return &viewsTable{Table: t}, true, nil
	}
	return d.Database.GetTableInsensitive(ctx, name)
}

// GetTableNames implements sql.Database.
func (d *infoSchema) GetTableNames(ctx *gsql.Context) ([]string, error) {
	names, err := d.Database.GetTableNames(ctx)
	if err != nil {
		return nil, err
	}
	return append(names, trxTable, dataLockWaitsName, safepoint.TableName, regionStatusTable), nil
}

// processes returns the connections as the process list shows them.
func (d *infoSchema) processes(ctx *gsql.Context) []processInfo {
	return d.provider.processes(ctx, ctx.ProcessList.Processes(), d.sessions, time.Now())
}

// processListSchema is MySQL's information_schema.PROCESSLIST.
var processListSchema = memtable.Schema(processListTable, []memtable.Column{
	{"ID", types.Uint64, false}, {"USER", memtable.VarChar(32), false}, {"HOST", memtable.VarChar(261), false},
	{"DB", memtable.VarChar(64), true}, {"COMMAND", memtable.VarChar(16), false}, {"TIME", types.Int32, false},
	{"STATE", memtable.VarChar(64), true}, {"INFO", types.LongText, true},
})

func (d *infoSchema) processListRows(ctx *gsql.Context) []gsql.Row {
	ps := d.processes(ctx)
	rows := make([]gsql.Row, len(ps))
	for i, p := range ps {
		rows[i] = gsql.Row{uint64(p.ID), p.User, p.Host, nullString(p.DB), p.Command, int32(p.Time), p.State, nullString(p.Info)}
	}
	return rows
}

// TIDB_TRX's states (TiDB's words).
const (
	trxIdle        = "Idle"
	trxRunning     = "Running"
	trxLockWaiting = "LockWaiting"
)

// trxSchema is the part of TiDB's information_schema.TIDB_TRX percdb has
// values for.
var trxSchema = memtable.Schema(trxTable, []memtable.Column{
	{"ID", types.Uint64, false}, {"START_TIME", types.DatetimeMaxPrecision, true},
	{"CURRENT_SQL_DIGEST", memtable.VarChar(64), true}, {"CURRENT_SQL_DIGEST_TEXT", types.LongText, true},
	{"STATE", memtable.VarChar(16), false}, {"MEM_BUFFER_KEYS", types.Uint64, false}, {"MEM_BUFFER_BYTES", types.Uint64, false},
	{"SESSION_ID", types.Uint64, false}, {"USER", memtable.VarChar(32), true}, {"DB", memtable.VarChar(64), true},
})

// trxState returns the TIDB_TRX state of process p's transaction.
func trxState(p *processInfo) string {
	switch {
	case p.Waiting:
		return trxLockWaiting
	case p.Info != "":
		return trxRunning
	}
	return trxIdle
}

func (d *infoSchema) trxRows(ctx *gsql.Context) []gsql.Row {
	var rows []gsql.Row
	for _, p := range d.processes(ctx) {
		if p.Txn.startTS == 0 {
			continue
		}
		var digest, text any
		if p.Info != "" {
			n, dg := parser.NormalizeDigest(p.Info)
			digest, text = dg.String(), n
		}
		rows = append(rows, gsql.Row{
			p.Txn.startTS, p.TxnStart.UTC(), digest, text, trxState(&p),
			uint64(p.Txn.keys), uint64(p.Txn.bytes), uint64(p.ID), nullString(p.User), nullString(p.DB),
		})
	}
	return rows
}

// nullString is s, or NULL for "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// memTable is a read-only table whose rows are computed when it is read,
// by rows, or by read when computing them can fail.
type memTable struct {
	name   string
	schema gsql.Schema
	rows   func(*gsql.Context) []gsql.Row
	read   func(*gsql.Context) ([]gsql.Row, error)
}

var _ gsql.Table = (*memTable)(nil)

// Name implements sql.Nameable.
func (t *memTable) Name() string { return t.name }

// String implements fmt.Stringer.
func (t *memTable) String() string { return t.name }

// Schema implements sql.Table.
func (t *memTable) Schema() gsql.Schema { return t.schema }

// Collation implements sql.Table.
func (t *memTable) Collation() gsql.CollationID { return gsql.Collation_utf8mb4_0900_ai_ci }

// Partitions implements sql.Table: one partition.
func (t *memTable) Partitions(*gsql.Context) (gsql.PartitionIter, error) {
	return gsql.PartitionsToPartitionIter(memtable.Partition{}), nil
}

// PartitionRows implements sql.Table.
func (t *memTable) PartitionRows(ctx *gsql.Context, _ gsql.Partition) (gsql.RowIter, error) {
	if t.read != nil {
		rows, err := t.read(ctx)
		if err != nil {
			return nil, toSQLError(fmt.Errorf("read information_schema.%s: %w", t.name, err))
		}
		return gsql.RowsToRowIter(rows...), nil
	}
	return gsql.RowsToRowIter(t.rows(ctx)...), nil
}
