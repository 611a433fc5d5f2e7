package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/tablemeta"
)

// MySQL gives every DOUBLE result a number of decimals (Item::decimals):
// "not fixed" (NOT_FIXED_DEC, 31) for a DOUBLE column, a literal such as
// 1.5e0, CAST(x AS DOUBLE) or SQRT(x), and a fixed number where its
// arguments have one: PI() 6, a FLOAT(M,D) or DOUBLE(M,D) column D, x + y,
// x - y, x * y and MOD the larger of their arguments' (count_real_length),
// x / y that and div_precision_increment more, AVG the argument's and 4
// more, ROUND(x, n) and TRUNCATE(x, n) n, COALESCE, IF,
// CASE, GREATEST and LEAST the largest of their values', a derived
// table's or a scalar subquery's column its expression's (an integer has
// 0, a DECIMAL its scale). A DOUBLE of fixed decimals is written with that
// many digits after the point wherever it becomes text: in the text
// protocol (the column definition says so: PI() is 3.141593, f + 0 of a
// FLOAT(7,4) -999.9999) and in CAST(x AS CHAR), CONCAT and GROUP_CONCAT
// (Item_func::val_str, Field_float::val_str: CONCAT(d) of a DOUBLE(10,2)
// is '12.50'). GMS's DOUBLEs carry no decimals: every one was written
// with its shortest digits (3.141592653589793, 12.5, -999.9998779296875).
//
// FixedDecimals works them out over a plan once its columns are found by
// their indexes: the decimals of each node's columns from its children's
// (schemaDecimals; a column read by index is checked by name, so that a
// plan shape not followed gives "not fixed", GMS's text, never another
// column's decimals). It gives the DOUBLE operands of CAST AS CHAR,
// CONCAT, CONCAT_WS (doubleString) and GROUP_CONCAT their decimals, and
// the DOUBLE columns of the statement's result a FixedDoubleType, which
// the server sends as the column's decimals and writes the text by.

// notFixedDec is MySQL's NOT_FIXED_DEC: a DOUBLE's decimals when it has
// no fixed number of them.
const notFixedDec = 31

// colDecimals is a column of a node's rows: its name and its decimals.
type colDecimals struct {
	name string
	dec  int
}

// fixedDecimals works out the decimals of one plan's columns.
type fixedDecimals struct {
	// scales returns the D of the FLOAT(M,D) and DOUBLE(M,D) columns of
	// a table, by lower-case name.
	scales func(gsql.Table) map[string]int
	divInc int // div_precision_increment
}

// FixedDecimals returns the rule that gives DOUBLE results MySQL's
// decimals (see above). scales returns the D of a table's FLOAT(M,D)
// and DOUBLE(M,D) columns by lower-case name (nil for a table without
// any). indexes is the id of GMS's rule assignExecIndexes, which runs
// just before it: the rule reads columns by the execution indexes that
// rule assigns, so it leaves alone an analysis whose rule selector
// leaves that rule out. GMS analyzes a derived table on its own that
// way (finalizeSubqueries), with an empty scope and its fields still
// holding column ids: read as indexes they named another column of the
// same name (x1.c0 as x2.c0, an INT, in a join read x2 first), and the
// derived table's DOUBLE column was written as if it were a statement's
// result of no decimals (1.5 as 2). The statement's analysis works out
// the derived table's columns through it.
func FixedDecimals(scales func(gsql.Table) map[string]int, indexes analyzer.RuleId) analyzer.RuleFunc {
	return func(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		if sel != nil && !sel(indexes) {
			return n, transform.SameTree, nil
		}
		top := scope.IsEmpty()
		if !(top && hasDoubleColumn(n.Schema())) && !hasDoubleText(n) {
			return n, transform.SameTree, nil
		}
		f := &fixedDecimals{scales: scales, divInc: divPrecisionIncrement(ctx)}
		out, same, err := f.rewrite(n, nil)
		if err != nil {
			return n, transform.SameTree, err
		}
		if top {
			res, resSame := f.fixResult(out)
			out, same = res, same && resSame
		}
		return out, same, nil
	}
}

// divPrecisionIncrement returns the session's div_precision_increment
// (4 when it cannot be read).
func divPrecisionIncrement(ctx *gsql.Context) int {
	v, err := ctx.GetSessionVariable(ctx, "div_precision_increment")
	if err != nil {
		return 4
	}
	switch n := v.(type) {
	case int64:
		return int(n)
	case int:
		return n
	case uint64:
		return int(n)
	case int8:
		return int(n)
	}
	return 4
}

// hasDoubleColumn reports whether sch has a DOUBLE or FLOAT column.
func hasDoubleColumn(sch gsql.Schema) bool {
	for _, c := range sch {
		if types.IsFloat(c.Type) {
			return true
		}
	}
	return false
}

// hasDoubleText reports whether n, with its subqueries, writes a DOUBLE
// as text: a doubleString, or GROUP_CONCAT of a DOUBLE.
func hasDoubleText(n gsql.Node) bool {
	found := false
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		switch x := e.(type) {
		case *doubleString:
			found = true
		case *GroupConcat:
			for _, v := range x.values {
				found = found || types.IsFloat(v.Type())
			}
		case *plan.Subquery:
			found = found || hasDoubleText(x.Query)
		}
		return !found
	})
	return found
}

// rewrite gives the doubleStrings and GROUP_CONCATs of n and of the
// nodes and subqueries below it their operands' decimals; prefix is the
// columns of the outer scope, which the rows of a subquery begin with.
func (f *fixedDecimals) rewrite(n gsql.Node, prefix []colDecimals) (gsql.Node, transform.TreeIdentity, error) {
	same := transform.SameTree
	children := n.Children()
	var newChildren []gsql.Node
	for i, c := range children {
		nc, s, err := f.rewrite(c, prefix)
		if err != nil {
			return n, transform.SameTree, err
		}
		if s == transform.NewTree {
			if newChildren == nil {
				newChildren = append([]gsql.Node(nil), children...)
			}
			newChildren[i] = nc
		}
	}
	if newChildren != nil {
		out, err := n.WithChildren(newChildren...)
		if err != nil {
			return n, transform.SameTree, err
		}
		n, same = out, transform.NewTree
	}
	ex, ok := n.(gsql.Expressioner)
	if !ok {
		return n, same, nil
	}
	exprs := ex.Expressions()
	if len(exprs) == 0 {
		return n, same, nil
	}
	input := f.inputOf(n, prefix)
	var failed error
	newExprs := replacedChildren(exprs, func(_ int, e gsql.Expression) gsql.Expression {
		ne, s, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			return f.rewriteExpr(e, input)
		})
		if err != nil {
			failed = err
		}
		if err != nil || s == transform.SameTree {
			return nil
		}
		return ne
	})
	if failed != nil {
		return n, transform.SameTree, failed
	}
	if newExprs == nil {
		return n, same, nil
	}
	out, err := ex.WithExpressions(newExprs...)
	if err != nil {
		return n, transform.SameTree, err
	}
	return out, transform.NewTree, nil
}

// rewriteExpr is rewrite's step over one expression of a node whose
// rows have the columns input.
func (f *fixedDecimals) rewriteExpr(e gsql.Expression, input []colDecimals) (gsql.Expression, transform.TreeIdentity, error) {
	switch x := e.(type) {
	case *plan.Subquery:
		q, same, err := f.rewrite(x.Query, input)
		if err != nil || same == transform.SameTree {
			return e, transform.SameTree, err
		}
		return x.WithQuery(q), transform.NewTree, nil
	case *doubleString:
		if d := f.exprDecimals(x.Child, input); d != x.decimals {
			return &doubleString{UnaryExpression: x.UnaryExpression, decimals: d}, transform.NewTree, nil
		}
	case *GroupConcat:
		out := replacedChildren(x.Children(), func(i int, v gsql.Expression) gsql.Expression {
			if i >= x.nValues || !types.IsFloat(v.Type()) {
				return nil
			}
			if d := f.exprDecimals(v, input); d < notFixedDec {
				return &doubleString{UnaryExpression: expression.UnaryExpression{Child: v}, decimals: d}
			}
			return nil
		})
		if out != nil {
			ret, err := x.WithChildren(out...)
			if err != nil {
				return e, transform.SameTree, err
			}
			return ret, transform.NewTree, nil
		}
	}
	return e, transform.SameTree, nil
}

// inputOf returns the columns of the rows n's expressions are evaluated
// over: the outer scope's, then its children's.
func (f *fixedDecimals) inputOf(n gsql.Node, prefix []colDecimals) []colDecimals {
	in := append([]colDecimals(nil), prefix...)
	for _, c := range n.Children() {
		in = append(in, f.schemaDecimals(c, prefix)...)
	}
	return in
}

// schemaDecimals returns the decimals of the columns of n's rows.
func (f *fixedDecimals) schemaDecimals(n gsql.Node, prefix []colDecimals) []colDecimals {
	sch := n.Schema()
	out := make([]colDecimals, len(sch))
	for i, c := range sch {
		out[i] = colDecimals{name: c.Name, dec: typeDecimals(c.Type)}
	}
	var exprs []gsql.Expression
	switch x := n.(type) {
	case *plan.Project:
		exprs = x.Projections
	case *plan.GroupBy:
		exprs = x.SelectedExprs
	case *plan.Window:
		exprs = x.SelectExprs
	case *plan.SetOp:
		// A column of a UNION has the larger decimals of its sides'.
		l, r := f.sideDecimals(x.Left(), prefix), f.sideDecimals(x.Right(), prefix)
		for i := range out {
			if i < len(l) && i < len(r) && types.IsFloat(sch[i].Type) {
				out[i].dec = maxDecimals(l[i].dec, r[i].dec)
			}
		}
		return out
	case gsql.TableNode:
		scales := f.scales(x.UnderlyingTable())
		for i, c := range sch {
			if d, ok := scales[strings.ToLower(c.Name)]; ok && types.IsFloat(c.Type) {
				out[i].dec = d
			}
		}
		return out
	default:
		var below []colDecimals
		for _, c := range n.Children() {
			below = append(below, f.schemaDecimals(c, prefix)...)
		}
		if len(below) == len(out) {
			// A node whose rows are its children's (a filter, a
			// sort, a join, a derived table): their columns'
			// decimals under its names.
			for i := range out {
				out[i].dec = below[i].dec
			}
		}
		return out
	}
	if len(exprs) != len(out) {
		return out
	}
	input := f.inputOf(n, prefix)
	for i, e := range exprs {
		if types.IsFloat(sch[i].Type) {
			out[i].dec = f.exprDecimals(e, input)
		}
	}
	return out
}

// sideDecimals returns the decimals of the columns of a set operation's
// side, looking through the conversions to the column's type at its top
// (1.5 of SELECT d ... UNION SELECT 1.5 keeps its one decimal: the
// column's are the larger of d's and its).
func (f *fixedDecimals) sideDecimals(n gsql.Node, prefix []colDecimals) []colDecimals {
	// Fields of a side's select items of one name point at one column
	// until UnionSideFields, which runs after this rule, points each at
	// its own: read them as it will.
	n, _ = positionalSideFields(n)
	out := f.schemaDecimals(n, prefix)
	p, ok := n.(*plan.Project)
	if !ok || len(p.Projections) != len(out) {
		return out
	}
	input := f.inputOf(p, prefix)
	for i, e := range p.Projections {
		if a, ok := e.(*expression.Alias); ok {
			e = a.Child
		}
		if c, ok := e.(*expression.Convert); ok && types.IsFloat(c.Type()) {
			out[i].dec = f.exprDecimals(c.Child, input)
		}
	}
	return out
}

// typeDecimals returns the decimals of a value of type t whose
// expression says nothing more: 0 for an integer, a DECIMAL's scale,
// not fixed for anything else.
func typeDecimals(t gsql.Type) int {
	switch {
	case types.IsInteger(t), types.IsYear(t), t == types.Null:
		return 0
	case types.IsDecimal(t):
		return int(t.(gsql.DecimalType).Scale())
	}
	if x, ok := t.(tablemeta.FixedDoubleType); ok {
		return x.Decimals
	}
	return notFixedDec
}

// maxDecimals returns the decimals of a result of values of decimals ds:
// the largest, not fixed when one is not.
func maxDecimals(ds ...int) int {
	out := 0
	for _, d := range ds {
		out = max(out, d)
	}
	return min(out, notFixedDec)
}

// exprDecimals returns the decimals of e over rows of the columns input.
func (f *fixedDecimals) exprDecimals(e gsql.Expression, input []colDecimals) int {
	if e == nil {
		return notFixedDec
	}
	if t := e.Type(); !types.IsFloat(t) {
		return typeDecimals(t)
	}
	switch x := e.(type) {
	case *expression.Alias:
		return f.exprDecimals(x.Child, input)
	case *expression.GetField:
		if i := x.Index(); i >= 0 && i < len(input) && strings.EqualFold(input[i].name, x.Name()) {
			return input[i].dec
		}
		return notFixedDec
	case *intArithmetic:
		return f.arithDecimals(x.Arithmetic, input)
	case expression.ArithmeticOp:
		return f.arithDecimals(x, input)
	case *expression.UnaryMinus:
		return f.exprDecimals(x.Child, input)
	case *intNegation:
		return f.exprDecimals(x.Child, input)
	case *fixedDouble:
		return x.decimals
	case *fixedDoubleColumn:
		return x.decimals
	case *expression.Convert:
		// A DOUBLE of a DOUBLE: a set operation's side converted to
		// the column's type (MySQL's Item_type_holder keeps the
		// decimals). A CAST(x AS DOUBLE) of a DOUBLE GMS drops, and
		// of anything else has none fixed.
		if types.IsFloat(x.Child.Type()) {
			return f.exprDecimals(x.Child, input)
		}
		return notFixedDec
	case *plan.Subquery:
		if cols := f.schemaDecimals(x.Query, input); len(cols) > 0 {
			return cols[0].dec
		}
		return notFixedDec
	case *expression.Case:
		var ds []int
		for _, b := range x.Branches {
			ds = append(ds, f.exprDecimals(b.Value, input))
		}
		if x.Else != nil {
			ds = append(ds, f.exprDecimals(x.Else, input))
		}
		return maxDecimals(ds...)
	case *typedAgg:
		return f.functionDecimals(x.Aggregation, x.Aggregation.Children(), input)
	case gsql.FunctionExpression:
		return f.functionDecimals(x, x.Children(), input)
	}
	return notFixedDec
}

// arithDecimals returns the decimals of a DOUBLE +, -, *, / or MOD.
func (f *fixedDecimals) arithDecimals(a expression.ArithmeticOp, input []colDecimals) int {
	d := maxDecimals(f.exprDecimals(a.Left(), input), f.exprDecimals(a.Right(), input))
	switch strings.ToLower(a.Operator()) {
	case "+", "-", "*", "%", "mod":
		return d
	case "/":
		return min(d+f.divInc, notFixedDec)
	}
	return notFixedDec
}

// functionDecimals returns the decimals of a DOUBLE function of args.
func (f *fixedDecimals) functionDecimals(fn gsql.Expression, args []gsql.Expression, input []colDecimals) int {
	name, ok := fn.(gsql.FunctionExpression)
	if !ok {
		return notFixedDec
	}
	all := func(args []gsql.Expression) int {
		ds := make([]int, 0, len(args))
		for _, a := range args {
			ds = append(ds, f.exprDecimals(a, input))
		}
		return maxDecimals(ds...)
	}
	switch strings.ToLower(name.FunctionName()) {
	case "pi":
		return 6
	case "round", "truncate":
		if len(args) < 2 {
			return 0
		}
		n, ok := constInt(args[1])
		if !ok {
			return f.exprDecimals(args[0], input)
		}
		return int(min(max(n, 0), notFixedDec))
	case "abs", "sum", "min", "max", "any_value", "first", "last", "nullif":
		if len(args) == 0 {
			return notFixedDec
		}
		return f.exprDecimals(args[0], input)
	case "avg":
		// STD and VARIANCE are DOUBLEs of no fixed decimals in MySQL 8
		// (Item_sum_variance: "an implementation-defined approximate
		// numeric type"); MariaDB gives them 4 more, as AVG.
		if len(args) != 1 {
			return notFixedDec
		}
		return min(f.exprDecimals(args[0], input)+4, notFixedDec)
	case "coalesce", "ifnull", "greatest", "least", "mod":
		return all(args)
	case "if":
		if len(args) != 3 {
			return notFixedDec
		}
		return all(args[1:])
	}
	return notFixedDec
}

// constInt returns the value of e when it is an integer literal.
func constInt(e gsql.Expression) (int64, bool) {
	l, ok := e.(*expression.Literal)
	if !ok || !types.IsInteger(l.Type()) {
		return 0, false
	}
	v, _, err := types.Int64.Convert(nil, l.Value())
	if err != nil {
		return 0, false
	}
	n, ok := v.(int64)
	return n, ok
}

// fixResult gives the DOUBLE columns of n's result that have fixed
// decimals a FixedDoubleType: the projections of the Project the result
// comes from, through the nodes above it that keep its rows' columns.
func (f *fixedDecimals) fixResult(n gsql.Node) (gsql.Node, transform.TreeIdentity) {
	switch x := n.(type) {
	case *plan.Project:
		input := f.inputOf(x, nil)
		var out []gsql.Expression
		for i, e := range x.Projections {
			if !types.IsFloat(e.Type()) {
				continue // nor a fixedDouble already
			}
			d := f.exprDecimals(e, input)
			if d >= notFixedDec {
				continue
			}
			if out == nil {
				out = append([]gsql.Expression(nil), x.Projections...)
			}
			if a, ok := e.(*expression.Alias); ok {
				w, err := a.WithChildren(newFixedDouble(a.Child, d))
				if err != nil {
					return n, transform.SameTree
				}
				out[i] = w
			} else {
				out[i] = newFixedDouble(e, d)
			}
		}
		if out == nil {
			return n, transform.SameTree
		}
		ret, err := x.WithExpressions(out...)
		if err != nil {
			return n, transform.SameTree
		}
		return ret, transform.NewTree
	case *plan.SetOp:
		// A UNION's result: read through a projection of its columns,
		// those of fixed decimals as such.
		cols := f.schemaDecimals(x, nil)
		sch := x.Schema()
		var projs []gsql.Expression
		fixed := false
		for i, c := range sch {
			gf := expression.NewGetFieldWithTable(i, 0, c.Type, c.DatabaseSource, c.Source, c.Name, c.Nullable)
			if i < len(cols) && types.IsFloat(c.Type) && cols[i].dec < notFixedDec {
				projs = append(projs, newFixedDouble(gf, cols[i].dec))
				fixed = true
				continue
			}
			projs = append(projs, gf)
		}
		if !fixed {
			return n, transform.SameTree
		}
		return plan.NewProject(projs, x), transform.NewTree
	case *plan.Limit, *plan.Offset, *plan.Sort, *plan.TopN, *plan.Distinct, *plan.OrderedDistinct, *plan.Having, *plan.Filter:
		children := n.Children()
		if len(children) != 1 {
			return n, transform.SameTree
		}
		c, same := f.fixResult(children[0])
		if same == transform.SameTree {
			return n, same
		}
		ret, err := n.WithChildren(c)
		if err != nil {
			return n, transform.SameTree
		}
		return ret, transform.NewTree
	}
	return n, transform.SameTree
}

// fixedDouble is a DOUBLE result column of fixed decimals: its value,
// typed a FixedDoubleType.
type fixedDouble struct {
	expression.UnaryExpression
	decimals int
}

var _ gsql.Expression = (*fixedDouble)(nil)

// newFixedDouble returns e, a DOUBLE, as a result column of decimals
// digits after the point; a column read as it is keeps its name, table
// and database in the column definition (fixedDoubleColumn).
func newFixedDouble(e gsql.Expression, decimals int) gsql.Expression {
	d := &fixedDouble{UnaryExpression: expression.UnaryExpression{Child: e}, decimals: decimals}
	if gf, ok := e.(*expression.GetField); ok {
		return &fixedDoubleColumn{fixedDouble: d, field: gf}
	}
	return d
}

// fixedDoubleColumn is the fixedDouble of a column read as it is: named
// as the column (sql.Nameable, Tableable, Databaseable, which GMS's
// Project reads its result's column from).
type fixedDoubleColumn struct {
	*fixedDouble
	field *expression.GetField
}

// Name implements sql.Nameable.
func (c *fixedDoubleColumn) Name() string { return c.field.Name() }

// Table implements sql.Tableable.
func (c *fixedDoubleColumn) Table() string { return c.field.Table() }

// Database implements sql.Databaseable.
func (c *fixedDoubleColumn) Database() string { return c.field.Database() }

// WithChildren implements sql.Expression.
func (c *fixedDoubleColumn) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	return newFixedDouble(children[0], c.decimals), nil
}

// Type implements sql.Expression.
func (d *fixedDouble) Type() gsql.Type { return tablemeta.NewFixedDoubleType(d.decimals) }

// String implements sql.Expression: its value's, which names the column.
func (d *fixedDouble) String() string { return d.Child.String() }

// DebugString shows the decimals.
func (d *fixedDouble) DebugString() string {
	return fmt.Sprintf("fixed_decimals(%s, %d)", gsql.DebugString(d.Child), d.decimals)
}

// Eval implements sql.Expression: the value as a float64.
func (d *fixedDouble) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if f, ok := v.(float32); ok {
		return float64(f), nil
	}
	return v, nil
}

// WithChildren implements sql.Expression.
func (d *fixedDouble) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &fixedDouble{UnaryExpression: expression.UnaryExpression{Child: children[0]}, decimals: d.decimals}, nil
}
