package sql

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/txn"
)

// Foreign keys, as InnoDB has them. percdb stores the definitions and
// serves them to GMS through sql.ForeignKeyTable; GMS's analyzer wraps
// every INSERT, UPDATE, DELETE and REPLACE of a table with foreign keys
// in its ForeignKeyHandler, which checks a child row's parent through an
// index lookup on the parent's editor and runs the referential actions
// (RESTRICT, CASCADE, SET NULL) through the children's editors, all in
// the statement's transaction (the editors' reads and writes go through
// it, and see its own writes).
//
// Snapshot isolation alone would let a child row be inserted while a
// concurrent transaction deletes its parent (each sees the other's row
// missing: a write skew). A reference check therefore locks the parent
// row it found (a Lock mutation on the parent's row key, as TiDB does):
// a concurrent delete or key update of that parent writes the same key,
// so one of the two transactions fails its commit with 1213.
//
// A foreign key is stored in its child's TableDef by column names and
// the parent's database and table names, as InnoDB keeps it: a parent
// dropped under foreign_key_checks=0 and created again is referenced
// again. The foreign keys that reference a table are found through an
// index of the catalog built on first use (catalog.Catalog.Referencing).

// checkNoOutsideReferences refuses to drop database db while a table of
// another database references one of its tables (MySQL's 3730). It runs
// on a catalog a DDL is changing, so it does not build the index of
// referencing keys (referencingFKs), which would go stale.
func checkNoOutsideReferences(c *catalog.Catalog, db *catalog.DatabaseDef) error {
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

// errDropReferenced is MySQL's error for dropping table parent, which
// foreign key fk of table child references.
func errDropReferenced(parent, fk, child string) error {
	return mysql.NewSQLError(codeFKCannotDropParent, stateGeneral, "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.", parent, fk, child)
}

// foreignKeyToGMS returns the foreign key as GMS describes it. A stored foreign
// key is always resolved: percdb checks it at creation (unless
// foreign_key_checks is 0, when MySQL does not check it later either),
// and a missing parent is reported at the first write.
func foreignKeyToGMS(fk *catalog.ForeignKeyDef, childDB, child string) gsql.ForeignKeyConstraint {
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

// fkDefFromGMS returns the stored form of fk.
func fkDefFromGMS(fk gsql.ForeignKeyConstraint) catalog.ForeignKeyDef {
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

// MySQL's errors for foreign key definitions.
const (
	codeCannotAddForeign        = 1215 // ER_CANNOT_ADD_FOREIGN
	codeFKDuplicateName         = 1826 // ER_FK_DUP_NAME
	codeFKNoIndexParent         = 1822 // ER_FK_NO_INDEX_PARENT
	codeFKIncompatibleColumns   = 3780 // ER_FK_INCOMPATIBLE_COLUMNS
	codeFKCannotDropParent      = 3730 // ER_FK_CANNOT_DROP_PARENT
	codeFKColumnNotNull         = 1830 // ER_FK_COLUMN_NOT_NULL
	codeFKColumnCannotDrop      = 1828 // ER_FK_COLUMN_CANNOT_DROP
	codeDropIndexFK             = 1553 // ER_DROP_INDEX_FK
	codeNoReferencedRow         = 1452 // ER_NO_REFERENCED_ROW_2
	codeRowIsReferenced         = 1451 // ER_ROW_IS_REFERENCED_2
	codeFKColumnCannotChange    = 3776 // ER_FK_COLUMN_CANNOT_CHANGE_CHILD
	codeBlobKeyWithoutLength    = 1170 // ER_BLOB_KEY_WITHOUT_LENGTH
	codeCantDropFieldOrKey      = 1091 // ER_CANT_DROP_FIELD_OR_KEY
	codeWrongFKDef              = 1239 // ER_WRONG_FK_DEF
	codeTruncateIllegalFK       = 1701 // ER_TRUNCATE_ILLEGAL_FK
	codeFKCannotOpenParent      = 1824 // ER_FK_CANNOT_OPEN_PARENT
	codeFKNoColumnParent        = 3734 // ER_FK_NO_COLUMN_PARENT
	codeFKDepthExceeded         = 3008 // ER_FK_DEPTH_EXCEEDED
	stateForeignKeyNotSupported = "HY000"
)

var (
	_ gsql.ForeignKeyTable  = (*Table)(nil)
	_ gsql.ForeignKeyEditor = (*fkEditor)(nil)
	_ gsql.ReferenceChecker = (*IndexedTable)(nil)
)

// currentDef returns the table's definition in the catalog ctx's
// transaction sees now, which a DDL statement may have changed since the
// table was resolved; the resolved one if the table is gone.
func (t *Table) currentDef(ctx *gsql.Context) (*catalog.TableDef, *catalog.Catalog, error) {
	_, cat, err := t.db.catalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	if t.meta.Def.Temporary {
		return t.meta.Def, cat, nil
	}
	if def, ok := cat.Table(t.meta.Def.DBID, t.Name()); ok {
		return def, cat, nil
	}
	return t.meta.Def, cat, nil
}

// GetDeclaredForeignKeys implements sql.ForeignKeyTable.
func (t *Table) GetDeclaredForeignKeys(ctx *gsql.Context) ([]gsql.ForeignKeyConstraint, error) {
	def, _, err := t.currentDef(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]gsql.ForeignKeyConstraint, len(def.ForeignKeys))
	for i := range def.ForeignKeys {
		out[i] = foreignKeyToGMS(&def.ForeignKeys[i], t.db.def.Name, def.Name)
	}
	return out, nil
}

// GetReferencedForeignKeys implements sql.ForeignKeyTable.
func (t *Table) GetReferencedForeignKeys(ctx *gsql.Context) ([]gsql.ForeignKeyConstraint, error) {
	_, cat, err := t.currentDef(ctx)
	if err != nil || t.meta.Def.Temporary {
		return nil, err
	}
	refs := cat.Referencing(t.db.def.Name, t.Name())
	out := make([]gsql.ForeignKeyConstraint, len(refs))
	for i, r := range refs {
		out[i] = foreignKeyToGMS(r.Key, r.ChildDB, r.Child.Name)
	}
	return out, nil
}

// AddForeignKey implements sql.ForeignKeyTable. GMS has checked the
// definition and, with foreign_key_checks on, the existing rows. On a
// table other transactions can write, that check read a snapshot behind
// which they may have written, so the table is first fenced (ddl.go: its
// writers finish or wait) and its rows are checked again, locking the
// parent rows they reference.
func (t *Table) AddForeignKey(ctx *gsql.Context, fk gsql.ForeignKeyConstraint) error {
	if fk.OnDelete == gsql.ForeignKeyReferentialAction_SetDefault || fk.OnUpdate == gsql.ForeignKeyReferentialAction_SetDefault {
		// InnoDB parses SET DEFAULT and refuses it.
		return mysql.NewSQLError(codeCannotAddForeign, stateForeignKeyNotSupported, "Cannot add foreign key constraint")
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	checks := foreignKeyChecks(ctx)
	if checks && !tx.createdHere(t.meta.Def.ID) {
		def, _, err := t.currentDef(ctx)
		if err != nil {
			return err
		}
		if err := tx.fenceForRewrite(ctx, def, "ALTER TABLE ADD FOREIGN KEY "+fk.Name); err != nil {
			return toSQLError(err)
		}
		if err := t.checkExistingRows(ctx, fk); err != nil {
			return err
		}
	}
	return t.db.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		for _, td := range c.Tables[t.db.def.ID] {
			for _, other := range td.ForeignKeys {
				if strings.EqualFold(other.Name, fk.Name) {
					return mysql.NewSQLError(codeFKDuplicateName, "HY000", "Duplicate foreign key constraint name '%s'", fk.Name)
				}
			}
		}
		cur, ok := c.Table(t.db.def.ID, t.Name())
		if !ok {
			return gsql.ErrTableNotFound.New(t.Name())
		}
		def := cur.Clone()
		def.Fence = "" // the fence, if any, was this statement's
		def.ForeignKeys = append(def.ForeignKeys, fkDefFromGMS(fk))
		return putTableDef(c, k, def)
	})
}

// checkExistingRows checks that every row of the table has the parent fk
// asks for, through GMS's reference check (which locks each parent row
// found), in the transaction as it now is.
func (t *Table) checkExistingRows(ctx *gsql.Context, fk gsql.ForeignKeyConstraint) error {
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	if err := tx.statementBegin(ctx); err != nil {
		return toSQLError(err)
	}
	child, err := t.reresolve(ctx, t.db.def.Name, t.Name())
	if err != nil {
		return err
	}
	parent, err := t.reresolve(ctx, fk.ParentDatabase, fk.ParentTable)
	if err != nil {
		return err
	}
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

// reresolve returns table name of database db as ctx's transaction sees
// it now.
func (t *Table) reresolve(ctx *gsql.Context, db, name string) (*Table, error) {
	d, err := t.db.provider.Database(ctx, db)
	if err != nil {
		return nil, err
	}
	tbl, ok, err := d.GetTableInsensitive(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, gsql.ErrTableNotFound.New(name)
	}
	return tbl.(*Table), nil
}

// foreignKeyChecks reports the session's foreign_key_checks.
func foreignKeyChecks(ctx *gsql.Context) bool {
	v, err := ctx.GetSessionVariable(ctx, "foreign_key_checks")
	if err != nil {
		return true
	}
	n, ok := v.(int8)
	return !ok || n != 0
}

// DropForeignKey implements sql.ForeignKeyTable.
func (t *Table) DropForeignKey(ctx *gsql.Context, name string) error {
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		for i, fk := range td.ForeignKeys {
			if strings.EqualFold(fk.Name, name) {
				td.ForeignKeys = append(td.ForeignKeys[:i], td.ForeignKeys[i+1:]...)
				return nil
			}
		}
		return mysql.NewSQLError(codeCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", name)
	})
}

// UpdateForeignKey implements sql.ForeignKeyTable (GMS calls it when a
// column the key names is renamed). GMS also calls it for every MODIFY
// COLUMN of such a column, with the key unchanged: that changes nothing,
// so that the table rewrite that follows may fence the table first.
func (t *Table) UpdateForeignKey(ctx *gsql.Context, name string, fk gsql.ForeignKeyConstraint) error {
	def, _, err := t.currentDef(ctx)
	if err != nil {
		return err
	}
	want := fkDefFromGMS(fk)
	for _, have := range def.ForeignKeys {
		if strings.EqualFold(have.Name, name) && reflect.DeepEqual(have, want) {
			return nil
		}
	}
	return t.db.changeTable(ctx, t.Name(), func(_ context.Context, td *catalog.TableDef, _ *txn.Txn) error {
		for i := range td.ForeignKeys {
			if strings.EqualFold(td.ForeignKeys[i].Name, name) {
				td.ForeignKeys[i] = fkDefFromGMS(fk)
				return nil
			}
		}
		return gsql.ErrForeignKeyNotFound.New(name, td.Name)
	})
}

// CreateIndexForForeignKey implements sql.ForeignKeyTable: the index
// InnoDB adds on a child's columns when no index starts with them. GMS
// looked for one in the table as resolved, which in CREATE TABLE is
// before the table's own indexes were added, so the current definition
// is looked at again.
func (t *Table) CreateIndexForForeignKey(ctx *gsql.Context, idx gsql.IndexDef) error {
	def, _, err := t.currentDef(ctx)
	if err != nil {
		return err
	}
	if hasIndexPrefix(def, idx.Columns) {
		return nil
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	if tx.createdHere(def.ID) {
		return t.createIndex(ctx, idx, true)
	}
	// The index is built online, in steps committed by transactions of
	// their own; this statement's transaction, which has written
	// nothing, starts over after them to see it.
	if tx.catDirty || (tx.kv != nil && !tx.kv.IsReadOnly()) {
		return gsql.ErrUnsupportedFeature.New("adding a foreign key that needs a new index after other changes in the same transaction")
	}
	if err := t.createIndex(ctx, idx, true); err != nil {
		return err
	}
	tx.startOver(ctx)
	return nil
}

// hasIndexPrefix reports whether some public index of def (the primary key
// included) starts with cols, whole columns.
func hasIndexPrefix(def *catalog.TableDef, cols []gsql.IndexColumn) bool {
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

// GetForeignKeyEditor implements sql.ForeignKeyTable.
func (t *Table) GetForeignKeyEditor(*gsql.Context) gsql.ForeignKeyEditor {
	return &fkEditor{tableEditor: t.editor()}
}

// fkEditor is the table editor GMS's foreign key handler writes through
// and looks rows up with (a parent's rows for a reference check, a
// child's for a referential action), in the statement's transaction.
type fkEditor struct {
	*tableEditor
}

// GetIndexes implements sql.IndexAddressable.
func (e *fkEditor) GetIndexes(ctx *gsql.Context) ([]gsql.Index, error) {
	return e.t.GetIndexes(ctx)
}

// IndexedAccess implements sql.IndexAddressable.
func (e *fkEditor) IndexedAccess(ctx *gsql.Context, lookup gsql.IndexLookup) gsql.IndexedTable {
	return e.t.IndexedAccess(ctx, lookup)
}

// PreciseMatch implements sql.IndexAddressable.
func (e *fkEditor) PreciseMatch() bool { return e.t.PreciseMatch() }

// SetReferenceCheck implements sql.ReferenceChecker: GMS reads a parent
// row to check a child's reference; the rows read are locked, so that a
// concurrent delete or key change of the parent conflicts with this
// transaction (see the file comment).
func (t *IndexedTable) SetReferenceCheck() error {
	c := *t.Table
	c.lockReads = true
	t.Table = &c
	return nil
}

// foreignKeyError rewrites GMS's foreign key errors as MySQL's, with the
// definitions in cat; db is the session's current database. Other errors
// are returned unchanged.
func foreignKeyError(cat *catalog.Catalog, db string, err error) error {
	if cat == nil {
		return err
	}
	msg := err.Error()
	if se, ok := err.(*mysql.SQLError); ok {
		msg = se.Message
	}
	if m := fkViolation.FindStringSubmatch(msg); m != nil {
		code, text := codeNoReferencedRow, "Cannot add or update a child row"
		if m[1] == "delete" {
			code, text = codeRowIsReferenced, "Cannot delete or update a parent row"
		}
		desc := fmt.Sprintf("%s.%s, CONSTRAINT %s", quoteName(db), quoteName(m[3]), quoteName(m[2]))
		if ref, ok := cat.FindForeignKey(db, m[3], m[2]); ok {
			desc = describeForeignKey(ref)
		}
		// Else the key is being added (ALTER TABLE ... ADD FOREIGN KEY
		// over rows without a parent): MySQL names it as it can, too.
		return mysql.NewSQLError(code, stateIntegrity, "%s: a foreign key constraint fails (%s)", text, desc)
	}
	if m := fkTruncate.FindStringSubmatch(msg); m != nil {
		childDB := db
		if ref, ok := cat.FindForeignKey(db, m[3], m[2]); ok {
			childDB = ref.ChildDB
		}
		return mysql.NewSQLError(codeTruncateIllegalFK, "42000", "Cannot truncate a table referenced in a foreign key constraint (%s.%s, CONSTRAINT %s)", quoteName(childDB), quoteName(m[3]), quoteName(m[2]))
	}
	if strings.HasPrefix(msg, "cannot add or update a child row: a foreign key constraint fails") {
		return mysql.NewSQLError(codeNoReferencedRow, stateIntegrity, "C%s", msg[1:])
	}
	if m := fkDropTable.FindStringSubmatch(msg); m != nil {
		child := "?"
		for _, d := range cat.SortedDatabases() {
			for _, r := range cat.Referencing(d.Name, m[1]) {
				if strings.EqualFold(r.Key.Name, m[2]) {
					child = r.Child.Name
				}
			}
		}
		return errDropReferenced(m[1], m[2], child)
	}
	for _, c := range fkDefinitionErrors {
		if m := c.pattern.FindStringSubmatch(msg); m != nil {
			args := make([]any, len(m)-1)
			for i := range args {
				args[i] = m[i+1]
			}
			return mysql.NewSQLError(c.code, c.state, c.format, args...)
		}
	}
	return err
}

// describeForeignKey prints the foreign key as InnoDB does in errors 1451 and 1452.
func describeForeignKey(r catalog.ForeignKeyRef) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s, CONSTRAINT %s FOREIGN KEY (%s) REFERENCES ", quoteName(r.ChildDB), quoteName(r.Child.Name), quoteName(r.Key.Name), quoteNames(r.Key.Columns))
	if !strings.EqualFold(r.Key.ParentDB, r.ChildDB) {
		b.WriteString(quoteName(r.Key.ParentDB) + ".")
	}
	fmt.Fprintf(&b, "%s (%s)", quoteName(r.Key.ParentTable), quoteNames(r.Key.ParentColumns))
	for _, a := range []struct{ on, action string }{{"DELETE", r.Key.OnDelete}, {"UPDATE", r.Key.OnUpdate}} {
		if a.action == "CASCADE" || a.action == "SET NULL" {
			fmt.Fprintf(&b, " ON %s %s", a.on, a.action)
		}
	}
	return b.String()
}

func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteName(n)
	}
	return strings.Join(q, ", ")
}

// GMS's foreign key violations (sql.ErrForeignKeyChildViolation and
// ErrForeignKeyParentViolation): the kind, the key's name and its table.
var fkViolation = regexp.MustCompile("^cannot (add|delete) or update a (?:child|parent) row - Foreign key violation on fk: `(.*)`, table: `(.*)`, referenced table: `.*`, key: `.*`$")

// fkTruncate is sql.ErrTruncateReferencedFromForeignKey: the parent, the
// key and its table.
var fkTruncate = regexp.MustCompile("^cannot truncate table (.*) as it is referenced in foreign key (.*) on table (.*)$")

// fkDropTable is sql.ErrForeignKeyDropTable: the parent and the key.
var fkDropTable = regexp.MustCompile("^cannot drop table `(.*)` as it is referenced in foreign key `(.*)`$")

// fkDefinitionError maps one of GMS's foreign key definition errors to
// MySQL's code and message; format takes the kind's arguments in order.
type fkDefinitionError struct {
	pattern *regexp.Regexp
	code    int
	state   string
	format  string
}

// fkKind builds the pattern of kind k's messages, capturing its
// arguments.
func fkKind(k *goerrors.Kind, code int, state, format string) fkDefinitionError {
	return fkDefinitionError{pattern: kindPattern(k, "(.*)"), code: code, state: state, format: format}
}

// fkDefinitionErrors is built once and never changed.
var fkDefinitionErrors = []fkDefinitionError{
	fkKind(gsql.ErrForeignKeyMissingReferenceIndex, codeFKNoIndexParent, stateGeneral,
		"Failed to add the foreign key constraint. Missing index for constraint '%s' in the referenced table '%s'"),
	fkKind(gsql.ErrForeignKeyColumnTypeMismatch, codeFKIncompatibleColumns, stateGeneral,
		"Referencing column '%s' and referenced column '%s' in foreign key constraint are incompatible."),
	fkKind(gsql.ErrForeignKeySetNullNonNullable, codeFKColumnNotNull, stateGeneral,
		"Column '%s' cannot be NOT NULL: needed in a foreign key constraint SET NULL"),
	fkKind(gsql.ErrForeignKeyTypeChangeSetNull, codeFKColumnNotNull, stateGeneral,
		"Column '%s' cannot be NOT NULL: needed in a foreign key constraint '%s' SET NULL"),
	fkKind(gsql.ErrForeignKeyDropColumn, codeFKColumnCannotDrop, stateGeneral,
		"Cannot drop column '%s': needed in a foreign key constraint '%s'"),
	fkKind(gsql.ErrForeignKeyDropIndex, codeDropIndexFK, stateGeneral,
		"Cannot drop index '%s': needed in a foreign key constraint%.0s"),
	fkKind(gsql.ErrForeignKeyDuplicateName, codeFKDuplicateName, stateGeneral,
		"Duplicate foreign key constraint name '%s'"),
	fkKind(gsql.ErrForeignKeyNotFound, codeCantDropFieldOrKey, "42000",
		"Can't DROP '%s'; check that column/key exists%.0s"),
	fkKind(gsql.ErrForeignKeyTypeChange, codeFKColumnCannotChange, stateGeneral,
		"Cannot change column '%s': used in a foreign key constraint"),
	fkKind(gsql.ErrForeignKeyTextBlob, codeBlobKeyWithoutLength, "42000",
		"BLOB/TEXT column used in key specification without a key length"),
	fkKind(gsql.ErrForeignKeyColumnCountMismatch, codeWrongFKDef, "42000",
		"Incorrect foreign key definition for 'foreign key without name': Key reference and table reference don't match"),
	fkKind(gsql.ErrForeignKeyDepthLimit, codeFKDepthExceeded, stateGeneral,
		"Foreign key cascade delete/update exceeds max depth of 15."),
	fkKind(gsql.ErrNoForeignKeySupport, codeCannotAddForeign, stateGeneral,
		"Cannot add foreign key constraint%.0s"),
	fkKind(gsql.ErrTemporaryTablesForeignKeySupport, codeCannotAddForeign, stateGeneral,
		"Cannot add foreign key constraint"),
}
