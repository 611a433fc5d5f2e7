package tablemeta

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/catalog"
)

// This file converts between the catalog's stored definitions and GMS's
// schemas. Types and default expressions are stored as the SQL text GMS
// prints for them and parsed back by GMS's own planbuilder, so the catalog
// has no type encoding of its own to keep in step with GMS.

// typeString returns the SQL text of typ that ParseColumnTypeString reads
// back. String types always name their character set and collation, so
// the text does not depend on the table's default.
func typeString(typ gsql.Type) string {
	if t, ok := typ.(TimeType); ok {
		// "time(0)" too: "time" reads back as GMS's TIME(6).
		return fmt.Sprintf("time(%d)", t.fsp)
	}
	if tc, ok := typ.(gsql.TypeWithCollation); ok {
		return QuotedMembers(typ, tc.StringWithTableCollation(gsql.Collation_Unspecified))
	}
	return typ.String()
}

// QuotedMembers returns s, a type string GMS writes for typ (its member
// list first), with the members of an ENUM or SET quoted as SQL string
// literals: GMS writes them between quotes as they are, so a member with
// a quote in it (a member b'c: enum('a','b'c')) gave a type string that did not parse
// back, and CREATE TABLE failed (1105); SHOW CREATE TABLE wrote it so.
func QuotedMembers(typ gsql.Type, s string) string {
	var kind string
	var members []string
	switch t := typ.(type) {
	case gsql.EnumType:
		kind, members = "enum", t.Values()
	case gsql.SetType:
		kind, members = "set", t.Values()
	default:
		return s
	}
	raw := kind + "('" + strings.Join(members, "','") + "')"
	if !strings.HasPrefix(s, raw) {
		return s
	}
	quoted := make([]string, len(members))
	for i, m := range members {
		quoted[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(m, `\`, `\\`), "'", "''") + "'"
	}
	return kind + "(" + strings.Join(quoted, ",") + ")" + s[len(raw):]
}

// ColumnDefFromGMS builds the stored definition of col.
func ColumnDefFromGMS(col *gsql.Column, id int64) (catalog.ColumnDef, error) {
	c := catalog.ColumnDef{
		ID:            id,
		Name:          col.Name,
		Type:          typeString(col.Type),
		Nullable:      col.Nullable,
		AutoIncrement: col.AutoIncrement,
		Comment:       col.Comment,
		Extra:         col.Extra,
	}
	if col.Default != nil {
		c.Default, c.HasDefault = defaultString(col.Default, col.Type), true
	}
	if col.OnUpdate != nil {
		c.OnUpdate = col.OnUpdate.String()
	}
	if col.Generated != nil {
		c.Generated, c.Virtual = col.Generated.String(), col.Virtual
	}
	return c, nil
}

// defaultString is the text of default d of a column of type typ as it
// is stored. GMS makes a TIME(n) column's literal default a
// types.Timespan, which it prints without quotes, which do not parse
// back: it is quoted, with the column's digits.
func defaultString(d *gsql.ColumnDefaultValue, typ gsql.Type) string {
	if lit, ok := d.Expr.(*expression.Literal); ok {
		if ts, ok := lit.Value().(types.Timespan); ok {
			if tt, ok := typ.(TimeType); ok {
				return "'" + string(tt.appendText(nil, tt.round(ts))) + "'"
			}
			return "'" + ts.String() + "'"
		}
	}
	return d.String()
}

// DefFromSchema builds the definition of a new table; the caller
// assigns its IDs.
func DefFromSchema(name string, schema gsql.PrimaryKeySchema, collation gsql.CollationID, comment string) (*catalog.TableDef, error) {
	if collation == gsql.Collation_Unspecified {
		collation = DefaultCollationID()
	}
	def := &catalog.TableDef{Name: name, Collation: collation.Name(), Comment: comment, KeyFormat: catalog.KeyFormatPadSpace}
	for i, col := range schema.Schema {
		c, err := ColumnDefFromGMS(col, int64(i+1))
		if err != nil {
			return nil, err
		}
		def.Columns = append(def.Columns, c)
	}
	def.NextColumnID = int64(len(def.Columns) + 1)
	def.NextIndexID = 1
	for _, ord := range schema.PkOrdinals {
		if ord < 0 || ord >= len(def.Columns) {
			return nil, fmt.Errorf("create table %q: primary key ordinal %d out of range", name, ord)
		}
		def.PrimaryKey = append(def.PrimaryKey, def.Columns[ord].ID)
	}
	return def, nil
}

// columnFromDef builds the GMS column of c. Defaults are resolved here,
// once per schema version, rather than by the planbuilder on every
// statement; a default that does not parse on its own (it names another
// column, say) is left for the planbuilder to resolve.
func columnFromDef(ctx *gsql.Context, table, db string, c *catalog.ColumnDef, primary bool) (*gsql.Column, error) {
	typ, err := parseType(c.Type)
	if err != nil {
		return nil, fmt.Errorf("column %s.%s: parse type %q: %w", table, c.Name, c.Type, err)
	}
	col := &gsql.Column{
		Name:           c.Name,
		Type:           typ,
		Nullable:       c.Nullable,
		AutoIncrement:  c.AutoIncrement,
		Source:         table,
		DatabaseSource: db,
		PrimaryKey:     primary,
		Comment:        c.Comment,
		Extra:          c.Extra,
	}
	if c.HasDefault {
		col.Default = resolveDefault(ctx, c.Default, typ, c.Nullable)
	}
	if c.OnUpdate != "" {
		col.OnUpdate = resolveDefault(ctx, c.OnUpdate, typ, c.Nullable)
	}
	if c.Generated != "" {
		col.Generated = resolveDefault(ctx, c.Generated, typ, c.Nullable)
		col.Virtual = c.Virtual
		if col.Extra == "" {
			// What MySQL's SHOW COLUMNS and information_schema.COLUMNS
			// say of a generated column.
			col.Extra = "STORED GENERATED"
			if c.Virtual {
				col.Extra = "VIRTUAL GENERATED"
			}
		}
	}
	return col, nil
}

// parseType reads a type typeString wrote: GMS's planbuilder reads it,
// except TIME(0) to TIME(5), which GMS refuses (TimeType), and FLOAT(M,D)
// and DOUBLE(M,D), whose schema type is GMS's FLOAT or DOUBLE (M and D
// are Table.Scales).
func parseType(s string) (gsql.Type, error) {
	if rest, ok := strings.CutPrefix(s, "time("); ok && len(rest) == 2 && rest[1] == ')' && rest[0] >= '0' && rest[0] <= '5' {
		return NewTimeType(int(rest[0] - '0'))
	}
	if fs, ok := ParseFloatScale(s); ok {
		return fs.Base(), nil
	}
	return planbuilder.ParseColumnTypeString(s)
}

// resolveDefault parses a stored default expression.
func resolveDefault(ctx *gsql.Context, expr string, typ gsql.Type, nullable bool) *gsql.ColumnDefaultValue {
	if expr == "" {
		// GMS prints an empty-string literal default as nothing.
		expr = "''"
	}
	parsed, err := planbuilder.StringToColumnDefaultValue(ctx, expr)
	if err != nil || !parsed.Expr.Resolved() {
		return gsql.NewUnresolvedColumnDefaultValue(expr)
	}
	d, err := gsql.NewColumnDefaultValue(parsed.Expr, typ, parsed.IsLiteral(), parsed.IsParenthesized(), nullable)
	if err != nil {
		return gsql.NewUnresolvedColumnDefaultValue(expr)
	}
	return d
}

// DefaultCollationID is DefaultCollation as a GMS collation.
func DefaultCollationID() gsql.CollationID {
	return gsql.Collation_utf8mb4_0900_ai_ci
}
