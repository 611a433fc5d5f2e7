package catalog

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// The definitions the catalog holds besides databases, tables and views
// (foreign keys, triggers, stored procedures, observers), the catalog's
// cache of the latest version read, and the ID counter.

// Cache keeps the most recent catalog a transaction loaded, so that
// transactions that see the same schema version share it instead of
// scanning the catalog again.
type Cache struct {
	mu  sync.Mutex
	cur *Catalog
}

// Load returns the catalog at k's snapshot: one read of the version key,
// and a scan of the catalog only when the version is not the cached one.
func (cc *Cache) Load(ctx context.Context, k *txn.Txn) (*Catalog, error) {
	version, err := readVersion(ctx, k.Get)
	if err != nil {
		return nil, err
	}
	if cur := cc.Cached(); cur != nil && cur.Version == version {
		return cur, nil
	}
	c := New(version)
	it, err := k.Iter(ctx, prefixCatalog, tablecodec.PrefixNext(prefixCatalog))
	if err != nil {
		return nil, fmt.Errorf("scan catalog: %w", err)
	}
	defer it.Close()
	for it.Valid() {
		if err := c.DecodeEntry(it.Key(), it.Value()); err != nil {
			return nil, err
		}
		if err := it.Next(ctx); err != nil {
			return nil, fmt.Errorf("scan catalog: %w", err)
		}
	}
	cc.Offer(c)
	return c, nil
}

// Cached returns the cached catalog, or nil.
func (cc *Cache) Cached() *Catalog {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.cur
}

// readVersion reads the schema version with get (0 before the first DDL).
func readVersion(ctx context.Context, get func(context.Context, []byte) ([]byte, bool, error)) (uint64, error) {
	raw, found, err := get(ctx, KeyVersion)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !found {
		return 0, nil
	}
	return DecodeUint64("schema version", raw)
}

// Offer caches c if it is newer than the cached catalog.
func (cc *Cache) Offer(c *Catalog) {
	cc.mu.Lock()
	if cc.cur == nil || c.Version > cc.cur.Version {
		cc.cur = c
	}
	cc.mu.Unlock()
}

// NextID hands out the next database or table ID from the meta
// counter, inside the DDL's transaction.
func NextID(ctx context.Context, k *txn.Txn) (int64, error) {
	raw, found, err := k.Get(ctx, keyNextID)
	if err != nil {
		return 0, fmt.Errorf("read next ID: %w", err)
	}
	var last uint64
	if found {
		if last, err = DecodeUint64("next ID", raw); err != nil {
			return 0, err
		}
	}
	last++
	if err := k.Set(keyNextID, EncodeUint64(last)); err != nil {
		return 0, fmt.Errorf("write next ID: %w", err)
	}
	return int64(last), nil
}

// ForeignKeyDef is the stored definition of a foreign key, kept in the
// child table's definition.
type ForeignKeyDef struct {
	Name          string   `json:"name"`
	Columns       []string `json:"columns"`
	ParentDB      string   `json:"parent_db"`
	ParentTable   string   `json:"parent_table"`
	ParentColumns []string `json:"parent_columns"`
	// OnUpdate and OnDelete are "CASCADE", "SET NULL" or "RESTRICT";
	// empty is MySQL 8's default, NO ACTION (the same as RESTRICT in
	// InnoDB), which SHOW CREATE TABLE does not print.
	OnUpdate string `json:"on_update,omitempty"`
	OnDelete string `json:"on_delete,omitempty"`
}

// clone returns a copy that may be changed.
func (fk ForeignKeyDef) clone() ForeignKeyDef {
	fk.Columns = append([]string(nil), fk.Columns...)
	fk.ParentColumns = append([]string(nil), fk.ParentColumns...)
	return fk
}

// ForeignKeyRef is one foreign key in the catalog: the child's database name,
// the child table and the key.
type ForeignKeyRef struct {
	ChildDB string
	Child   *TableDef
	Key     *ForeignKeyDef
}

// fkRefKey names a referenced table in Catalog.referencing.
func fkRefKey(db, table string) string {
	return strings.ToLower(db) + "\x00" + strings.ToLower(table)
}

// Referencing returns the foreign keys that reference table of
// database db, self-references included. The index it builds is kept:
// it must not be called on a catalog a DDL is still changing.
func (c *Catalog) Referencing(db, table string) []ForeignKeyRef {
	c.referencingOnce.Do(func() {
		c.referencing = make(map[string][]ForeignKeyRef)
		// In name order, so that errors name the same key every time.
		for _, d := range c.SortedDatabases() {
			for _, t := range c.SortedTables(d.ID) {
				for i := range t.ForeignKeys {
					fk := &t.ForeignKeys[i]
					k := fkRefKey(fk.ParentDB, fk.ParentTable)
					c.referencing[k] = append(c.referencing[k], ForeignKeyRef{ChildDB: d.Name, Child: t, Key: fk})
				}
			}
		}
	})
	return c.referencing[fkRefKey(db, table)]
}

// HasForeignKeys reports whether table def of database db declares a
// foreign key or is referenced by one.
func (c *Catalog) HasForeignKeys(db string, def *TableDef) bool {
	return len(def.ForeignKeys) > 0 || len(c.Referencing(db, def.Name)) > 0
}

// FindForeignKey returns the foreign key named name declared by a table
// named table, preferring database db.
func (c *Catalog) FindForeignKey(db, table, name string) (ForeignKeyRef, bool) {
	var found ForeignKeyRef
	ok := false
	for _, d := range c.SortedDatabases() {
		t, has := c.Table(d.ID, table)
		if !has {
			continue
		}
		for i := range t.ForeignKeys {
			if strings.EqualFold(t.ForeignKeys[i].Name, name) {
				ref := ForeignKeyRef{ChildDB: d.Name, Child: t, Key: &t.ForeignKeys[i]}
				if strings.EqualFold(d.Name, db) {
					return ref, true
				}
				if !ok {
					found, ok = ref, true
				}
			}
		}
	}
	return found, ok
}

// TriggerDef is the stored definition of a trigger.
type TriggerDef struct {
	// ID is taken from the catalog's ID counter when the trigger is
	// created, so it orders a database's triggers by creation: GMS runs
	// triggers of the same table, time and event in the order it gets
	// them, unless FOLLOWS or PRECEDES says otherwise.
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Table is the name of the table the trigger is on, in the trigger's
	// database.
	Table string `json:"table"`
	// Timing ("before", "after") and Event ("insert", "update",
	// "delete") say when it runs.
	Timing string `json:"timing"`
	Event  string `json:"event"`
	// Create is the CREATE TRIGGER statement, as the client sent it
	// except for the table name, which RENAME TABLE rewrites.
	Create    string    `json:"create"`
	CreatedAt time.Time `json:"created_at"`
	// SQLMode is the sql_mode the statement was parsed under (ANSI_QUOTES
	// changes how it parses).
	SQLMode string `json:"sql_mode,omitempty"`
}

// Trigger keys and the catalog's triggers.

// TriggersPrefix is the prefix of the keys of database dbID's triggers.
func TriggersPrefix(dbID int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixTrigger...), uint64(dbID))
}

// TriggerKey is the key of the definition of trigger name of database
// dbID.
func TriggerKey(dbID int64, name string) []byte {
	return append(TriggersPrefix(dbID), strings.ToLower(name)...)
}

// Trigger returns the trigger named name in database dbID.
func (c *Catalog) Trigger(dbID int64, name string) (*TriggerDef, bool) {
	t, ok := c.Triggers[dbID][strings.ToLower(name)]
	return t, ok
}

// PutTrigger records t under database dbID.
func (c *Catalog) PutTrigger(dbID int64, t *TriggerDef) { putNamed(c.Triggers, dbID, t.Name, t) }

// SortedTriggers returns the triggers of database dbID in the order they
// were created.
func (c *Catalog) SortedTriggers(dbID int64) []*TriggerDef {
	m := c.Triggers[dbID]
	out := make([]*TriggerDef, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// HasTriggers reports whether table of database dbID has a trigger.
func (c *Catalog) HasTriggers(dbID int64, table string) bool {
	for _, t := range c.Triggers[dbID] {
		if strings.EqualFold(t.Table, table) {
			return true
		}
	}
	return false
}

// ProcedureDef is the stored definition of a stored procedure.
type ProcedureDef struct {
	Name string `json:"name"`
	// Create is the CREATE PROCEDURE statement as the client sent it.
	Create     string    `json:"create"`
	CreatedAt  time.Time `json:"created_at"`
	ModifiedAt time.Time `json:"modified_at"`
	// SQLMode is the sql_mode the statement was parsed under.
	SQLMode string `json:"sql_mode,omitempty"`
}

// Procedure returns the stored procedure named name in database dbID.
func (c *Catalog) Procedure(dbID int64, name string) (*ProcedureDef, bool) {
	p, ok := c.Procedures[dbID][strings.ToLower(name)]
	return p, ok
}

// PutProcedure records p under database dbID.
func (c *Catalog) PutProcedure(dbID int64, p *ProcedureDef) { putNamed(c.Procedures, dbID, p.Name, p) }

// SortedProcedures returns the stored procedures of database dbID in name
// order.
func (c *Catalog) SortedProcedures(dbID int64) []*ProcedureDef {
	return sortedByName(c.Procedures[dbID], func(p *ProcedureDef) string { return p.Name })
}

// ProceduresPrefix is the prefix of the keys of database dbID's stored
// procedures.
func ProceduresPrefix(dbID int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixProcedure...), uint64(dbID))
}

// ProcedureKey is the key of the definition of stored procedure name of
// database dbID.
func ProcedureKey(dbID int64, name string) []byte {
	return append(ProceduresPrefix(dbID), strings.ToLower(name)...)
}

// Function returns the stored function named name in database dbID.
func (c *Catalog) Function(dbID int64, name string) (*ProcedureDef, bool) {
	p, ok := c.Functions[dbID][strings.ToLower(name)]
	return p, ok
}

// PutFunction records stored function p under database dbID.
func (c *Catalog) PutFunction(dbID int64, p *ProcedureDef) { putNamed(c.Functions, dbID, p.Name, p) }

// SortedFunctions returns the stored functions of database dbID in name
// order.
func (c *Catalog) SortedFunctions(dbID int64) []*ProcedureDef {
	return sortedByName(c.Functions[dbID], func(p *ProcedureDef) string { return p.Name })
}

// FunctionsPrefix is the prefix of the keys of database dbID's stored
// functions.
func FunctionsPrefix(dbID int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixFunction...), uint64(dbID))
}

// FunctionKey is the key of the definition of stored function name of
// database dbID.
func FunctionKey(dbID int64, name string) []byte {
	return append(FunctionsPrefix(dbID), strings.ToLower(name)...)
}

// ObserverDef is an observer's watch on a table: its name and the IDs of
// the columns it watches (empty: every column). A watch made with ADMIN
// WATCH ... DO has a built-in action: Action is its statement text as
// written after DO, which every SQL node runs for each notified row, with
// the privileges of its owner, the account (OwnerUser@OwnerHost) that
// made the watch.
type ObserverDef struct {
	Name      string  `json:"name"`
	Columns   []int64 `json:"columns,omitempty"`
	Action    string  `json:"action,omitempty"`
	OwnerUser string  `json:"owner_user,omitempty"`
	OwnerHost string  `json:"owner_host,omitempty"`
}

// Watches describes def's observers to the executor, whose
// Table.Validate checks them (a watched column the table lacks has offset
// -1).
func (def *TableDef) Watches() []executor.Watch {
	if len(def.Observers) == 0 {
		return nil
	}
	out := make([]executor.Watch, len(def.Observers))
	for i, o := range def.Observers {
		out[i].Observer = o.Name
		for _, id := range o.Columns {
			_, ord, _ := def.Column(id)
			out[i].Columns = append(out[i].Columns, ord)
		}
	}
	return out
}

// KeepObservers drops the columns that a rewrite dropped from the
// watches of def, and the watches left without any of the columns they
// named.
func (def *TableDef) KeepObservers(kept map[int64]bool) {
	var out []ObserverDef
	for _, o := range def.Observers {
		if len(o.Columns) == 0 {
			out = append(out, o)
			continue
		}
		var cols []int64
		for _, id := range o.Columns {
			if kept[id] {
				cols = append(cols, id)
			}
		}
		if len(cols) > 0 {
			o.Columns = cols
			out = append(out, o)
		}
	}
	def.Observers = out
}

// SchemaChangeInProgress names the schema change working on the table,
// or is empty.
func (td *TableDef) SchemaChangeInProgress() string {
	if td.Fence != "" {
		return td.Fence
	}
	for _, ix := range td.Indexes {
		if !ix.Public() {
			return "CREATE INDEX " + ix.Name
		}
	}
	return ""
}

// HasGenerated reports whether the table has a generated column; writes
// to it leave the fast path, which does not compute them, for GMS.
func (d *TableDef) HasGenerated() bool {
	for i := range d.Columns {
		if d.Columns[i].Generated != "" {
			return true
		}
	}
	return false
}
