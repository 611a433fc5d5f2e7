package compat

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL's assignment operator inside an expression, @name := expr,
// sets the user variable as the expression is evaluated and is the
// value assigned: applications number rows with it (SELECT @rownum :=
// @rownum + 1, c FROM t) and carry a value from row to row. GMS's
// grammar takes := only in SET and refused it elsewhere (1064).
// assignments, run on a statement that failed to parse (rewriteSyntax),
// writes each @name := expr as a call of assignName's function,
// percdb_assign('name', expr), whose evaluation sets the variable in the
// session and returns the value; the select item keeps its name as
// written (@rownum := @rownum + 1).
//
// The operand extends as far as MySQL's grammar takes it: := binds
// looser than every other operator (OR and XOR included), so it ends at
// the first ',', ')' or ';' of its own depth, at a clause keyword of
// its depth (FROM, WHERE, AS, ...), or at the end of the statement.
// Assignments in a row nest (@a := @b := 1 sets both). A SET statement
// parses without the rewrite and is never rewritten.

// assignName is the function assignments writes @name := expr as.
const assignName = "percdb_assign"

// assignFunctions holds assignName's function.
var assignFunctions = map[string]gsql.Function{
	assignName: gsql.Function2{Name: assignName, Fn: func(name, value gsql.Expression) gsql.Expression {
		return &assignment{name: name, value: value}
	}},
}

// assignEnds are the keywords that end an assignment's operand at its
// depth: those of the clauses that can follow a select item or a
// condition, and of CASE's parts.
var assignEnds = map[string]bool{
	"FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true, "LIMIT": true,
	"INTO": true, "UNION": true, "EXCEPT": true, "INTERSECT": true, "WINDOW": true, "FOR": true,
	"LOCK": true, "AS": true, "WHEN": true, "THEN": true, "ELSE": true, "END": true, "ON": true,
	"USING": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "CROSS": true,
	"STRAIGHT_JOIN": true, "NATURAL": true, "SET": true, "VALUES": true, "DESC": true, "ASC": true,
}

// assignments marks the assignments of toks for rewriteSyntax: the
// tokens of "@name :=" become "percdb_assign('name'," (replace and
// blank), and closeBefore[i] counts the calls closed right before token
// i (len(toks): at the end of the statement).
func assignments(query string, toks []syntaxToken, replace map[int]string, blank map[int]bool) (closeBefore map[int]int) {
	if len(toks) == 0 || toks[0].word == "SET" {
		return nil
	}
	for i := 0; i+3 < len(toks); i++ {
		at, name, colon, eq := toks[i], toks[i+1], toks[i+2], toks[i+3]
		if at.punct != '@' || name.word == "" || at.end != name.start || colon.punct != ':' || eq.punct != '=' || colon.end != eq.start {
			continue
		}
		if i > 0 && toks[i-1].punct == '@' && toks[i-1].end == at.start {
			continue // @@system := is not a user variable
		}
		if closeBefore == nil {
			closeBefore = map[int]int{}
		}
		replace[i] = assignName + "("
		replace[i+1] = fmt.Sprintf("'%s',", query[name.start:name.end])
		blank[i+2], blank[i+3] = true, true
		depth := 0
		end := len(toks)
		for j := i + 4; j < len(toks); j++ {
			t := toks[j]
			if t.punct == '(' {
				depth++
				continue
			}
			if depth > 0 {
				if t.punct == ')' {
					depth--
				}
				continue
			}
			if t.punct == ',' || t.punct == ')' || t.punct == ';' || assignEnds[t.word] {
				end = j
				break
			}
		}
		closeBefore[end]++
	}
	return closeBefore
}

// assignment is percdb_assign(name, value): value, stored in the
// session's user variable name as it is evaluated.
type assignment struct {
	name, value gsql.Expression
}

var _ gsql.Expression = (*assignment)(nil)

// Resolved implements gsql.Expression.
func (a *assignment) Resolved() bool { return a.name.Resolved() && a.value.Resolved() }

// String implements gsql.Expression.
func (a *assignment) String() string { return fmt.Sprintf("%s := %s", a.name, a.value) }

// Type implements gsql.Expression: the value's.
func (a *assignment) Type() gsql.Type { return a.value.Type() }

// IsNullable implements gsql.Expression.
func (a *assignment) IsNullable() bool { return a.value.IsNullable() }

// Children implements gsql.Expression.
func (a *assignment) Children() []gsql.Expression {
	return []gsql.Expression{a.name, a.value}
}

// WithChildren implements gsql.Expression.
func (a *assignment) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 2 {
		return nil, gsql.ErrInvalidChildrenNumber.New(a, len(children), 2)
	}
	return &assignment{name: children[0], value: children[1]}, nil
}

// Eval implements gsql.Expression: the value, set in the session first.
func (a *assignment) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	name, err := a.name.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	n, ok := name.(string)
	if !ok || n == "" {
		return nil, fmt.Errorf("%s: the variable's name %v is not a name", assignName, name)
	}
	v, err := a.value.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	typ := a.value.Type()
	if v == nil {
		typ = types.Null
	}
	if err := ctx.SetUserVariable(ctx, n, v, typ); err != nil {
		return nil, fmt.Errorf("setting @%s: %w", n, err)
	}
	return v, nil
}

// AssignedVariableTypes is an analyzer rule: in a statement that assigns
// user variables (@name := expr), a variable read that had no value when
// the statement was planned is typed as MySQL types it, a LONGBLOB, not
// GMS's NULL type, whose column writes every value as NULL: SELECT @x :=
// 7, @x answers 7, 7 as MySQL does (the read runs after the assignment),
// not 7, NULL. Statements without an assignment are left alone.
func AssignedVariableTypes(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	assigns := false
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if _, ok := e.(*assignment); ok {
			assigns = true
		}
		return !assigns
	})
	if !assigns {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprsWithOpaque(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		v, ok := e.(*expression.UserVar)
		if !ok || v.Type() != types.Null {
			return e, transform.SameTree, nil
		}
		return expression.NewUserVarWithType(v.Name, types.LongBlob), transform.NewTree, nil
	})
}
