package perfschema

import (
	"fmt"
	"strings"
	"sync"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/memtable"
	"github.com/percdb/percdb/sql/stmtsummary"
)

// performance_schema is a database of percdb's own, served from memory
// like MySQL's (GMS has none): today one table,
// events_statements_summary_by_digest, the statement statistics by digest
// that observe.go records (package stmtsummary). It is listed with the
// catalog's databases; it cannot be created, dropped or written, except
// that TRUNCATE TABLE on the summary empties it, as in MySQL.

// DatabaseName is the database's name.
const DatabaseName = "performance_schema"

// digestTableName is the summary table's name.
const digestTableName = "events_statements_summary_by_digest"

// IsDatabase reports whether name names performance_schema (database
// names are case-insensitive in percdb).
func IsDatabase(name string) bool { return strings.EqualFold(name, DatabaseName) }

// Database is the performance_schema database. It has no views,
// triggers, stored procedures or events (memtable.SystemDatabase).
type Database struct {
	memtable.SystemDatabase
	summary *stmtsummary.Summary
}

// NewDatabase returns performance_schema with the node's statement
// statistics, summary (nil when the node collects none: the database is
// then empty).
func NewDatabase(summary *stmtsummary.Summary) Database {
	return Database{SystemDatabase: memtable.SystemDatabase{DBName: DatabaseName}, summary: summary}
}

var (
	_ gsql.Database                = Database{}
	_ gsql.ViewDatabase            = Database{}
	_ gsql.TriggerDatabase         = Database{}
	_ gsql.StoredProcedureDatabase = Database{}
	_ gsql.EventDatabase           = Database{}
)

// Name implements sql.Nameable.
func (Database) Name() string { return DatabaseName }

// GetTableInsensitive implements sql.Database.
func (d Database) GetTableInsensitive(_ *gsql.Context, name string) (gsql.Table, bool, error) {
	if strings.EqualFold(name, digestTableName) && d.summary != nil {
		return &digestTable{summary: d.summary}, true, nil
	}
	return nil, false, nil
}

// GetTableNames implements sql.Database.
func (d Database) GetTableNames(*gsql.Context) ([]string, error) {
	if d.summary == nil {
		return nil, nil
	}
	return []string{digestTableName}, nil
}

// digestTable is performance_schema.events_statements_summary_by_digest.
type digestTable struct{ summary *stmtsummary.Summary }

var (
	_ gsql.Table             = (*digestTable)(nil)
	_ gsql.TruncateableTable = (*digestTable)(nil)
)

// digestSchema is MySQL 8's columns of the table that percdb has values
// for, in MySQL's order; times are in picoseconds, as MySQL's timers.
var digestSchema = func() gsql.Schema {
	u64, ts, text := types.Uint64, types.TimestampMaxPrecision, types.LongText
	s := memtable.Schema(digestTableName, []memtable.Column{
		{"SCHEMA_NAME", memtable.VarChar(64), true},
		{"DIGEST", memtable.VarChar(64), true},
		{"DIGEST_TEXT", text, true},
		{"COUNT_STAR", u64, false},
		{"SUM_TIMER_WAIT", u64, false},
		{"MIN_TIMER_WAIT", u64, false},
		{"AVG_TIMER_WAIT", u64, false},
		{"MAX_TIMER_WAIT", u64, false},
		{"SUM_ERRORS", u64, false},
		{"SUM_ROWS_AFFECTED", u64, false},
		{"SUM_ROWS_SENT", u64, false},
		{"SUM_ROWS_EXAMINED", u64, false},
		{"FIRST_SEEN", ts, false},
		{"LAST_SEEN", ts, false},
		{"QUANTILE_95", u64, false},
		{"QUANTILE_99", u64, false},
		{"QUANTILE_999", u64, false},
		{"QUERY_SAMPLE_TEXT", text, true},
		{"QUERY_SAMPLE_SEEN", ts, true},
		{"QUERY_SAMPLE_TIMER_WAIT", u64, true},
	})
	for _, c := range s {
		c.DatabaseSource = DatabaseName
	}
	return s
}()

// Name implements sql.Nameable.
func (*digestTable) Name() string { return digestTableName }

// String implements fmt.Stringer.
func (*digestTable) String() string { return digestTableName }

// Schema implements sql.Table.
func (*digestTable) Schema() gsql.Schema { return digestSchema }

// Collation implements sql.Table.
func (*digestTable) Collation() gsql.CollationID { return gsql.Collation_utf8mb4_0900_ai_ci }

// Partitions implements sql.Table: one partition.
func (*digestTable) Partitions(*gsql.Context) (gsql.PartitionIter, error) {
	return gsql.PartitionsToPartitionIter(memtable.Partition{}), nil
}

// PartitionRows implements sql.Table.
func (t *digestTable) PartitionRows(*gsql.Context, gsql.Partition) (gsql.RowIter, error) {
	rows := t.summary.Rows()
	out := make([]gsql.Row, len(rows))
	for i := range rows {
		out[i] = digestRow(&rows[i])
	}
	return gsql.RowsToRowIter(out...), nil
}

// Truncate implements sql.TruncateableTable: it empties the summary.
func (t *digestTable) Truncate(*gsql.Context) (int, error) {
	n := len(t.summary.Rows())
	t.summary.Reset()
	return n, nil
}

// picos returns d in picoseconds, MySQL's timer unit.
func picos(d time.Duration) uint64 { return uint64(d.Nanoseconds()) * 1000 }

// digestRow returns r as a row of digestSchema.
func digestRow(r *stmtsummary.Row) gsql.Row {
	var schema, digest, text, sample, sampleSeen, sampleWait any
	if !r.Overflow {
		digest, text = r.Digest, r.DigestText
		if r.Schema != "" {
			schema = r.Schema
		}
		sample, sampleSeen, sampleWait = r.Sample, r.SampleSeen.UTC(), picos(r.SampleLatency)
	}
	return gsql.Row{
		schema, digest, text,
		r.Count, picos(r.SumLatency), picos(r.MinLatency), picos(r.AvgLatency()), picos(r.MaxLatency),
		r.Errors, r.RowsAffected, r.RowsSent, r.RowsExamined,
		r.FirstSeen.UTC(), r.LastSeen.UTC(),
		picos(r.P95), picos(r.P99), picos(r.P999),
		sample, sampleSeen, sampleWait,
	}
}

// ErrSystemDatabase is MySQL's error for dropping a system database
// (memtable.ErrSystemDatabase).
func ErrSystemDatabase(ctx *gsql.Context, name string) error {
	return memtable.ErrSystemDatabase(ctx, name)
}

// varDigestsSize is MySQL's variable of the summary's bound.
const varDigestsSize = "performance_schema_digests_size"

// registerPerfSchemaVariables adds performance_schema's variables to
// GMS's (once per process: GMS keeps one registry).
var registerPerfSchemaVariables = sync.OnceFunc(func() {
	gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{
		&gsql.MysqlSystemVariable{
			Name:    varDigestsSize,
			Scope:   gsql.GetMysqlScope(gsql.SystemVariableScope_Global),
			Dynamic: false,
			Type:    types.NewSystemIntType(varDigestsSize, -1, 1048576, false),
			Default: int64(stmtsummary.DefaultSize),
		},
	})
})

// StartDigests returns the statement summary of a node whose
// Config.DigestsSize is size (nil for none) and sets
// performance_schema_digests_size to its bound (0 for none; GMS keeps
// the variable per process, so the last node opened sets it).
func StartDigests(size int) (*stmtsummary.Summary, error) {
	registerPerfSchemaVariables()
	var sum *stmtsummary.Summary
	bound := 0
	if size >= 0 {
		sum = stmtsummary.New(size)
		bound = sum.Size()
	}
	if err := gsql.SystemVariables.AssignValues(map[string]any{varDigestsSize: int64(bound)}); err != nil {
		return nil, fmt.Errorf("set %s: %w", varDigestsSize, err)
	}
	return sum, nil
}
