package sql

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/pd/pdapi"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/memtable"
	"github.com/percdb/percdb/sql/split"
)

// regionStatusTable is information_schema.TIKV_REGION_STATUS, TiDB's
// table of regions: one row for each region and each table's rows or
// index whose keys it overlaps (a region holding no table's keys gets
// one row with the table columns NULL), with TiDB's columns as far as
// percdb has them (APPROXIMATE_KEYS is NULL: no store keeps a key count;
// TiDB's replication-status columns are left out) and the stores of the
// region's leader and peers (LEADER_STORE_ID, PEER_STORE_IDS; NULL on
// the single node, which has no stores). WRITTEN_BYTES and READ_BYTES
// are, as in TiDB, the bytes the region's leader served over its last
// heartbeat interval (a KV node's is 1 s by default), as pd has them:
// the whole cluster's traffic to the region; NULL on the single node and
// before the leader reported.
const regionStatusTable = "TIKV_REGION_STATUS"

var regionStatusSchema = memtable.Schema(regionStatusTable, []memtable.Column{
	{"REGION_ID", types.Int64, false}, {"START_KEY", memtable.VarChar(1024), false}, {"END_KEY", memtable.VarChar(1024), false},
	{"TABLE_ID", types.Int64, true}, {"DB_NAME", memtable.VarChar(64), true}, {"TABLE_NAME", memtable.VarChar(64), true},
	{"IS_INDEX", types.Int8, false}, {"INDEX_ID", types.Int64, true}, {"INDEX_NAME", memtable.VarChar(64), true},
	{"EPOCH_CONF_VER", types.Int64, false}, {"EPOCH_VERSION", types.Int64, false},
	{"WRITTEN_BYTES", types.Int64, true}, {"READ_BYTES", types.Int64, true},
	{"APPROXIMATE_SIZE", types.Int64, true}, {"APPROXIMATE_KEYS", types.Int64, true},
	{"LEADER_STORE_ID", types.Int64, true}, {"PEER_STORE_IDS", memtable.VarChar(256), true},
})

// RegionDetail is what a cluster's placement driver knows of a region
// beyond its route, for information_schema.TIKV_REGION_STATUS.
type RegionDetail struct {
	// ConfVer counts the region's conf changes.
	ConfVer uint64
	// Leader is the store of the region's leader as last reported.
	Leader uint64
	// Peers are the stores holding its replicas (learners included).
	Peers []uint64
	// ApproximateSize is its size in bytes as its leader last reported
	// it (0: not reported yet).
	ApproximateSize uint64
	// Load is what its leader served over its last reported interval
	// (Load.IntervalMS 0: not reported yet).
	Load pdapi.RegionLoad
}

// regionKeyRange is the key range of one table's rows or one index, and
// what it belongs to.
type regionKeyRange struct {
	start, end []byte
	db         string
	table      *catalog.TableDef
	index      *catalog.IndexDef // nil: the rows
}

// catalogKeyRanges lists the key ranges of every table's rows and
// indexes in cat, in key order.
func catalogKeyRanges(cat *catalog.Catalog) []regionKeyRange {
	var out []regionKeyRange
	for _, db := range cat.SortedDatabases() {
		for _, def := range cat.SortedTables(db.ID) {
			start, end := tablecodec.RecordRange(def.ID)
			out = append(out, regionKeyRange{start: start, end: end, db: db.Name, table: def})
			for i := range def.Indexes {
				ix := &def.Indexes[i]
				start, end := tablecodec.IndexRange(def.ID, ix.ID)
				out = append(out, regionKeyRange{start: start, end: end, db: db.Name, table: def, index: ix})
			}
		}
	}
	return out
}

// overlaps reports whether [start, end) (end empty: +infinity) and r meet.
func (r regionKeyRange) overlaps(start, end []byte) bool {
	return (len(end) == 0 || bytes.Compare(r.start, end) < 0) && bytes.Compare(start, r.end) < 0
}

// regionStatusRows reads the table: every region from the first key on,
// located through the client's router (fresh from pd in a cluster), its
// detail from pd (cluster) or its size from the local store (single
// node), and the catalog's tables and indexes it overlaps.
func (p *DatabaseProvider) regionStatusRows(ctx *gsql.Context) ([]gsql.Row, error) {
	cat, err := p.readCatalog(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	ranges := catalogKeyRanges(cat)
	client := p.store.Client()
	var rows []gsql.Row
	for key := []byte{}; ; {
		r, err := client.LocateKey(ctx, key)
		if err == nil {
			client.InvalidateRegion(r.ID)
			r, err = client.LocateKey(ctx, key)
		}
		if err != nil {
			return nil, toSQLError(fmt.Errorf("read information_schema.%s: %w", regionStatusTable, err))
		}
		head, err := p.regionHead(ctx, r)
		if err != nil {
			return nil, toSQLError(fmt.Errorf("read information_schema.%s: region %d: %w", regionStatusTable, r.ID, err))
		}
		matched := false
		for _, kr := range ranges {
			if !kr.overlaps(r.Start, r.End) {
				continue
			}
			matched = true
			row := append(gsql.Row{}, head[:3]...)
			row = append(row, kr.table.ID, kr.db, kr.table.Name)
			if kr.index == nil {
				row = append(row, int8(0), nil, nil)
			} else {
				row = append(row, int8(1), kr.index.ID, kr.index.Name)
			}
			rows = append(rows, append(row, head[3:]...))
		}
		if !matched {
			row := append(gsql.Row{}, head[:3]...)
			row = append(row, nil, nil, nil, int8(0), nil, nil)
			rows = append(rows, append(row, head[3:]...))
		}
		if len(r.End) == 0 || bytes.Compare(r.End, key) <= 0 {
			return rows, nil
		}
		key = r.End
	}
}

// regionHead returns the columns of region r's rows other than the
// table's: REGION_ID, START_KEY, END_KEY, then EPOCH_CONF_VER,
// EPOCH_VERSION, WRITTEN_BYTES, READ_BYTES, APPROXIMATE_SIZE (MiB, as
// TiDB), APPROXIMATE_KEYS, LEADER_STORE_ID, PEER_STORE_IDS.
func (p *DatabaseProvider) regionHead(ctx context.Context, r kv.RegionInfo) (gsql.Row, error) {
	head := gsql.Row{int64(r.ID), split.KeyString(r.Start), split.KeyString(r.End)}
	confVer := int64(r.Epoch.ConfVer)
	var written, read, size, leader, peers any
	switch {
	case p.regionDetail != nil:
		d, err := p.regionDetail(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		confVer, leader = int64(d.ConfVer), int64(d.Leader)
		if d.Load.IntervalMS != 0 {
			written, read = int64(d.Load.WrittenBytes), int64(d.Load.ReadBytes)
		}
		size = int64(d.ApproximateSize >> 20)
		ids := make([]string, len(d.Peers))
		for i, id := range d.Peers {
			ids[i] = strconv.FormatUint(id, 10)
		}
		peers = strings.Join(ids, ",")
	case p.localKV != nil:
		n, err := p.localKV.ApproximateSize(r.Start, r.End)
		if err != nil {
			return nil, err
		}
		size = int64(n >> 20)
	}
	return append(head, confVer, int64(r.Epoch.Version), written, read, size, nil, leader, peers), nil
}
