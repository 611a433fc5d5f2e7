package sql

import (
	"fmt"
	"io"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/foreignkey"
)

// A table without a primary key in an UPDATE or DELETE of several
// tables. GMS tells the rows of a target table apart by their values:
// its UPDATE ... JOIN changes a row once, for the first joined row with
// those values (updateJoinIter hashes the table's part of the joined
// row), and refuses a table without a primary key (1235 "keyless tables
// unsupported for UPDATE JOIN"), whose equal rows it would take for one;
// percdb's DELETE of several tables deletes a row once by its values
// (onceDeleter), and deleted one of two equal rows. MySQL changes each
// row the join finds, by its position.
//
// A percdb table without a primary key keeps its rows under hidden row
// IDs. Equal rows of such a table join the same rows of the others (the
// join reads values), so the statement changes all of them or none, and
// each the same way: keylessJoinEditor changes, for the first joined
// row with a table row's values, every row of the table with those
// values as the statement began, found by their row IDs, and counts the
// rows beyond the one GMS counts. It reads the table once, at the
// statement's first write to it (after its join is read, joinwrites.go),
// and keeps the row IDs of each value in memory. A statement that
// changes one such table under two names (UPDATE k a JOIN k b ...) sees
// the first name's changes when it reads the table for the second.

// keylessJoinUpdater is the updater of a table without a primary key in
// the plan of an UPDATE of several tables (keylessUpdateJoins); each
// execution writes through a keylessJoinEditor of its own
// (withKeylessCopies). Used directly it is the table's editor.
type keylessJoinUpdater struct {
	*tableEditor
}

// keylessJoinEditor writes one statement's changes to a table without a
// primary key, joined to others (see above).
type keylessJoinEditor struct {
	*tableEditor
	// copies holds the row IDs of the table's rows as the statement
	// began, by their values (keylessTracker.fingerprint); nil until
	// the first write.
	copies map[string][]tablecodec.Handle
	// done holds the values changed.
	done map[string]bool
	// extra counts the rows changed beyond one for each value.
	extra int
}

// isKeyless reports whether t keeps its rows under hidden row IDs.
func (t *Table) isKeyless() bool {
	return t.meta.Exec.HandleKind == executor.HandleRowID
}

// newKeylessJoinEditor returns an editor of t for one statement.
func newKeylessJoinEditor(t *Table) *keylessJoinEditor {
	return &keylessJoinEditor{tableEditor: t.editor(), done: map[string]bool{}}
}

// rowsLike returns the row IDs of the rows equal to row as the statement
// began, and whether they are not changed yet. None found (a row the
// statement's own writes made) is nil and true.
func (e *keylessJoinEditor) rowsLike(ctx *gsql.Context, row gsql.Row) ([]tablecodec.Handle, bool, error) {
	var kt keylessTracker
	fp, err := kt.fingerprint(e.t.meta, row)
	if err != nil {
		return nil, false, err
	}
	if e.done[fp] {
		return nil, false, nil
	}
	if e.copies == nil {
		if err := e.readCopies(ctx); err != nil {
			return nil, false, err
		}
	}
	e.done[fp] = true
	return e.copies[fp], true, nil
}

// readCopies reads the row IDs of the table's rows by their values.
func (e *keylessJoinEditor) readCopies(ctx *gsql.Context) error {
	_, k, err := e.begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	et := e.t.meta.Exec
	dec, err := et.NewRowDecoder(nil)
	if err != nil {
		return err
	}
	it, err := executor.ScanTable(ctx, k, et, dec, et.RowRange(), executor.ScanOptions{})
	if err != nil {
		return toSQLError(err)
	}
	defer it.Close()
	var kt keylessTracker
	copies := map[string][]tablecodec.Handle{}
	for {
		r, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return toSQLError(err)
		}
		fp, err := kt.fingerprint(e.t.meta, r.Values)
		if err != nil {
			return err
		}
		copies[fp] = append(copies[fp], r.Handle)
	}
	e.copies = copies
	return nil
}

// Update implements sql.RowUpdater: every row equal to old becomes new.
func (e *keylessJoinEditor) Update(ctx *gsql.Context, old, new gsql.Row) error {
	hs, first, err := e.rowsLike(ctx, old)
	if err != nil || !first {
		return err
	}
	if len(hs) == 0 {
		return e.tableEditor.Update(ctx, old, new)
	}
	for i := range hs {
		if err := e.update(ctx, old, new, &hs[i]); err != nil {
			return err
		}
	}
	e.extra += len(hs) - 1
	return nil
}

// deleteLike deletes every row equal to row and returns how many.
func (e *keylessJoinEditor) deleteLike(ctx *gsql.Context, row gsql.Row) (int, error) {
	hs, first, err := e.rowsLike(ctx, row)
	if err != nil || !first {
		return 0, err
	}
	if len(hs) == 0 {
		return 1, e.tableEditor.Delete(ctx, row)
	}
	for i := range hs {
		if err := e.delete(ctx, row, &hs[i]); err != nil {
			return 0, err
		}
	}
	return len(hs), nil
}

// keylessUpdateJoins wraps GMS's modifyUpdateExprsForJoin, which makes
// the UpdateJoin of an UPDATE of several tables and refuses a target
// table without a primary key: for a plan with such a table the
// UpdateJoin is made here, the same way, with a keylessJoinUpdater for
// that table.
func keylessUpdateJoins(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		u, ok := n.(*plan.Update)
		if !ok {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		src, ok := u.Child.(*plan.UpdateSource)
		if !ok {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		var join gsql.Node
		transform.Inspect(src, func(n gsql.Node) bool {
			if _, ok := n.(*plan.JoinNode); ok && join == nil {
				join = n
			}
			return join == nil
		})
		if join == nil {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		updaters, keyless := keylessJoinUpdaters(ctx, src, join)
		if !keyless {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		ret, err := u.WithChildren(plan.NewUpdateJoin(updaters, src))
		if err != nil {
			return nil, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	}
}

// keylessJoinUpdaters returns the updaters of the tables src's SET
// clause assigns to, found by name (or alias) in join as GMS finds them,
// and whether one is a percdb table without a primary key; false too
// when a table is not found or cannot be updated (GMS's rule then gives
// its error).
func keylessJoinUpdaters(ctx *gsql.Context, src *plan.UpdateSource, join gsql.Node) (map[string]gsql.RowUpdater, bool) {
	names := assignedTables(src)
	tables := map[string]*plan.ResolvedTable{}
	transform.Inspect(join, func(n gsql.Node) bool {
		switch n := n.(type) {
		case *plan.TableAlias:
			if rt := foreignkey.FirstResolvedTable(n); rt != nil {
				tables[strings.ToLower(n.Name())] = rt
			}
		case *plan.ResolvedTable:
			tables[strings.ToLower(n.Name())] = n
		case *plan.IndexedTableAccess:
			if rt, ok := n.TableNode.(*plan.ResolvedTable); ok {
				tables[strings.ToLower(rt.Name())] = rt
			}
		}
		return true
	})
	updaters := map[string]gsql.RowUpdater{}
	keyless := false
	for name := range names {
		rt, ok := tables[name]
		if !ok {
			return nil, false
		}
		if t, ok := rt.UnderlyingTable().(*Table); ok && t.isKeyless() {
			updaters[name] = &keylessJoinUpdater{tableEditor: t.editor()}
			keyless = true
			continue
		}
		ut, ok := rt.UnderlyingTable().(gsql.UpdatableTable)
		if !ok || gsql.IsKeyless(ut.Schema()) {
			return nil, false
		}
		updaters[name] = ut.Updater(ctx)
	}
	return updaters, keyless
}

// withKeylessCopies returns u with a keylessJoinEditor of this execution
// for each keylessJoinUpdater of its UpdateJoin, and a function that
// counts the rows they changed beyond those GMS counts; false when u has
// none.
func withKeylessCopies(u *plan.Update) (gsql.Node, func() int, bool) {
	var editors []*keylessJoinEditor
	ret, _, err := transform.Node(u, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		uj, ok := n.(*plan.UpdateJoin)
		if !ok {
			return n, transform.SameTree, nil
		}
		updaters := make(map[string]gsql.RowUpdater, len(uj.Updaters))
		changed := false
		for name, up := range uj.Updaters {
			if k, ok := up.(*keylessJoinUpdater); ok {
				ed := newKeylessJoinEditor(k.t)
				editors = append(editors, ed)
				updaters[name] = ed
				changed = true
				continue
			}
			updaters[name] = up
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		return plan.NewUpdateJoin(updaters, uj.Child), transform.NewTree, nil
	})
	if err != nil || len(editors) == 0 {
		return u, nil, false
	}
	return ret, func() int {
		n := 0
		for _, ed := range editors {
			n += ed.extra
		}
		return n
	}, true
}

// String implements fmt.Stringer, for plans printed in errors.
func (k *keylessJoinUpdater) String() string {
	return fmt.Sprintf("keyless updater of %s", k.t.Name())
}
