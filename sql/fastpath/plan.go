package fastpath

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
	"github.com/percdb/percdb/sql/tablemeta"
)

// A Plan is a shape resolved against one version of the catalog: the
// table's metadata and the schema positions of every column the statement
// names. Plans are immutable once built, except for the result metadata
// they learn (Fields), and are shared by every session.
type Plan struct {
	shape   *Shape
	Version uint64
	// db is the database the plan's table was resolved in.
	DB   string
	Meta *tablemeta.Table
	// KeyOrd is the schema position of the WHERE column; unique is the
	// unique index it is the only column of, nil for the primary key.
	KeyOrd int
	Unique *tablemeta.Index
	// KeyArgs is set for a WHERE over a composite primary key: for each
	// column of the key, in key order, the index in shape.keys of its
	// value.
	KeyArgs []int
	// PrefixArgs is set for an UPDATE or DELETE whose WHERE pins a proper
	// prefix of a composite primary key (prefix.go): for each of the
	// prefix's columns, in key order, the index in shape.keys of its
	// value.
	PrefixArgs []int

	// SELECT: the selected schema positions (nil: all) and columns.
	Offsets []int
	Schema  gsql.Schema
	// proj decodes the selected columns, full whole rows (a write's old
	// row, a unique lookup's row, whose key is checked again).
	Proj, Full *DecoderPool
	// FieldsText and FieldsBinary are the column definitions GMS sent for
	// this plan's result over the text and the binary protocol, learned
	// from its first execution through GMS.
	FieldsText, FieldsBinary atomic.Pointer[Fields]

	// UPDATE: the assignments.
	Sets []PlanSet

	// Scan is a range SELECT's plan (Kind Scan), whose Schema is its
	// result's.
	Scan *ScanPlan

	// INSERT: the schema position of each listed column, and for each
	// schema position the listed column's index or -1.
	insertOrds []int
	Listed     []int
}

// Fields is result metadata learned from GMS, valid for sessions whose
// character_set_results is charset (GMS derives the fields' character set
// from it).
type Fields struct {
	Fields  []*querypb.Field
	Charset any
	// names are the names the learning statement spelled (ShapeNames).
	Names []string
}

// PlanSet is one resolved UPDATE assignment: schema position ord gets
// the assignment's value, or the value of SrcOrd (when not -1) plus
// (minus, neg) it. The value itself is the executed statement's (a plan
// serves every statement of its digest, whatever their literals).
type PlanSet struct {
	Ord    int
	SrcOrd int
	Neg    bool
}

// Reason is why a statement went to GMS; each has a status counter.
type Reason int

const (
	// ReasonDisabled: the fast path is off for the server or session.
	ReasonDisabled Reason = iota
	// ReasonShape: the statement is not of a shape the fast path runs.
	ReasonShape
	// ReasonParse: the TiDB parser did not parse the statement.
	ReasonParse
	// ReasonTable: the table is missing, a view, or has what the fast
	// path leaves to GMS (CHECK constraints, triggers or foreign keys on a write, ON
	// UPDATE columns, a key that is not a single integer column nor a
	// composite key of integer columns pinned whole, column types it does
	// not convert, defaults that are not literals).
	ReasonTable
	// ReasonValue: a value the fast path does not convert exactly as GMS
	// (a type mismatch, a value out of the column's range, a NULL key, a
	// conversion that warns).
	ReasonValue
	// ReasonSession: session state that changes GMS's answer (sql_mode,
	// a READ ONLY or DDL transaction, a transaction left open in
	// autocommit mode, character_set_results other than learned).
	ReasonSession
	// ReasonLearning: GMS answers this plan's first execution, which
	// teaches the fast path the result's column definitions.
	ReasonLearning
	// ReasonError: the fast path met an error before writing and left the
	// statement to GMS, which reports it as it does.
	ReasonError
	// ReasonSize: a range SELECT's result, or the rows it sorts, would
	// be more than the fast path keeps (GMS's buffers count against the
	// query's memory bound), or its read of a secondary index holds so
	// many of the table's rows, by the statistics, that GMS's plan scans
	// the table instead (planrules.PreferTableScan).
	ReasonSize
	// NumReasons is how many reasons there are.
	NumReasons
)

// ReasonNames name the counters Percdb_fastpath_fallthrough_<name>.
var ReasonNames = [NumReasons]string{
	ReasonDisabled: "disabled",
	ReasonShape:    "shape",
	ReasonParse:    "parse",
	ReasonTable:    "table",
	ReasonValue:    "value",
	ReasonSession:  "session",
	ReasonLearning: "learning",
	ReasonError:    "error",
	ReasonSize:     "size",
}

// Resolve resolves shape in database dbName of cat. It returns the
// reason when the table is not one the fast path runs the shape on.
// aggType types a range SELECT's SUM and AVG.
//
// A SELECT whose WHERE is no point read of the table (Shape.Alt) is
// resolved as the range SELECT it is: the plan has a Scan.
func Resolve(ctx *gsql.Context, metas *tablemeta.Cache, cat *catalog.Catalog, dbName string, shape *Shape, aggType AggType) (*Plan, Reason, bool) {
	p, reason, ok := resolve(ctx, metas, cat, dbName, shape, aggType)
	if !ok && reason == ReasonTable && shape.Alt != nil {
		return resolve(ctx, metas, cat, dbName, shape.Alt, aggType)
	}
	return p, reason, ok
}

// resolve is Resolve of one shape.
func resolve(ctx *gsql.Context, metas *tablemeta.Cache, cat *catalog.Catalog, dbName string, shape *Shape, aggType AggType) (*Plan, Reason, bool) {
	db, ok := cat.Database(dbName)
	if !ok {
		return nil, ReasonTable, false
	}
	def, ok := cat.Table(db.ID, shape.Table)
	if !ok {
		return nil, ReasonTable, false
	}
	m, err := metas.Get(ctx, db.Name, def)
	if err != nil {
		return nil, ReasonTable, false
	}
	plan := &Plan{
		shape:   shape,
		Version: cat.Version,
		DB:      dbName,
		Meta:    m,
	}
	sch := m.Schema.Schema
	if shape.Kind == Scan {
		if plan.Scan, plan.Schema, ok = resolveScan(def, m, shape.Scan, aggType); !ok {
			return nil, ReasonTable, false
		}
		return plan, 0, true
	}
	if shape.Kind != Select && (len(def.Checks) > 0 || cat.HasTriggers(db.ID, def.Name) || def.HasGenerated() || cat.HasForeignKeys(db.Name, def)) {
		// GMS evaluates CHECK constraints, runs triggers, computes
		// generated columns and enforces foreign keys (the table's own
		// and those referencing it).
		return nil, ReasonTable, false
	}
	if len(shape.KeyCols) > 0 {
		if plan.KeyArgs, ok = compositeKeyArgs(def, m, shape.KeyCols); !ok {
			if plan.PrefixArgs, ok = writePrefixArgs(def, m, shape.Kind, shape.KeyCols); !ok {
				return nil, ReasonTable, false
			}
		}
	} else if shape.Kind == Select || shape.Kind == Update || shape.Kind == Delete {
		_, ord, ok := def.ColumnByName(shape.Where)
		if !ok {
			return nil, ReasonTable, false
		}
		plan.KeyOrd = ord
		switch {
		case m.Exec.HandleKind == executor.HandleInt && m.Primary.Ords[0] == ord:
		case shape.Kind == Select && !shape.In && !shape.ForUpdate:
			// FOR UPDATE locks the row by its handle, which a
			// unique lookup does not give the fast path.
			plan.Unique = uniqueIndexOn(m, ord)
			if plan.Unique == nil {
				return nil, ReasonTable, false
			}
		default:
			// An UPDATE or DELETE by the first column of a composite
			// key.
			if plan.PrefixArgs, ok = writePrefixArgs(def, m, shape.Kind, []string{shape.Where}); !ok {
				return nil, ReasonTable, false
			}
		}
	}
	switch shape.Kind {
	case Select:
		if shape.Cols != nil {
			plan.Offsets = make([]int, len(shape.Cols))
			plan.Schema = make(gsql.Schema, len(shape.Cols))
			for i, name := range shape.Cols {
				_, ord, ok := def.ColumnByName(name)
				if !ok || slices.Contains(plan.Offsets[:i], ord) {
					// A column selected twice: the row decoder fills
					// one place per column (the second was NULL).
					return nil, ReasonTable, false
				}
				plan.Offsets[i], plan.Schema[i] = ord, sch[ord]
			}
		} else {
			plan.Schema = sch
		}
	case Update:
		for _, c := range sch {
			if c.OnUpdate != nil {
				return nil, ReasonTable, false
			}
		}
		for _, set := range shape.Sets {
			cd, ord, ok := def.ColumnByName(set.Col)
			if !ok || sch[ord].PrimaryKey || cd.AutoIncrement || !writableType(sch[ord].Type) {
				return nil, ReasonTable, false
			}
			ps := PlanSet{Ord: ord, SrcOrd: -1, Neg: set.Neg}
			if set.Src != "" {
				_, src, ok := def.ColumnByName(set.Src)
				if !ok || !isSignedIntType(sch[src].Type) && !types.IsDecimal(sch[src].Type) {
					return nil, ReasonTable, false
				}
				ps.SrcOrd = src
			}
			plan.Sets = append(plan.Sets, ps)
		}
	case Insert:
		if m.Exec.HandleKind == executor.HandleCommon && !intKeyColumns(m.Primary) {
			// A clustered key's row is written under its key values,
			// which the fast path does not check for collisions under
			// collations the way GMS reports them (integers have no
			// collation: their keys collide exactly when they are
			// equal).
			return nil, ReasonTable, false
		}
		plan.Listed = make([]int, len(sch))
		for i := range plan.Listed {
			plan.Listed[i] = -1
		}
		for i, name := range shape.Cols {
			_, ord, ok := def.ColumnByName(name)
			if !ok || plan.Listed[ord] >= 0 || !writableType(sch[ord].Type) {
				return nil, ReasonTable, false
			}
			plan.insertOrds = append(plan.insertOrds, ord)
			plan.Listed[ord] = i
		}
		for ord, c := range sch {
			if plan.Listed[ord] >= 0 || c.AutoIncrement {
				continue
			}
			// A column left out takes its default, which must be a
			// literal (an expression, CURRENT_TIMESTAMP say, is GMS's
			// to evaluate), or NULL; a NOT NULL column without a
			// default is an error GMS reports.
			if c.Default == nil && !c.Nullable {
				return nil, ReasonTable, false
			}
			if c.Default != nil && (!c.Default.IsLiteral() || !c.Default.Resolved()) {
				return nil, ReasonTable, false
			}
		}
	}
	if plan.Full, err = NewDecoderPool(m.Exec, nil); err != nil {
		return nil, ReasonTable, false
	}
	if plan.Proj, err = NewDecoderPool(m.Exec, plan.Offsets); err != nil {
		return nil, ReasonTable, false
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
	return leadingKeyArgs(def, pk, cols)
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

// writableType reports whether the fast path writes values of typ:
// integers, and strings in utf8mb4, whose conversion from the fast path's
// values (integers, strings, NULL) GMS's Convert decides alone; DECIMAL,
// DATETIME and DATE, from the values that convert exactly (fastRun.convert).
func writableType(typ gsql.Type) bool {
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

// ShapeNames returns the names a statement spells, which GMS may echo in
// column definitions: database, table and selected columns as written.
func ShapeNames(s *Shape) []string {
	return append([]string{s.DB, s.Table}, s.Cols...)
}

// Matches reports whether the fields were learned from a statement that
// spells its names as s does.
func (f *Fields) Matches(s *Shape) bool {
	if len(f.Names) != len(s.Cols)+2 || f.Names[0] != s.DB || f.Names[1] != s.Table {
		return false
	}
	for i, c := range s.Cols {
		if f.Names[i+2] != c {
			return false
		}
	}
	return true
}

// DecoderPool hands out row decoders of one projection of a table: a
// RowDecoder holds scratch space and serves one goroutine at a time.
type DecoderPool struct {
	table   *executor.Table
	offsets []int
	pool    sync.Pool
}

// NewDecoderPool returns the pool of decoders of columns offsets (nil:
// every column) of t.
func NewDecoderPool(t *executor.Table, offsets []int) (*DecoderPool, error) {
	d, err := t.NewRowDecoder(offsets)
	if err != nil {
		return nil, err
	}
	p := &DecoderPool{table: t, offsets: offsets}
	p.pool.Put(d)
	return p, nil
}

// Get hands out a decoder, which the caller gives back with Put.
func (p *DecoderPool) Get() *executor.RowDecoder {
	if d, ok := p.pool.Get().(*executor.RowDecoder); ok {
		return d
	}
	// NewDecoderPool built one for these offsets: it cannot fail now.
	d, _ := p.table.NewRowDecoder(p.offsets)
	return d
}

// Put returns a decoder Get handed out.
func (p *DecoderPool) Put(d *executor.RowDecoder) { p.pool.Put(d) }
