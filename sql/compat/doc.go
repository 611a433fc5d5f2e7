// Package compat makes go-mysql-server's (GMS v0.20.0) answers MySQL's
// where GMS's differ, on GMS's own terms: analyzer rules that rewrite
// plans and expressions, the expressions and plan nodes they put in,
// functions that take the place of GMS's, and rewrites of a parsed
// statement before GMS's planner binds it. It knows nothing of percdb's
// storage, sessions or handler: it imports GMS, vitess and sql/tablemeta
// (percdb's TIME(n) type) only; package sql imports it and wires it in.
//
// One file per family of defects; each file's opening comment says what
// GMS does, what MySQL does and how the workaround gets there, and
// docs/compatibility.md lists every defect for users, with the file and
// the test that shows it:
//
//   - rules over plans: correlated NOT EXISTS (subquery.go), NOT IN with
//     NULLs (notin.go), LEFT JOINs a condition makes inner
//     (outerjoin.go), semi joins' DISTINCT (semijoin.go), aggregates of
//     the outer query inside a subquery (outeraggs.go), DISTINCT with
//     ORDER BY (distinct.go), derived tables' column types (derived.go),
//     UNION column types (union.go), windows over rows of no columns
//     (window.go), unnamed indexes' names (indexnames.go), KILL of an
//     unknown connection (kill.go);
//   - rules over expressions: collations in hashing, DISTINCT, IN and
//     set operations (collation.go, hashkey.go, setops.go, coercion.go),
//     trailing spaces under PAD SPACE collations (padspace.go),
//     integer arithmetic (arith.go), negation, ABS
//     and DIV (negate.go, intdiv.go), exact SUM and AVG (aggregates.go),
//     FLOAT against decimal literals (floatcmp.go), DECIMAL comparisons
//     (decimal.go), constants beyond an integer column's type
//     (outofrange.go), BETWEEN and IN lists of mixed numbers
//     (between.go), negative decimal literals (negliteral.go), CAST to
//     SIGNED (castsigned.go) and of strings to integers (caststring.go),
//     bit operations on 64 bits (bitops.go), strings against numbers (strnum.go, strict.go), row
//     comparisons and the other rewrites of one walk over a plan's
//     expressions (rows.go), a DATE as text (datetext.go), TIME values
//     and TIME(n) arguments (timevalues.go, timefsp.go);
//   - functions GMS lacks or gets wrong, which Function gives GMS's
//     catalog before its own: date and time (functions.go,
//     timevalues.go), numeric (numeric.go), FIELD, INSTR and LOCATE
//     (stringcmp.go), ranks of peers (peers.go), LEAD and LAG with a
//     parameter offset (window.go), GROUP_CONCAT (groupconcat.go),
//     TIME_TO_SEC, TIMESTAMP, REPEAT, PERIOD_ADD and others
//     (morefuncs.go);
//   - statements before the planner (RewriteParsed, KeepLikeEscapes,
//     TimePrecisions): LIKE's backslash escapes, DECIMAL literals'
//     scales, repeated aggregates, named windows' ORDER BY (parse.go),
//     GROUP_CONCAT as a call of percdb's aggregate (groupconcat.go),
//     ~x as a call of percdb's function (bitops.go),
//     TIME(n) columns (timefsp.go), the column names of an INSERT …
//     SELECT's ON DUPLICATE KEY UPDATE values, resolved by the
//     SelectedColumns rule and read from the selected row (odku.go);
//   - GMS's errors as MySQL's: KindPattern recognises the messages of
//     one of GMS's error kinds, for package sql's and package
//     foreignkey's tables of MySQL's codes (errkind.go).
//
// Package sql puts the rules among GMS's (sql/analyzer.go says where,
// and which test fails without each). Its row-iterator builder
// (sql/compat_exec.go) runs what GMS's short analysis of a one-table
// UPDATE or DELETE leaves out (RowComparisonsIn, TimeValues,
// IntegerArithmetic, StrictComparisons) and what must be done as a plan
// is built rather than analyzed (KeyedSetOpPlan, ExactDecimalColumns,
// NullRejectingMergeKeys, ShowColumns); its coprocessor pushdown reads
// IntMod and DecimalAgg. It keeps the workarounds that need its
// session, provider or handler: views and RENAME TABLE
// (sql/compat_viewdb.go), the handler's fixes of results
// (sql/compat_fields.go, sql/compat_temporal.go, sql/compat_timefsp.go,
// sql/compat_aliascase.go), SET NAMES (sql/compat_names.go), DO,
// placeholders and TLS status (sql/compat_do.go, sql/compat_params.go,
// sql/compat_tlsstatus.go), affected-row counts (sql/compat_replace.go).
package compat
