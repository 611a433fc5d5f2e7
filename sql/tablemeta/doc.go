// Package tablemeta derives what every read and write of a table needs
// from its stored definition (a catalog.TableDef): the table's GMS schema
// and the executor's description of it (column IDs, how rows are keyed:
// an integer handle, a common handle or a hidden row ID, and every index
// with its online state), plus, per public index, the schema positions and
// types that GMS's lookups convert range bounds with (Table, Index). A
// definition is immutable, so its Table is derived once and shared by
// every transaction that sees it (Cache).
//
// It also converts between stored definitions and GMS's schemas
// (ColumnDefFromGMS, DefFromSchema: types and defaults are stored as the
// SQL text GMS prints and parsed back by GMS's planbuilder, so there is no
// type encoding of percdb's own), and says how strings become index keys
// under their collation (CollationKeyFunc: 'a' and 'A' are one key under a
// case-insensitive collation, so that a unique index rejects both; and
// PadsSpaces: 'a' and 'a ' are one key under a PAD SPACE collation, in
// tables of catalog.KeyFormatPadSpace; older tables make no such key).
//
// It stands between package catalog, which knows no GMS, and package sql's
// tables, lookups and fast path, which read and write through it.
package tablemeta
