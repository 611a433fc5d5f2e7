package sql

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/console"
	"github.com/percdb/percdb/sql/keyviz"
	"github.com/percdb/percdb/sql/slowlog"
)

// The web console (package console) on the status port reads the node
// through consoleSource: the statement summary, the slow statements kept
// in memory, the process list, the open transactions and lock waits, and
// KILL. Its charts come from a console.History of the node's metrics,
// sampled every consoleSampleInterval while the node runs.

// consoleSampleInterval and consoleSamples: the charts show the last ten
// minutes at two-second resolution.
const (
	consoleSampleInterval = 2 * time.Second
	consoleSamples        = 300
)

// consoleSource is console.Source for a Server.
type consoleSource struct{ s *Server }

var _ console.Source = consoleSource{}

// consoleEntry returns e as the console shows it.
func consoleEntry(e *slowlog.Entry) console.SlowQuery {
	return console.SlowQuery{
		Time: e.Start, QueryMs: ms(e.QueryTime), User: e.User, Host: e.Host, ConnID: e.ConnID, DB: e.DB,
		RowsSent: e.RowsSent, RowsExamined: e.RowsExamined, RowsAffected: e.RowsAffected,
		StartTS: e.StartTS, CommitTS: e.CommitTS, Errno: e.Errno, Query: truncateText(e.Query),
	}
}

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Statements implements console.Source.
func (c consoleSource) Statements() []console.Statement {
	sum := c.s.provider.digests
	if sum == nil {
		return nil
	}
	rows := sum.Rows()
	out := make([]console.Statement, len(rows))
	for i := range rows {
		r := &rows[i]
		out[i] = console.Statement{
			Schema: r.Schema, Digest: r.Digest, DigestText: r.DigestText, Count: r.Count,
			SumMs: ms(r.SumLatency), AvgMs: ms(r.AvgLatency()), MinMs: ms(r.MinLatency), MaxMs: ms(r.MaxLatency),
			P95Ms: ms(r.P95), P99Ms: ms(r.P99), Errors: r.Errors,
			RowsSent: r.RowsSent, RowsExamined: r.RowsExamined, RowsAffected: r.RowsAffected,
			FirstSeen: r.FirstSeen, LastSeen: r.LastSeen, Sample: r.Sample,
		}
		if r.Overflow {
			out[i].DigestText = "(statements of digests beyond performance_schema_digests_size)"
		}
	}
	return out
}

// SlowQueries implements console.Source.
func (c consoleSource) SlowQueries() []console.SlowQuery { return c.s.recentSlow.List() }

// processes returns the node's connections now.
func (c consoleSource) processes() []processInfo {
	return c.s.provider.processes(context.Background(), c.s.engine.ProcessList.Processes(), c.s.sessions, time.Now())
}

// Processes implements console.Source.
func (c consoleSource) Processes() []console.Process {
	ps := c.processes()
	out := make([]console.Process, len(ps))
	for i, p := range ps {
		out[i] = console.Process{ID: p.ID, User: p.User, Host: p.Host, DB: p.DB, Command: p.Command,
			TimeS: p.Time, State: p.State, Info: p.Info, TxnStartTS: p.Txn.startTS}
	}
	return out
}

// Transactions implements console.Source.
func (c consoleSource) Transactions() []console.Transaction {
	now := time.Now()
	var out []console.Transaction
	for _, p := range c.processes() {
		if p.Txn.startTS == 0 {
			continue
		}
		stmt := p.Info
		if stmt != "" {
			stmt, _ = parser.NormalizeDigest(stmt)
		}
		out = append(out, console.Transaction{
			StartTS: p.Txn.startTS, StartTime: p.TxnStart, AgeS: now.Sub(p.TxnStart).Seconds(),
			State: trxState(&p), ConnID: p.ID, User: p.User, DB: p.DB,
			Keys: p.Txn.keys, Bytes: p.Txn.bytes, Statement: stmt,
		})
	}
	return out
}

// LockWaits implements console.Source: ADMIN SHOW LOCK WAITS's rows (of
// every store: the KV nodes' on a SQL node of a cluster; those that
// answered, when some did not).
func (c consoleSource) LockWaits() []console.LockWait {
	rows, err := c.s.provider.lockWaits.rows(context.Background())
	if err != nil {
		slog.Debug("console: lock waits", "err", err)
	}
	var out []console.LockWait
	for _, w := range rows {
		out = append(out, console.LockWait{ConnID: uint32(w.txnConn), StartTS: w.txn, Key: hex.EncodeToString(w.key),
			HoldingConnID: uint32(w.holderConn), HoldingTS: w.holder})
	}
	return out
}

// Kill implements console.Source: KILL QUERY id, or KILL CONNECTION id.
func (c consoleSource) Kill(id uint32, query bool) error {
	if c.s.sessions.get(id) == nil {
		return console.ErrNoConnection
	}
	c.s.engine.ProcessList.Kill(id)
	if !query {
		c.s.mysql.SessionManager().KillConnection(id)
	}
	return nil
}

// Heatmap implements console.Source: the key-space heatmap, its spans
// named from the newest catalog this node loaded (a span of a table
// dropped or rewritten since is named by its ID).
func (c consoleSource) Heatmap() console.Heatmap {
	if c.s.kvMetrics == nil {
		return console.Heatmap{}
	}
	return c.heatmapOf(c.s.kvMetrics.Heat())
}

// ClusterHeatmap implements console.Source.
func (c consoleSource) ClusterHeatmap() console.Heatmap {
	if c.s.clusterHeat == nil {
		return console.Heatmap{}
	}
	return c.heatmapOf(c.s.clusterHeat.rec)
}

// heatmapOf is rec's heatmap for the console: its parts named from the
// catalog, on a SQL node of a cluster in the regions' key order.
func (c consoleSource) heatmapOf(rec *keyviz.Recorder) console.Heatmap {
	h := rec.Snapshot()
	out := console.Heatmap{InCluster: c.s.cfg.Cluster != nil, IntervalS: h.Interval.Seconds(), Times: make([]int64, len(h.Times))}
	for i, t := range h.Times {
		out.Times[i] = t.UnixMilli()
	}
	tables, dbNames := c.catalogTables()
	for i, span := range h.Spans {
		row := console.HeatmapRow{Region: span.Region}
		row.Table, row.Part = spanName(span, tables, dbNames)
		for _, cell := range h.Cells[i] {
			row.ReadKeys = append(row.ReadKeys, cell.ReadKeys)
			row.ReadBytes = append(row.ReadBytes, cell.ReadBytes)
			row.WriteKeys = append(row.WriteKeys, cell.WriteKeys)
			row.WriteBytes = append(row.WriteBytes, cell.WriteBytes)
			row.Requests = append(row.Requests, cell.Requests)
		}
		out.Rows = append(out.Rows, row)
	}
	c.orderByRegion(out.Rows, h.Spans)
	return out
}

// spanName names a part of the key space (keyviz.SpanOf) for the console:
// "db.table" (or what is known of it) and "rows", "index <name>",
// "other", "meta" or "overflow".
func spanName(span keyviz.Span, tables map[int64]*catalog.TableDef, dbNames map[int64]string) (table, part string) {
	def := tables[span.TableID]
	switch {
	case span.Part == keyviz.PartMeta:
		return "(meta)", "meta"
	case span.Part == keyviz.PartOverflow:
		return "(more)", "overflow"
	case def != nil:
		table = dbNames[def.DBID] + "." + def.Name
	default:
		table = fmt.Sprintf("table %d (dropped or rewritten)", span.TableID)
	}
	switch span.Part {
	case keyviz.PartRows:
		part = "rows"
	case keyviz.PartIndex:
		part = fmt.Sprintf("index %d", span.IndexID)
		if def != nil {
			for _, idx := range def.Indexes {
				if idx.ID == span.IndexID {
					part = "index " + idx.Name
				}
			}
		}
	case keyviz.PartOther:
		part = "other"
	}
	return table, part
}

// spanLabel is spanName in one string: "db.table rows", "db.table index
// k", "(meta)".
func spanLabel(span keyviz.Span, tables map[int64]*catalog.TableDef, dbNames map[int64]string) string {
	table, part := spanName(span, tables, dbNames)
	if span.Part == keyviz.PartMeta || span.Part == keyviz.PartOverflow {
		return table
	}
	return table + " " + part
}
