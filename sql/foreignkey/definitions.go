package foreignkey

import (
	"fmt"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// CheckDefinitions, an analyzer rule, gives a foreign key that cannot be made
// MySQL's error, naming the constraint as MySQL does, before GMS's
// applyForeignKeys rule and CREATE TABLE / ALTER TABLE ... ADD FOREIGN
// KEY meet it: GMS reports a missing parent table as 1146 and a missing
// parent column as 1054 (MySQL: 1824 and 3734), and names no constraint
// in its type-mismatch and missing-index errors, because it names an
// unnamed key only after checking it. With foreign_key_checks = 0 MySQL
// checks none of this, and neither does this rule.
func CheckDefinitions(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	switch n := n.(type) {
	case *plan.CreateTable:
		defs := n.ForeignKeys()
		if len(defs) == 0 || !Checks(ctx) {
			return n, transform.SameTree, nil
		}
		names := foreignKeyNames(n.Name(), nil, defs)
		child, err := collatedSchema(ctx, n)
		if err != nil {
			return nil, transform.SameTree, err
		}
		for i, fk := range defs {
			if err := checkForeignKeyParent(ctx, a, fk, names[i], child, fk.IsSelfReferential()); err != nil {
				return nil, transform.SameTree, err
			}
		}
	case *plan.CreateForeignKey:
		if !Checks(ctx) || n.FkDef.IsSelfReferential() {
			return n, transform.SameTree, nil
		}
		child, _, err := a.Catalog.TableSchema(ctx, n.FkDef.Database, n.FkDef.SchemaName, n.FkDef.Table)
		if err != nil {
			return n, transform.SameTree, nil // GMS reports it
		}
		name := n.FkDef.Name
		if name == "" {
			var existing []string
			if t, ok := child.(gsql.ForeignKeyTable); ok {
				fks, err := t.GetDeclaredForeignKeys(ctx)
				if err != nil {
					return nil, transform.SameTree, err
				}
				for _, fk := range fks {
					existing = append(existing, fk.Name)
				}
			}
			name = foreignKeyNames(n.FkDef.Table, existing, []*gsql.ForeignKeyConstraint{n.FkDef})[0]
		}
		// The columns are the table's as it is before this statement; an
		// ALTER TABLE that adds one and a key on it in one go leaves the
		// key's types to GMS.
		if err := checkForeignKeyParent(ctx, a, n.FkDef, name, child.Schema(), false); err != nil {
			return nil, transform.SameTree, err
		}
	}
	return n, transform.SameTree, nil
}

// CheckShadowed refuses a write to a table with foreign keys whose other
// table a temporary table of the session shadows: GMS finds a key's
// tables by name, so it would check the child's parent in, or cascade
// to, the temporary table. (MySQL's keys always name permanent tables.)
// Package sql runs it as the statement's iterators are built
// (compat_exec.go): GMS analyzes a simple INSERT, UPDATE or DELETE with
// rules of its own.
func CheckShadowed(ctx *gsql.Context, n gsql.Node) error {
	s, ok := ctx.Session.(Session)
	if !ok || !s.HasTemporaryTables() || !Checks(ctx) {
		return nil
	}
	var err error
	var inspect func(node gsql.Node) bool
	inspect = func(node gsql.Node) bool {
		if err != nil {
			return false
		}
		var t Table
		switch node := node.(type) {
		case *plan.ResolvedTable:
			t, _ = node.UnderlyingTable().(Table)
		case *plan.ForeignKeyHandler:
			t, _ = node.Table.(Table)
			if node.OriginalNode != nil {
				transform.Inspect(node.OriginalNode, inspect)
			}
		}
		if t == nil || t.IsTemporary() {
			return true
		}
		def, cat, cerr := t.CurrentDef(ctx)
		if cerr != nil {
			err = cerr
			return false
		}
		for _, fk := range def.ForeignKeys {
			if s.HasTemporaryTable(fk.ParentDB, fk.ParentTable) {
				err = errShadowedForeignKey(fk.ParentTable, fk.Name)
			}
		}
		for _, r := range cat.Referencing(t.Database(), def.Name) {
			if s.HasTemporaryTable(r.ChildDB, r.Child.Name) {
				err = errShadowedForeignKey(r.Child.Name, r.Key.Name)
			}
		}
		return err == nil
	}
	if ins, ok := n.(*plan.InsertInto); ok {
		transform.Inspect(ins.Destination, inspect) // not among its children
	}
	transform.Inspect(n, inspect)
	return err
}

func errShadowedForeignKey(table, fk string) error {
	return gsql.ErrUnsupportedFeature.New(fmt.Sprintf("writing through foreign key %s while a temporary table shadows its table %s", fk, table))
}

// collatedSchema returns the columns of the table n creates with the
// collations they will have: GMS gives a string column without one the
// table's, or the database's, only when it creates the table.
func collatedSchema(ctx *gsql.Context, n *plan.CreateTable) (gsql.Schema, error) {
	coll := n.Collation
	if coll == gsql.Collation_Unspecified {
		coll = plan.GetDatabaseCollation(ctx, n.Db)
	}
	out := make(gsql.Schema, len(n.PkSchema().Schema))
	for i, col := range n.PkSchema().Schema {
		c := *col
		if ct, ok := c.Type.(gsql.TypeWithCollation); ok && ct.Collation() == gsql.Collation_Unspecified {
			t, err := ct.WithNewCollation(coll)
			if err != nil {
				return nil, err
			}
			c.Type = t
		}
		out[i] = &c
	}
	return out, nil
}

// checkForeignKeyParent checks foreign key fk, named name, of a table
// with columns child against its parent table; self: the table is being
// created and references itself.
func checkForeignKeyParent(ctx *gsql.Context, a *analyzer.Analyzer, fk *gsql.ForeignKeyConstraint, name string, child gsql.Schema, self bool) error {
	parentSchema := child
	var parent gsql.Table
	if !self {
		t, _, err := a.Catalog.TableSchema(ctx, fk.ParentDatabase, fk.ParentSchema, fk.ParentTable)
		if err != nil {
			if gsql.ErrTableNotFound.Is(err) || gsql.ErrDatabaseNotFound.Is(err) {
				return mysql.NewSQLError(codeFKCannotOpenParent, stateGeneral, "Failed to open the referenced table '%s'", fk.ParentTable)
			}
			return err
		}
		parent, parentSchema = t, t.Schema()
	}
	for _, col := range fk.ParentColumns {
		if parentSchema.IndexOfColName(col) < 0 {
			return mysql.NewSQLError(codeFKNoColumnParent, stateGeneral,
				"Failed to add the foreign key constraint. Missing column '%s' for constraint '%s' in the referenced table '%s'", col, name, fk.ParentTable)
		}
	}
	if err := checkForeignKeyTypes(ctx, *fk, name, child, parentSchema); err != nil {
		return err
	}
	if ia, ok := parent.(gsql.IndexAddressableTable); ok {
		if _, found, err := plan.FindFKIndexWithPrefix(ctx, ia, fk.ParentColumns, true); err != nil {
			return err
		} else if !found {
			return mysql.NewSQLError(codeFKNoIndexParent, stateGeneral,
				"Failed to add the foreign key constraint. Missing index for constraint '%s' in the referenced table '%s'", name, fk.ParentTable)
		}
	}
	return nil
}

// checkForeignKeyTypes is GMS's check that a key's columns have
// compatible types, with MySQL's 3780 naming the constraint.
func checkForeignKeyTypes(ctx *gsql.Context, fk gsql.ForeignKeyConstraint, name string, child, parent gsql.Schema) error {
	cols := make(map[string]*gsql.Column, len(child))
	for _, c := range child {
		cols[strings.ToLower(c.Name)] = c
	}
	parentCols := make(map[string]*gsql.Column, len(parent))
	for _, c := range parent {
		parentCols[strings.ToLower(c.Name)] = c
	}
	for i := range fk.Columns {
		if cols[strings.ToLower(fk.Columns[i])] == nil || parentCols[strings.ToLower(fk.ParentColumns[i])] == nil {
			return nil // GMS reports a missing column
		}
	}
	err := plan.ValidateForeignKeyDefinition(ctx, fk, cols, parentCols)
	if gsql.ErrForeignKeyColumnTypeMismatch.Is(err) {
		for i := range fk.Columns {
			one := fk
			one.Columns, one.ParentColumns = fk.Columns[i:i+1], fk.ParentColumns[i:i+1]
			if gsql.ErrForeignKeyColumnTypeMismatch.Is(plan.ValidateForeignKeyDefinition(ctx, one, cols, parentCols)) {
				return mysql.NewSQLError(codeFKIncompatibleColumns, stateGeneral,
					"Referencing column '%s' and referenced column '%s' in foreign key constraint '%s' are incompatible.", fk.Columns[i], fk.ParentColumns[i], name)
			}
		}
	}
	return nil
}

// foreignKeyNames returns the names of defs, declared in this order by
// table, which has keys named existing: a key without a name gets
// InnoDB's <table>_ibfk_<n>, n one above the highest in use, as GMS
// names it when it adds the key.
func foreignKeyNames(table string, existing []string, defs []*gsql.ForeignKeyConstraint) []string {
	prefix := strings.ToLower(table) + "_ibfk_"
	names := append([]string(nil), existing...)
	out := make([]string, len(defs))
	for i, fk := range defs {
		name := fk.Name
		if name == "" {
			var highest uint64
			for _, n := range names {
				if num, err := strconv.ParseUint(strings.TrimPrefix(n, prefix), 10, 32); err == nil && strings.HasPrefix(n, prefix) && num > highest {
					highest = num
				}
			}
			name = fmt.Sprintf("%s%d", prefix, highest+1)
		}
		names = append(names, name)
		out[i] = name
	}
	return out
}
