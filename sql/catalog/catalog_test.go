package catalog_test

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/percdb/percdb/sql/catalog"
)

func TestCatalogRejectsBadDefinitions(t *testing.T) {
	good := &catalog.TableDef{ID: 5, Name: "t", Columns: []catalog.ColumnDef{{ID: 1, Name: "a", Type: "int"}}, PrimaryKey: []int64{1}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*catalog.TableDef){
		"no ID":            func(d *catalog.TableDef) { d.ID = 0 },
		"duplicate column": func(d *catalog.TableDef) { d.Columns = append(d.Columns, catalog.ColumnDef{ID: 1, Name: "b"}) },
		"unknown pk":       func(d *catalog.TableDef) { d.PrimaryKey = []int64{9} },
		"unknown index": func(d *catalog.TableDef) {
			d.Indexes = []catalog.IndexDef{{ID: 1, Name: "i", Columns: []catalog.IndexColumnDef{{ColumnID: 4}}}}
		},
		"empty index": func(d *catalog.TableDef) { d.Indexes = []catalog.IndexDef{{ID: 1, Name: "i"}} },
	} {
		d := good.Clone()
		mutate(d)
		if err := d.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
		// The same definition stored and loaded is refused at load.
		raw, _ := json.Marshal(d)
		c := catalog.New(1)
		if err := c.DecodeEntry(catalog.TableKey(1, d.Name), raw); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	c := catalog.New(1)
	for _, bad := range [][2]string{
		{string(catalog.DatabaseKey("x")), "{"},
		{string(catalog.TableKey(1, "t")), "[]"},
		{"m:c:v:", "{}"},
		{"m:c:q:zzz", "{}"},
	} {
		if err := c.DecodeEntry([]byte(bad[0]), []byte(bad[1])); err == nil {
			t.Errorf("entry %q = %q: accepted", bad[0], bad[1])
		}
	}
}

func TestCatalogKeysSortByDatabase(t *testing.T) {
	// Every key of a database's tables shares one prefix, so dropping a
	// database deletes one range; other databases' keys are outside it.
	var keys []string
	for _, db := range []int64{1, 2, 256} {
		for _, name := range []string{"a", "Zz", "m"} {
			keys = append(keys, string(catalog.TableKey(db, name)))
		}
	}
	sort.Strings(keys)
	for _, db := range []int64{1, 2, 256} {
		p := string(catalog.TablesPrefix(db))
		n := 0
		for _, k := range keys {
			if strings.HasPrefix(k, p) {
				n++
			}
		}
		if n != 3 {
			t.Errorf("database %d: %d keys under its prefix, want 3", db, n)
		}
	}
}

// TestDefinitionsRoundTrip stores definitions as a DDL does (the key
// and JSON value PutJSON writes) and loads them as a transaction does
// (DecodeEntry): what comes back is what went in, except a temporary
// table's mark, which is never stored.
func TestDefinitionsRoundTrip(t *testing.T) {
	db := &catalog.DatabaseDef{ID: 7, Name: "Shop", Collation: "utf8mb4_0900_ai_ci"}
	tbl := &catalog.TableDef{
		ID: 9, DBID: 7, Name: "Orders", Collation: "utf8mb4_0900_bin",
		Columns: []catalog.ColumnDef{
			{ID: 1, Name: "id", Type: "bigint", AutoIncrement: true, Extra: "auto_increment"},
			{ID: 2, Name: "note", Type: "varchar(20)", Nullable: true, Default: "''", HasDefault: true},
		},
		PrimaryKey:   []int64{1},
		Indexes:      []catalog.IndexDef{{ID: 1, Name: "n", Columns: []catalog.IndexColumnDef{{ColumnID: 2, Length: 4}}, State: catalog.StateWriteOnly}},
		Checks:       []catalog.CheckDef{{Name: "c", Expression: "(id > 0)", Enforced: true}},
		ForeignKeys:  []catalog.ForeignKeyDef{{Name: "fk", Columns: []string{"id"}, ParentDB: "shop", ParentTable: "p", ParentColumns: []string{"id"}, OnDelete: "CASCADE"}},
		Observers:    []catalog.ObserverDef{{Name: "o", Columns: []int64{2}}},
		NextColumnID: 3, NextIndexID: 2, Fence: "ALTER TABLE",
	}
	view := &catalog.ViewDef{Name: "V", TextDefinition: "select 1", CreateViewStatement: "create view V as select 1"}
	trg := &catalog.TriggerDef{ID: 11, Name: "T", Table: "Orders", Timing: "before", Event: "insert", Create: "create trigger ..."}
	proc := &catalog.ProcedureDef{Name: "P", Create: "create procedure P() select 1"}
	fn := &catalog.ProcedureDef{Name: "F", Create: "create function F() returns int return 1"}
	entries := []struct {
		key []byte
		def any
	}{
		{catalog.DatabaseKey(db.Name), db},
		{catalog.TableKey(tbl.DBID, tbl.Name), tbl},
		{catalog.ViewKey(7, view.Name), view},
		{catalog.TriggerKey(7, trg.Name), trg},
		{catalog.ProcedureKey(7, proc.Name), proc},
		{catalog.FunctionKey(7, fn.Name), fn},
	}
	c := catalog.New(3)
	for _, e := range entries {
		raw, err := json.Marshal(e.def)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.DecodeEntry(e.key, raw); err != nil {
			t.Fatalf("decode %q: %v", e.key, err)
		}
	}
	if got, ok := c.Database("SHOP"); !ok || !reflect.DeepEqual(got, db) {
		t.Errorf("database: got %+v, want %+v", got, db)
	}
	if got, ok := c.Table(7, "orders"); !ok || !reflect.DeepEqual(got, tbl) {
		t.Errorf("table: got %+v, want %+v", got, tbl)
	}
	if got, ok := c.View(7, "v"); !ok || !reflect.DeepEqual(got, view) {
		t.Errorf("view: got %+v, want %+v", got, view)
	}
	if got, ok := c.Trigger(7, "t"); !ok || !reflect.DeepEqual(got, trg) {
		t.Errorf("trigger: got %+v, want %+v", got, trg)
	}
	if got, ok := c.Function(7, "f"); !ok || !reflect.DeepEqual(got, fn) {
		t.Errorf("function: got %+v, want %+v", got, fn)
	}
	if _, ok := c.Procedure(7, "f"); ok {
		t.Errorf("the function is a procedure too")
	}
	if got, ok := c.Procedure(7, "p"); !ok || !reflect.DeepEqual(got, proc) {
		t.Errorf("procedure: got %+v, want %+v", got, proc)
	}

	tmp := tbl.Clone()
	tmp.Temporary = true
	raw, _ := json.Marshal(tmp)
	if strings.Contains(strings.ToLower(string(raw)), "temporary") {
		t.Errorf("a temporary table's mark is encoded: %s", raw)
	}

	for _, v := range []uint64{0, 1, 1 << 40, ^uint64(0)} {
		got, err := catalog.DecodeUint64("counter", catalog.EncodeUint64(v))
		if err != nil || got != v {
			t.Errorf("counter %d: got %d, %v", v, got, err)
		}
	}
	if _, err := catalog.DecodeUint64("counter", []byte{1, 2}); err == nil {
		t.Error("a short counter decoded")
	}
}
