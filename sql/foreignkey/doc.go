// Package foreignkey is percdb's foreign keys, as InnoDB has them, in
// the terms of GMS, which enforces them: percdb stores the definitions
// (package catalog) and serves them to GMS through sql.ForeignKeyTable
// (package sql's fk.go); GMS's analyzer wraps every INSERT, UPDATE,
// DELETE and REPLACE of a table with foreign keys in its
// ForeignKeyHandler, which checks a child row's parent through an index
// lookup on the parent's editor and runs the referential actions
// (RESTRICT, CASCADE, SET NULL) through the children's editors, all in
// the statement's transaction (the editors' reads and writes go through
// it, and see its own writes).
//
// Snapshot isolation alone would let a child row be inserted while a
// concurrent transaction deletes its parent (each sees the other's row
// missing: a write skew). A reference check therefore locks the parent
// row it found (a Lock mutation on the parent's row key, as TiDB does;
// package sql's IndexedTable.SetReferenceCheck): a concurrent delete or
// key update of that parent writes the same key, so one of the two
// transactions fails its commit with 1213.
//
// A foreign key is stored in its child's TableDef by column names and
// the parent's database and table names, as InnoDB keeps it: a parent
// dropped under foreign_key_checks=0 and created again is referenced
// again. The foreign keys that reference a table are found through an
// index of the catalog built on first use (catalog.Catalog.Referencing).
//
// This package holds what needs nothing of package sql's types:
//
//   - the conversions between stored definitions and GMS's (ToGMS,
//     FromGMS) and the checks of a new key (CheckActions, CheckRows,
//     HasIndexPrefix; CheckNoOutsideReferences for DROP DATABASE);
//   - analyzer rules: CheckDefinitions gives a key that cannot be made
//     MySQL's error before GMS meets it (definitions.go), InUpdateJoins
//     makes a multi-table UPDATE enforce keys (updatejoin.go), and
//     CheckShadowed refuses a write through a key whose other table a
//     temporary table shadows;
//   - Error, which turns GMS's foreign key errors into MySQL's codes and
//     messages (errors.go);
//   - Superseded, the indexes added for keys that a new index serves as
//     well, which InnoDB drops (index.go).
//
// What the rules need of a table and of a session they see through two
// small interfaces, Table (its definition as the statement's transaction
// sees it now) and Session (its temporary tables), which package sql's
// Table and Session implement; this package imports nothing of package
// sql. Package sql keeps what are methods of its types: Table's
// implementation of sql.ForeignKeyTable (adding a key fences the table
// and checks its rows, CreateIndexForForeignKey builds the index online)
// and the editor GMS's handler writes through.
package foreignkey
