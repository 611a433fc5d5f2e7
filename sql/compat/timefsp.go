package compat

import (
	"slices"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/tablemeta"
)

// Fractional seconds of TIME(n) where GMS has only TIME(6) (the column
// definitions GMS sends are fixed in sql/compat_timefsp.go):
//
//   - TIME(0) to TIME(5) in CREATE TABLE and ALTER TABLE fail in GMS
//     ("TIME length not yet supported"; its TIME has six digits), and a
//     TIME without digits, MySQL's TIME(0), was GMS's of six.
//     TimePrecisions gives such a column percdb's type
//     (tablemeta.TimeType: rounded to its digits, written with exactly
//     them, named time(n)) through the column type's ResolvedType, which
//     GMS's planner takes as it is. TIME and TIME(6) stay GMS's TIME.

// TimePrecisions gives the TIME(n) columns, n from 0 to 5, of a CREATE
// TABLE or ALTER TABLE their type before GMS's planner reads it.
func TimePrecisions(stmt ast.Statement) {
	for _, spec := range TableSpecs(stmt) {
		timeColumns(spec)
	}
}

// TableSpecs returns the column definitions of a CREATE TABLE or of each
// part of an ALTER TABLE (none for other statements), for the rewrites
// that type columns before GMS's planner reads them.
func TableSpecs(stmt ast.Statement) []*ast.TableSpec {
	var specs []*ast.TableSpec
	switch n := stmt.(type) {
	case *ast.DDL:
		specs = append(specs, n.TableSpec)
	case *ast.AlterTable:
		for _, d := range n.Statements {
			specs = append(specs, d.TableSpec)
		}
	}
	return slices.DeleteFunc(specs, func(s *ast.TableSpec) bool { return s == nil })
}

// timeColumns sets the type of spec's TIME(n) columns (TimePrecisions).
func timeColumns(spec *ast.TableSpec) {
	if spec == nil {
		return
	}
	for _, c := range spec.Columns {
		ct := &c.Type
		if ct.ResolvedType != nil || !strings.EqualFold(ct.Type, "time") {
			continue
		}
		// A TIME without digits is MySQL's TIME(0), not GMS's six.
		n, err := 0, error(nil)
		if ct.Length != nil {
			n, err = strconv.Atoi(string(ct.Length.Val))
		}
		if err != nil || n < 0 || n > 5 {
			// GMS answers for 6 and for what is out of range.
			continue
		}
		if typ, err := tablemeta.NewTimeType(n); err == nil {
			ct.ResolvedType = typ
		}
	}
}

// TimePrecision returns the fractional digits of t if it is a TIME(n)
// of percdb's (information_schema.COLUMNS' DATETIME_PRECISION, which GMS
// leaves NULL for it).
func TimePrecision(t gsql.Type) (int, bool) {
	tt, ok := t.(tablemeta.TimeType)
	if !ok {
		return 0, false
	}
	return tt.Precision(), true
}

// TimeArguments gives functions a TIME(n) column's values as GMS's TIME:
// GMS tells a TIME argument by its type being its own TIME, so DATE_ADD
// and DATE_SUB of a TIME(n) column answered a DATETIME of today and
// GREATEST and LEAST failed ("unsupported type"). Each such column that
// is an argument of a function (not of an aggregate, whose MIN and MAX
// keep the column's digits) is read through CONVERT(col, TIME), which
// keeps its value. An analyzer rule; UPDATE's and DELETE's own short rule
// list does not run it.
func TimeArguments(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		if _, ok := e.(gsql.FunctionExpression); !ok {
			return e, transform.SameTree, nil
		}
		if _, ok := e.(gsql.Aggregation); ok {
			return e, transform.SameTree, nil
		}
		children := e.Children()
		var args []gsql.Expression
		for i, c := range children {
			if _, isTime := TimePrecision(c.Type()); !isTime {
				continue
			}
			if args == nil {
				args = append([]gsql.Expression(nil), children...)
			}
			args[i] = expression.NewConvert(c, expression.ConvertToTime)
		}
		if args == nil {
			return e, transform.SameTree, nil
		}
		ne, err := e.WithChildren(args...)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return ne, transform.NewTree, nil
	})
}
