package tablemeta

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

// Table is what every read and write of a table needs, derived once
// from its definition: the GMS schema, and the executor's description of
// the table (column IDs, how rows are keyed, the indexes), through which
// every row and index entry is read and written. It is immutable and
// shared by every transaction that sees the same definition.
type Table struct {
	// Def is the definition it was derived from, of a table of database
	// DBName.
	Def    *catalog.TableDef
	DBName string
	// Schema is the table's GMS schema.
	Schema gsql.PrimaryKeySchema
	// Exec is the executor's description of the table.
	Exec *executor.Table
	// AutoIncOrd is the position of the AUTO_INCREMENT column, or -1.
	AutoIncOrd int
	// Scales are the M and D of the FLOAT(M,D) and DOUBLE(M,D) columns
	// by schema position (floattype.go); nil when the table has none.
	Scales map[int]FloatScale
	// Primary describes the primary key as an index (nil without one);
	// Indexes are the public secondary indexes, in the order of
	// Exec.Indexes (which also has those being built or dropped).
	Primary *Index
	Indexes []*Index
}

// Index is one index as GMS's lookups see it: the schema positions and
// types of its columns, to convert range bounds to the columns' types.
type Index struct {
	// Def is the index's definition (for the primary key, one made up
	// of its columns, named PRIMARY).
	Def *catalog.IndexDef
	// Ords and Types are the schema positions and types of its columns,
	// in key order (a TIME(n) column's type is GMS's TIME, which does
	// not round a bound to the column's digits).
	Ords  []int
	Types []gsql.Type
	// Exec is the executor's index; nil for the primary key.
	Exec *executor.Index
	// Unique is set for a unique index and the primary key; IsPrimary
	// for the primary key.
	Unique    bool
	IsPrimary bool
	// Prefixed: some column is indexed by a prefix, so equal keys do not
	// mean equal values.
	Prefixed bool
}

// Cache derives table metadata once per definition. Definitions are
// immutable, so the pointer identifies the version.
type Cache struct {
	m sync.Map // *TableDef -> *Table
}

// Cached returns the metadata of def if it was derived already: a caller
// without a GMS context makes one (which costs a session's variables)
// only when it is not.
func (mc *Cache) Cached(def *catalog.TableDef) (*Table, bool) {
	m, ok := mc.m.Load(def)
	if !ok {
		return nil, false
	}
	return m.(*Table), true
}

// Get returns the metadata of def, deriving it on first use.
func (mc *Cache) Get(ctx *gsql.Context, dbName string, def *catalog.TableDef) (*Table, error) {
	if m, ok := mc.m.Load(def); ok {
		return m.(*Table), nil
	}
	m, err := New(ctx, dbName, def)
	if err != nil {
		return nil, err
	}
	actual, _ := mc.m.LoadOrStore(def, m)
	return actual.(*Table), nil
}

// New derives the metadata of def, a table of database dbName; Cache.Get
// keeps it per definition.
func New(ctx *gsql.Context, dbName string, def *catalog.TableDef) (*Table, error) {
	m := &Table{Def: def, DBName: dbName, AutoIncOrd: -1}
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
		if fs, ok := ParseFloatScale(c.Type); ok {
			if m.Scales == nil {
				m.Scales = make(map[int]FloatScale)
			}
			m.Scales[i] = fs
		}
		if c.AutoIncrement {
			m.AutoIncOrd = i
		}
	}
	var pkOrds []int
	for _, id := range def.PrimaryKey {
		_, ord, _ := def.Column(id)
		pkOrds = append(pkOrds, ord)
	}
	m.Schema = gsql.NewPrimaryKeySchema(sch, pkOrds...)
	switch {
	case len(pkOrds) == 0:
		et.HandleKind = executor.HandleRowID
	case len(pkOrds) == 1 && IsIntHandleType(sch[pkOrds[0]].Type):
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
		im.IsPrimary = true
		m.Primary = im
		et.PrimaryKey = cols
	}
	// Every index is written (executor.Index.State says how); only public
	// ones are read, so only they are described to GMS and the fast path.
	var all []*Index
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
		im.Exec = &et.Indexes[i]
		if def.Indexes[i].Public() {
			m.Indexes = append(m.Indexes, im)
		}
	}
	m.Exec = et
	return m, nil
}

// newIndexMeta describes def; its columns must exist (validated).
func (m *Table) newIndexMeta(def *catalog.IndexDef) (*Index, []executor.IndexColumn) {
	im := &Index{Def: def, Unique: def.Unique}
	cols := make([]executor.IndexColumn, len(def.Columns))
	for i, ic := range def.Columns {
		_, ord, _ := m.Def.Column(ic.ColumnID)
		typ := m.Schema.Schema[ord].Type
		im.Ords = append(im.Ords, ord)
		if tt, ok := typ.(TimeType); ok {
			// Bounds keep their digits: '12:00:00.1234' rounded to a
			// TIME(3)'s .123 would find .123 for = '12:00:00.1234'.
			im.Types = append(im.Types, tt.Promote())
		} else {
			im.Types = append(im.Types, typ)
		}
		if ic.Length > 0 {
			im.Prefixed = true
		}
		cols[i] = executor.IndexColumn{Offset: ord, PrefixLen: int(ic.Length), CollationKey: CollationKeyFunc(typ), TrimTrailingSpaces: isChar(typ) || PadsSpaces(typ), NotNull: !m.Schema.Schema[ord].Nullable}
		if m.Def.KeyFormat < catalog.KeyFormatPadSpace && PadsSpaces(typ) && !isChar(typ) {
			// Written with the trailing spaces in the keys: what a
			// lookup or unique check of today makes would miss them.
			cols[i].Stale = &executor.StaleKeysError{Table: m.Def.Name}
		}
	}
	return im, cols
}

// isChar reports whether typ is CHAR, whose values MySQL returns without
// trailing spaces (it pads them to the column's length when storing).
func isChar(typ gsql.Type) bool {
	_, ok := typ.(gsql.StringType)
	return ok && typ.Type() == sqltypes.Char
}

// PadsSpaces reports whether strings of typ compare as if the shorter
// were padded with spaces to the length of the longer, so that trailing
// spaces do not count: 'a' = 'a ' ('a' < 'a ' and 'a' = 'a ' are the
// two answers of MySQL's NO PAD and PAD SPACE collations). In MySQL 8
// every collation is PAD SPACE but the _0900_ ones and binary
// (information_schema.COLLATIONS.PAD_ATTRIBUTE, which GMS keeps too);
// binary strings (BINARY, VARBINARY, BLOB) are NO PAD.
func PadsSpaces(typ gsql.Type) bool {
	st, ok := typ.(gsql.StringType)
	if !ok {
		return false
	}
	c := st.Collation()
	return c != gsql.Collation_binary && c.PadAttribute() == "PAD SPACE"
}

// IsIntHandleType reports whether values of typ fit an int64 handle.
// Unsigned BIGINT does not, so such keys are clustered common handles.
func IsIntHandleType(typ gsql.Type) bool {
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

// CollationKeyFunc returns how strings of typ become keys: by their
// collation's sort key, so that keys sort and collide as the collation
// compares ('a' and 'A' are one key under a case-insensitive collation).
// Binary collations compare by code point, which UTF-8 bytes already do:
// nil, the strings themselves.
func CollationKeyFunc(typ gsql.Type) func(string) []byte {
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
