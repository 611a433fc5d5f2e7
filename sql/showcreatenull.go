package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/sql/tablemeta"
)

// MySQL's SHOW CREATE TABLE writes DEFAULT NULL after a nullable column
// that has no default (sql_show.cc, print_default_clause), except a BLOB
// or TEXT column, which cannot have a literal default, a generated
// column and an AUTO_INCREMENT one; and it writes a nullable TIMESTAMP's
// NULL (`t` timestamp NULL DEFAULT NULL), since a TIMESTAMP was NOT NULL
// unless declared otherwise before explicit_defaults_for_timestamp. GMS
// writes neither: `v` int, where MySQL writes `v` int DEFAULT NULL.
// Tools that compare a dump or a SHOW CREATE TABLE with their own model
// of the schema then see a difference where there is none.

// showCreateTable builds SHOW CREATE TABLE: with MySQL's DEFAULT NULL
// and ENUM and SET defaults (withNullDefaults), then the rewrites of
// showCreateGenerated.
func showCreateTable(ctx *gsql.Context, n *plan.ShowCreateTable, row gsql.Row) (gsql.RowIter, error) {
	if n.IsView {
		return nil, nil
	}
	n, nullable := withNullDefaults(ctx, n)
	iter, err := showCreateGenerated(ctx, n, row)
	if iter == nil && err == nil {
		iter, err = rowexec.DefaultBuilder.Build(ctx, n, row)
	}
	if err != nil || len(nullable) == 0 && !hasEnumOrSet(n) {
		return iter, err
	}
	return &createStatementIter{child: iter, rewrite: func(stmt string) string {
		return quotedMemberLists(timestampNull(stmt, nullable), n.PrimaryKeySchema.Schema)
	}}, nil
}

// hasEnumOrSet reports whether the table of n has an ENUM or SET column.
func hasEnumOrSet(n *plan.ShowCreateTable) bool {
	for _, c := range n.PrimaryKeySchema.Schema {
		switch c.Type.(type) {
		case gsql.EnumType, gsql.SetType:
			return true
		}
	}
	return false
}

// quotedMemberLists writes the member list of each ENUM and SET column
// of a CREATE TABLE statement as GMS writes it with its members quoted
// as string literals (tablemeta.QuotedMembers): GMS wrote a member with
// a quote in it as it is (enum('a','b'c')), which reads back as a
// syntax error.
func quotedMemberLists(stmt string, cols gsql.Schema) string {
	lines := strings.Split(stmt, "\n")
	for _, c := range cols {
		prefix := "  `" + strings.ReplaceAll(c.Name, "`", "``") + "` "
		var typ string
		switch t := c.Type.(type) {
		case gsql.EnumType:
			typ = "enum('" + strings.Join(t.Values(), "','") + "')"
		case gsql.SetType:
			typ = "set('" + strings.Join(t.Values(), "','") + "')"
		default:
			continue
		}
		quoted := tablemeta.QuotedMembers(c.Type, typ)
		if quoted == typ {
			continue
		}
		for i, l := range lines {
			if strings.HasPrefix(l, prefix+typ) {
				lines[i] = prefix + quoted + l[len(prefix)+len(typ):]
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// withNullDefaults returns n with a NULL default on each column MySQL
// writes DEFAULT NULL for, an ENUM's or SET's default as its members
// (memberDefault), and the nullable TIMESTAMP columns.
func withNullDefaults(ctx *gsql.Context, n *plan.ShowCreateTable) (*plan.ShowCreateTable, []*gsql.Column) {
	sch := n.TargetSchema()
	var out gsql.Schema
	var timestamps []*gsql.Column
	for i, c := range sch {
		if def, ok := memberDefault(ctx, c); ok {
			if out == nil {
				out = append(gsql.Schema(nil), sch...)
			}
			cc := *c
			cc.Default = def
			out[i] = &cc
			continue
		}
		if !c.Nullable || c.Generated != nil || c.AutoIncrement {
			continue
		}
		if c.Type != nil && c.Type.Type() == sqltypes.Timestamp {
			timestamps = append(timestamps, c)
		}
		if c.Default != nil || c.Type == nil || types.IsTextBlob(c.Type) {
			continue
		}
		def, err := gsql.NewColumnDefaultValue(expression.NewLiteral(nil, types.Null), c.Type, true, false, true)
		if err != nil {
			continue
		}
		if out == nil {
			out = append(gsql.Schema(nil), sch...)
		}
		cc := *c
		cc.Default = def
		out[i] = &cc
	}
	if out == nil {
		return n, timestamps
	}
	m, err := n.WithTargetSchema(out)
	if err != nil {
		return n, timestamps
	}
	return m.(*plan.ShowCreateTable), timestamps
}

// memberDefault returns the literal default of an ENUM or SET column c
// as the text of its members: GMS writes the value's number
// (`e` enum('a','b') DEFAULT '2' for DEFAULT 'b'), which MySQL reads back
// as no member (1067), so a dump did not load into MySQL, and into
// percdb only by the number's meaning.
func memberDefault(ctx *gsql.Context, c *gsql.Column) (*gsql.ColumnDefaultValue, bool) {
	if c.Default == nil || !c.Default.IsLiteral() || c.Generated != nil || c.Type == nil ||
		(c.Type.Type() != sqltypes.Enum && c.Type.Type() != sqltypes.Set) {
		return nil, false
	}
	v, err := c.Default.Eval(ctx, nil)
	if err != nil || v == nil {
		return nil, false
	}
	sv, err := c.Type.SQL(ctx, nil, v)
	if err != nil {
		return nil, false
	}
	def, err := gsql.NewColumnDefaultValue(expression.NewLiteral(sv.ToString(), types.LongText), types.LongText, true, false, c.Nullable)
	if err != nil {
		return nil, false
	}
	return def, true
}

// timestampNull writes NULL before the DEFAULT of each nullable
// TIMESTAMP column of a CREATE TABLE statement as GMS writes it.
func timestampNull(stmt string, nullable []*gsql.Column) string {
	lines := strings.Split(stmt, "\n")
	for _, c := range nullable {
		prefix := "  `" + strings.ReplaceAll(c.Name, "`", "``") + "` timestamp"
		for i, l := range lines {
			if !strings.HasPrefix(l, prefix) {
				continue
			}
			if at := strings.Index(l[len(prefix):], " DEFAULT "); at >= 0 {
				at += len(prefix)
				lines[i] = l[:at] + " NULL" + l[at:]
			}
			break
		}
	}
	return strings.Join(lines, "\n")
}
