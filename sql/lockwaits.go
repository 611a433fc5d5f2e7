package sql

import (
	"context"
	"encoding/hex"
	"strconv"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/kv"
)

// dataLockWaitsName is information_schema.DATA_LOCK_WAITS: the lock waits
// in progress, one row per waiting request, with the columns of MySQL 8's
// performance_schema.data_lock_waits that apply to percdb, and TiDB's
// KEY. MySQL's *_THREAD_ID columns name performance-schema threads,
// which percdb does not have: they hold the connection ids (PROCESSLIST_ID,
// CONNECTION_ID()) instead, 0 for a transaction of another node.
const dataLockWaitsName = "DATA_LOCK_WAITS"

// dataLockWaitsSchema is DATA_LOCK_WAITS' columns.
var dataLockWaitsSchema = gsql.Schema{
	{Name: "ENGINE", Type: types.MustCreateString(sqltypes.VarChar, 32, gsql.Collation_Information_Schema_Default), Source: dataLockWaitsName},
	{Name: "REQUESTING_ENGINE_LOCK_ID", Type: types.MustCreateString(sqltypes.VarChar, 2048, gsql.Collation_Information_Schema_Default), Source: dataLockWaitsName},
	{Name: "REQUESTING_ENGINE_TRANSACTION_ID", Type: types.Uint64, Source: dataLockWaitsName},
	{Name: "REQUESTING_THREAD_ID", Type: types.Uint64, Source: dataLockWaitsName},
	{Name: "BLOCKING_ENGINE_LOCK_ID", Type: types.MustCreateString(sqltypes.VarChar, 2048, gsql.Collation_Information_Schema_Default), Source: dataLockWaitsName},
	{Name: "BLOCKING_ENGINE_TRANSACTION_ID", Type: types.Uint64, Source: dataLockWaitsName},
	{Name: "BLOCKING_THREAD_ID", Type: types.Uint64, Source: dataLockWaitsName},
	{Name: "KEY", Type: types.MustCreateString(sqltypes.VarChar, 2048, gsql.Collation_Information_Schema_Default), Source: dataLockWaitsName},
}

// lockWaitRow is one lock wait in progress.
type lockWaitRow struct {
	key                 []byte
	txn, holder         uint64
	txnConn, holderConn uint64
}

// lockWaitsTimeout bounds one listing of the stores' lock waits.
const lockWaitsTimeout = 5 * time.Second

// rows lists the lock waits in progress in every store (each key's in
// queue order), with the connections of this node's transactions; on a
// SQL node of a cluster, those of the KV nodes that answered, and an
// error naming those that did not.
func (v *lockWaitView) rows(ctx context.Context) ([]lockWaitRow, error) {
	if v.client == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, lockWaitsTimeout)
	defer cancel()
	waits, err := v.client.LockWaitInfo(ctx)
	conn := func(ts uint64) uint64 {
		if c, ok := v.conns.Load(ts); ok {
			return uint64(c.(uint32))
		}
		return 0
	}
	out := make([]lockWaitRow, len(waits))
	for i, w := range waits {
		out[i] = lockWaitRow{key: w.Key, txn: w.Txn, holder: w.LockTS, txnConn: conn(w.Txn), holderConn: conn(w.LockTS)}
	}
	return out, err
}

// counts returns the stores' lock-wait counts: the node's own store's,
// or on a SQL node of a cluster the sum of the KV nodes' that answered
// within lockWaitsTimeout (SHOW STATUS and /metrics have nowhere to warn
// of the others); false when the node has no store to ask.
func (v *lockWaitView) counts(ctx context.Context) (kv.LockWaitStats, bool) {
	if v.store != nil {
		return v.store.LockWaitStats(), true
	}
	if v.client == nil {
		return kv.LockWaitStats{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, lockWaitsTimeout)
	defer cancel()
	st, _ := v.client.LockWaitCounts(ctx)
	return st, true
}

// dataLockWaitsTable is DATA_LOCK_WAITS over v.
func dataLockWaitsTable(v *lockWaitView) gsql.Table {
	return &information_schema.InformationSchemaTable{
		TableName:   dataLockWaitsName,
		TableSchema: dataLockWaitsSchema,
		Reader: func(ctx *gsql.Context, _ gsql.Catalog) (gsql.RowIter, error) {
			waits, err := v.rows(ctx)
			if err != nil {
				// The waits of the stores that answered, and a warning
				// naming the others (as TiDB's cluster tables do).
				ctx.Warn(codeUnknown, "information_schema.%s: %v", dataLockWaitsName, err)
			}
			var rows []gsql.Row
			for _, w := range waits {
				key := hex.EncodeToString(w.key)
				// InnoDB's lock ids name the transaction and the record;
				// percdb's the transaction and the key.
				lockID := func(ts uint64) string { return strconv.FormatUint(ts, 10) + ":" + key }
				rows = append(rows, gsql.Row{"percdb", lockID(w.txn), w.txn, w.txnConn, lockID(w.holder), w.holder, w.holderConn, key})
			}
			return gsql.RowsToRowIter(rows...), nil
		},
	}
}
