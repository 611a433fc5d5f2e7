package tablecodec

import (
	"bytes"
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Key layout (see doc.go):
//
//	table prefix  't' EncodeInt(tableID)                          9 bytes
//	row key       table prefix "_r" handle
//	index key     table prefix "_i" EncodeInt(indexID) values [handle]
//	ack key       table prefix "_a" EncodeBytes(observer) handle
const (
	tablePrefixByte = 't'
	tablePrefixLen  = 1 + 8
	sepLen          = 2
	recordPrefixLen = tablePrefixLen + sepLen
	indexPrefixLen  = recordPrefixLen + 8
)

var (
	recordSep = [sepLen]byte{'_', 'r'}
	indexSep  = [sepLen]byte{'_', 'i'}
	ackSep    = [sepLen]byte{'_', 'a'}
)

// nonUniqueIndexValue is the value of an index entry whose handle is in its
// key. It is one byte, not empty, so that no layer can mistake it for a
// deletion.
const nonUniqueIndexValue = '0'

// Handle identifies a row within its table: an int64 (the integer primary
// key or a hidden row ID) or, for a table clustered on a non-integer primary
// key, the key encoding of the primary-key values (a common handle).
type Handle struct {
	// Common holds the EncodeKey encoding of the primary-key values of a
	// common handle; nil for an int handle.
	Common []byte
	// Int is the handle when Common is nil.
	Int int64
}

// IntHandle returns an int handle.
func IntHandle(v int64) Handle { return Handle{Int: v} }

// CommonHandle returns a common handle from the EncodeKey encoding of the
// primary-key values. The handle refers to encoded, it does not copy it.
func CommonHandle(encoded []byte) Handle { return Handle{Common: encoded} }

// IsInt reports whether h is an int handle.
func (h Handle) IsInt() bool { return h.Common == nil }

// Equal reports whether h and o are the same handle.
func (h Handle) Equal(o Handle) bool {
	if h.IsInt() != o.IsInt() {
		return false
	}
	if h.IsInt() {
		return h.Int == o.Int
	}
	return bytes.Equal(h.Common, o.Common)
}

// Compare orders handles of one table as their row keys are ordered:
// int handles by value (their 8 bytes keep the order), common handles by
// their encoded values. It returns -1, 0 or 1.
func (h Handle) Compare(o Handle) int {
	switch {
	case h.IsInt() && o.IsInt():
		return cmp.Compare(h.Int, o.Int)
	case !h.IsInt() && !o.IsInt():
		return bytes.Compare(h.Common, o.Common)
	}
	// Not one table's: compared as row suffixes.
	return bytes.Compare(h.appendRowSuffix(nil), o.appendRowSuffix(nil))
}

// String formats h for messages.
func (h Handle) String() string {
	if h.IsInt() {
		return strconv.FormatInt(h.Int, 10)
	}
	vals, err := DecodeKeys(h.Common)
	if err != nil {
		return fmt.Sprintf("%x", h.Common)
	}
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		if s, ok := v.([]byte); ok {
			b.WriteString(strconv.Quote(string(s)))
		} else {
			fmt.Fprint(&b, v)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// appendRowSuffix appends h in its row-key form: 8 bare bytes for an int
// handle, the encoded values for a common handle.
func (h Handle) appendRowSuffix(buf []byte) []byte {
	if h.IsInt() {
		return EncodeInt(buf, h.Int)
	}
	return append(buf, h.Common...)
}

// appendIndexSuffix appends h in its index-key form, where it follows the
// indexed values and must be a self-delimiting datum: an int handle is an
// int datum (flag and 8 bytes), a common handle its encoded values.
func (h Handle) appendIndexSuffix(buf []byte) []byte {
	if h.IsInt() {
		return appendIntDatum(buf, h.Int)
	}
	return append(buf, h.Common...)
}

// TablePrefix appends the prefix of every key of the table to buf.
func TablePrefix(buf []byte, tableID int64) []byte {
	return EncodeInt(append(buf, tablePrefixByte), tableID)
}

// RecordPrefix appends the prefix of the table's row keys to buf.
func RecordPrefix(buf []byte, tableID int64) []byte {
	return append(TablePrefix(buf, tableID), recordSep[:]...)
}

// RowKey appends the key of row h of the table to buf.
func RowKey(buf []byte, tableID int64, h Handle) []byte {
	return h.appendRowSuffix(RecordPrefix(buf, tableID))
}

// IndexPrefix appends the prefix of every entry of the index to buf.
func IndexPrefix(buf []byte, tableID, indexID int64) []byte {
	return EncodeInt(append(TablePrefix(buf, tableID), indexSep[:]...), indexID)
}

// IndexKey appends the key of an index entry to buf. values is the
// EncodeKey encoding of the indexed column values. The handle is appended
// unless the index is unique and no value is NULL (hasNull false): then the
// key is the same for every row with these values, which is what makes a
// duplicate collide, and the handle goes into the value (IndexValue).
func IndexKey(buf []byte, tableID, indexID int64, values []byte, unique, hasNull bool, h Handle) []byte {
	buf = append(IndexPrefix(buf, tableID, indexID), values...)
	if unique && !hasNull {
		return buf
	}
	return h.appendIndexSuffix(buf)
}

// IndexValue appends the value of an index entry to buf: the handle for a
// unique index entry without NULLs, otherwise a one-byte placeholder.
func IndexValue(buf []byte, unique, hasNull bool, h Handle) []byte {
	if unique && !hasNull {
		return h.appendRowSuffix(buf)
	}
	return append(buf, nonUniqueIndexValue)
}

// DecodeTableID returns the table ID of any table key.
func DecodeTableID(key []byte) (int64, error) {
	if len(key) < tablePrefixLen || key[0] != tablePrefixByte {
		return 0, fmt.Errorf("key %q is not a table key: %w", key, ErrCorrupt)
	}
	_, id, err := DecodeInt(key[1:])
	return id, err
}

// IsRowKey reports whether key is a row key.
func IsRowKey(key []byte) bool {
	return len(key) > recordPrefixLen && key[0] == tablePrefixByte &&
		key[tablePrefixLen] == recordSep[0] && key[tablePrefixLen+1] == recordSep[1]
}

// HasRecordPrefix reports whether key starts with a table's record
// prefix t{tableID}_r: a row key, or the prefix itself (where a scan of
// the rows starts).
func HasRecordPrefix(key []byte) bool {
	return len(key) >= recordPrefixLen && key[0] == tablePrefixByte &&
		key[tablePrefixLen] == recordSep[0] && key[tablePrefixLen+1] == recordSep[1]
}

// IsIndexKey reports whether key is an index key.
func IsIndexKey(key []byte) bool {
	return len(key) >= indexPrefixLen && key[0] == tablePrefixByte &&
		key[tablePrefixLen] == indexSep[0] && key[tablePrefixLen+1] == indexSep[1]
}

// DecodeRowKey returns the table ID and handle of a row key. common says
// whether the table has common handles; it cannot be told from the key. A
// common handle is copied out of key.
func DecodeRowKey(key []byte, common bool) (tableID int64, h Handle, err error) {
	if !IsRowKey(key) {
		return 0, h, fmt.Errorf("key %q is not a row key: %w", key, ErrCorrupt)
	}
	if tableID, err = DecodeTableID(key); err != nil {
		return 0, h, err
	}
	h, err = decodeRowSuffix(key[recordPrefixLen:], common)
	if err != nil {
		return 0, h, fmt.Errorf("row key %q: %w", key, err)
	}
	return tableID, h, nil
}

// decodeRowSuffix decodes a handle in its row-key (and unique index value)
// form, copying a common handle.
func decodeRowSuffix(b []byte, common bool) (Handle, error) {
	if !common {
		if len(b) != 8 {
			return Handle{}, fmt.Errorf("int handle has %d bytes, want 8: %w", len(b), ErrCorrupt)
		}
		_, v, err := DecodeInt(b)
		return IntHandle(v), err
	}
	if len(b) == 0 {
		return Handle{}, fmt.Errorf("common handle is empty: %w", ErrCorrupt)
	}
	if err := checkKeyValues(b); err != nil {
		return Handle{}, fmt.Errorf("common handle: %w", err)
	}
	return CommonHandle(bytes.Clone(b)), nil
}

// checkKeyValues checks that b is a sequence of whole encoded values.
func checkKeyValues(b []byte) error {
	for len(b) > 0 {
		var err error
		if b, err = SkipKey(b); err != nil {
			return err
		}
	}
	return nil
}

// DecodeIndexKey splits an index key into its table ID, index ID and the
// encoded values that follow (the indexed values, then the handle if the
// key carries one). values aliases key.
func DecodeIndexKey(key []byte) (tableID, indexID int64, values []byte, err error) {
	if !IsIndexKey(key) {
		return 0, 0, nil, fmt.Errorf("key %q is not an index key: %w", key, ErrCorrupt)
	}
	if tableID, err = DecodeTableID(key); err != nil {
		return 0, 0, nil, err
	}
	values, indexID, err = DecodeInt(key[recordPrefixLen:])
	return tableID, indexID, values, err
}

// CutIndexValues splits the encoded values of an index key (as returned by
// DecodeIndexKey) after the first numCols values: head holds the indexed
// values, tail the appended handle, empty if none.
func CutIndexValues(values []byte, numCols int) (head, tail []byte, err error) {
	rest := values
	for i := 0; i < numCols; i++ {
		if rest, err = SkipKey(rest); err != nil {
			return nil, nil, fmt.Errorf("index value %d: %w", i, err)
		}
	}
	return values[:len(values)-len(rest)], rest, nil
}

// DecodeIndexHandle returns the handle of the row an index entry points to.
// numCols is the number of indexed columns, common whether the table has
// common handles. The handle is taken from the key when the key carries one
// and from the value otherwise. A common handle is copied.
func DecodeIndexHandle(key, value []byte, numCols int, common bool) (Handle, error) {
	_, _, values, err := DecodeIndexKey(key)
	if err != nil {
		return Handle{}, err
	}
	_, tail, err := CutIndexValues(values, numCols)
	if err != nil {
		return Handle{}, fmt.Errorf("index key %q: %w", key, err)
	}
	if len(tail) == 0 {
		h, err := decodeRowSuffix(value, common)
		if err != nil {
			return Handle{}, fmt.Errorf("index value of %q: %w", key, err)
		}
		return h, nil
	}
	if !common {
		rest, v, err := DecodeKey(tail)
		if err != nil || len(rest) != 0 {
			return Handle{}, fmt.Errorf("index key %q: int handle %x: %w", key, tail, ErrCorrupt)
		}
		iv, ok := v.(int64)
		if !ok {
			return Handle{}, fmt.Errorf("index key %q: handle is %T, want int: %w", key, v, ErrCorrupt)
		}
		return IntHandle(iv), nil
	}
	h, err := decodeRowSuffix(tail, true)
	if err != nil {
		return Handle{}, fmt.Errorf("index key %q: %w", key, err)
	}
	return h, nil
}

// PrefixNext returns the smallest key greater than every key that has k as
// a prefix: k with its last byte incremented, carrying over 0xFF bytes. It
// returns nil, meaning "no upper bound", when k is empty or all 0xFF. k is
// not modified.
func PrefixNext(k []byte) []byte {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] != 0xFF {
			next := make([]byte, i+1)
			copy(next, k[:i+1])
			next[i]++
			return next
		}
	}
	return nil
}

// A key range is [Start, End); a nil End means no upper bound. The bounds
// below turn a range over a prefix of an index's (or a clustered primary
// key's) columns into key bounds. They rely on the encoding being
// prefix-free: the keys whose first columns equal some values are exactly
// the keys that start with those values' encoding.

// LowerBound returns the start key for a range whose lower bound is the
// encoded prefix (a key prefix followed by encoded values): prefix itself
// when inclusive (>=), the first key past every key starting with prefix
// when exclusive (>).
func LowerBound(prefix []byte, inclusive bool) []byte {
	if inclusive {
		return prefix
	}
	return PrefixNext(prefix)
}

// UpperBound returns the end key for a range whose upper bound is the
// encoded prefix: past every key starting with prefix when inclusive (<=),
// prefix itself when exclusive (<). A nil result means no upper bound.
func UpperBound(prefix []byte, inclusive bool) []byte {
	if inclusive {
		return PrefixNext(prefix)
	}
	return prefix
}

// PrefixRange returns the range of keys that start with prefix.
func PrefixRange(prefix []byte) (start, end []byte) {
	return prefix, PrefixNext(prefix)
}

// RecordRange returns the range of the table's row keys.
func RecordRange(tableID int64) (start, end []byte) {
	return PrefixRange(RecordPrefix(nil, tableID))
}

// IndexRange returns the range of the index's keys.
func IndexRange(tableID, indexID int64) (start, end []byte) {
	return PrefixRange(IndexPrefix(nil, tableID, indexID))
}

// TableRange returns the range of every key of the table, rows and indexes.
func TableRange(tableID int64) (start, end []byte) {
	return PrefixRange(TablePrefix(nil, tableID))
}

// AckPrefix appends to buf the prefix of the acknowledgements of every
// observer of the table's rows.
func AckPrefix(buf []byte, tableID int64) []byte {
	return append(TablePrefix(buf, tableID), ackSep[:]...)
}

// AckKey appends to buf the key of observer's acknowledgement of the row
// whose key is rowKey.
func AckKey(buf, rowKey []byte, observer string) ([]byte, error) {
	if !IsRowKey(rowKey) {
		return nil, fmt.Errorf("ack key of %q: not a row key: %w", rowKey, ErrCorrupt)
	}
	buf = append(append(buf, rowKey[:tablePrefixLen]...), ackSep[:]...)
	buf = EncodeBytes(buf, []byte(observer))
	return append(buf, rowKey[recordPrefixLen:]...), nil
}

// DecodeAckKey returns the row key and the observer of an ack key.
func DecodeAckKey(key []byte) (rowKey []byte, observer string, err error) {
	if len(key) <= recordPrefixLen || key[0] != tablePrefixByte || key[tablePrefixLen] != ackSep[0] || key[tablePrefixLen+1] != ackSep[1] {
		return nil, "", fmt.Errorf("key %q is not an ack key: %w", key, ErrCorrupt)
	}
	rest, name, err := DecodeBytes(key[recordPrefixLen:], nil)
	if err != nil {
		return nil, "", fmt.Errorf("ack key %q: %w", key, err)
	}
	if len(rest) == 0 {
		return nil, "", fmt.Errorf("ack key %q: no handle: %w", key, ErrCorrupt)
	}
	rowKey = append(append(append([]byte{}, key[:tablePrefixLen]...), recordSep[:]...), rest...)
	return rowKey, string(name), nil
}
