package executor

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// Column is one column of a table as the operators see it.
type Column struct {
	// ID tags the column's value in row values. It never changes and is
	// never reused within a table, so that rows need no rewrite on ADD or
	// DROP COLUMN.
	ID int64
	// OriginDefault is the value a row written before the column was added
	// reads as (MySQL's "original default": the default at ADD COLUMN
	// time, not the current one). nil means NULL.
	OriginDefault any
	// TrimTrailingSpaces makes reads return the column's string values
	// without trailing spaces, as MySQL returns CHAR values (it pads them
	// to the column's length and strips the padding when reading).
	// Default false: values come back as written.
	TrimTrailingSpaces bool
}

// IndexColumn says how one column's value becomes part of an index key.
type IndexColumn struct {
	// Offset is the column's position in the table's rows.
	Offset int
	// PrefixLen, when positive, indexes only the first PrefixLen
	// characters of a string (bytes of a []byte), as in INDEX (c(10)).
	// Such an index cannot be unique-checked or range-scanned exactly on
	// that column past the prefix; the SQL layer re-checks the condition.
	// Default 0: the whole value.
	PrefixLen int
	// CollationKey, when non-nil, maps a string value to its collation
	// sort key, so that strings the collation deems equal ('a' and 'A'
	// under a case-insensitive collation) make the same key. Default nil:
	// strings are keyed by their bytes (a binary collation).
	CollationKey func(s string) []byte
	// TrimTrailingSpaces keys a string without its trailing spaces (before
	// PrefixLen and CollationKey apply), as a CHAR column's reads return
	// it (Column.TrimTrailingSpaces) and as a PAD SPACE collation
	// compares it: 'a' and 'a ' are one key, so a unique index rejects
	// the second and a lookup of either finds both. Default false: the
	// whole string (a NO PAD collation, binary strings).
	TrimTrailingSpaces bool
	// Stale, when non-nil, says the stored keys of this column were made
	// by an older encoding than this one (strings under a PAD SPACE
	// collation keyed with their trailing spaces): every key made from
	// it fails with Stale, so that no read answers and no write checks
	// from keys that would miss the stored ones. Scans of the table's
	// rows, which make no keys from values, still read them. Default
	// nil.
	Stale *StaleKeysError
	// NotNull says the column is declared NOT NULL. It orders the unique
	// checks of a row as MySQL orders a table's keys (sort_keys in
	// sql_table.cc): unique indexes of NOT NULL columns only before those
	// with a nullable column, so that INSERT ... ON DUPLICATE KEY UPDATE
	// meeting two unique keys updates the row MySQL updates, and a
	// duplicate is reported on MySQL's key. Default false: nullable.
	NotNull bool
}

// checkRank is ix's place in MySQL's order of unique keys (after the
// primary key): whole NOT NULL keys, NOT NULL keys with a prefix part,
// whole keys with a nullable column, the rest; declaration order within
// each (sort_keys in MySQL's sql_table.cc).
func (ix *Index) checkRank() int {
	nullable, prefixed := false, false
	for _, c := range ix.Columns {
		nullable = nullable || !c.NotNull
		prefixed = prefixed || c.PrefixLen > 0
	}
	rank := 0
	if nullable {
		rank += 2
	}
	if prefixed {
		rank++
	}
	return rank
}

// Index describes one secondary index. The primary key of a table with a
// primary-key handle is not an Index: it is the handle itself.
type Index struct {
	// ID is the index's ID within its table.
	ID int64
	// Name is the index's name, for errors ("Duplicate entry ... for key
	// 't.Name'").
	Name string
	// Unique makes two rows with the same non-NULL values a duplicate.
	Unique bool
	// Columns are the indexed columns, in key order.
	Columns []IndexColumn
	// State says which writes keep the index in step while it is built
	// or dropped online (F1's schema change states; see sql/schemalease).
	// Default IndexPublic.
	State IndexState
}

// IndexState is how far an index being built online has come: what the
// write operators do to it. Only a public index may be read; the SQL layer
// does not show the others to its planner.
type IndexState uint8

const (
	// IndexPublic: entries are written, deleted and unique-checked.
	IndexPublic IndexState = iota
	// IndexWriteOnly: as public for writes (so rows written while the
	// index is backfilled have their entries, and a duplicate of a
	// unique key fails at once), but not read.
	IndexWriteOnly
	// IndexDeleteOnly: only the entries of removed or changed rows are
	// deleted; none is added. It sits between an absent index and a
	// write-only one, so that a transaction that does not know the index
	// yet never leaves an entry behind whose row it deleted.
	IndexDeleteOnly
)

// HandleKind says how a table's rows are identified.
type HandleKind uint8

const (
	// HandleRowID: the table has no usable primary key; rows are
	// identified by a hidden int64 row ID the caller allocates.
	HandleRowID HandleKind = iota
	// HandleInt: the primary key is one signed integer column, which is
	// the handle (a BIGINT UNSIGNED key does not fit: make it a common
	// handle).
	HandleInt
	// HandleCommon: the table is clustered on its primary key, whose
	// encoded values are the handle.
	HandleCommon
)

// Table describes a table to the operators. The SQL layer fills it from
// its schema and calls Validate once; the operators read it and never
// change it, so one Table may be shared by concurrent statements.
type Table struct {
	// ID is the table's ID, the prefix of all its keys.
	ID int64
	// Name is the table's name, for errors.
	Name string
	// Columns are the table's columns in row order: a row is a []any with
	// one value per column.
	Columns []Column
	// HandleKind says what identifies a row.
	HandleKind HandleKind
	// PrimaryKey lists the primary-key columns for HandleInt (one column)
	// and HandleCommon; unused for HandleRowID.
	PrimaryKey []IndexColumn
	// Indexes are the table's secondary indexes, kept in step by the
	// write operators.
	Indexes []Index
	// Watches are the observers watching columns of the table (package
	// observe): a write that changes a watched column marks the row's key
	// notified for the observer in the writing transaction.
	Watches []Watch

	// colIDs caches the column IDs in row order; Validate fills it.
	colIDs []int64
}

// Watch is an observer's watch on a table: the observer is notified of
// every row inserted or deleted, and of every update that changes one of
// Columns (offsets in Table.Columns; none: every column).
type Watch struct {
	Observer string
	Columns  []int
}

// primaryKeyName is MySQL's name for the primary key in error messages.
const primaryKeyName = "PRIMARY"

// Validate checks that t is well formed: distinct non-negative column IDs,
// index and primary-key columns that exist, distinct index IDs, a primary
// key that suits the handle kind. It also caches what the operators would
// otherwise recompute per row, so call it before sharing t.
func (t *Table) Validate() error {
	seen := make(map[int64]bool, len(t.Columns))
	for i, c := range t.Columns {
		if c.ID < 0 || seen[c.ID] {
			return fmt.Errorf("table %s: column %d has a negative or repeated ID %d", t.Name, i, c.ID)
		}
		seen[c.ID] = true
	}
	checkCols := func(what string, cols []IndexColumn) error {
		if len(cols) == 0 {
			return fmt.Errorf("table %s: %s has no columns", t.Name, what)
		}
		for _, c := range cols {
			if c.Offset < 0 || c.Offset >= len(t.Columns) {
				return fmt.Errorf("table %s: %s names column offset %d of %d", t.Name, what, c.Offset, len(t.Columns))
			}
			if c.PrefixLen < 0 {
				return fmt.Errorf("table %s: %s has a negative prefix length", t.Name, what)
			}
		}
		return nil
	}
	t.colIDs = nil
	switch t.HandleKind {
	case HandleRowID:
	case HandleInt:
		if len(t.PrimaryKey) != 1 || t.PrimaryKey[0].PrefixLen != 0 || t.PrimaryKey[0].CollationKey != nil {
			return fmt.Errorf("table %s: an int handle needs exactly one whole integer primary-key column", t.Name)
		}
		fallthrough
	case HandleCommon:
		if err := checkCols("primary key", t.PrimaryKey); err != nil {
			return err
		}
	default:
		return fmt.Errorf("table %s: unknown handle kind %d", t.Name, t.HandleKind)
	}
	ids := make(map[int64]bool, len(t.Indexes))
	for i := range t.Indexes {
		ix := &t.Indexes[i]
		if ids[ix.ID] {
			return fmt.Errorf("table %s: index ID %d used twice", t.Name, ix.ID)
		}
		ids[ix.ID] = true
		if err := checkCols("index "+ix.Name, ix.Columns); err != nil {
			return err
		}
	}
	names := make(map[string]bool, len(t.Watches))
	for _, w := range t.Watches {
		if w.Observer == "" || names[w.Observer] {
			return fmt.Errorf("table %s: observer name %q is empty or repeated", t.Name, w.Observer)
		}
		names[w.Observer] = true
		for _, off := range w.Columns {
			if off < 0 || off >= len(t.Columns) {
				return fmt.Errorf("table %s: observer %s watches column offset %d of %d", t.Name, w.Observer, off, len(t.Columns))
			}
		}
	}
	t.colIDs = t.columnIDs()
	return nil
}

// Index returns the index with the given ID, or nil.
func (t *Table) Index(id int64) *Index {
	for i := range t.Indexes {
		if t.Indexes[i].ID == id {
			return &t.Indexes[i]
		}
	}
	return nil
}

// checkRow refuses a row of the wrong width.
func (t *Table) checkRow(row []any) error {
	if len(row) != len(t.Columns) {
		return fmt.Errorf("table %s: row has %d values for %d columns", t.Name, len(row), len(t.Columns))
	}
	return nil
}

// HandleOf returns the handle of row for a table with a primary-key
// handle. A HandleRowID table's rows have no handle in their values: the
// caller allocates row IDs.
func (t *Table) HandleOf(row []any) (tablecodec.Handle, error) {
	if err := t.checkRow(row); err != nil {
		return tablecodec.Handle{}, err
	}
	return t.handle(row, true)
}

// KeyHandle returns the handle of the row whose primary-key columns hold
// vals, in key order, for a table with a primary-key handle: the handle
// a point of HandleRange between vals and vals would read, made without
// encoding a key range (a batched lookup join makes one per outer row).
func (t *Table) KeyHandle(vals []any) (tablecodec.Handle, error) {
	if len(vals) != len(t.PrimaryKey) {
		return tablecodec.Handle{}, fmt.Errorf("table %s: %d values for %d primary-key columns", t.Name, len(vals), len(t.PrimaryKey))
	}
	return t.handle(vals, false)
}

// handle returns the handle of the primary-key values vals: a whole row
// when fromRow, else the key columns' values in key order.
func (t *Table) handle(vals []any, fromRow bool) (tablecodec.Handle, error) {
	switch t.HandleKind {
	case HandleInt:
		v := vals[0]
		if fromRow {
			v = vals[t.PrimaryKey[0].Offset]
		}
		h, err := handleInt(v)
		if err != nil {
			return tablecodec.Handle{}, fmt.Errorf("table %s: primary key: %w", t.Name, err)
		}
		return tablecodec.IntHandle(h), nil
	case HandleCommon:
		enc, hasNull, err := encodeIndexValues(nil, t.PrimaryKey, vals, fromRow)
		if err != nil {
			return tablecodec.Handle{}, fmt.Errorf("table %s: primary key: %w", t.Name, err)
		}
		if hasNull {
			return tablecodec.Handle{}, fmt.Errorf("table %s: primary key has a NULL value", t.Name)
		}
		return tablecodec.CommonHandle(enc), nil
	}
	return tablecodec.Handle{}, fmt.Errorf("table %s has hidden row IDs: the caller assigns handles", t.Name)
}

// handleInt converts an integer primary-key value to an int handle.
func handleInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case int32:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("unsigned value %d does not fit an int handle", v)
		}
		return int64(v), nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return 0, fmt.Errorf("unsigned value %d does not fit an int handle", v)
		}
		return int64(v), nil
	case nil:
		return 0, fmt.Errorf("NULL cannot be a primary key")
	}
	return 0, fmt.Errorf("value of type %T cannot be an int handle", v)
}

// keyValue returns what of v goes into a key for column c: a prefix of it,
// or its collation sort key, of it without trailing spaces for a CHAR
// column.
func keyValue(c IndexColumn, v any) any {
	if c.TrimTrailingSpaces {
		// Boxed again only when trimmed: a string put in an interface
		// is an allocation, on every key made from a PAD SPACE string.
		if s, ok := v.(string); ok && strings.HasSuffix(s, " ") {
			v = strings.TrimRight(s, " ")
		}
	}
	if c.PrefixLen > 0 {
		switch s := v.(type) {
		case string:
			v = truncateRunes(s, c.PrefixLen)
		case []byte:
			if len(s) > c.PrefixLen {
				v = s[:c.PrefixLen]
			}
		}
	}
	if c.CollationKey != nil {
		if s, ok := v.(string); ok {
			return c.CollationKey(s)
		}
	}
	return v
}

// truncateRunes returns the first n characters of s.
func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// encodeIndexValues appends the key encoding of the values of cols taken
// from row (fromRow) or of vals given in column order (a prefix of cols,
// for range bounds), and reports whether any is NULL.
func encodeIndexValues(buf []byte, cols []IndexColumn, vals []any, fromRow bool) ([]byte, bool, error) {
	if !fromRow && len(vals) > len(cols) {
		return buf, false, fmt.Errorf("%d values for %d key columns", len(vals), len(cols))
	}
	hasNull := false
	n := len(vals)
	if fromRow {
		n = len(cols)
	}
	for i := 0; i < n; i++ {
		c := cols[i]
		var v any
		if fromRow {
			if c.Offset < 0 || c.Offset >= len(vals) {
				return buf, false, fmt.Errorf("key column offset %d outside a row of %d", c.Offset, len(vals))
			}
			v = vals[c.Offset]
		} else {
			v = vals[i]
		}
		if v == nil {
			hasNull = true
		}
		if c.Stale != nil {
			return buf, false, c.Stale
		}
		var err error
		if buf, err = tablecodec.EncodeKey(buf, keyValue(c, v)); err != nil {
			return buf, false, fmt.Errorf("key column %d: %w", i, err)
		}
	}
	return buf, hasNull, nil
}

// indexEntry is one index entry of one row.
type indexEntry struct {
	key, value []byte
	// unique: the key has no handle, so another row with the same values
	// would collide (a unique index without NULLs).
	unique bool
	// deleteOnly: the index is IndexDeleteOnly; the entry is deleted
	// with its row but never written or checked.
	deleteOnly bool
	ix         *Index
}

// IndexEntry returns the key and value of row h's entry in index ix of t,
// and whether the key is unique (a unique index and no NULL among the
// values: another row with the same values collides). An online index
// build writes existing rows' entries with it.
func IndexEntry(t *Table, ix *Index, h tablecodec.Handle, row []any) (key, value []byte, unique bool, err error) {
	if err := t.checkRow(row); err != nil {
		return nil, nil, false, err
	}
	e, err := ix.entry(t, h, row)
	if err != nil {
		return nil, nil, false, err
	}
	return e.key, e.value, e.unique, nil
}

// entry computes the index entry of row h.
func (ix *Index) entry(t *Table, h tablecodec.Handle, row []any) (indexEntry, error) {
	vals, hasNull, err := encodeIndexValues(nil, ix.Columns, row, true)
	if err != nil {
		return indexEntry{}, fmt.Errorf("table %s index %s: %w", t.Name, ix.Name, err)
	}
	key := tablecodec.IndexKey(make([]byte, 0, 19+len(vals)+10), t.ID, ix.ID, vals, ix.Unique, hasNull, h)
	return indexEntry{
		key:        key,
		value:      tablecodec.IndexValue(nil, ix.Unique, hasNull, h),
		unique:     ix.Unique && !hasNull,
		deleteOnly: ix.State == IndexDeleteOnly,
		ix:         ix,
	}, nil
}

// KeyRange is the range of keys [Start, End); a nil End means no upper
// bound.
type KeyRange struct {
	Start, End []byte
}

// Bound is one end of a range over a prefix of a key's columns (an index's
// columns, or a clustered primary key's): Values holds the first
// len(Values) columns' values in column order. An empty Values leaves that
// end unbounded (NULLs included: they sort first).
type Bound struct {
	Values    []any
	Inclusive bool
}

// RowRange returns the key range of all of t's rows.
func (t *Table) RowRange() KeyRange {
	s, e := tablecodec.RecordRange(t.ID)
	return KeyRange{s, e}
}

// IndexRange returns the key range of index entries between lo and hi.
func (t *Table) IndexRange(ix *Index, lo, hi Bound) (KeyRange, error) {
	prefix := tablecodec.IndexPrefix(nil, t.ID, ix.ID)
	r, err := boundsRange(prefix, ix.Columns, lo, hi)
	if err != nil {
		return r, fmt.Errorf("table %s index %s range: %w", t.Name, ix.Name, err)
	}
	return r, nil
}

// HandleRange returns the key range of rows whose primary key lies between
// lo and hi, for a table with a primary-key handle.
func (t *Table) HandleRange(lo, hi Bound) (KeyRange, error) {
	prefix := tablecodec.RecordPrefix(nil, t.ID)
	var r KeyRange
	var err error
	switch t.HandleKind {
	case HandleInt:
		r, err = intHandleRange(prefix, lo, hi)
	case HandleCommon:
		r, err = boundsRange(prefix, t.PrimaryKey, lo, hi)
	default:
		err = fmt.Errorf("table has hidden row IDs and no primary-key order")
	}
	if err != nil {
		return r, fmt.Errorf("table %s primary key range: %w", t.Name, err)
	}
	return r, nil
}

// boundsRange turns bounds on a prefix of cols into a key range under
// prefix.
func boundsRange(prefix []byte, cols []IndexColumn, lo, hi Bound) (KeyRange, error) {
	var r KeyRange
	if len(lo.Values) == 0 {
		r.Start = prefix
	} else {
		k, _, err := encodeIndexValues(clone(prefix), cols, lo.Values, false)
		if err != nil {
			return r, fmt.Errorf("lower bound: %w", err)
		}
		r.Start = tablecodec.LowerBound(k, lo.Inclusive)
	}
	if len(hi.Values) == 0 {
		r.End = tablecodec.PrefixNext(prefix)
	} else {
		k, _, err := encodeIndexValues(clone(prefix), cols, hi.Values, false)
		if err != nil {
			return r, fmt.Errorf("upper bound: %w", err)
		}
		r.End = tablecodec.UpperBound(k, hi.Inclusive)
	}
	return r, nil
}

// intHandleRange is boundsRange for int handles, which sit in row keys as
// bare 8-byte integers, not key datums. Bounds outside int64 (a large
// unsigned value) clamp to the ends of the table.
func intHandleRange(prefix []byte, lo, hi Bound) (KeyRange, error) {
	end := tablecodec.PrefixNext(prefix)
	bound := func(b Bound, lower bool) ([]byte, error) {
		if len(b.Values) == 0 {
			if lower {
				return prefix, nil
			}
			return end, nil
		}
		if len(b.Values) > 1 {
			return nil, fmt.Errorf("%d values for a one-column primary key", len(b.Values))
		}
		v, err := handleInt(b.Values[0])
		if err != nil {
			if u, ok := b.Values[0].(uint64); ok && u > math.MaxInt64 {
				return end, nil // above every handle
			}
			return nil, err
		}
		k := tablecodec.EncodeInt(clone(prefix), v)
		if lower {
			return tablecodec.LowerBound(k, b.Inclusive), nil
		}
		return tablecodec.UpperBound(k, b.Inclusive), nil
	}
	var r KeyRange
	var err error
	if r.Start, err = bound(lo, true); err != nil {
		return r, fmt.Errorf("lower bound: %w", err)
	}
	if r.End, err = bound(hi, false); err != nil {
		return r, fmt.Errorf("upper bound: %w", err)
	}
	return r, nil
}

// clone copies b with room to append a key.
func clone(b []byte) []byte {
	out := make([]byte, len(b), len(b)+32)
	copy(out, b)
	return out
}

// RowDecoder decodes row values into rows of a table, or of a projection
// of it. It holds scratch space: one RowDecoder serves one goroutine.
type RowDecoder struct {
	t       *Table
	offsets []int // column offset of each output position
	ids     []int64
	present []bool
	trim    []int // output positions of TrimTrailingSpaces columns
}

// NewRowDecoder returns a decoder whose rows hold the columns at offsets,
// in that order, as go-mysql-server expects of a projected table; nil
// offsets means every column in table order. An empty, non-nil offsets
// gives empty rows (the rows are only counted).
func (t *Table) NewRowDecoder(offsets []int) (*RowDecoder, error) {
	if offsets == nil {
		offsets = make([]int, len(t.Columns))
		for i := range offsets {
			offsets[i] = i
		}
	}
	d := &RowDecoder{t: t, offsets: offsets, ids: make([]int64, len(offsets)), present: make([]bool, len(offsets))}
	for i, off := range offsets {
		if off < 0 || off >= len(t.Columns) {
			return nil, fmt.Errorf("table %s: projected column offset %d of %d", t.Name, off, len(t.Columns))
		}
		d.ids[i] = t.Columns[off].ID
		if t.Columns[off].TrimTrailingSpaces {
			d.trim = append(d.trim, i)
		}
	}
	return d, nil
}

// ReadComparator returns a comparator for the reads whose rows d decodes
// (txn.ReadView): two versions of a row of d's table read the same when
// they hold the same encoding of every column d decodes, since those are
// all a reader of d's rows can see (tablecodec.RowColumnsEqual). Keys
// that are not rows of the table (index entries) are the same only when
// their values are (txn compares the bytes before asking).
func (d *RowDecoder) ReadComparator() txn.ReadComparator {
	return ColumnsComparator(d.t, d.ids)
}

// ColumnsComparator returns a comparator for reads of t's rows that use
// the columns of ids (see RowDecoder.ReadComparator).
func ColumnsComparator(t *Table, ids []int64) txn.ReadComparator {
	return rowColumns{prefix: tablecodec.RecordPrefix(nil, t.ID), ids: ids}
}

// rowColumns is ColumnsComparator.
type rowColumns struct {
	prefix []byte
	ids    []int64
}

// SameRead implements txn.ReadComparator.
func (c rowColumns) SameRead(key, before, after []byte) (bool, error) {
	if !bytes.HasPrefix(key, c.prefix) {
		return false, nil
	}
	return tablecodec.RowColumnsEqual(before, after, c.ids)
}

// Decode decodes a row value into a new row. Columns the value lacks
// (added after it was written) take their OriginDefault.
func (d *RowDecoder) Decode(value []byte) ([]any, error) {
	row := make([]any, len(d.ids))
	if err := tablecodec.DecodeRow(value, d.ids, row, d.present); err != nil {
		return nil, fmt.Errorf("table %s: %w", d.t.Name, err)
	}
	for i, ok := range d.present {
		if !ok {
			row[i] = d.t.Columns[d.offsets[i]].OriginDefault
		}
	}
	for _, i := range d.trim {
		// Assign only a changed string: boxing one allocates.
		if s, ok := row[i].(string); ok && strings.HasSuffix(s, " ") {
			row[i] = strings.TrimRight(s, " ")
		}
	}
	return row, nil
}

// columnIDs returns the IDs of t's columns in row order.
func (t *Table) columnIDs() []int64 {
	if len(t.colIDs) == len(t.Columns) {
		return t.colIDs
	}
	ids := make([]int64, len(t.Columns))
	for i, c := range t.Columns {
		ids[i] = c.ID
	}
	return ids
}

// encodeRow encodes row as a row value of t.
func (t *Table) encodeRow(row []any) ([]byte, error) {
	b, err := tablecodec.EncodeRow(t.columnIDs(), row)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return b, nil
}
