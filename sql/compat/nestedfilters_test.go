package compat

import (
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/memory"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TestMergedNestedFilters runs GMS's pushFilters, wrapped, over two
// Filters stacked on a table, alone and as a leaf of a join: every
// condition is still in the plan after it (GMS's rule alone dropped
// the lower Filter's, and both when both read the table).
func TestMergedNestedFilters(t *testing.T) {
	db := memory.NewDatabase("d")
	schema := gsql.NewPrimaryKeySchema(gsql.Schema{
		{Name: "a", Type: types.Int32, Source: "k1", PrimaryKey: true},
		{Name: "c1", Type: types.Text, Source: "k1", Nullable: true},
		{Name: "c9", Type: types.Int32, Source: "k1", Nullable: true},
	})
	k1 := memory.NewTable(db, "k1", schema, nil)
	k0 := memory.NewTable(db, "k0", gsql.NewPrimaryKeySchema(gsql.Schema{
		{Name: "a", Type: types.Int32, Source: "k0", PrimaryKey: true},
		{Name: "c9", Type: types.Int32, Source: "k0", Nullable: true},
	}), nil)
	a := analyzer.NewDefault(memory.NewDBProvider(db))
	var pushFilters analyzer.RuleFunc
	for _, b := range a.Batches {
		for _, r := range b.Rules {
			if r.Id.String() == "pushFilters" {
				pushFilters = r.Apply
			}
		}
	}
	if pushFilters == nil {
		t.Fatal("GMS has no pushFilters rule")
	}
	field := func(i int, table, name string) *expression.GetField {
		return expression.NewGetFieldWithTable(i, 1, types.Int32, "d", table, name, true)
	}
	c9Above := expression.NewGreaterThan(field(2, "k1", "c9"), expression.NewLiteral(int32(100), types.Int32))
	c1Below := expression.NewLessThanOrEqual(field(1, "k1", "c1"), expression.NewLiteral(int32(5), types.Int32))
	aBelow := expression.NewGreaterThan(field(0, "k1", "a"), expression.NewLiteral(int32(1), types.Int32))
	stacked := func(upper, lower gsql.Expression) gsql.Node {
		return plan.NewFilter(upper, plan.NewFilter(lower, plan.NewResolvedTable(k1, db, nil)))
	}
	for _, c := range []struct {
		name  string
		plan  gsql.Node
		conds []string
	}{
		{"on a table", stacked(c9Above, c1Below), []string{"k1.c9 > 100", "k1.c1 <= 5"}},
		{"two conditions below", stacked(c9Above, expression.NewAnd(c1Below, aBelow)), []string{"k1.c9 > 100", "k1.c1 <= 5", "k1.a > 1"}},
		{"a leaf of a join", plan.NewInnerJoin(
			stacked(c9Above, c1Below),
			plan.NewResolvedTable(k0, db, nil),
			expression.NewEquals(field(2, "k1", "c9"), field(4, "k0", "c9")),
		), []string{"k1.c9 > 100", "k1.c1 <= 5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := gsql.NewEmptyContext()
			out, _, err := MergedNestedFilters(pushFilters)(ctx, a, c.plan, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var conds []string
			transform.Inspect(out, func(n gsql.Node) bool {
				if f, ok := n.(*plan.Filter); ok {
					for _, e := range expression.SplitConjunction(f.Expression) {
						conds = append(conds, strings.ToLower(e.String()))
					}
				}
				return true
			})
			for _, want := range c.conds {
				found := false
				for _, got := range conds {
					found = found || strings.Contains(got, want)
				}
				if !found {
					t.Errorf("%s lost: conditions left %q in\n%s", want, conds, gsql.DebugString(out))
				}
			}
		})
	}
}
