package foreignkey

import (
	"fmt"
	"regexp"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/compat"
)

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
	stateGeneral                = "HY000"
	stateIntegrity              = "23000"
)

// errDropReferenced is MySQL's error for dropping table parent, which
// foreign key fk of table child references.
func errDropReferenced(parent, fk, child string) error {
	return mysql.NewSQLError(codeFKCannotDropParent, stateGeneral, "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.", parent, fk, child)
}

// ErrDuplicateName is MySQL's error for adding a foreign key named as one
// the database has (1826).
func ErrDuplicateName(name string) error {
	return mysql.NewSQLError(codeFKDuplicateName, stateGeneral, "Duplicate foreign key constraint name '%s'", name)
}

// ErrNotFound is MySQL's error for dropping foreign key name, which the
// table does not have (1091).
func ErrNotFound(name string) error {
	return mysql.NewSQLError(codeCantDropFieldOrKey, "42000", "Can't DROP '%s'; check that column/key exists", name)
}

// Error rewrites GMS's foreign key errors as MySQL's, with the
// definitions in cat; db is the session's current database. Other errors
// are returned unchanged.
func Error(cat *catalog.Catalog, db string, err error) error {
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
	return fkDefinitionError{pattern: compat.KindPattern(k, "(.*)"), code: code, state: state, format: format}
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
