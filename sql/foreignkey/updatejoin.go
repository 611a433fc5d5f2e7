package foreignkey

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// InUpdateJoins works around a GMS defect: a multi-table
// UPDATE (UPDATE a JOIN b ... SET ...) writes through plain table
// updaters, which GMS's applyForeignKeys rule never wraps in its foreign
// key handler, so the update of a child or a parent went unchecked and
// did not cascade. This rule runs after GMS's and, for each table such an
// UPDATE changes that has foreign keys, asks GMS's rule for the handler
// of a one-table UPDATE of it (apply) and writes through that instead.
func InUpdateJoins(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		// GMS's rule, too, looks at the statement's top node only.
		if _, ok := n.(*plan.Update); !ok || !Checks(ctx) {
			return n, transform.SameTree, nil
		}
		return transform.Node(n, func(node gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
			uj, ok := node.(*plan.UpdateJoin)
			if !ok {
				return node, transform.SameTree, nil
			}
			updaters := make(map[string]gsql.RowUpdater, len(uj.Updaters))
			changed := false
			for name, u := range uj.Updaters {
				updaters[name] = u
				rt := updatedTable(uj.Child, name)
				if rt == nil || !hasForeignKeysGMS(ctx, rt) {
					continue
				}
				wrapped, _, err := apply(ctx, a, plan.NewUpdate(rt, false, nil), scope, sel, qFlags)
				if err != nil {
					return nil, transform.SameTree, err
				}
				upd, ok := wrapped.(*plan.Update)
				if !ok {
					return nil, transform.SameTree, fmt.Errorf("foreign keys of %s: GMS made a %T of an UPDATE", name, wrapped)
				}
				if h, ok := upd.Child.(*plan.ForeignKeyHandler); ok {
					updaters[name] = h
					changed = true
				}
			}
			if !changed {
				return node, transform.SameTree, nil
			}
			return plan.NewUpdateJoin(updaters, uj.Child), transform.NewTree, nil
		})
	}
}

// updatedTable returns the table an UPDATE JOIN's updater named name
// writes: the table of that name or alias in the join (as GMS's
// planbuilder finds it).
func updatedTable(n gsql.Node, name string) *plan.ResolvedTable {
	var found *plan.ResolvedTable
	transform.Inspect(n, func(node gsql.Node) bool {
		if found != nil {
			return false
		}
		switch node := node.(type) {
		case *plan.TableAlias:
			if strings.EqualFold(node.Name(), name) {
				found = FirstResolvedTable(node)
			}
		case *plan.ResolvedTable, *plan.IndexedTableAccess:
			if rt := FirstResolvedTable(node); rt != nil && strings.EqualFold(rt.Name(), name) {
				found = rt
			}
		}
		return found == nil
	})
	return found
}

// firstResolvedTable returns the first table read in n.
func FirstResolvedTable(n gsql.Node) *plan.ResolvedTable {
	var found *plan.ResolvedTable
	transform.Inspect(n, func(node gsql.Node) bool {
		if found != nil {
			return false
		}
		switch node := node.(type) {
		case *plan.ResolvedTable:
			found = node
		case *plan.IndexedTableAccess:
			found, _ = node.TableNode.(*plan.ResolvedTable)
		}
		return found == nil
	})
	return found
}

// hasForeignKeysGMS reports whether rt declares foreign keys or is
// referenced by one.
func hasForeignKeysGMS(ctx *gsql.Context, rt *plan.ResolvedTable) bool {
	t, ok := rt.UnderlyingTable().(Table)
	if !ok {
		return false
	}
	def, cat, err := t.CurrentDef(ctx)
	return err == nil && cat.HasForeignKeys(t.Database(), def)
}
