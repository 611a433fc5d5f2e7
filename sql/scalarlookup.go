package sql

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Correlated scalar subqueries on a primary key, as left lookup joins. GMS
// evaluates a select item such as
//
//	SELECT a.id, (SELECT b.q FROM t b WHERE b.w = a.w AND b.id = a.k) FROM t a
//
// by building the subquery's plan again for every outer row and reading
// its one row with a point read of its own: about 15 us of CPU a row, of
// which the read is the smaller part. Where the subquery's read is a
// lookup on every column of the primary key of its one table, keyed by the
// outer row (MySQL's eq_ref), it reads at most one row per outer row, and
// the subquery is the left join of the outer rows to that lookup: the
// outer row's value is the subquery's select item over the joined row,
// NULL where no inner row is joined. As a left lookup join, the reads run
// in batches of outer rows, one BatchGet each (lookupjoin.go), as
// MySQL's and TiDB's decorrelation of such a subquery does.
//
// It is exactly the subquery's answer because it applies only when:
//
//   - the statement is a read, analyzed whole (no outer scope: the
//     outer rows are the Project's child's rows, laid out as the
//     subquery's scope), not a routine's (a plan cache template is
//     rewritten too: the expression keeps nothing of an execution, and
//     a template whose select item holds a parameter is not cached,
//     plancache_exec.go's notInTemplate);
//   - the subquery sits in the select items of a Project that has no
//     other subquery (not inside another subquery), is correlated, deterministic, and is a Project of one
//     item over Filters and a table alias over an IndexedTableAccess of
//     a percdb table keyed by expressions on every column of its primary
//     key, each an integer for an integer column or of the column's very
//     type (the key is one point, whose columns are NOT NULL: it matches
//     one row at most, so error 1242 cannot arise; a NULL key matches
//     none, as in the subquery);
//   - every column the subquery reads is either the scope's (an index
//     below the outer row's width, naming the outer column there) or
//     the table's (the following indexes): the joined row is the row
//     the subquery's items and filters were bound to.
//
// The Filters become the join's condition (a row they reject is no row,
// as in the subquery), the select item is evaluated over the joined row
// only where an inner row was joined (a NOT NULL column of the table is
// NULL in the joined row otherwise): COALESCE(b.q, 0) of no row is NULL, as the subquery's.
// @percdb_decorrelate = 0 leaves the subquery to GMS (the differential
// test compares both).
func scalarLookupJoins(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if !wholeReadWithSubqueries(ctx, n, scope, qFlags) || !userVarOn(ctx, decorrelateUserVar) {
		return n, transform.SameTree, nil
	}
	return scalarLookupsIn(n)
}

// scalarLookupsIn rewrites the Projects of n, outside derived tables
// (whose rows GMS lays out under a scope of their own).
func scalarLookupsIn(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	if _, ok := n.(*plan.SubqueryAlias); ok {
		return n, transform.SameTree, nil
	}
	children := n.Children()
	changed := false
	for i, c := range children {
		nc, same, err := scalarLookupsIn(c)
		if err != nil {
			return n, transform.SameTree, err
		}
		if !same {
			if !changed {
				children = append([]gsql.Node(nil), children...)
				changed = true
			}
			children[i] = nc
		}
	}
	if changed {
		var err error
		if n, err = n.WithChildren(children...); err != nil {
			return n, transform.SameTree, err
		}
	}
	if p, ok := n.(*plan.Project); ok {
		if np, ok := scalarLookupProject(p); ok {
			return np, transform.NewTree, nil
		}
	}
	if changed {
		return n, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// scalarLookupProject returns p with its subquery read through a left
// lookup join under p, when it has one subquery and scalarLookupOf
// accepts it. A Project with more is left alone: another subquery, run
// by GMS over the joined row, would see the join's columns where its
// own table's were bound to be.
func scalarLookupProject(p *plan.Project) (gsql.Node, bool) {
	width := len(p.Child.Schema())
	subqueries := 0
	for _, e := range p.Projections {
		transform.InspectExpr(e, func(e gsql.Expression) bool {
			if _, ok := e.(*plan.Subquery); ok {
				subqueries++
			}
			return false
		})
	}
	if subqueries != 1 {
		return p, false
	}
	for i, e := range p.Projections {
		var found *scalarLookup
		transform.InspectExpr(e, func(e gsql.Expression) bool {
			if sq, ok := e.(*plan.Subquery); ok && found == nil {
				found, _ = scalarLookupOf(sq, p.Child.Schema(), width)
			}
			return found != nil
		})
		if found == nil {
			continue
		}
		ne, _, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if e == found.sq {
				return found, transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		})
		if err != nil {
			return p, false
		}
		projections := append([]gsql.Expression(nil), p.Projections...)
		projections[i] = ne
		join := plan.NewJoin(p.Child, found.right, plan.JoinTypeLeftOuterLookup, found.cond)
		np, err := p.WithChildren(join)
		if err != nil {
			return p, false
		}
		np, err = np.(*plan.Project).WithExpressions(projections...)
		if err != nil {
			return p, false
		}
		return np, true
	}
	return p, false
}

// scalarLookupOf returns the join that reads sq for outer rows of the
// given schema, when sq has the shape the comment at the top of the file
// allows.
func scalarLookupOf(sq *plan.Subquery, outer gsql.Schema, width int) (*scalarLookup, bool) {
	if sq.Correlated().Empty() || sq.Volatile() || len(sq.Query.Schema()) != 1 {
		return nil, false
	}
	proj, ok := sq.Query.(*plan.Project)
	if !ok || len(proj.Projections) != 1 {
		return nil, false
	}
	var conds []gsql.Expression
	var alias *plan.TableAlias
	n := proj.Child
	for {
		switch c := n.(type) {
		case *plan.Filter:
			if alias != nil {
				// Under the alias: not a shape GMS makes here.
				return nil, false
			}
			conds = append(conds, c.Expression)
			n = c.Child
			continue
		case *plan.TableAlias:
			if alias != nil {
				return nil, false
			}
			alias, n = c, c.Child
			continue
		}
		break
	}
	ita, ok := n.(*plan.IndexedTableAccess)
	if !ok || ita.IsStatic() {
		return nil, false
	}
	it, ok := ita.Table.(*IndexedTable)
	if !ok || it.Table.meta.Schema.Schema.HasVirtualColumns() {
		return nil, false
	}
	x, ok := ita.Index().(*Index)
	if !ok || !x.im.IsPrimary || x.im.Prefixed || len(ita.Expressions()) != len(x.im.Ords) {
		return nil, false
	}
	// Each key converts exactly to its column's type, so the lookup is
	// one point: a key that does not (a DECIMAL or a string looking up
	// an integer column) may read a wider range (keyRangeOf), which the
	// subquery answers with error 1242 when it holds two rows.
	for i, k := range ita.Expressions() {
		kt, ct := k.Type(), x.im.Types[i]
		if !(types.IsInteger(kt) && types.IsInteger(ct)) && !kt.Equals(ct) {
			return nil, false
		}
	}
	var right gsql.Node = ita
	if alias != nil {
		right = alias
	}
	inner := right.Schema()
	// A column that is never NULL in a row read: NULL in the joined row
	// says no row was joined.
	marker := -1
	for i, c := range inner {
		if !c.Nullable {
			marker = width + i
			break
		}
	}
	if marker < 0 {
		return nil, false
	}
	// Every column read is the scope's or the table's, where the joined
	// row has it.
	bound := true
	check := func(e gsql.Expression) bool {
		gf, ok := e.(*expression.GetField)
		if !ok {
			if _, ok := e.(*plan.Subquery); ok {
				bound = false
			}
			return bound
		}
		i := gf.Index()
		switch {
		case i < 0 || i >= width+len(inner):
			bound = false
		case i < width:
			bound = strings.EqualFold(gf.Name(), outer[i].Name) && strings.EqualFold(gf.Table(), outer[i].Source)
		default:
			bound = strings.EqualFold(gf.Name(), inner[i-width].Name)
		}
		return bound
	}
	for _, e := range append(append([]gsql.Expression{proj.Projections[0]}, conds...), ita.Expressions()...) {
		transform.InspectExpr(e, func(e gsql.Expression) bool { return !check(e) })
		if !bound {
			return nil, false
		}
	}
	var cond gsql.Expression = expression.NewLiteral(true, types.Boolean)
	if len(conds) > 0 {
		cond = expression.JoinAnd(conds...)
	}
	return &scalarLookup{sq: sq, item: proj.Projections[0], right: right, cond: cond, marker: marker}, true
}

// scalarLookup is a scalar subquery's value read from the row of the
// left lookup join that replaced it: its select item over the joined
// row, NULL where no inner row was joined.
type scalarLookup struct {
	// sq is the subquery replaced, for its text, type and collation.
	sq *plan.Subquery
	// item is the subquery's select item; right and cond the join's
	// inner side and condition.
	item  gsql.Expression
	right gsql.Node
	cond  gsql.Expression
	// marker is the index in the joined row of a NOT NULL column of the
	// inner table.
	marker int
}

var _ gsql.Expression = (*scalarLookup)(nil)
var _ gsql.CollationCoercible = (*scalarLookup)(nil)

// Eval implements sql.Expression.
func (s *scalarLookup) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if s.marker >= len(row) {
		return nil, fmt.Errorf("scalar subquery as a join: row of %d columns, want more than %d", len(row), s.marker)
	}
	if row[s.marker] == nil {
		return nil, nil
	}
	return s.item.Eval(ctx, row)
}

// Resolved implements sql.Expression.
func (s *scalarLookup) Resolved() bool { return s.item.Resolved() }

// String implements sql.Expression: the subquery's text, which names the
// select item's column.
func (s *scalarLookup) String() string { return s.sq.String() }

// Type implements sql.Expression: the subquery's.
func (s *scalarLookup) Type() gsql.Type { return s.sq.Type() }

// IsNullable implements sql.Expression.
func (s *scalarLookup) IsNullable() bool { return true }

// Children implements sql.Expression: none, as the subquery has none
// (its item is bound to the joined row, which no rule outside may move).
func (s *scalarLookup) Children() []gsql.Expression { return nil }

// WithChildren implements sql.Expression.
func (s *scalarLookup) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), 0)
	}
	return s, nil
}

// CollationCoercibility implements sql.CollationCoercible: the
// subquery's.
func (s *scalarLookup) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, s.sq)
}
