package sql

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/txn"
)

// On a SQL node of a cluster DROP TABLE and DROP DATABASE fence the
// tables they drop before dropping them, as TRUNCATE and the ALTER TABLEs
// that rewrite a table fence theirs (ddl.go). The fast path's autocommit
// reads trust the node's cached catalog for a table without a fence
// (cacheCurrentFor, ddllease.go): between the drop's commit and another
// node's load of it, that node read the dropped table's rows (they stay
// until the garbage collector removes the range), though a session that
// saw the drop could already have told its client. Every node loads the
// fence before the drop may commit, so its reads of the table check the
// schema version with their rows and, finding it moved, go to GMS's path,
// which reads the catalog at the read's own snapshot (1146). Writers of a
// fenced table on any node wait for the drop and fail with 8028, and run
// again find the table gone. The single node needs no fence: its reads
// see its own DDLs (schemaGuard).

// tableName names a table of a database.
type tableName struct{ db, table string }

// tablesNamed picks the tables of names that a catalog has.
func tablesNamed(names []tableName) func(c *catalog.Catalog) []*catalog.TableDef {
	return func(c *catalog.Catalog) []*catalog.TableDef {
		var defs []*catalog.TableDef
		for _, nm := range names {
			if db, ok := c.Database(nm.db); ok {
				if def, ok := c.Table(db.ID, nm.table); ok {
					defs = append(defs, def)
				}
			}
		}
		return defs
	}
}

// fenceDropTables fences the tables of a DROP TABLE statement, those that
// are not the session's temporary tables (which DropTable drops first, and
// no other node sees). Nothing on a single node.
func fenceDropTables(ctx *gsql.Context, n *plan.DropTable) error {
	tx, err := transactionOf(ctx)
	if err != nil || tx.provider.lease == nil {
		return nil // GMS's DropTable reports a missing transaction
	}
	var names []tableName
	for _, node := range n.Tables {
		rt, ok := node.(*plan.ResolvedTable)
		if !ok || rt.SqlDatabase == nil || sessionTempTable(ctx, rt.SqlDatabase.Name(), rt.Name()) != nil {
			continue
		}
		names = append(names, tableName{rt.SqlDatabase.Name(), rt.Name()})
	}
	if len(names) == 0 {
		return nil
	}
	return toSQLError(tx.fenceForDrop(ctx, "DROP TABLE", tablesNamed(names)))
}

// fenceRenameTables fences the tables a RENAME TABLE (or ALTER TABLE ...
// RENAME) moves, as a drop fences its tables: the table keeps its ID and
// rows under the new name, and another node's fast path must not go on
// reading them under the old one through its cached catalog once the
// rename committed. The session's temporary tables, which no other node
// sees, are skipped. Database.RenameTable takes the fence down in the
// definition it writes under the new name. Nothing on a single node.
func fenceRenameTables(ctx *gsql.Context, n *plan.RenameTable) error {
	tx, err := transactionOf(ctx)
	if err != nil || tx.provider.lease == nil || n.Db == nil {
		return nil
	}
	var names []tableName
	if _, across := n.Db.(renameAcrossDB); across {
		if s, err := sessionOf(ctx); err == nil && s.renameAcross != nil {
			for _, p := range s.renameAcross.pairs {
				names = append(names, tableName{p.fromDB, p.from})
			}
		}
	} else {
		for _, name := range n.OldNames {
			names = append(names, tableName{n.Db.Name(), name})
		}
	}
	kept := names[:0]
	for _, nm := range names {
		if sessionTempTable(ctx, nm.db, nm.table) == nil {
			kept = append(kept, nm)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return toSQLError(tx.fenceForDrop(ctx, "RENAME TABLE", tablesNamed(kept)))
}

// fenceDropDatabase fences every table of database name before DROP
// DATABASE drops it. Nothing on a single node.
func fenceDropDatabase(ctx *gsql.Context, name string) error {
	tx, err := transactionOf(ctx)
	if err != nil || tx.provider.lease == nil {
		return nil
	}
	return toSQLError(tx.fenceForDrop(ctx, "DROP DATABASE", func(c *catalog.Catalog) []*catalog.TableDef {
		db, ok := c.Database(name)
		if !ok {
			return nil
		}
		return c.SortedTables(db.ID)
	}))
}

// fenceForDrop raises fences, in one step of its own, on the tables that
// pick finds in a catalog and that no rewrite has fenced already (its
// fence serves the drop as well), then starts this transaction over after
// the step, as fenceForRewrite does. A transaction that has written
// already (an explicit one's writes, which the DDL commits with it,
// handler.go) keeps its snapshot: its drop goes unfenced, as before.
// Tables that another schema change works on are fenced all the same:
// DROP does not wait for an index build, which finds its table gone.
// The fences of a drop that then fails are lifted with the transaction
// (liftFences).
func (t *Transaction) fenceForDrop(ctx context.Context, what string, pick func(c *catalog.Catalog) []*catalog.TableDef) error {
	if t.catDirty || (t.kv != nil && !t.kv.IsReadOnly()) {
		return nil
	}
	unfenced := func(c *catalog.Catalog) []*catalog.TableDef {
		var defs []*catalog.TableDef
		for _, def := range pick(c) {
			if def.Fence == "" && !t.ownsFence(def.ID) {
				defs = append(defs, def)
			}
		}
		return defs
	}
	cur, err := t.catalog(ctx)
	if err != nil {
		return err
	}
	if len(unfenced(cur)) == 0 {
		return nil
	}
	var raised []fencedTable
	err = t.provider.runSchemaStep(ctx, t.use, func(c *catalog.Catalog, k *txn.Txn) error {
		// A drop frees space, so its fences go in on a nearly full disk
		// too (fenceStep).
		k.AllowWhenDiskFull()
		raised = raised[:0]
		for _, def := range unfenced(c) {
			nd := def.Clone()
			nd.Fence, nd.ChangedBy = what, t.provider.leaseNode()
			if err := putTableDef(c, k, nd); err != nil {
				return err
			}
			raised = append(raised, fencedTable{dbID: nd.DBID, name: nd.Name, id: nd.ID})
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.fenced = append(t.fenced, raised...)
	t.startOver(ctx)
	return nil
}
