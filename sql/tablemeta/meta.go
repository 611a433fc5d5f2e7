package sql

import (
	"encoding/binary"
	"strings"
	"sync"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
)

// tableMeta is what every read and write of a table needs, derived once
// from its definition: the GMS schema, and the executor's description of
// the table (column IDs, how rows are keyed, the indexes), through which
// every row and index entry is read and written. It is immutable and
// shared by every transaction that sees the same definition.
type tableMeta struct {
	def    *catalog.TableDef
	dbName string
	schema gsql.PrimaryKeySchema
	exec   *executor.Table
	// autoIncOrd is the position of the AUTO_INCREMENT column, or -1.
	autoIncOrd int
	// primary describes the primary key as an index (nil without one);
	// indexes are the public secondary indexes, in the order of
	// exec.Indexes (which also has those being built or dropped).
	primary *indexMeta
	indexes []*indexMeta
}

// indexMeta is one index as GMS's lookups see it: the schema positions and
// types of its columns, to convert range bounds to the columns' types.
type indexMeta struct {
	def   *catalog.IndexDef
	ords  []int
	types []gsql.Type
	// exec is the executor's index; nil for the primary key.
	exec    *executor.Index
	unique  bool
	primary bool
	// prefixed: some column is indexed by a prefix, so equal keys do not
	// mean equal values.
	prefixed bool
}

// metaCache derives table metadata once per definition. Definitions are
// immutable, so the pointer identifies the version.
type metaCache struct {
	m sync.Map // *TableDef -> *tableMeta
}

// cached returns the metadata of def if it was derived already: a caller
// without a GMS context makes one (which costs a session's variables)
// only when it is not.
func (mc *metaCache) cached(def *catalog.TableDef) (*tableMeta, bool) {
	m, ok := mc.m.Load(def)
	if !ok {
		return nil, false
	}
	return m.(*tableMeta), true
}

// get returns the metadata of def, deriving it on first use.
func (mc *metaCache) get(ctx *gsql.Context, dbName string, def *catalog.TableDef) (*tableMeta, error) {
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

func newTableMeta(ctx *gsql.Context, dbName string, def *catalog.TableDef) (*tableMeta, error) {
	m := &tableMeta{def: def, dbName: dbName, autoIncOrd: -1}
	isPK := make(map[int64]bool, len(def.PrimaryKey))
	for _, id := range def.PrimaryKey {
		isPK[id] = true
	}
	sch := make(gsql.Schema, len(def.Columns))
	et := &executor.Table{ID: def.ID, Name: def.Name, Columns: make([]executor.Column, len(def.Columns))}
	for i := range def.Columns {
		c := &def.Columns[i]
		col, err := columnFromDef(ctx, def.Name, dbName, c, isPK[c.ID])
		if err != nil {
			return nil, err
		}
		sch[i] = col
		et.Columns[i] = executor.Column{ID: c.ID, TrimTrailingSpaces: isChar(col.Type)}
		if c.AutoIncrement {
			m.autoIncOrd = i
		}
	}
	var pkOrds []int
	for _, id := range def.PrimaryKey {
		_, ord, _ := def.Column(id)
		pkOrds = append(pkOrds, ord)
	}
	m.schema = gsql.NewPrimaryKeySchema(sch, pkOrds...)
	switch {
	case len(pkOrds) == 0:
		et.HandleKind = executor.HandleRowID
	case len(pkOrds) == 1 && isIntHandleType(sch[pkOrds[0]].Type):
		et.HandleKind = executor.HandleInt
	default:
		et.HandleKind = executor.HandleCommon
	}
	if len(pkOrds) > 0 {
		pk := &catalog.IndexDef{Name: "PRIMARY", Unique: true}
		for _, id := range def.PrimaryKey {
			pk.Columns = append(pk.Columns, catalog.IndexColumnDef{ColumnID: id})
		}
		im, cols := m.newIndexMeta(pk)
		im.primary = true
		m.primary = im
		et.PrimaryKey = cols
	}
	// Every index is written (executor.Index.State says how); only public
	// ones are read, so only they are described to GMS and the fast path.
	var all []*indexMeta
	for i := range def.Indexes {
		d := &def.Indexes[i]
		im, cols := m.newIndexMeta(d)
		state := executor.IndexPublic
		switch d.State {
		case catalog.StateWriteOnly:
			state = executor.IndexWriteOnly
		case catalog.StateDeleteOnly:
			state = executor.IndexDeleteOnly
		}
		et.Indexes = append(et.Indexes, executor.Index{
			ID: d.ID, Name: d.Name, Unique: d.Unique, Columns: cols, State: state,
		})
		all = append(all, im)
	}
	et.Watches = def.Watches()
	if err := et.Validate(); err != nil {
		return nil, err
	}
	for i, im := range all {
		im.exec = &et.Indexes[i]
		if def.Indexes[i].Public() {
			m.indexes = append(m.indexes, im)
		}
	}
	m.exec = et
	return m, nil
}

// newIndexMeta describes def; its columns must exist (validated).
func (m *tableMeta) newIndexMeta(def *catalog.IndexDef) (*indexMeta, []executor.IndexColumn) {
	im := &indexMeta{def: def, unique: def.Unique}
	cols := make([]executor.IndexColumn, len(def.Columns))
	for i, ic := range def.Columns {
		_, ord, _ := m.def.Column(ic.ColumnID)
		typ := m.schema.Schema[ord].Type
		im.ords = append(im.ords, ord)
		im.types = append(im.types, typ)
		if ic.Length > 0 {
			im.prefixed = true
		}
		cols[i] = executor.IndexColumn{Offset: ord, PrefixLen: int(ic.Length), CollationKey: collationKeyFunc(typ), TrimTrailingSpaces: isChar(typ)}
	}
	return im, cols
}

// isChar reports whether typ is CHAR, whose values MySQL returns without
// trailing spaces (it pads them to the column's length when storing).
func isChar(typ gsql.Type) bool {
	_, ok := typ.(gsql.StringType)
	return ok && typ.Type() == sqltypes.Char
}

// isIntHandleType reports whether values of typ fit an int64 handle.
// Unsigned BIGINT does not, so such keys are clustered common handles.
func isIntHandleType(typ gsql.Type) bool {
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

// collationKeyFunc returns how strings of typ become keys: by their
// collation's sort key, so that keys sort and collide as the collation
// compares ('a' and 'A' are one key under a case-insensitive collation).
// Binary collations compare by code point, which UTF-8 bytes already do:
// nil, the strings themselves.
func collationKeyFunc(typ gsql.Type) func(string) []byte {
	st, ok := typ.(gsql.StringType)
	if !ok {
		return nil
	}
	c := st.Collation()
	if c == gsql.Collation_binary || strings.HasSuffix(c.Name(), "_bin") {
		return nil
	}
	weight := c.Sorter()
	if weight == nil {
		return nil
	}
	return func(s string) []byte { return collationKey(weight, s) }
}

// collationKey returns the sort key of s: the big-endian weights of its
// characters, which compare as GMS compares strings (character by
// character, then the shorter first). An invalid UTF-8 byte is weighed as
// the byte itself.
func collationKey(weight gsql.CollationSorter, s string) []byte {
	out := make([]byte, 0, 4*len(s))
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		w := uint32(weight(r))
		if r == utf8.RuneError && n <= 1 {
			w = uint32(s[0])
		}
		out = binary.BigEndian.AppendUint32(out, w)
		s = s[n:]
	}
	return out
}
