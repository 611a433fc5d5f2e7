package catalog

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// The catalog lives in the user key space under the prefix "m" (table data
// lives under "t", see executor/tablecodec). Every key below is written in
// the same Percolator transaction as the DDL statement that changes it, so a
// DDL is atomic with the data it moves (CREATE INDEX backfill, DROP TABLE
// deleting rows, ALTER TABLE rewrites) and two concurrent DDLs conflict on
// the version key instead of overwriting each other's definitions.
//
//	m:version              uint64, bumped by every DDL
//	m:nextid               uint64, the last database/table ID handed out
//	m:c:d:<name>           DatabaseDef (JSON), name lower-cased
//	m:c:t:<dbID><name>     TableDef (JSON), dbID 8 bytes big-endian; it
//	                       holds the table's columns, indexes, CHECK
//	                       constraints and the foreign keys it declares
//	m:c:v:<dbID><name>     ViewDef (JSON)
//	m:c:g:<dbID><name>     TriggerDef (JSON), see defs.go and sql/trigger.go
//	m:c:p:<dbID><name>     ProcedureDef (JSON), see defs.go and sql/routines.go
//	m:c:f:<dbID><name>     ProcedureDef (JSON) of a stored function
//	m:a:<tableID><kind>    an ID allocator's high-water mark (autoinc.go)
//
// Everything under "m:c:" is loaded by one scan; the allocator keys sit
// outside that range because they change without a version bump.
var (
	KeyVersion       = []byte("m:version")
	keyNextID        = []byte("m:nextid")
	prefixCatalog    = []byte("m:c:")
	prefixDatabase   = []byte("m:c:d:")
	prefixTable      = []byte("m:c:t:")
	prefixView       = []byte("m:c:v:")
	prefixTrigger    = []byte("m:c:g:")
	prefixProcedure  = []byte("m:c:p:")
	prefixFunction   = []byte("m:c:f:")
	prefixAllocators = []byte("m:a:")
)

// DatabaseDef is the stored definition of a database.
type DatabaseDef struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Collation string `json:"collation"`
}

// ColumnDef is the stored definition of one column. Its ID is stable for
// the life of the table: rows are encoded by column ID, so ADD and DROP
// COLUMN need not rewrite rows.
type ColumnDef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Type is the MySQL type as GMS prints it, for example
	// "varchar(20) COLLATE utf8mb4_0900_ai_ci"; parsed back with the GMS
	// planbuilder.
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
	// Default is the default expression as GMS prints it; HasDefault tells
	// an empty-string default from none.
	Default       string `json:"default,omitempty"`
	HasDefault    bool   `json:"has_default,omitempty"`
	OnUpdate      string `json:"on_update,omitempty"`
	AutoIncrement bool   `json:"auto_increment,omitempty"`
	Comment       string `json:"comment,omitempty"`
	// Extra is what SHOW COLUMNS prints in its Extra column.
	Extra string `json:"extra,omitempty"`
	// Generated is the expression of a generated column as GMS prints
	// it (empty for other columns); Virtual tells a VIRTUAL one, which
	// is computed when read, from a STORED one.
	Generated string `json:"generated,omitempty"`
	Virtual   bool   `json:"virtual,omitempty"`
}

// IndexColumnDef is one column of an index: the column's ID and an
// optional prefix length (0: the whole value).
type IndexColumnDef struct {
	ColumnID int64 `json:"column_id"`
	Length   int64 `json:"length,omitempty"`
}

// IndexDef is the stored definition of a secondary index. The primary key
// is not an IndexDef: it is the row key (TableDef.PrimaryKey).
type IndexDef struct {
	ID      int64            `json:"id"`
	Name    string           `json:"name"`
	Columns []IndexColumnDef `json:"columns"`
	Unique  bool             `json:"unique,omitempty"`
	Comment string           `json:"comment,omitempty"`
	// State is where an index being built online stands (sql/ddl.go): empty
	// when public, else StateWriteOnly or StateDeleteOnly. Only a public
	// index is read or shown.
	State string `json:"state,omitempty"`
	// ForForeignKey marks an index added for a foreign key that no index
	// served (as InnoDB adds one); it is dropped when a later index
	// serves the key (sql/foreignkey/index.go).
	ForForeignKey bool `json:"for_foreign_key,omitempty"`
}

// Online schema change states of an index (F1's; see sql/schemalease).
const (
	// StateDeleteOnly: writers delete the index's entries but add none.
	StateDeleteOnly = "delete_only"
	// StateWriteOnly: writers keep the index in step; nobody reads it.
	StateWriteOnly = "write_only"
)

// Public reports whether the index is public: read, shown and written.
func (ix *IndexDef) Public() bool { return ix.State == "" }

// KeyFormatPadSpace is the key format (TableDef.KeyFormat) in which a
// string under a PAD SPACE collation is keyed without its trailing
// spaces, as it compares ('a' and 'a ' are one key). Tables written
// before it have strings keyed with their trailing spaces, which lookups
// and unique checks of today would miss: their keys are not used
// (tablemeta) until the table is dumped and reloaded.
const KeyFormatPadSpace = 1

// TableDef is the stored definition of a table.
type TableDef struct {
	// ID names the table's key range (t{ID}...). ALTER TABLE operations
	// that rewrite rows give the table a new ID.
	ID      int64       `json:"id"`
	DBID    int64       `json:"db_id"`
	Name    string      `json:"name"`
	Columns []ColumnDef `json:"columns"`
	// PrimaryKey holds the IDs of the primary-key columns in key order;
	// empty means the table has no primary key and rows get a hidden int
	// handle.
	PrimaryKey []int64    `json:"primary_key,omitempty"`
	Indexes    []IndexDef `json:"indexes,omitempty"`
	Collation  string     `json:"collation"`
	Comment    string     `json:"comment,omitempty"`
	// KeyFormat is the encoding of the table's keys its rows and index
	// entries were written with (KeyFormatPadSpace for every table made
	// since it came); 0 is the one before: keys of strings under PAD
	// SPACE collations kept their trailing spaces.
	KeyFormat int `json:"key_format,omitempty"`
	// AutoIncrementStart is the AUTO_INCREMENT table option: the first
	// value the allocator hands out.
	AutoIncrementStart uint64 `json:"auto_increment_start,omitempty"`
	NextColumnID       int64  `json:"next_column_id"`
	NextIndexID        int64  `json:"next_index_id"`
	// Checks are the table's CHECK constraints; GMS evaluates them.
	Checks []CheckDef `json:"checks,omitempty"`
	// ForeignKeys are the foreign keys the table declares (as the child);
	// the ones that reference it are found in the other tables'
	// definitions (Catalog.Referencing).
	ForeignKeys []ForeignKeyDef `json:"foreign_keys,omitempty"`
	// Temporary marks the definition of a temporary table, which is kept
	// in its session, never stored or encoded (sql/temptable.go).
	Temporary bool `json:"-"`
	// Fence, when set, names the schema change that is about to copy or
	// delete the table's rows (ALTER TABLE that rewrites it, TRUNCATE,
	// DROP): no transaction that sees it may write the table (sql/ddl.go).
	Fence string `json:"fence,omitempty"`
	// ChangedBy names the SQL node of a cluster that last began an online
	// schema change of the table (its schema lease's name; empty on the
	// single node): a node that starts rolls back only the unfinished
	// changes of nodes that are gone (sql/ddl.go, recoverSchemaChanges).
	ChangedBy string `json:"changed_by,omitempty"`
	// Observers are the observers watching the table's columns
	// (sql/observers.go).
	Observers []ObserverDef `json:"observers,omitempty"`
}

// CheckDef is the stored definition of a CHECK constraint: its expression
// as GMS prints it.
type CheckDef struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
	Enforced   bool   `json:"enforced"`
}

// ViewDef is the stored definition of a view.
type ViewDef struct {
	Name                string `json:"name"`
	TextDefinition      string `json:"text"`
	CreateViewStatement string `json:"create"`
	SQLMode             string `json:"sql_mode,omitempty"`
}

// Column returns the column with the given ID.
func (t *TableDef) Column(id int64) (*ColumnDef, int, bool) {
	for i := range t.Columns {
		if t.Columns[i].ID == id {
			return &t.Columns[i], i, true
		}
	}
	return nil, -1, false
}

// ColumnByName returns the column named name (case-insensitive).
func (t *TableDef) ColumnByName(name string) (*ColumnDef, int, bool) {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i], i, true
		}
	}
	return nil, -1, false
}

// Index returns the index named name (case-insensitive).
func (t *TableDef) Index(name string) (*IndexDef, int, bool) {
	for i := range t.Indexes {
		if strings.EqualFold(t.Indexes[i].Name, name) {
			return &t.Indexes[i], i, true
		}
	}
	return nil, -1, false
}

// Clone returns a deep copy that a DDL may change.
func (t *TableDef) Clone() *TableDef {
	c := *t
	c.Columns = append([]ColumnDef(nil), t.Columns...)
	c.PrimaryKey = append([]int64(nil), t.PrimaryKey...)
	c.Checks = append([]CheckDef(nil), t.Checks...)
	c.ForeignKeys = make([]ForeignKeyDef, len(t.ForeignKeys))
	for i, fk := range t.ForeignKeys {
		c.ForeignKeys[i] = fk.clone()
	}
	c.Indexes = make([]IndexDef, len(t.Indexes))
	for i, idx := range t.Indexes {
		idx.Columns = append([]IndexColumnDef(nil), idx.Columns...)
		c.Indexes[i] = idx
	}
	c.Observers = make([]ObserverDef, len(t.Observers))
	for i, o := range t.Observers {
		o.Columns = append([]int64(nil), o.Columns...)
		c.Observers[i] = o
	}
	return &c
}

// Validate checks the references inside a definition, so that a corrupt or
// hand-edited catalog is reported instead of crashing a query.
func (t *TableDef) Validate() error {
	if t.ID <= 0 {
		return fmt.Errorf("table %q: bad table ID %d", t.Name, t.ID)
	}
	seen := make(map[int64]bool, len(t.Columns))
	for _, c := range t.Columns {
		if c.ID <= 0 || seen[c.ID] {
			return fmt.Errorf("table %q: column %q has a bad or duplicate ID %d", t.Name, c.Name, c.ID)
		}
		seen[c.ID] = true
	}
	for _, id := range t.PrimaryKey {
		if !seen[id] {
			return fmt.Errorf("table %q: primary key names unknown column ID %d", t.Name, id)
		}
	}
	for _, fk := range t.ForeignKeys {
		if fk.Name == "" || len(fk.Columns) == 0 || len(fk.Columns) != len(fk.ParentColumns) {
			return fmt.Errorf("table %q: foreign key %q has a bad column list", t.Name, fk.Name)
		}
	}
	for _, idx := range t.Indexes {
		if len(idx.Columns) == 0 {
			return fmt.Errorf("table %q: index %q has no columns", t.Name, idx.Name)
		}
		for _, ic := range idx.Columns {
			if !seen[ic.ColumnID] {
				return fmt.Errorf("table %q: index %q names unknown column ID %d", t.Name, idx.Name, ic.ColumnID)
			}
		}
	}
	return nil
}

// Catalog is the raw content of the catalog at one version: every
// definition, indexed by lower-cased name. It is never changed once
// published; a DDL changes a copy (Clone) in its transaction, which
// replaces definitions rather than mutating them.
type Catalog struct {
	// Version is the schema version (m:version) the catalog was read at.
	Version uint64
	// Databases are keyed by lower-cased name.
	Databases map[string]*DatabaseDef
	// Tables, Views, Triggers, Procedures and Functions are keyed by
	// database ID, then lower-cased name.
	Tables     map[int64]map[string]*TableDef
	Views      map[int64]map[string]*ViewDef
	Triggers   map[int64]map[string]*TriggerDef
	Procedures map[int64]map[string]*ProcedureDef
	// Functions are the stored functions (CREATE FUNCTION): a name, its
	// statement as written and its times, as a procedure's.
	Functions map[int64]map[string]*ProcedureDef

	// referencing indexes the foreign keys by the table they reference,
	// built on first use (Referencing); a Catalog is not changed after
	// that.
	referencingOnce sync.Once
	referencing     map[string][]ForeignKeyRef
}

// New returns an empty catalog of the given version.
func New(version uint64) *Catalog {
	return &Catalog{
		Version:    version,
		Databases:  make(map[string]*DatabaseDef),
		Tables:     make(map[int64]map[string]*TableDef),
		Views:      make(map[int64]map[string]*ViewDef),
		Triggers:   make(map[int64]map[string]*TriggerDef),
		Procedures: make(map[int64]map[string]*ProcedureDef),
		Functions:  make(map[int64]map[string]*ProcedureDef),
	}
}

// Clone returns a shallow copy whose maps may be changed; the definitions
// themselves are shared and must be replaced, not mutated.
func (c *Catalog) Clone() *Catalog {
	n := New(c.Version)
	for k, v := range c.Databases {
		n.Databases[k] = v
	}
	for db, m := range c.Tables {
		n.Tables[db] = cloneMap(m)
	}
	for db, m := range c.Views {
		n.Views[db] = cloneMap(m)
	}
	for db, m := range c.Triggers {
		n.Triggers[db] = cloneMap(m)
	}
	for db, m := range c.Procedures {
		n.Procedures[db] = cloneMap(m)
	}
	for db, m := range c.Functions {
		n.Functions[db] = cloneMap(m)
	}
	return n
}

// cloneMap returns a copy of m that may be changed.
func cloneMap[T any](m map[string]*T) map[string]*T {
	nm := make(map[string]*T, len(m))
	for k, v := range m {
		nm[k] = v
	}
	return nm
}

// Database returns the definition of the database named name.
func (c *Catalog) Database(name string) (*DatabaseDef, bool) {
	d, ok := c.Databases[strings.ToLower(name)]
	return d, ok
}

// SortedDatabases returns every database in name order.
func (c *Catalog) SortedDatabases() []*DatabaseDef {
	return sortedByName(c.Databases, func(d *DatabaseDef) string { return d.Name })
}

// sortedByName returns the definitions of m ordered by name.
func sortedByName[T any](m map[string]*T, name func(*T) string) []*T {
	out := make([]*T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return name(out[i]) < name(out[j]) })
	return out
}

// Table returns the table named name in database dbID.
func (c *Catalog) Table(dbID int64, name string) (*TableDef, bool) {
	t, ok := c.Tables[dbID][strings.ToLower(name)]
	return t, ok
}

// SortedTables returns the tables of database dbID in name order.
func (c *Catalog) SortedTables(dbID int64) []*TableDef {
	return sortedByName(c.Tables[dbID], func(t *TableDef) string { return t.Name })
}

// View returns the view named name in database dbID.
func (c *Catalog) View(dbID int64, name string) (*ViewDef, bool) {
	v, ok := c.Views[dbID][strings.ToLower(name)]
	return v, ok
}

// SortedViews returns the views of database dbID in name order.
func (c *Catalog) SortedViews(dbID int64) []*ViewDef {
	return sortedByName(c.Views[dbID], func(v *ViewDef) string { return v.Name })
}

// PutTable records t under its database.
func (c *Catalog) PutTable(t *TableDef) { putNamed(c.Tables, t.DBID, t.Name, t) }

// PutView records v under database dbID.
func (c *Catalog) PutView(dbID int64, v *ViewDef) { putNamed(c.Views, dbID, v.Name, v) }

// putNamed records v under database dbID and lower-cased name in m.
func putNamed[T any](m map[int64]map[string]*T, dbID int64, name string, v *T) {
	byName := m[dbID]
	if byName == nil {
		byName = make(map[string]*T)
		m[dbID] = byName
	}
	byName[strings.ToLower(name)] = v
}

// Key construction. Names are lower-cased: MySQL object names compare
// case-insensitively in GMS.

// DatabaseKey is the key of the definition of database name.
func DatabaseKey(name string) []byte {
	return append(append([]byte(nil), prefixDatabase...), strings.ToLower(name)...)
}

// TablesPrefix is the prefix of the keys of database dbID's tables.
func TablesPrefix(dbID int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixTable...), uint64(dbID))
}

// TableKey is the key of the definition of table name of database dbID.
func TableKey(dbID int64, name string) []byte {
	return append(TablesPrefix(dbID), strings.ToLower(name)...)
}

// ViewsPrefix is the prefix of the keys of database dbID's views.
func ViewsPrefix(dbID int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixView...), uint64(dbID))
}

// ViewKey is the key of the definition of view name of database dbID.
func ViewKey(dbID int64, name string) []byte {
	return append(ViewsPrefix(dbID), strings.ToLower(name)...)
}

// decodeCatalogEntry adds one stored catalog entry to c.
func (c *Catalog) DecodeEntry(key, value []byte) error {
	switch {
	case hasPrefix(key, prefixDatabase):
		var d DatabaseDef
		if err := json.Unmarshal(value, &d); err != nil {
			return fmt.Errorf("decode database %q: %w", key, err)
		}
		c.Databases[strings.ToLower(d.Name)] = &d
	case hasPrefix(key, prefixTable):
		var t TableDef
		if err := json.Unmarshal(value, &t); err != nil {
			return fmt.Errorf("decode table %q: %w", key, err)
		}
		if err := t.Validate(); err != nil {
			return fmt.Errorf("decode table %q: %w", key, err)
		}
		c.PutTable(&t)
	case hasPrefix(key, prefixView):
		var v ViewDef
		dbID, err := decodeInDatabase(key, value, prefixView, "view", &v)
		if err != nil {
			return err
		}
		c.PutView(dbID, &v)
	case hasPrefix(key, prefixTrigger):
		var t TriggerDef
		dbID, err := decodeInDatabase(key, value, prefixTrigger, "trigger", &t)
		if err != nil {
			return err
		}
		c.PutTrigger(dbID, &t)
	case hasPrefix(key, prefixProcedure):
		var p ProcedureDef
		dbID, err := decodeInDatabase(key, value, prefixProcedure, "procedure", &p)
		if err != nil {
			return err
		}
		putNamed(c.Procedures, dbID, p.Name, &p)
	case hasPrefix(key, prefixFunction):
		var p ProcedureDef
		dbID, err := decodeInDatabase(key, value, prefixFunction, "function", &p)
		if err != nil {
			return err
		}
		putNamed(c.Functions, dbID, p.Name, &p)
	default:
		return fmt.Errorf("unknown catalog key %q", key)
	}
	return nil
}

// decodeInDatabase decodes the definition of a what (a view, a trigger)
// stored at key, prefix followed by the database ID, into v and returns
// the database ID.
func decodeInDatabase(key, value, prefix []byte, what string, v any) (int64, error) {
	if len(key) < len(prefix)+8 {
		return 0, fmt.Errorf("decode %s: key %q too short", what, key)
	}
	if err := json.Unmarshal(value, v); err != nil {
		return 0, fmt.Errorf("decode %s %q: %w", what, key, err)
	}
	return int64(binary.BigEndian.Uint64(key[len(prefix):])), nil
}

func hasPrefix(b, prefix []byte) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == string(prefix)
}

// EncodeUint64 stores a counter (the version, the next ID, an allocator
// mark) as 8 bytes big-endian.
func EncodeUint64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// DecodeUint64 decodes a counter EncodeUint64 stored; what names it in
// errors.
func DecodeUint64(what string, b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("decode %s: %d bytes, want 8", what, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// PutJSON stores v, JSON-encoded, at key in the transaction.
func PutJSON(k *txn.Txn, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	if err := k.Set(key, b); err != nil {
		return fmt.Errorf("write %q: %w", key, err)
	}
	return nil
}

// ScanJSON decodes every value under prefix in k as a T and hands it to
// each with a copy of its key, in key order.
func ScanJSON[T any](ctx context.Context, k *txn.Txn, prefix []byte, each func(key []byte, v T)) error {
	it, err := k.Iter(ctx, prefix, tablecodec.PrefixNext(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Valid() {
		var v T
		if err := json.Unmarshal(it.Value(), &v); err != nil {
			return fmt.Errorf("decode %q: %w", it.Key(), err)
		}
		each(append([]byte(nil), it.Key()...), v)
		if err := it.Next(ctx); err != nil {
			return err
		}
	}
	return nil
}
