package executor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/shopspring/decimal"
)

// ErrIndexInconsistent is wrapped by the errors of reads that found an
// index entry whose row is missing: the table's data is corrupt.
var ErrIndexInconsistent = errors.New("index entry without row")

// StaleKeysError says a table's keys were written in an older key
// encoding than the one its columns now need (IndexColumn.Stale): a
// lookup, a range read or a write's unique check would miss stored keys.
// The SQL layer reports it as MySQL error 1707 (ER_TABLE_NEEDS_REBUILD)
// with Error()'s text; the table is to be dumped and reloaded.
type StaleKeysError struct {
	// Table names the table.
	Table string
}

// Error formats the error as MySQL does.
func (e *StaleKeysError) Error() string {
	return fmt.Sprintf("Table rebuild required. Please do \"ALTER TABLE `%s` FORCE\" or dump/reload to fix it!", e.Table)
}

// DuplicateKeyError says a write would give a unique key (the primary key
// or a unique index) a second row. The SQL layer reports it as MySQL error
// 1062 with Error()'s text.
type DuplicateKeyError struct {
	// Table and Index name the key; Index is "PRIMARY" for the primary key.
	Table, Index string
	// Values are the key's column values: the row's own values when the
	// duplicate was found at statement time; when it was found at commit
	// time (by the store, at prewrite) they are decoded from the key, so a
	// string under a collation shows its sort key.
	Values []any
	// Handle is the handle of the row that holds the key, when known
	// (HandleKnown): INSERT ... ON DUPLICATE KEY UPDATE and REPLACE act on
	// that row.
	Handle      tablecodec.Handle
	HandleKnown bool
}

// Error formats the error as MySQL does.
func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("Duplicate entry '%s' for key '%s.%s'", e.Entry(), e.Table, e.Index)
}

// Entry formats the duplicate values as MySQL does: joined by '-'.
func (e *DuplicateKeyError) Entry() string {
	var b strings.Builder
	for i, v := range e.Values {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(formatValue(v))
	}
	return b.String()
}

// formatValue formats one key value for an error message.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case []byte:
		return string(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case decimal.Decimal:
		return v.String()
	case time.Time:
		if v.Nanosecond() != 0 {
			return v.Format("2006-01-02 15:04:05.999999")
		}
		return v.Format("2006-01-02 15:04:05")
	case types.Timespan:
		return v.String()
	}
	return fmt.Sprint(v)
}

// keyValues returns the values of cols in row, as the key holds them (a
// prefix for a prefix column) but before collation, for messages.
func keyValues(cols []IndexColumn, row []any) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		v := row[c.Offset]
		if c.PrefixLen > 0 {
			v = keyValue(IndexColumn{PrefixLen: c.PrefixLen}, v)
		}
		out[i] = v
	}
	return out
}

// DuplicateFromCommit turns a commit failure caused by a duplicate key
// into a *DuplicateKeyError naming the key: the store refuses an insert
// over an existing key at prewrite (txn.ErrAlreadyExists wrapping a
// *kv.AlreadyExistsError) when a concurrent transaction committed the same
// key after this one read it. tableByID finds the table of the key; it may
// return nil for an unknown table. It returns nil, false when err is not
// such a failure or the key cannot be attributed.
func DuplicateFromCommit(err error, tableByID func(id int64) *Table) (*DuplicateKeyError, bool) {
	var ae *kv.AlreadyExistsError
	if !errors.As(err, &ae) {
		return nil, false
	}
	id, derr := tablecodec.DecodeTableID(ae.Key)
	if derr != nil {
		return nil, false
	}
	t := tableByID(id)
	if t == nil {
		return nil, false
	}
	return t.duplicateFromKey(ae.Key)
}

// duplicateFromKey describes the unique key key of t.
func (t *Table) duplicateFromKey(key []byte) (*DuplicateKeyError, bool) {
	if tablecodec.IsRowKey(key) {
		_, h, err := tablecodec.DecodeRowKey(key, t.HandleKind == HandleCommon)
		if err != nil {
			return nil, false
		}
		e := &DuplicateKeyError{Table: t.Name, Index: primaryKeyName, Handle: h, HandleKnown: true}
		if h.IsInt() {
			e.Values = []any{h.Int}
		} else {
			e.Values, _ = tablecodec.DecodeKeys(h.Common)
		}
		return e, true
	}
	_, ixID, vals, err := tablecodec.DecodeIndexKey(key)
	if err != nil {
		return nil, false
	}
	ix := t.Index(ixID)
	if ix == nil {
		return nil, false
	}
	decoded, err := tablecodec.DecodeKeys(vals)
	if err != nil || len(decoded) != len(ix.Columns) {
		return nil, false
	}
	return &DuplicateKeyError{Table: t.Name, Index: ix.Name, Values: decoded}, true
}
