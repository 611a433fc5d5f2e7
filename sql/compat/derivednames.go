package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// A derived table, a CTE and a view are tables, whose columns MySQL
// requires to have distinct names (compared without regard to case):
// SELECT * FROM (SELECT a, a FROM t) d, WITH c AS (SELECT 1 a, 2 A)
// SELECT ..., WITH c(x, x) AS ..., CREATE VIEW v AS SELECT a, a FROM t
// and CREATE VIEW v (q, Q) AS ... fail with ER_DUP_FIELDNAME (1060),
// naming the second of the two. GMS ran them, and a reference to such
// a column read one of the two.
//
// DerivedColumnNames, run before GMS's rules rewrite the plan (it makes
// derived tables of its own, as of IN subqueries, which must not be
// checked), refuses them. A column list (d(x, y), c(x, y), v(x, y))
// names the columns instead of the select list, as in MySQL.

// MySQL's error for two columns of one name.
const (
	codeDupFieldName  = 1060 // ER_DUP_FIELDNAME
	stateDupFieldName = "42S21"
)

// DerivedColumnNames is the analyzer rule; see the comment above.
func DerivedColumnNames(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return n, transform.SameTree, duplicateDerivedColumn(n)
}

// duplicateDerivedColumn returns the error of the first derived table,
// CTE or view in n (at any depth: subqueries too) with two columns of
// one name, nil if none.
func duplicateDerivedColumn(n gsql.Node) error {
	var err error
	check := func(names []string) {
		if err == nil {
			err = duplicateName(names)
		}
	}
	var walk func(n gsql.Node) bool
	walk = func(n gsql.Node) bool {
		if err != nil || n == nil {
			return err == nil
		}
		switch n := n.(type) {
		case *plan.SubqueryAlias:
			check(schemaNames(n.Schema()))
		case *plan.CreateView:
			if d := n.Definition; d != nil && len(d.ColumnNames) > 0 {
				check(d.ColumnNames)
			} else if n.Child != nil {
				check(schemaNames(n.Child.Schema()))
			}
		}
		if ex, ok := n.(gsql.Expressioner); ok {
			for _, e := range ex.Expressions() {
				transform.InspectExpr(e, func(e gsql.Expression) bool {
					if sq, ok := e.(*plan.Subquery); ok && sq.Query != nil {
						transform.Inspect(sq.Query, walk)
					}
					return err != nil
				})
			}
		}
		return err == nil
	}
	transform.Inspect(n, walk)
	return err
}

// schemaNames returns the names of sch's columns.
func schemaNames(sch gsql.Schema) []string {
	names := make([]string, len(sch))
	for i, c := range sch {
		names[i] = c.Name
	}
	return names
}

// duplicateName returns MySQL's ER_DUP_FIELDNAME for the first name of
// names that repeats an earlier one, nil if none.
func duplicateName(names []string) error {
	if name, ok := repeatedName(names); ok {
		return mysql.NewSQLError(codeDupFieldName, stateDupFieldName, "Duplicate column name '%s'", name)
	}
	return nil
}

// repeatedName returns the first name of names that repeats an earlier
// one (MySQL's column names are case-insensitive), and whether there is
// one.
func repeatedName(names []string) (string, bool) {
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		k := strings.ToLower(name)
		if seen[k] {
			return name, true
		}
		seen[k] = true
	}
	return "", false
}
