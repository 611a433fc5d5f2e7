package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// CREATE TABLE ... AS SELECT takes its columns from the SELECT's result
// (GMS's resolveCreateSelect), and two of GMS's column facts there are
// not MySQL's:
//
//   - SUM, AVG's siblings MIN and MAX, GROUP_CONCAT and the other
//     aggregates but COUNT and the BIT_ ones say they are never NULL,
//     so the column was NOT NULL and an aggregate over no rows (CREATE
//     TABLE c AS SELECT SUM(a) FROM empty) failed 1048 on its NULL. In
//     MySQL such a column is NULL, and so is any expression over one
//     (SUM(a) + 1), unless a function that replaces NULL (COALESCE,
//     IFNULL) stands between;
//   - a bare NULL has GMS's NULL type, which no column has ('parse type
//     "null"', 1105); MySQL makes it BINARY(0) NULL.
//
// And GMS's planner fills the new table's columns from the SELECT as it
// built it, before any analysis (planbuilder's buildCreateTable), and
// resolveCreateSelect keeps those over the analyzed SELECT's of the same
// name (mergeSchemas): the table's types were GMS's expression types
// where percdb's rules retype the SELECT (SUM of an INT a DOUBLE, where
// percdb's exact aggregate and the wire's column definition of the same
// SELECT are DECIMAL(32,0)). When the statement defines no columns of
// its own, the new table's columns take the analyzed SELECT's types,
// the schema the wire's column definitions are read from: the result
// types are worked out in one place, for both.
//
// CreateSelectTypes wraps that rule and corrects the new table's columns
// in place; a CREATE TABLE with columns of its own beside the SELECT's
// is left as GMS built it.
func CreateSelectTypes(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		out, same, err := apply(ctx, a, n, scope, sel, qFlags)
		if err != nil || same == transform.SameTree {
			return out, same, err
		}
		tc, ok := out.(*plan.TableCopier)
		if !ok {
			return out, same, nil
		}
		ct, ok := tc.Destination.(*plan.CreateTable)
		if !ok {
			return out, same, nil
		}
		dest, src := ct.PkSchema().Schema, tc.Source.Schema()
		if len(dest) != len(src) {
			return out, same, nil
		}
		for i := range dest {
			if dest[i].Name != src[i].Name {
				return out, same, nil
			}
		}
		ownColumns := definesColumns(ctx.Query())
		nullable := nullableColumns(tc.Source)
		var integers []gsql.Type
		if !ownColumns {
			integers = integerColumns(tc.Source)
		}
		for i, c := range dest {
			if !ownColumns {
				c.Type = src[i].Type
				if sv, ok := c.Type.(gsql.SystemVariableType); ok {
					c.Type = sv.UnderlyingType()
				}
				if i < len(integers) && integers[i] != nil {
					c.Type = integers[i]
				}
			}
			if c.Type == types.Null {
				c.Type = types.MustCreateBinary(sqltypes.Binary, 0)
				c.Nullable = true
			}
			if nullable[i] || !ownColumns {
				c.Nullable = nullable[i]
			}
		}
		return out, same, nil
	}
}

// replacingNode is a node of percdb's that stands for a plan of GMS's it
// replaced and runs in its place (sql's coprocessor reads).
type replacingNode interface {
	Replaced() gsql.Node
}

// nullableColumns returns, for each column of n's result, whether MySQL
// holds it may be NULL: GMS's word, or an expression that reads an
// aggregate that may be NULL, or such a column of the node below.
func nullableColumns(n gsql.Node) []bool {
	sch := n.Schema()
	out := make([]bool, len(sch))
	for i, c := range sch {
		out[i] = c.Nullable
	}
	var exprs []gsql.Expression
	var below []bool
	switch n := n.(type) {
	case *plan.Project:
		exprs, below = n.Projections, nullableColumns(n.Child)
	case *plan.GroupBy:
		exprs, below = n.SelectedExprs, nullableColumns(n.Child)
	case *plan.Window:
		exprs, below = n.SelectExprs, nullableColumns(n.Child)
	case *plan.SetOp:
		for _, side := range []gsql.Node{n.Left(), n.Right()} {
			if s := nullableColumns(side); len(s) == len(out) {
				for i := range out {
					out[i] = out[i] || s[i]
				}
			}
		}
		return out
	case replacingNode:
		// percdb's coprocessor read: the plan it stands for says.
		if s := nullableColumns(n.Replaced()); len(s) == len(out) {
			for i := range out {
				out[i] = out[i] || s[i]
			}
		}
		return out
	case gsql.Projector:
		return out
	default:
		// A node that passes its child's rows on (a filter, sort,
		// limit, DISTINCT, alias of a derived table).
		if children := n.Children(); len(children) == 1 {
			if s := nullableColumns(children[0]); len(s) == len(out) {
				for i := range out {
					out[i] = out[i] || s[i]
				}
			}
		}
		return out
	}
	if len(exprs) != len(out) {
		return out
	}
	belowNull := func(i int) bool { return i >= 0 && i < len(below) && below[i] }
	for i, e := range exprs {
		out[i] = out[i] || maybeNull(e, belowNull)
	}
	return out
}

// integerColumns returns, for each column of n's result, the INT or
// BIGINT MySQL makes of it in CREATE TABLE … AS SELECT when it is an
// integer expression (createSelectInteger by its integerWidth), the
// type of the column it reads below when it is a column of a derived
// table's such expression, and nil to keep the column's type: a column
// of a table, an aggregate (MAX(a) keeps a's type, COUNT is a BIGINT),
// a set operation's column, an expression not an integer.
func integerColumns(n gsql.Node) []gsql.Type {
	var exprs []gsql.Expression
	var below []gsql.Type
	switch n := n.(type) {
	case *plan.Project:
		exprs, below = n.Projections, integerColumns(n.Child)
	case *plan.GroupBy:
		exprs, below = n.SelectedExprs, integerColumns(n.Child)
	case *plan.SetOp:
		return nil
	case replacingNode:
		return integerColumns(n.Replaced())
	case gsql.Projector:
		return nil
	default:
		if children := n.Children(); len(children) == 1 {
			return integerColumns(children[0])
		}
		return nil
	}
	out := make([]gsql.Type, len(exprs))
	for i, e := range exprs {
		e = underResultNames(e)
		switch x := e.(type) {
		case *expression.GetField:
			if j := x.Index(); j >= 0 && j < len(below) {
				out[i] = below[j]
			}
			continue
		case gsql.Aggregation, gsql.WindowAggregation:
			continue
		}
		if t := e.Type(); types.IsInteger(t) {
			out[i] = createSelectInteger(integerWidth(e), t)
		}
	}
	return out
}

// maybeNull is MySQL's maybe_null of e (Item::maybe_null as each kind's
// resolve_type sets it), below saying which columns of the node e reads
// may be NULL. It is the one table of nullability that the wire's
// column definitions (NullableResults) and CREATE TABLE … AS SELECT's
// columns (nullableColumns) read:
//
//   - COUNT and the BIT_ aggregates are never NULL, the other aggregates
//     may be (over no rows);
//   - IS [NOT] NULL, IS [NOT] TRUE/FALSE and <=> are never NULL, however
//     NULL their arguments;
//   - IF(c, x, y) may be NULL when x or y may (Item_func_if: not c: GMS
//     asked x alone, so IF(c, 1, t) of a nullable t was NOT NULL);
//   - CASE when a THEN or ELSE value may or it has no ELSE
//     (Item_func_case: not its conditions);
//   - COALESCE when every argument may, IFNULL when its second may;
//   - NULLIF, /, DIV and MOD always may (division by zero); GMS asked
//     the operands, so n / 1 of a NOT NULL n was NOT NULL;
//   - a literal when it is NULL, a column when it is nullable or below
//     says so;
//   - any other function when GMS says so or an argument may
//     (Item_func::fix_fields).
func maybeNull(e gsql.Expression, below func(i int) bool) bool {
	switch x := e.(type) {
	case nil:
		return false
	case *aggregation.Count, *aggregation.CountDistinct, *aggregation.BitAnd, *aggregation.BitOr, *aggregation.BitXor:
		return false
	case gsql.Aggregation:
		return true
	case *resultColumn:
		return x.nullable
	case *expression.IsNull, *expression.IsTrue, *expression.NullSafeEquals:
		return false
	case *expression.Literal:
		return x.Value() == nil
	case *expression.GetField:
		return x.IsNullable() || below(x.Index())
	case *expression.Alias:
		return maybeNull(x.Child, below)
	case *derivedCollation:
		// A string function's collation as MySQL derives it
		// (coercion.go): the function's NULLs.
		return maybeNull(x.Expression, below)
	case *function.If:
		c := x.Children()
		return maybeNull(c[1], below) || maybeNull(c[2], below)
	case *expression.Case:
		if x.Else == nil || maybeNull(x.Else, below) {
			return true
		}
		for _, b := range x.Branches {
			if maybeNull(b.Value, below) {
				return true
			}
		}
		return false
	case *function.Coalesce:
		for _, arg := range x.Children() {
			if !maybeNull(arg, below) {
				return false
			}
		}
		return true
	case *function.IfNull:
		return maybeNull(x.RightChild, below)
	case *decimalCoalesce:
		return maybeNull(x.orig, below)
	case *function.NullIf, *expression.Div, *expression.IntDiv, *intDivision, *expression.Mod, *IntMod:
		return true
	}
	if e.IsNullable() {
		return true
	}
	for _, c := range e.Children() {
		if maybeNull(c, below) {
			return true
		}
	}
	return false
}

// definesColumns reports whether query, a CREATE TABLE … SELECT, defines
// columns (or keys) of its own, and true when it cannot tell.
func definesColumns(query string) bool {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return true
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	return !ok || ddl.OptSelect == nil || ddl.TableSpec != nil
}

// NullableResults makes the plan's columns nullable where MySQL holds
// they may be NULL (nullableColumns) and GMS says they may not: GMS's
// MIN, MAX, SUM, AVG, GROUP_CONCAT say they are never NULL, so the
// wire's column definition of SELECT MAX(a) FROM t carried the NOT_NULL
// flag, though an aggregate over no rows is NULL. The rule rebuilds each
// projection's GetFields of such a column of the node below as
// nullable, and the expressions over them (SUM(a) + 1) follow; an
// aliased expression whose nullability MySQL gives otherwise (maybeNull)
// says MySQL's. The wire (the result's schema) and CREATE TABLE … AS
// SELECT (CreateSelectTypes) then read the one answer. It runs once the plan's column indexes are
// final.
func NullableResults(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return nullableResults(n, false)
}

// nullableResults is NullableResults below n, bottom up as transform.Node
// walks; unionSide says n is in a side of a UNION, EXCEPT or INTERSECT,
// whose aliased projections keep GMS's expressions: the union's rules
// read their conversions by their shapes (union.go, branchtext.go) and
// the union's column facts are its own (nullableColumns).
func nullableResults(n gsql.Node, unionSide bool) (gsql.Node, transform.TreeIdentity, error) {
	if _, ok := n.(gsql.OpaqueNode); ok {
		return n, transform.SameTree, nil
	}
	_, setOp := n.(*plan.SetOp)
	children := n.Children()
	var changed []gsql.Node
	for i, c := range children {
		nc, same, err := nullableResults(c, setOp || unionSide)
		if err != nil {
			return n, transform.SameTree, err
		}
		if same == transform.NewTree {
			if changed == nil {
				changed = append([]gsql.Node(nil), children...)
			}
			changed[i] = nc
		}
	}
	identity := transform.SameTree
	if changed != nil {
		var err error
		if n, err = n.WithChildren(changed...); err != nil {
			return n, transform.SameTree, err
		}
		identity = transform.NewTree
	}
	out, same, err := nullableProjection(n, unionSide)
	if err != nil || same == transform.SameTree {
		return n, identity, err
	}
	return out, transform.NewTree, nil
}

// nullableProjection rewrites n's projections when n is a Project
// (NullableResults).
func nullableProjection(n gsql.Node, unionSide bool) (gsql.Node, transform.TreeIdentity, error) {
	{
		p, ok := n.(*plan.Project)
		if !ok {
			return n, transform.SameTree, nil
		}
		// What the child says of its columns' NULLs, read once a
		// projection needs it: most plans have no NOT NULL field to check.
		var below []bool
		childNulls := func() []bool {
			if below == nil {
				below = nullableColumns(p.Child)
			}
			return below
		}
		// An aliased expression is judged by its columns' own word:
		// reading the child's (nullableColumns asks every node's
		// schema, which GMS builds anew on each call, exponentially in
		// a ROLLUP's chain of unions) is kept for the bare columns below.
		columnsOwn := func(int) bool { return false }
		projections, same, err := transform.Exprs(p.Projections, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if a, ok := e.(*expression.Alias); ok && !unionSide {
				// MySQL's word (maybeNull) where GMS's differs: GMS's
				// COALESCE says it may be NULL when its first argument
				// may, IFNULL when its first may (MySQL: when every
				// argument may, when the second may); its IF asks only
				// the value if true, its / and MOD only the operands.
				want := maybeNull(a.Child, columnsOwn)
				typ, retyped := stringResultType(a.Child, a.Type())
				if gf, ok := a.Child.(*expression.GetField); ok && !retyped {
					// An aggregate's column of the GroupBy below.
					typ, retyped = aggregateStringType(gf, p.Child)
				}
				if want == a.IsNullable() && !retyped {
					// GMS's word is MySQL's. Either way a number's
					// column takes MySQL's (an IF whose value if false
					// may be NULL, a division: nullable): the union's
					// own-text rule sees through the result column
					// (owntext.go, withOwnDecimal), whose wrapper had
					// made IF(c, 0.0, x) UNION 'x' write 5.0.
					return e, transform.SameTree, nil
				}
				return expression.NewAlias(a.Name(), &resultColumn{UnaryExpression: expression.UnaryExpression{Child: a.Child}, nullable: want, typ: typ}).WithId(a.Id()), transform.NewTree, nil
			}
			gf, ok := e.(*expression.GetField)
			if !ok {
				return e, transform.SameTree, nil
			}
			if typ, ok := aggregateStringType(gf, p.Child); ok && !unionSide {
				// MAX(CONCAT(s, 'x')) read from the GroupBy below:
				// the aggregate's string length, not GMS's LONGTEXT.
				rc := &resultColumn{UnaryExpression: expression.UnaryExpression{Child: gf}, nullable: true, typ: typ}
				return expression.NewAlias(gf.Name(), rc).WithId(gf.Id()), transform.NewTree, nil
			}
			if gf.IsNullable() {
				return e, transform.SameTree, nil
			}
			below := childNulls()
			i := gf.Index()
			if i < 0 || i >= len(below) || !below[i] {
				return e, transform.SameTree, nil
			}
			return expression.NewGetFieldWithTable(i, int(gf.TableId()), gf.Type(), gf.Database(), gf.Table(), gf.Name(), true).WithId(gf.Id()).(*expression.GetField), transform.NewTree, nil
		})
		if err != nil || same {
			return n, transform.SameTree, err
		}
		out, err := p.WithExpressions(projections...)
		return out, transform.NewTree, err
	}
}

// resultColumn is a result column whose nullability or type MySQL gives
// otherwise than GMS's expression says: a COALESCE whose last argument
// is a constant is never NULL, an IF whose value if false may be NULL
// may be (maybeNull); CONCAT(s, 'x') of a VARCHAR(10) s is a VARCHAR(11)
// (stringResultType). It evaluates its child and says so
// (NullableResults).
type resultColumn struct {
	expression.UnaryExpression
	nullable bool
	typ      gsql.Type // nil: the child's
}

var _ gsql.CollationCoercible = (*resultColumn)(nil)

// Type implements sql.Expression.
func (n *resultColumn) Type() gsql.Type {
	if n.typ == nil {
		// Only the nullability is MySQL's: the child's type, as later
		// rules may retype it.
		return n.Child.Type()
	}
	return n.typ
}

// IsNullable implements sql.Expression.
func (n *resultColumn) IsNullable() bool { return n.nullable }

// Eval implements sql.Expression.
func (n *resultColumn) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return n.Child.Eval(ctx, row)
}

// String implements sql.Expression: the child's text, which names the
// column.
func (n *resultColumn) String() string { return n.Child.String() }

// WithChildren implements sql.Expression.
func (n *resultColumn) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &resultColumn{UnaryExpression: expression.UnaryExpression{Child: children[0]}, nullable: n.nullable, typ: n.typ}, nil
}

// CollationCoercibility implements sql.CollationCoercible: the child's.
func (n *resultColumn) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, n.Child)
}
