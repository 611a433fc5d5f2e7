package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// MySQL names an index the statement leaves unnamed after its first
// column, adding _2, _3, ... when the name is taken: `CREATE TABLE t (a
// INT UNIQUE, UNIQUE (a))` has indexes a and a_2, `ALTER TABLE t ADD
// INDEX (k), ADD INDEX (k)` adds k and k_2, and `ALTER TABLE t MODIFY a
// INT UNIQUE` on a column that has a unique index adds a_2. ORMs rely on
// it: Sequelize's sync({alter: true}) sends `CHANGE email email
// VARCHAR(255) UNIQUE` for every unique column at every start.
//
// GMS names them as it creates them, from the table's indexes
// (generateIndexName), but it asks a table object that does not see the
// indexes the same statement created a moment before, so the second
// unnamed index of a statement got the first one's name and failed with
// 1061 "Duplicate key name"; and for a column made UNIQUE by CHANGE or
// MODIFY its planner names the index after the column itself, taken or
// not. NameGeneratedIndexes names them before the statement runs, in the
// order its clauses run, from the table's indexes and the names the
// statement's earlier clauses create or drop.
func NameGeneratedIndexes(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	switch n := n.(type) {
	case *plan.CreateTable:
		return nameCreateTableIndexes(n)
	case *plan.Block:
		return nameAlterIndexes(ctx, n, n.Children())
	case *plan.AlterIndex:
		return nameAlterIndexes(ctx, n, []gsql.Node{n})
	}
	return n, transform.SameTree, nil
}

// indexNames is the set of index names of one table, case-insensitive as
// MySQL's are.
type indexNames map[string]bool

func (s indexNames) has(name string) bool { return s[strings.ToLower(name)] }
func (s indexNames) add(name string)      { s[strings.ToLower(name)] = true }
func (s indexNames) drop(name string)     { delete(s, strings.ToLower(name)) }

// generate returns MySQL's name for an unnamed index on column first:
// first, or first_2, first_3, ... the first one free.
func (s indexNames) generate(first string) string {
	if !s.has(first) && !strings.EqualFold(first, "PRIMARY") {
		return first
	}
	for i := 2; ; i++ {
		if name := fmt.Sprintf("%s_%d", first, i); !s.has(name) {
			return name
		}
	}
}

// nameCreateTableIndexes names the unnamed indexes of a CREATE TABLE,
// after the names given.
func nameCreateTableIndexes(n *plan.CreateTable) (gsql.Node, transform.TreeIdentity, error) {
	defs := n.Indexes()
	names := indexNames{}
	unnamed := false
	for _, d := range defs {
		if d.Name == "" {
			unnamed = true
		} else if !d.IsPrimary() {
			names.add(d.Name)
		}
	}
	if !unnamed {
		return n, transform.SameTree, nil
	}
	out := make(gsql.IndexDefs, len(defs))
	for i, d := range defs {
		c := *d
		if c.Name == "" && !c.IsPrimary() && len(c.Columns) > 0 {
			c.Name = names.generate(c.Columns[0].Name)
			names.add(c.Name)
		}
		out[i] = &c
	}
	nc, err := n.WithIndexDefs(out)
	if err != nil {
		return n, transform.SameTree, err
	}
	return nc, transform.NewTree, nil
}

// nameAlterIndexes names the indexes that the clauses of statement n, one
// ALTER TABLE (or CREATE INDEX), create unnamed; n is returned as it is
// when there are none.
func nameAlterIndexes(ctx *gsql.Context, n gsql.Node, clauses []gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	tables := map[string]indexNames{} // by table name, lower case
	namesOf := func(t gsql.TableNode) (indexNames, error) {
		key := strings.ToLower(t.Name())
		if s, ok := tables[key]; ok {
			return s, nil
		}
		s := indexNames{}
		if ia, ok := t.UnderlyingTable().(gsql.IndexAddressable); ok {
			idxs, err := ia.GetIndexes(ctx)
			if err != nil {
				return nil, err
			}
			for _, ix := range idxs {
				s.add(ix.ID())
			}
		}
		tables[key] = s
		return s, nil
	}
	changed := false
	out := make([]gsql.Node, len(clauses))
	copy(out, clauses)
	for i, c := range clauses {
		ai, ok := c.(*plan.AlterIndex)
		if !ok {
			continue
		}
		names, err := namesOf(ai.Table)
		if err != nil {
			return nil, transform.SameTree, err
		}
		switch ai.Action {
		case plan.IndexAction_Create:
			generated := ai.IndexName == "" || madeUniqueByModify(clauses, i)
			if !generated || len(ai.Columns) == 0 {
				names.add(ai.IndexName)
				continue
			}
			name := names.generate(ai.Columns[0].Name)
			names.add(name)
			if name != ai.IndexName {
				na := *ai
				na.IndexName = name
				out[i], changed = &na, true
			}
		case plan.IndexAction_Drop:
			names.drop(ai.IndexName)
		case plan.IndexAction_Rename:
			names.drop(ai.PreviousIndexName)
			names.add(ai.IndexName)
		}
	}
	if !changed {
		return n, transform.SameTree, nil
	}
	if len(out) == 1 {
		return out[0], transform.NewTree, nil
	}
	return plan.NewBlock(out), transform.NewTree, nil
}

// madeUniqueByModify reports whether clause i is the unique index GMS's
// planner adds after a CHANGE or MODIFY that declares its column UNIQUE:
// it names that index after the column, where MySQL generates a name.
func madeUniqueByModify(clauses []gsql.Node, i int) bool {
	if i == 0 {
		return false
	}
	ai := clauses[i].(*plan.AlterIndex)
	mc, ok := clauses[i-1].(*plan.ModifyColumn)
	if !ok || ai.Constraint != gsql.IndexConstraint_Unique || len(ai.Columns) != 1 {
		return false
	}
	col := mc.NewColumn()
	return col != nil && strings.EqualFold(col.Name, ai.IndexName) && strings.EqualFold(ai.Columns[0].Name, col.Name)
}
