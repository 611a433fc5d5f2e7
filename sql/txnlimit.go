package sql

import (
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The memory of one transaction is bounded: percdb_txn_total_size_limit
// (TiDB's txn-total-size-limit, default 100 MiB) caps the bytes of keys and
// values a transaction buffers before its commit; a statement that would
// pass it fails with TiDB's error 8004 ("Transaction is too large") and
// the transaction keeps what it had, instead of the process running out
// of memory. A global variable of the node, in force for the transactions
// that begin after a SET GLOBAL; not persisted (TiDB's is a configuration
// item).
const (
	varTxnSizeLimit     = "percdb_txn_total_size_limit"
	defaultTxnSizeLimit = 100 << 20
	// minTxnSizeLimit and maxTxnSizeLimit bound the variable: 1 KiB (a
	// bound low enough for tests) to 1 TiB (TiDB's maximum).
	minTxnSizeLimit = 1 << 10
	maxTxnSizeLimit = 1 << 40
	codeTxnTooLarge = 8004 // TiDB's ErrTxnTooLarge
)

var registerTxnSizeLimitOnce sync.Once

// registerTxnSizeLimit adds percdb_txn_total_size_limit to GMS's registry
// (one per process); a SET GLOBAL reaches the session's node through
// NotifyChanged.
func registerTxnSizeLimit() {
	registerTxnSizeLimitOnce.Do(func() {
		gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{&gsql.MysqlSystemVariable{
			Name:          varTxnSizeLimit,
			Scope:         gsql.GetMysqlScope(gsql.SystemVariableScope_Global),
			Dynamic:       true,
			Type:          types.NewSystemIntType(varTxnSizeLimit, minTxnSizeLimit, maxTxnSizeLimit, false),
			Default:       int64(defaultTxnSizeLimit),
			NotifyChanged: notifyTxnSizeLimit,
		}})
	})
}

// notifyTxnSizeLimit puts a SET GLOBAL percdb_txn_total_size_limit in
// force on the session's node.
func notifyTxnSizeLimit(ctx *gsql.Context, scope gsql.SystemVariableScope, v gsql.SystemVarValue) error {
	p := setGlobalProvider(ctx, scope)
	if p == nil {
		return nil
	}
	n, ok := types.CoalesceInt(v.Val)
	if !ok {
		return gsql.ErrInvalidSystemVariableValue.New(varTxnSizeLimit, v.Val)
	}
	p.txnSizeLimit.Store(int64(n))
	return nil
}
