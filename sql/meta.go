package sql

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/executor/tablecodec"
)

// tableMeta is what every read and write of a table needs, derived once
// from its definition: the GMS schema, column IDs by position, how rows are
// keyed and each index's columns. It is immutable and shared by every
// transaction that sees the same definition.
type tableMeta struct {
	def    *TableDef
	dbName string
	schema gsql.PrimaryKeySchema
	// colIDs[i] is the column ID of schema position i.
	colIDs []int64
	// pkOrds are the schema positions of the primary-key columns.
	pkOrds []int
	// handle says how rows are keyed (see handleKind).
	handle handleKind
	// autoIncOrd is the position of the AUTO_INCREMENT column, or -1.
	autoIncOrd int
	indexes    []*indexMeta
	// primary describes the primary key as an index (nil without one); its
	// ID is 0 and it is never stored as index entries.
	primary *indexMeta
}

// handleKind says how a table's rows are keyed.
type handleKind uint8

const (
	// handleHidden: no primary key; rows get an int handle from the
	// table's row-ID allocator.
	handleHidden handleKind = iota
	// handleInt: the primary key is one integer column whose value is the
	// int handle.
	handleInt
	// handleCommon: the primary key is clustered: the handle is the key
	// encoding of its values.
	handleCommon
)

// indexMeta describes one index: positions and types of its columns and
// their prefix lengths.
type indexMeta struct {
	def     *IndexDef
	ords    []int
	types   []gsql.Type
	prefix  []int64
	unique  bool
	primary bool
}

// metaCache derives table metadata once per definition. Definitions are
// immutable, so the pointer identifies the version.
type metaCache struct {
	m sync.Map // *TableDef -> *tableMeta
}

// get returns the metadata of def, deriving it on first use.
func (mc *metaCache) get(ctx *gsql.Context, dbName string, def *TableDef) (*tableMeta, error) {
	if m, ok := mc.m.Load(def); ok {
		return m.(*tableMeta), nil
	}
	m, err := newTableMeta(ctx, dbName, def)
	if err != nil {
		return nil, err
	}
	actual, _ := mc.m.LoadOrStore(def, m)
	return actual.(*tableMeta), nil
}

func newTableMeta(ctx *gsql.Context, dbName string, def *TableDef) (*tableMeta, error) {
	m := &tableMeta{def: def, dbName: dbName, autoIncOrd: -1}
	isPK := make(map[int64]bool, len(def.PrimaryKey))
	for _, id := range def.PrimaryKey {
		isPK[id] = true
	}
	sch := make(gsql.Schema, len(def.Columns))
	m.colIDs = make([]int64, len(def.Columns))
	for i := range def.Columns {
		c := &def.Columns[i]
		col, err := columnFromDef(ctx, def.Name, dbName, c, isPK[c.ID])
		if err != nil {
			return nil, err
		}
		sch[i] = col
		m.colIDs[i] = c.ID
		if c.AutoIncrement {
			m.autoIncOrd = i
		}
	}
	for _, id := range def.PrimaryKey {
		_, ord, _ := def.column(id)
		m.pkOrds = append(m.pkOrds, ord)
	}
	m.schema = gsql.NewPrimaryKeySchema(sch, m.pkOrds...)
	switch {
	case len(m.pkOrds) == 0:
		m.handle = handleHidden
	case len(m.pkOrds) == 1 && isSignedIntType(sch[m.pkOrds[0]].Type):
		m.handle = handleInt
	default:
		m.handle = handleCommon
	}
	if len(m.pkOrds) > 0 {
		pk := &IndexDef{Name: "PRIMARY", Unique: true}
		for _, id := range def.PrimaryKey {
			pk.Columns = append(pk.Columns, IndexColumnDef{ColumnID: id})
		}
		im, err := m.newIndexMeta(pk)
		if err != nil {
			return nil, err
		}
		im.primary = true
		m.primary = im
	}
	for i := range def.Indexes {
		im, err := m.newIndexMeta(&def.Indexes[i])
		if err != nil {
			return nil, err
		}
		m.indexes = append(m.indexes, im)
	}
	return m, nil
}

func (m *tableMeta) newIndexMeta(def *IndexDef) (*indexMeta, error) {
	im := &indexMeta{def: def, unique: def.Unique}
	for _, ic := range def.Columns {
		_, ord, ok := m.def.column(ic.ColumnID)
		if !ok {
			return nil, fmt.Errorf("index %q names unknown column %d", def.Name, ic.ColumnID)
		}
		im.ords = append(im.ords, ord)
		im.types = append(im.types, m.schema.Schema[ord].Type)
		im.prefix = append(im.prefix, ic.Length)
	}
	return im, nil
}

// isSignedIntType reports whether values of typ fit an int64 handle.
// Unsigned BIGINT does not, so such keys are clustered common handles.
func isSignedIntType(typ gsql.Type) bool {
	if _, ok := typ.(gsql.NumberType); !ok {
		return false
	}
	switch typ.Type() {
	case sqltypes.Int8, sqltypes.Int16, sqltypes.Int24, sqltypes.Int32, sqltypes.Int64,
		sqltypes.Uint8, sqltypes.Uint16, sqltypes.Uint24, sqltypes.Uint32:
		return true
	}
	return false
}

// intHandleValue converts a primary-key value of an int-handle table.
func intHandleValue(v any) (int64, error) {
	switch v := v.(type) {
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case int64:
		return v, nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	}
	return 0, fmt.Errorf("primary key value %v (%T) is not an integer", v, v)
}

// keyValue returns the value that stands for v in a key of a column of
// type typ: strings become their collation's sort key, so that keys sort
// and collide as the collation compares ('a' and 'A' under a
// case-insensitive collation are one key), and a prefix length keeps only
// the first characters. Other values go into keys as they are.
func keyValue(v any, typ gsql.Type, prefix int64) (any, error) {
	switch s := v.(type) {
	case string:
		if prefix > 0 {
			s = truncateRunes(s, prefix)
		}
		st, ok := typ.(gsql.StringType)
		if !ok {
			return s, nil
		}
		return collationKey(st.Collation(), s)
	case []byte:
		if prefix > 0 && int64(len(s)) > prefix {
			s = s[:prefix]
		}
		return s, nil
	}
	return v, nil
}

// collationKey returns the sort key of s under collation c: the big-endian
// weights of its characters, which compare as GMS compares strings
// (character by character, then shorter first). Binary collations compare
// by code point, which UTF-8 bytes already do.
func collationKey(c gsql.CollationID, s string) ([]byte, error) {
	if c == gsql.Collation_binary || strings.HasSuffix(c.Name(), "_bin") {
		return []byte(s), nil
	}
	weight := c.Sorter()
	if weight == nil {
		return []byte(s), nil
	}
	out := make([]byte, 0, 4*len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n <= 1 {
			return nil, fmt.Errorf("string %q is not valid UTF-8", s)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(weight(r)))
		s = s[n:]
	}
	return out, nil
}

// truncateRunes returns the first n characters of s.
func truncateRunes(s string, n int64) string {
	i := 0
	for k := int64(0); k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// encodeIndexValues returns the key encoding of the indexed values of row
// and whether any of them is NULL.
func (im *indexMeta) encodeValues(buf []byte, row gsql.Row) ([]byte, bool, error) {
	hasNull := false
	for i, ord := range im.ords {
		v := row[ord]
		if v == nil {
			hasNull = true
		}
		kv, err := keyValue(v, im.types[i], im.prefix[i])
		if err != nil {
			return nil, false, err
		}
		if buf, err = tablecodec.EncodeKey(buf, kv); err != nil {
			return nil, false, fmt.Errorf("index %s: %w", im.def.Name, err)
		}
	}
	return buf, hasNull, nil
}

// handleOf returns the handle of row in a table with a primary key.
func (m *tableMeta) handleOf(row gsql.Row) (tablecodec.Handle, error) {
	switch m.handle {
	case handleInt:
		v, err := intHandleValue(row[m.pkOrds[0]])
		if err != nil {
			return tablecodec.Handle{}, err
		}
		return tablecodec.IntHandle(v), nil
	case handleCommon:
		enc, _, err := m.primary.encodeValues(nil, row)
		if err != nil {
			return tablecodec.Handle{}, err
		}
		return tablecodec.CommonHandle(enc), nil
	}
	return tablecodec.Handle{}, fmt.Errorf("table %s has no primary key", m.def.Name)
}

// rowKey returns the key of the row with handle h.
func (m *tableMeta) rowKey(h tablecodec.Handle) []byte {
	return tablecodec.RowKey(nil, m.def.ID, h)
}

// encodeRow returns the stored value of row.
func (m *tableMeta) encodeRow(row gsql.Row) ([]byte, error) {
	b, err := tablecodec.EncodeRow(m.colIDs, row)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", m.def.Name, err)
	}
	return b, nil
}

// indexEntry returns the key and value of row's entry in index im.
func (m *tableMeta) indexEntry(im *indexMeta, row gsql.Row, h tablecodec.Handle) (key, value []byte, hasNull bool, err error) {
	vals, hasNull, err := im.encodeValues(nil, row)
	if err != nil {
		return nil, nil, false, err
	}
	key = tablecodec.IndexKey(nil, m.def.ID, im.def.ID, vals, im.unique, hasNull, h)
	value = tablecodec.IndexValue(nil, im.unique, hasNull, h)
	return key, value, hasNull, nil
}

// formatKeyValues formats the indexed values of row as MySQL does in a
// duplicate-key message: values joined by '-'.
func (im *indexMeta) formatKeyValues(row gsql.Row) string {
	parts := make([]string, len(im.ords))
	for i, ord := range im.ords {
		v := row[ord]
		switch x := v.(type) {
		case nil:
			parts[i] = "NULL"
		case []byte:
			parts[i] = string(x)
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return strings.Join(parts, "-")
}
