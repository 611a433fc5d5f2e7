package fastpath

import (
	"slices"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/tablemeta"
)

// This file resolves UPDATE and DELETE by a key prefix: WHERE c1 = v1
// AND c2 = v2 ... (or WHERE c1 = v1) over the leading columns of a
// composite primary key of integer columns, which pins a contiguous range
// of rows (TPC-C's Delivery updates an order's lines with
// `WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?`, three of the four
// key columns). Package sql reads the range through the statement's
// transaction and writes each row as its one-row UPDATE and DELETE do
// (fastpath_prefix.go). SELECT by a prefix is a range SELECT (Kind
// Scan), not this.

// writePrefixArgs maps the columns of an UPDATE's or DELETE's WHERE to a
// proper prefix of the table's composite primary key: for each of the
// key's first len(cols) columns, in key order, the index of its value
// among cols. ok is false unless the statement is an UPDATE or a DELETE,
// the table is clustered on integer key columns indexed whole (whose
// equality GMS decides as the key encoding does), and cols are exactly
// the key's first len(cols) columns, each once, fewer than all of them.
func writePrefixArgs(def *catalog.TableDef, m *tablemeta.Table, kind Kind, cols []string) ([]int, bool) {
	pk := m.Primary
	if kind != Update && kind != Delete || m.Exec.HandleKind != executor.HandleCommon || pk == nil ||
		len(cols) == 0 || len(cols) >= len(pk.Ords) || !intKeyColumns(pk) {
		return nil, false
	}
	return leadingKeyArgs(def, pk, cols)
}

// leadingKeyArgs maps cols to the first len(cols) columns of the key pk:
// for each of them, in key order, the index of its value among cols. ok
// is false unless cols are exactly those columns, each once.
func leadingKeyArgs(def *catalog.TableDef, pk *tablemeta.Index, cols []string) ([]int, bool) {
	args := make([]int, len(cols))
	for i := range args {
		args[i] = -1
	}
	for i, name := range cols {
		_, ord, ok := def.ColumnByName(name)
		if !ok {
			return nil, false
		}
		pos := slices.Index(pk.Ords, ord)
		if pos < 0 || pos >= len(cols) || args[pos] >= 0 {
			return nil, false
		}
		args[pos] = i
	}
	return args, true
}
