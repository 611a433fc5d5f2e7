package foreignkey

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/catalog"
)

// Table is one of the node's tables as the foreign key rules see it;
// package sql's Table (and IndexedTable, which embeds it) implements it.
type Table interface {
	gsql.Table
	// Database is the name of the table's database.
	Database() string
	// IsTemporary reports whether the table is a temporary table of its
	// session.
	IsTemporary() bool
	// CurrentDef returns the table's definition in the catalog ctx's
	// transaction sees now, which a DDL statement may have changed since
	// the table was resolved, and that catalog.
	CurrentDef(ctx *gsql.Context) (*catalog.TableDef, *catalog.Catalog, error)
}

// Session is what the rules need of a session: its temporary tables,
// which shadow the permanent tables of their names. Package sql's Session
// implements it.
type Session interface {
	// HasTemporaryTables reports whether the session has any temporary
	// table.
	HasTemporaryTables() bool
	// HasTemporaryTable reports whether the session has a temporary
	// table named name in database db.
	HasTemporaryTable(db, name string) bool
}

// Checks reports the session's foreign_key_checks.
func Checks(ctx *gsql.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "foreign_key_checks")
	if err != nil {
		return true
	}
	n, ok := v.(int8)
	return !ok || n != 0
}

// CheckNoOutsideReferences refuses to drop database db while a table of
// another database references one of its tables (MySQL's 3730). It runs
// on a catalog a DDL is changing, so it does not build the catalog's
// index of referencing keys (catalog.Catalog.Referencing), which would
// go stale.
func CheckNoOutsideReferences(c *catalog.Catalog, db *catalog.DatabaseDef) error {
	for _, d := range c.SortedDatabases() {
		if d.ID == db.ID {
			continue
		}
		for _, child := range c.SortedTables(d.ID) {
			for _, fk := range child.ForeignKeys {
				if !strings.EqualFold(fk.ParentDB, db.Name) {
					continue
				}
				if _, ok := c.Table(db.ID, fk.ParentTable); ok {
					return errDropReferenced(fk.ParentTable, fk.Name, child.Name)
				}
			}
		}
	}
	return nil
}

// ToGMS returns the foreign key as GMS describes it. A stored foreign
// key is always resolved: percdb checks it at creation (unless
// foreign_key_checks is 0, when MySQL does not check it later either),
// and a missing parent is reported at the first write.
func ToGMS(fk *catalog.ForeignKeyDef, childDB, child string) gsql.ForeignKeyConstraint {
	return gsql.ForeignKeyConstraint{
		Name:           fk.Name,
		Database:       childDB,
		Table:          child,
		Columns:        append([]string(nil), fk.Columns...),
		ParentDatabase: fk.ParentDB,
		ParentTable:    fk.ParentTable,
		ParentColumns:  append([]string(nil), fk.ParentColumns...),
		OnUpdate:       actionToGMS(fk.OnUpdate),
		OnDelete:       actionToGMS(fk.OnDelete),
		IsResolved:     true,
	}
}

func actionToGMS(a string) gsql.ForeignKeyReferentialAction {
	if a == "" {
		return gsql.ForeignKeyReferentialAction_DefaultAction
	}
	return gsql.ForeignKeyReferentialAction(a)
}

// actionFromGMS returns the stored form of a referential action.
func actionFromGMS(a gsql.ForeignKeyReferentialAction) string {
	switch a {
	case gsql.ForeignKeyReferentialAction_DefaultAction, gsql.ForeignKeyReferentialAction_NoAction, "":
		return ""
	}
	return string(a)
}

// FromGMS returns the stored form of fk.
func FromGMS(fk gsql.ForeignKeyConstraint) catalog.ForeignKeyDef {
	return catalog.ForeignKeyDef{
		Name:          fk.Name,
		Columns:       append([]string(nil), fk.Columns...),
		ParentDB:      fk.ParentDatabase,
		ParentTable:   fk.ParentTable,
		ParentColumns: append([]string(nil), fk.ParentColumns...),
		OnUpdate:      actionFromGMS(fk.OnUpdate),
		OnDelete:      actionFromGMS(fk.OnDelete),
	}
}

// CheckActions refuses a key with SET DEFAULT, which InnoDB parses and
// refuses.
func CheckActions(fk gsql.ForeignKeyConstraint) error {
	if fk.OnDelete == gsql.ForeignKeyReferentialAction_SetDefault || fk.OnUpdate == gsql.ForeignKeyReferentialAction_SetDefault {
		return mysql.NewSQLError(codeCannotAddForeign, stateForeignKeyNotSupported, "Cannot add foreign key constraint")
	}
	return nil
}

// CheckRows checks that every row of table child has the parent fk asks
// for, through GMS's reference check (which locks each parent row found
// when the parent's indexed access does, as package sql's does), in the
// transaction of ctx as it now is.
func CheckRows(ctx *gsql.Context, child, parent gsql.ForeignKeyTable, fk gsql.ForeignKeyConstraint) error {
	parentIndex, ok, err := plan.FindFKIndexWithPrefix(ctx, parent, fk.ParentColumns, true)
	if err != nil {
		return err
	}
	if !ok {
		return gsql.ErrForeignKeyMissingReferenceIndex.New(fk.Name, fk.ParentTable)
	}
	positions, appendTypes, err := plan.FindForeignKeyColMapping(ctx, fk.Name, child, fk.Columns, fk.ParentColumns, parentIndex)
	if err != nil {
		return err
	}
	conversions, err := plan.GetForeignKeyTypeConversions(parent.Schema(), child.Schema(), fk, plan.ChildToParent)
	if err != nil {
		return err
	}
	var selfCols map[string]int
	if fk.IsSelfReferential() {
		selfCols = make(map[string]int)
		for i, col := range child.Schema() {
			selfCols[strings.ToLower(col.Name)] = i
		}
	}
	ref := &plan.ForeignKeyReferenceHandler{
		ForeignKey: fk,
		SelfCols:   selfCols,
		RowMapper: plan.ForeignKeyRowMapper{
			Index:                 parentIndex,
			Updater:               parent.GetForeignKeyEditor(ctx),
			SourceSch:             child.Schema(),
			TargetTypeConversions: conversions,
			IndexPositions:        positions,
			AppendTypes:           appendTypes,
		},
	}
	return ref.CheckTable(ctx, child)
}

// HasIndexPrefix reports whether some public index of def (the primary
// key included) starts with cols, whole columns.
func HasIndexPrefix(def *catalog.TableDef, cols []gsql.IndexColumn) bool {
	ids := make([]int64, len(cols))
	for i, c := range cols {
		col, _, ok := def.ColumnByName(c.Name)
		if !ok {
			return false
		}
		ids[i] = col.ID
	}
	startsWith := func(have []int64) bool {
		if len(have) < len(ids) {
			return false
		}
		for i := range ids {
			if have[i] != ids[i] {
				return false
			}
		}
		return true
	}
	if startsWith(def.PrimaryKey) {
		return true
	}
	for _, ix := range def.Indexes {
		if !ix.Public() {
			continue
		}
		have := make([]int64, 0, len(ix.Columns))
		for _, c := range ix.Columns {
			if c.Length != 0 {
				break
			}
			have = append(have, c.ColumnID)
		}
		if startsWith(have) {
			return true
		}
	}
	return false
}
