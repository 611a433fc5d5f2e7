package sql

import (
	"slices"
	"sync"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/fastpath"
	"github.com/percdb/percdb/sql/tablemeta"
)

// A shapePlan is a shape resolved against one version of the catalog: the
// table's metadata and the schema positions of every column the statement
// names. Plans are immutable once built, except for the result metadata
// they learn (fastFields), and are shared by every session.
type shapePlan struct {
	shape   *fastpath.Shape
	version uint64
	// db is the database the plan's table was resolved in.
	db   string
	meta *tablemeta.Table
	// keyOrd is the schema position of the WHERE column; unique is the
	// unique index it is the only column of, nil for the primary key.
	keyOrd int
	unique *tablemeta.Index
	// keyArgs is set for a WHERE over a composite primary key: for each
	// column of the key, in key order, the index in shape.keys of its
	// value.
	keyArgs []int

	// SELECT: the selected schema positions (nil: all) and columns.
	offsets []int
	schema  gsql.Schema
	// proj decodes the selected columns, full whole rows (a write's old
	// row, a unique lookup's row, whose key is checked again).
	proj, full *decoderPool
	// fieldsText and fieldsBinary are the column definitions GMS sent for
	// this plan's result over the text and the binary protocol, learned
	// from its first execution through GMS.
	fieldsText, fieldsBinary atomic.Pointer[fastFields]

	// UPDATE: the assignments.
	sets []fastPlanSet

	// INSERT: the schema position of each listed column, and for each
	// schema position the listed column's index or -1.
	insertOrds []int
	listed     []int
}

// fastFields is result metadata learned from GMS, valid for sessions whose
// character_set_results is charset (GMS derives the fields' character set
// from it).
type fastFields struct {
	fields  []*querypb.Field
	charset any
	// names are the names the learning statement spelled (shapeNames).
	names []string
}

// fastPlanSet is one resolved UPDATE assignment: schema position ord gets
// the assignment's value, or the value of srcOrd (when not -1) plus
// (minus, neg) it. The value itself is the executed statement's (a plan
// serves every statement of its digest, whatever their literals).
type fastPlanSet struct {
	ord    int
	srcOrd int
	neg    bool
}

// fastReason is why a statement went to GMS; each has a status counter.
type fastReason int

const (
	// reasonDisabled: the fast path is off for the server or session.
	reasonDisabled fastReason = iota
	// reasonShape: the statement is not of a shape the fast path runs.
	reasonShape
	// reasonParse: the TiDB parser did not parse the statement.
	reasonParse
	// reasonTable: the table is missing, a view, or has what the fast
	// path leaves to GMS (CHECK constraints, triggers or foreign keys on a write, ON
	// UPDATE columns, a key that is not a single integer column nor a
	// composite key of integer columns pinned whole, column types it does
	// not convert, defaults that are not literals).
	reasonTable
	// reasonValue: a value the fast path does not convert exactly as GMS
	// (a type mismatch, a value out of the column's range, a NULL key, a
	// conversion that warns).
	reasonValue
	// reasonSession: session state that changes GMS's answer (sql_mode,
	// a READ ONLY or DDL transaction, a transaction left open in
	// autocommit mode, character_set_results other than learned).
	reasonSession
	// reasonLearning: GMS answers this plan's first execution, which
	// teaches the fast path the result's column definitions.
	reasonLearning
	// reasonError: the fast path met an error before writing and left the
	// statement to GMS, which reports it as it does.
	reasonError
	numReasons
)

// reasonNames name the counters Percdb_fastpath_fallthrough_<name>.
var reasonNames = [numReasons]string{
	reasonDisabled: "disabled",
	reasonShape:    "shape",
	reasonParse:    "parse",
	reasonTable:    "table",
	reasonValue:    "value",
	reasonSession:  "session",
	reasonLearning: "learning",
	reasonError:    "error",
}

// resolveFastPlan resolves shape in database dbName of cat. It returns the
// reason when the table is not one the fast path runs the shape on.
func resolveFastPlan(ctx *gsql.Context, metas *tablemeta.Cache, cat *catalog.Catalog, dbName string, shape *fastpath.Shape) (*shapePlan, fastReason, bool) {
	db, ok := cat.Database(dbName)
	if !ok {
		return nil, reasonTable, false
	}
	def, ok := cat.Table(db.ID, shape.Table)
	if !ok {
		return nil, reasonTable, false
	}
	m, err := metas.Get(ctx, db.Name, def)
	if err != nil {
		return nil, reasonTable, false
	}
	plan := &shapePlan{
		shape:   shape,
		version: cat.Version,
		db:      dbName,
		meta:    m,
	}
	sch := m.Schema.Schema
	if shape.Kind != fastpath.Select && (len(def.Checks) > 0 || cat.HasTriggers(db.ID, def.Name) || def.HasGenerated() || cat.HasForeignKeys(db.Name, def)) {
		// GMS evaluates CHECK constraints, runs triggers, computes
		// generated columns and enforces foreign keys (the table's own
		// and those referencing it).
		return nil, reasonTable, false
	}
	if len(shape.KeyCols) > 0 {
		if plan.keyArgs, ok = compositeKeyArgs(def, m, shape.KeyCols); !ok {
			return nil, reasonTable, false
		}
	} else if shape.Kind == fastpath.Select || shape.Kind == fastpath.Update || shape.Kind == fastpath.Delete {
		_, ord, ok := def.ColumnByName(shape.Where)
		if !ok {
			return nil, reasonTable, false
		}
		plan.keyOrd = ord
		switch {
		case m.Exec.HandleKind == executor.HandleInt && m.Primary.Ords[0] == ord:
		case shape.Kind == fastpath.Select && !shape.In && !shape.ForUpdate:
			// FOR UPDATE locks the row by its handle, which a
			// unique lookup does not give the fast path.
			plan.unique = uniqueIndexOn(m, ord)
			if plan.unique == nil {
				return nil, reasonTable, false
			}
		default:
			return nil, reasonTable, false
		}
	}
	switch shape.Kind {
	case fastpath.Select:
		if shape.Cols != nil {
			plan.offsets = make([]int, len(shape.Cols))
			plan.schema = make(gsql.Schema, len(shape.Cols))
			for i, name := range shape.Cols {
				_, ord, ok := def.ColumnByName(name)
				if !ok {
					return nil, reasonTable, false
				}
				plan.offsets[i], plan.schema[i] = ord, sch[ord]
			}
		} else {
			plan.schema = sch
		}
	case fastpath.Update:
		for _, c := range sch {
			if c.OnUpdate != nil {
				return nil, reasonTable, false
			}
		}
		for _, set := range shape.Sets {
			cd, ord, ok := def.ColumnByName(set.Col)
			if !ok || sch[ord].PrimaryKey || cd.AutoIncrement || !fastWritableType(sch[ord].Type) {
				return nil, reasonTable, false
			}
			ps := fastPlanSet{ord: ord, srcOrd: -1, neg: set.Neg}
			if set.Src != "" {
				_, src, ok := def.ColumnByName(set.Src)
				if !ok || !isSignedIntType(sch[src].Type) && !types.IsDecimal(sch[src].Type) {
					return nil, reasonTable, false
				}
				ps.srcOrd = src
			}
			plan.sets = append(plan.sets, ps)
		}
	case fastpath.Insert:
		if m.Exec.HandleKind == executor.HandleCommon && !intKeyColumns(m.Primary) {
			// A clustered key's row is written under its key values,
			// which the fast path does not check for collisions under
			// collations the way GMS reports them (integers have no
			// collation: their keys collide exactly when they are
			// equal).
			return nil, reasonTable, false
		}
		plan.listed = make([]int, len(sch))
		for i := range plan.listed {
			plan.listed[i] = -1
		}
		for i, name := range shape.Cols {
			_, ord, ok := def.ColumnByName(name)
			if !ok || plan.listed[ord] >= 0 || !fastWritableType(sch[ord].Type) {
				return nil, reasonTable, false
			}
			plan.insertOrds = append(plan.insertOrds, ord)
			plan.listed[ord] = i
		}
		for ord, c := range sch {
			if plan.listed[ord] >= 0 || c.AutoIncrement {
				continue
			}
			// A column left out takes its default, which must be a
			// literal (an expression, CURRENT_TIMESTAMP say, is GMS's
			// to evaluate), or NULL; a NOT NULL column without a
			// default is an error GMS reports.
			if c.Default == nil && !c.Nullable {
				return nil, reasonTable, false
			}
			if c.Default != nil && (!c.Default.IsLiteral() || !c.Default.Resolved()) {
				return nil, reasonTable, false
			}
		}
	}
	if plan.full, err = newDecoderPool(m.Exec, nil); err != nil {
		return nil, reasonTable, false
	}
	if plan.proj, err = newDecoderPool(m.Exec, plan.offsets); err != nil {
		return nil, reasonTable, false
	}
	return plan, 0, true
}

// compositeKeyArgs maps the columns of a WHERE c1 = v1 AND c2 = v2 ... to
// the columns of a composite primary key: for each key column in key
// order, the index of its value among cols. ok is false unless cols are
// exactly the key's columns, all integers (whose equality GMS decides as
// the key encoding does), and the table is clustered on them.
func compositeKeyArgs(def *catalog.TableDef, m *tablemeta.Table, cols []string) ([]int, bool) {
	pk := m.Primary
	if m.Exec.HandleKind != executor.HandleCommon || pk == nil || len(pk.Ords) != len(cols) || !intKeyColumns(pk) {
		return nil, false
	}
	args := make([]int, len(pk.Ords))
	for i := range args {
		args[i] = -1
	}
	for i, name := range cols {
		_, ord, ok := def.ColumnByName(name)
		if !ok {
			return nil, false
		}
		pos := slices.Index(pk.Ords, ord)
		if pos < 0 || args[pos] >= 0 {
			return nil, false
		}
		args[pos] = i
	}
	return args, true
}

// intKeyColumns reports whether every column of index im is an integer
// indexed whole.
func intKeyColumns(im *tablemeta.Index) bool {
	if im == nil || im.Prefixed {
		return false
	}
	for _, t := range im.Types {
		if !tablemeta.IsIntHandleType(t) {
			return false
		}
	}
	return true
}

// uniqueIndexOn returns the unique index whose only column is at ord, if
// the fast path can look it up: the whole value indexed, and a column type
// whose equality GMS decides as the key encoding does (integers; strings
// are left to GMS, whose comparison rules for PAD SPACE collations and
// mixed types the fast path does not reproduce).
func uniqueIndexOn(m *tablemeta.Table, ord int) *tablemeta.Index {
	for _, im := range m.Indexes {
		if im.Unique && !im.Prefixed && len(im.Ords) == 1 && im.Ords[0] == ord && tablemeta.IsIntHandleType(im.Types[0]) {
			return im
		}
	}
	return nil
}

// fastWritableType reports whether the fast path writes values of typ:
// integers, and strings in utf8mb4, whose conversion from the fast path's
// values (integers, strings, NULL) GMS's Convert decides alone; DECIMAL,
// DATETIME and DATE, from the values that convert exactly (fastRun.convert).
func fastWritableType(typ gsql.Type) bool {
	if types.IsDecimal(typ) {
		return true
	}
	switch typ.Type() {
	case sqltypes.Datetime, sqltypes.Date:
		return true
	}
	if _, ok := typ.(gsql.NumberType); ok {
		return types.IsInteger(typ)
	}
	st, ok := typ.(gsql.StringType)
	if !ok {
		return false
	}
	switch typ.Type() {
	case sqltypes.Char, sqltypes.VarChar, sqltypes.Text:
		return st.CharacterSet() == gsql.CharacterSet_utf8mb4
	}
	return false
}

// isSignedIntType reports whether typ is a signed integer type, whose
// arithmetic GMS does in int64.
func isSignedIntType(typ gsql.Type) bool {
	return types.IsInteger(typ) && types.IsSigned(typ)
}

// shapeNames returns the names a statement spells, which GMS may echo in
// column definitions: database, table and selected columns as written.
func shapeNames(s *fastpath.Shape) []string {
	return append([]string{s.DB, s.Table}, s.Cols...)
}

// matches reports whether the fields were learned from a statement that
// spells its names as s does.
func (f *fastFields) matches(s *fastpath.Shape) bool {
	if len(f.names) != len(s.Cols)+2 || f.names[0] != s.DB || f.names[1] != s.Table {
		return false
	}
	for i, c := range s.Cols {
		if f.names[i+2] != c {
			return false
		}
	}
	return true
}

// decoderPool hands out row decoders of one projection of a table: a
// RowDecoder holds scratch space and serves one goroutine at a time.
type decoderPool struct {
	table   *executor.Table
	offsets []int
	pool    sync.Pool
}

func newDecoderPool(t *executor.Table, offsets []int) (*decoderPool, error) {
	d, err := t.NewRowDecoder(offsets)
	if err != nil {
		return nil, err
	}
	p := &decoderPool{table: t, offsets: offsets}
	p.pool.Put(d)
	return p, nil
}

func (p *decoderPool) get() *executor.RowDecoder {
	if d, ok := p.pool.Get().(*executor.RowDecoder); ok {
		return d
	}
	// newDecoderPool built one for these offsets: it cannot fail now.
	d, _ := p.table.NewRowDecoder(p.offsets)
	return d
}

func (p *decoderPool) put(d *executor.RowDecoder) { p.pool.Put(d) }
