package sql

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// Temporary tables (CREATE TEMPORARY TABLE): a session's own tables,
// invisible to other sessions, shadowing a table of the same name in its
// database, gone when the session ends. Their definitions live in the
// session, not in the catalog; their rows and index entries live in the
// store under a table ID of their own, written through the session's
// transactions like any table's (a rollback undoes them, as in InnoDB).
//
// The ID is taken from the catalog's counter and registered under
//
//	m:tmp:<tableID>        the table's name, for the log
//
// in a transaction of its own, so that a process that stops with
// temporary tables open deletes their data at its next start
// (dropLeftoverTempTables). DROP TABLE and the end of the session
// schedule the deletion of the table's keys (package ddljob) and remove
// the registration and the table's ID allocators.
var prefixTempTables = []byte("m:tmp:")

func tempTableKey(id int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixTempTables...), uint64(id))
}

// decodeTempTableKey returns the table ID of a registration key, or 0 if
// the key is malformed.
func decodeTempTableKey(key []byte) int64 {
	if len(key) != len(prefixTempTables)+8 || !bytes.HasPrefix(key, prefixTempTables) {
		return 0
	}
	return int64(binary.BigEndian.Uint64(key[len(prefixTempTables):]))
}

// tempTables are a session's temporary tables, by database and
// lower-cased name.
type tempTables struct {
	mu sync.Mutex
	m  map[string]*tempTable
	// created are the tables the running statement created: a statement
	// that fails after creating one (CREATE TEMPORARY TABLE whose index or
	// foreign key is refused, or whose SELECT fails) drops it again.
	created []*tempTable
}

// keepNew forgets which tables the statement that succeeded created.
func (tt *tempTables) keepNew() {
	tt.mu.Lock()
	tt.created = nil
	tt.mu.Unlock()
}

// takeNew forgets the tables the statement that failed created, and
// returns them.
func (tt *tempTables) takeNew() []*tempTable {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	created := tt.created
	tt.created = nil
	for _, t := range created {
		k := tempTableName(t.db, t.def.Name)
		if cur := tt.m[k]; cur != nil && cur.def.ID == t.def.ID {
			delete(tt.m, k)
		}
	}
	return created
}

// tempTable is one temporary table: its definition (replaced, never
// changed, by CREATE INDEX and the like) and the metadata derived from it.
type tempTable struct {
	db   string
	def  *catalog.TableDef
	meta *tablemeta.Table
}

func tempTableName(db, name string) string {
	return strings.ToLower(db) + "\x00" + strings.ToLower(name)
}

// get returns the temporary table name of database db, or nil.
func (tt *tempTables) get(db, name string) *tempTable {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.m[tempTableName(db, name)]
}

// any reports whether the session has a temporary table.
func (tt *tempTables) any() bool {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return len(tt.m) > 0
}

// put records t, replacing a table of the same name.
func (tt *tempTables) put(t *tempTable) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.m == nil {
		tt.m = make(map[string]*tempTable)
	}
	tt.m[tempTableName(t.db, t.def.Name)] = t
}

// remove forgets table name of database db and returns it.
func (tt *tempTables) remove(db, name string) *tempTable {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	k := tempTableName(db, name)
	t := tt.m[k]
	delete(tt.m, k)
	return t
}

// takeAll forgets every table and returns them.
func (tt *tempTables) takeAll() []*tempTable {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	out := make([]*tempTable, 0, len(tt.m))
	for _, t := range tt.m {
		out = append(out, t)
	}
	tt.m = nil
	return out
}

// sessionTempTable returns the temporary table name of database db of
// ctx's session, or nil.
func sessionTempTable(ctx *gsql.Context, db, name string) *tempTable {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil
	}
	return s.temps.get(db, name)
}

var _ gsql.TemporaryTableCreator = (*Database)(nil)

// CreateTemporaryTable implements sql.TemporaryTableCreator.
func (d *Database) CreateTemporaryTable(ctx *gsql.Context, name string, schema gsql.PrimaryKeySchema, collation gsql.CollationID) error {
	s, err := sessionOf(ctx)
	if err != nil {
		return err
	}
	if s.temps.get(d.def.Name, name) != nil {
		return gsql.ErrTableAlreadyExists.New(name)
	}
	def, err := tablemeta.DefFromSchema(name, schema, collation, "")
	if err != nil {
		return err
	}
	def.DBID, def.Temporary = d.def.ID, true
	id, err := d.provider.registerTempTable(ctx, name)
	if err != nil {
		return toSQLError(err)
	}
	def.ID = id
	if err := def.Validate(); err != nil {
		return err
	}
	m, err := tablemeta.New(ctx, d.def.Name, def)
	if err != nil {
		return err
	}
	tt := &tempTable{db: d.def.Name, def: def, meta: m}
	s.temps.put(tt)
	s.temps.mu.Lock()
	s.temps.created = append(s.temps.created, tt)
	s.temps.mu.Unlock()
	return nil
}

// registerTempTable takes a table ID for temporary table name and
// registers it, in a transaction of its own.
func (p *DatabaseProvider) registerTempTable(ctx context.Context, name string) (int64, error) {
	var id int64
	err := p.smallTxn(ctx, func(k *txn.Txn) error {
		var err error
		if id, err = catalog.NextID(ctx, k); err != nil {
			return err
		}
		return k.Set(tempTableKey(id), []byte(name))
	})
	return id, err
}

// smallTxn runs fn in a transaction of its own and commits it, trying
// again after a write conflict (with a DDL taking an ID, say).
func (p *DatabaseProvider) smallTxn(ctx context.Context, fn func(k *txn.Txn) error) error {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		var k *txn.Txn
		if k, err = p.store.Begin(ctx); err != nil {
			return err
		}
		if err = fn(k); err != nil {
			_ = k.Rollback(ctx)
			return err
		}
		if err = k.Commit(ctx); !ddljob.RetryableConflict(err) {
			return err
		}
	}
	return err
}

// dropTempTableData schedules the deletion of temporary table def's keys
// and removes its registration and ID allocators.
func (p *DatabaseProvider) dropTempTableData(ctx context.Context, def *catalog.TableDef) error {
	err := p.smallTxn(ctx, func(k *txn.Txn) error {
		if err := ddljob.ScheduleTable(k, def, "temporary table"); err != nil {
			return err
		}
		for _, kind := range []byte{catalog.KindAutoIncrement, catalog.KindRowID} {
			if err := k.Delete(catalog.AllocatorMetaKey(def.ID, kind)); err != nil {
				return err
			}
		}
		return k.Delete(tempTableKey(def.ID))
	})
	if err != nil {
		return fmt.Errorf("drop temporary table %s: %w", def.Name, err)
	}
	p.ids.Forget(def.ID)
	p.ranges.Kick()
	return nil
}

// dropTempTables drops every temporary table of session s: the session
// ends.
func (p *DatabaseProvider) dropTempTables(s *Session) {
	for _, t := range s.temps.takeAll() {
		if err := p.dropTempTableData(context.Background(), t.def); err != nil {
			slog.Warn("temporary table: its data is deleted at the next start", "table", t.def.Name, "err", err)
		}
	}
}

// dropNewTempTables drops the temporary tables that the statement of s
// that failed created.
func (p *DatabaseProvider) dropNewTempTables(ctx context.Context, s *Session) {
	for _, t := range s.temps.takeNew() {
		if err := p.dropTempTableData(ctx, t.def); err != nil {
			slog.Warn("temporary table: its data is deleted at the next start", "table", t.def.Name, "err", err)
		}
	}
}

// dropLeftoverTempTables deletes the data of the temporary tables a
// previous process left registered. It runs when the node opens, before
// any session exists.
func (p *DatabaseProvider) dropLeftoverTempTables(ctx context.Context) error {
	k, err := p.store.Begin(ctx)
	if err != nil {
		return err
	}
	var defs []*catalog.TableDef
	it, err := k.Iter(ctx, prefixTempTables, tablecodec.PrefixNext(prefixTempTables))
	if err != nil {
		_ = k.Rollback(ctx)
		return err
	}
	for it.Valid() {
		id := decodeTempTableKey(it.Key())
		if id <= 0 {
			it.Close()
			_ = k.Rollback(ctx)
			return fmt.Errorf("bad temporary table key %q", it.Key())
		}
		defs = append(defs, &catalog.TableDef{ID: id, Name: string(it.Value())})
		if err := it.Next(ctx); err != nil {
			it.Close()
			_ = k.Rollback(ctx)
			return err
		}
	}
	it.Close()
	_ = k.Rollback(ctx)
	for _, def := range defs {
		if err := p.dropTempTableData(ctx, def); err != nil {
			return err
		}
		slog.Info("temporary table: deleted what a previous process left", "table", def.Name)
	}
	return nil
}

// changeTempTable runs a DDL change of temporary table t of ctx's session:
// fn gets a copy of its definition to change, and the changed copy
// replaces it.
func (d *Database) changeTempTable(ctx *gsql.Context, t *tempTable, fn func(ctx context.Context, def *catalog.TableDef, k *txn.Txn) error) error {
	s, err := sessionOf(ctx)
	if err != nil {
		return err
	}
	_, k, err := writableOf(ctx)
	if err != nil {
		return err
	}
	def := t.def.Clone()
	if err := fn(ctx, def, k); err != nil {
		return toSQLError(err)
	}
	if err := def.Validate(); err != nil {
		return err
	}
	m, err := tablemeta.New(ctx, d.def.Name, def)
	if err != nil {
		return err
	}
	s.temps.put(&tempTable{db: t.db, def: def, meta: m})
	return nil
}

// rewriteTemp is RewriteInserter for a temporary table: the rows go to a
// new table ID, which replaces the old one in the session when the
// inserter closes; if the rewrite is discarded, the new rows go instead.
func (t *Table) rewriteTemp(ctx *gsql.Context, newSchema gsql.PrimaryKeySchema, oldCol, newCol *gsql.Column) (gsql.RowInserter, error) {
	old := t.meta.Def
	nd, err := rewrittenDef(old, newSchema, oldCol, newCol)
	if err != nil {
		return nil, err
	}
	if nd.ID, err = t.db.provider.registerTempTable(ctx, old.Name); err != nil {
		return nil, toSQLError(err)
	}
	m, err := tablemeta.New(ctx, t.db.def.Name, nd)
	if err != nil {
		return nil, err
	}
	nt := &Table{db: t.db, meta: m}
	if t.meta.AutoIncOrd >= 0 && m.AutoIncOrd >= 0 {
		next, err := t.autoIncrement().Peek(ctx)
		if err != nil {
			return nil, toSQLError(err)
		}
		if err := nt.autoIncrement().Reset(ctx, next); err != nil {
			return nil, toSQLError(err)
		}
	}
	return &tempRewriter{tableEditor: tableEditor{t: nt}, old: old}, nil
}

// tempRewriter writes the rows of a rewritten temporary table.
type tempRewriter struct {
	tableEditor
	old       *catalog.TableDef
	discarded bool
}

// DiscardChanges implements sql.EditOpenerCloser: the new rows go.
func (r *tempRewriter) DiscardChanges(ctx *gsql.Context, err error) error {
	r.discarded = true
	_ = r.tableEditor.DiscardChanges(ctx, err)
	return toSQLError(r.t.db.provider.dropTempTableData(ctx, r.t.meta.Def))
}

// Close implements sql.Closer: the new definition replaces the old one,
// whose rows go.
func (r *tempRewriter) Close(ctx *gsql.Context) error {
	if r.discarded {
		return nil
	}
	s, err := sessionOf(ctx)
	if err != nil {
		return err
	}
	if tx, err := transactionOf(ctx); err == nil {
		tx.statementEnd(true)
	}
	s.temps.put(&tempTable{db: r.t.db.def.Name, def: r.t.meta.Def, meta: r.t.meta})
	return toSQLError(r.t.db.provider.dropTempTableData(ctx, r.old))
}
