package sql

import (
	"runtime/debug"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/foreignkey"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/planrules"
)

// The IDs of percdb's analyzer rules, in one place so that no two share
// one; GMS's own rule IDs are small consecutive numbers.
const (
	explainMax1RowRuleID            analyzer.RuleId = 1000 + iota // explainMax1Row, below
	greedyJoinOrderRuleID                                         // joinorder.go
	cacheJoinInputsRuleID                                         // joincache.go
	notExistsRuleID                                               // sql/compat/subquery.go
	collationKeysRuleID                                           // sql/compat/collation.go
	integerArithmeticRuleID                                       // sql/compat/arith.go
	floatLiteralComparisonsRuleID                                 // sql/compat/floatcmp.go
	rowComparisonsRuleID                                          // sql/compat/rows.go
	keepNullAwareNotInRuleID                                      // sql/compat/notin.go
	simplifyOuterJoinsRuleID                                      // sql/compat/outerjoin.go
	retypeUnionsRuleID                                            // sql/compat/union.go
	sortDistinctByColumnRuleID                                    // sql/compat/distinct.go
	exactAggregatesRuleID                                         // sql/compat/aggregates.go
	fkUpdateJoinsRuleID                                           // sql/foreignkey/updatejoin.go
	fkDefinitionsRuleID                                           // sql/foreignkey/definitions.go
	hashedDistinctsRuleID                                         // sql/compat/semijoin.go
	expandRowComparisonsRuleID                                    // planrules
	coprPushdownRuleID                                            // copr.go
	preferPinnedIndexRuleID                                       // planrules
	orderByIndexRuleID                                            // planrules
	minMaxByIndexRuleID                                           // planrules
	windowInputColumnsRuleID                                      // sql/compat/window.go
	indexNamesRuleID                                              // sql/compat/indexnames.go
	outerAggregatesRuleID                                         // sql/compat/outeraggs.go
	timeArgumentsRuleID                                           // compat_timefsp.go
	derivedColumnTypesRuleID                                      // sql/compat/derived.go
	timeValuesRuleID                                              // sql/compat/timevalues.go
	decorrelateRuleID                                             // decorrelate.go
	rangeFramesRuleID                                             // sql/compat/rangeframes.go
	numericBranchesAsTextRuleID                                   // sql/compat/branchtext.go
	temporalBranchesRuleID                                        // sql/compat/branchtext.go
	dateShiftsRuleID                                              // sql/compat/dateshift.go
	globalStatusRuleID                                            // compat_globalstatus.go
	knownKillRuleID                                               // sql/compat/kill.go
	foldedConstantsRuleID                                         // sql/compat/outofrange.go
	showCreateFunctionRuleID                                      // storedfunc.go
	recursiveCteTypesRuleID                                       // sql/compat/derived.go
	targetInSubqueryRuleID                                        // compat_exec.go
	padSpaceComparisonsRuleID                                     // sql/compat/padspace.go
	padSpaceLiteralsRuleID                                        // sql/compat/padspace.go
	unionSideFieldsRuleID                                         // sql/compat/unionfields.go
	ownDecimalTextRuleID                                          // sql/compat/owntext.go
	assignedVariableTypesRuleID                                   // sql/compat/assignvar.go
	unionOrderColumnsRuleID                                       // sql/compat/unionorder.go
	derivedColumnNamesRuleID                                      // sql/compat/derivednames.go
	deleteTargetRuleID                                            // joinwrites.go
	selectedColumnsRuleID                                         // sql/compat/odku.go
	fixedDecimalsRuleID                                           // sql/compat/fixeddecimals.go
	fullGroupByRuleID                                             // sql/compat/fullgroupby.go
	antiLookupRuleID                                              // antilookup.go
	antiJoinAliasesRuleID                                         // sql/compat/antijoinnames.go
	zeroDateIsNullRuleID                                          // sql/compat/zerodateisnull.go
	scalarLookupRuleID                                            // scalarlookup.go
	unnamedSubqueryItemsRuleID                                    // sql/compat/insubqueryitems.go
	pruneSubqueriesRuleID                                         // prunesubqueries.go
	nullableResultsRuleID                                         // sql/compat/createselect.go
	oneTableWriteConditionsRuleID                                 // sql/compat/strictpushdown.go
	exactLookupKeysRuleID                                         // lookupkeys.go
	dropEnforcedFiltersRuleID                                     // planrules
	settledDecimalComparisonsRuleID                               // sql/compat/decimal.go
	mixedInSubqueriesRuleID                                       // sql/compat/mixedin.go
	boundLockedReadsRuleID                                        // lockbound.go
	preferTableScanRuleID                                         // planrules
)

// newAnalyzer returns GMS's analyzer over p with percdb's rules added.
func newAnalyzer(p *DatabaseProvider) *analyzer.Analyzer {
	a := analyzer.NewBuilder(p).
		AddPostValidationRule(explainMax1RowRuleID, explainMax1Row).
		Build()
	// GMS's builder adds rules only around its batches; the join order
	// must be settled right before GMS plans the joins, and nested-loop
	// inputs cached where GMS caches its own. Without them (a GMS whose
	// rules have other names) joins are slow, not wrong:
	// TestManyTableJoin and TestNestedLoopJoinCache catch that.
	// LEFT JOINs that a condition above makes inner become inner joins
	// first, so that GMS's join planner does not lose that condition:
	// tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "optimizeJoins", false, analyzer.Rule{Id: simplifyOuterJoinsRuleID, Apply: compat.SimplifyOuterJoins})
	insertRule(a, "optimizeJoins", false, analyzer.Rule{Id: greedyJoinOrderRuleID, Apply: greedyJoinOrder})
	// GMS's join planner panics on some plans (an IN subquery inside a
	// derived table); the joins are then left as they were written.
	wrapRule(a, "optimizeJoins", unplannedOnPanic)
	// Its merge joins lose the DISTINCT of a semi join's inner-join
	// alternative (sql/compat/semijoin.go).
	wrapRule(a, "optimizeJoins", compat.NoMergeJoinsForSemiJoins)
	// A merge join on operands of two types compared GMS's way, by the
	// left column's type (DECIMAL -1.25 as BIGINT -1): the query is planned
	// without merge joins (sql/compat/mergejoin.go):
	// tests/sqllogic/testdata/wronganswers.test.
	wrapRule(a, "optimizeJoins", compat.NoLossyMergeJoins)
	// CREATE TABLE ... AS SELECT: a column that may be NULL in MySQL
	// (SUM over no rows) is made nullable, a bare NULL BINARY(0)
	// (sql/compat/createselect.go).
	wrapRule(a, "resolveCreateSelect", compat.CreateSelectTypes)
	// It can lose a condition of an inner join when it reorders them
	// (sql/compat/joinconds.go): sql/testdata/values/longruns.txt.
	wrapRule(a, "optimizeJoins", compat.KeepJoinConditions)
	// It reads a string equality of two collations through either
	// column's index, and the index compares under its own
	// (sql/compat/joincollation.go): wronganswers.test.
	wrapRule(a, "optimizeJoins", compat.JoinKeysByCollation)
	// Its OrderedDistinct is not a DISTINCT over unsorted rows
	// (sql/compat/semijoin.go).
	insertRule(a, "flattenDistinct", true, analyzer.Rule{Id: hashedDistinctsRuleID, Apply: compat.HashedDistincts})
	insertRule(a, "cacheSubqueryAliasesInJoins", true, analyzer.Rule{Id: cacheJoinInputsRuleID, Apply: cacheJoinInputs})
	// MySQL's answers where GMS's differ (compat_*.go). Without these
	// rules the answers are wrong: TestCorrelatedSubqueries catches it.
	// These rules of GMS's first batch walk the plan without entering
	// its opaque set operations, whose sides GMS analyzes from its
	// second batch on: throughSetOps gives them the sides too.
	// A TIME in arithmetic, aggregates, casts and string functions is
	// its number or its text, and moves by an INTERVAL as a TIME
	// (sql/compat/timevalues.go): tests/protocol/timevalues_test.go. Before
	// the integer and aggregate rules, which then see its number.
	// Before it, IF, CASE, COALESCE and IFNULL of temporal values are
	// typed by MySQL's aggregate (sql/compat/mergedtypes.go):
	// sql/testdata/values/mergedtypes.txt.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: temporalBranchesRuleID, Apply: throughSetOps(compat.TemporalBranches)})
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: timeValuesRuleID, Apply: throughSetOps(compat.TimeValues)})
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: integerArithmeticRuleID, Apply: throughSetOps(compat.IntegerArithmetic)})
	// An aggregate in a subquery's WHERE counts the outer query's group
	// (sql/compat/outeraggs.go): tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: outerAggregatesRuleID, Apply: throughSetOps(compat.OuterAggregates)})
	// SUM and AVG of exact numbers are exact DECIMALs, as in MySQL:
	// tests/protocol/aggregates_test.go.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: exactAggregatesRuleID, Apply: throughSetOps(compat.ExactAggregates)})
	// IF and CASE of a string and a number give the number as text
	// (sql/compat/branchtext.go): tests/sqllogic/testdata/functions.test.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: numericBranchesAsTextRuleID, Apply: throughSetOps(compat.NumericBranchesAsText)})
	// A TIME(n) column is an argument of functions as GMS's TIME
	// (compat_timefsp.go): tests/protocol/fsp_test.go.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: timeArgumentsRuleID, Apply: throughSetOps(compat.TimeArguments)})
	// SHOW GLOBAL STATUS shows percdb's counters (compat_globalstatus.go):
	// TestGlobalStatus.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: globalStatusRuleID, Apply: globalStatusRule})
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: knownKillRuleID, Apply: compat.KnownKill})
	// ONLY_FULL_GROUP_BY as MySQL 8's, functional dependencies included,
	// in place of GMS's check (sql/compat/fullgroupby.go):
	// sql/testdata/values/modes.txt. On the plan as built, before any
	// rule of GMS's reshapes it.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: fullGroupByRuleID, Apply: compat.FullGroupBy})
	wrapRule(a, "validateGroupBy", compat.NoGroupByValidation)
	// SHOW CREATE FUNCTION has MySQL's column names (storedfunc.go):
	// TestShowCreateFunction.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: showCreateFunctionRuleID, Apply: showCreateFunctionRule})
	insertRule(a, "unnestExistsSubqueries", false, analyzer.Rule{Id: notExistsRuleID, Apply: compat.NotExistsNullAsFalse})
	insertRule(a, "trackProcess", false, analyzer.Rule{Id: collationKeysRuleID, Apply: compat.CollationKeys})
	// Strings under PAD SPACE collations compare, group and join without
	// their trailing spaces, literals compared with them lose theirs
	// before GMS builds index ranges, and LIKE is not made = for them
	// (sql/compat/padspace.go): sql/testdata/values/padspace.txt.
	insertRule(a, "trackProcess", false, analyzer.Rule{Id: padSpaceComparisonsRuleID, Apply: compat.PadSpaceComparisons})
	insertRule(a, "simplifyFilters", false, analyzer.Rule{Id: padSpaceLiteralsRuleID, Apply: compat.PadSpaceLiterals})
	// A FLOAT column against a decimal literal compares as doubles, as in
	// MySQL, not as DECIMALs: tests/sqllogic/testdata/floatcmp.test.
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: floatLiteralComparisonsRuleID, Apply: throughSetOps(compat.FloatLiteralComparisons)})
	// Row comparisons with NULLs, NOT IN with NULLs, UNION column types:
	// sql/compat/rows.go, sql/compat/notin.go, sql/compat/union.go and
	// tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "simplifyFilters", false, analyzer.Rule{Id: rowComparisonsRuleID, Apply: compat.RowComparisons})
	// A NOT NULL DATE or DATETIME column IS NULL in a WHERE finds its
	// zero dates, as MySQL's optimizer makes it (sql/compat/zerodateisnull.go):
	// tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "simplifyFilters", false, analyzer.Rule{Id: zeroDateIsNullRuleID, Apply: throughSetOps(compat.ZeroDateIsNull)})
	// Constants GMS folds there (a string read as a number) are held to
	// their column's range, and compared with a DECIMAL as DOUBLEs, again
	// (sql/compat/outofrange.go): sql/testdata/values/strnum.txt.
	insertRule(a, "simplifyFilters", true, analyzer.Rule{Id: foldedConstantsRuleID, Apply: compat.FoldedConstantComparisons})
	insertRule(a, "unnestInSubqueries", false, analyzer.Rule{Id: keepNullAwareNotInRuleID, Apply: compat.KeepNullAwareNotIn})
	// An UPDATE's or DELETE's condition on one table with a subquery
	// (uncorrelated, or correlated with that table) is evaluated on that
	// table's rows, below the join, with the table's other conditions in
	// their order, as MySQL's (sql/compat/strictpushdown.go):
	// sql/testdata/values/strictdml.txt, dml6.txt.
	insertRule(a, "unnestInSubqueries", false, analyzer.Rule{Id: oneTableWriteConditionsRuleID, Apply: compat.OneTableWriteConditions})
	// An IN subquery's select item GMS left without an alias (s0.c COLLATE
	// utf8mb4_bin) is not unnested into a join that reads it by the
	// table's index (sql/compat/insubqueryitems.go):
	// sql/testdata/values/longruns2.txt.
	insertRule(a, "unnestInSubqueries", false, analyzer.Rule{Id: unnamedSubqueryItemsRuleID, Apply: compat.UnnamedSubqueryItems})
	// Set operations are typed again once their sides' types are final
	// (sql/compat/union.go): tests/sqllogic/testdata/wronganswers.test.
	// A DECIMAL CASE, IF, GREATEST or LEAST in a set operation's string
	// column is its chosen argument's own text (sql/compat/owntext.go):
	// sql/testdata/values/difftest9.txt. Inserted first, it runs after
	// RetypeUnions, once the sides' and the columns' types are final.
	insertRule(a, "finalizeUnions", true, analyzer.Rule{Id: ownDecimalTextRuleID, Apply: compat.OwnDecimalText})
	// A user variable assigned in the statement (@x := 7) and read
	// there before it had a value is a LONGBLOB, as in MySQL, not GMS's
	// NULL type (sql/compat/assignvar.go; TestValues/assignvar).
	insertRule(a, "applyDefaultSelectLimit", false, analyzer.Rule{Id: assignedVariableTypesRuleID, Apply: inEveryScope(compat.AssignedVariableTypes)})
	insertRule(a, "finalizeUnions", true, analyzer.Rule{Id: retypeUnionsRuleID, Apply: compat.RetypeUnions})
	// References to a derived table's columns take their final types
	// (sql/compat/derived.go): tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "finalizeSubqueries", true, analyzer.Rule{Id: derivedColumnTypesRuleID, Apply: compat.DerivedColumnTypes})
	// A comparison of a DECIMAL that was typed DOUBLE when the rule
	// above rewrote it (a scalar subquery or a derived table's column of
	// SUM or AVG) with a constant is made exact again once subqueries and
	// derived tables have their types (sql/compat/decimal.go):
	// TestValues/longruns8. Before applyIndexesFromOuterScope, so after
	// derivedColumnTypes and the rules inserted after finalizeSubqueries.
	insertRule(a, "applyIndexesFromOuterScope", false, analyzer.Rule{Id: settledDecimalComparisonsRuleID, Apply: compat.SettledDecimalComparisons})
	// x IN (SELECT c …) of a string and a number compares them as
	// DOUBLEs, once the subquery's type is known (sql/compat/mixedin.go):
	// TestValues/longruns8.
	insertRule(a, "applyIndexesFromOuterScope", false, analyzer.Rule{Id: mixedInSubqueriesRuleID, Apply: compat.MixedInSubqueries})
	// An UPDATE or DELETE whose subquery reads a table it changes is
	// 1093 before GMS folds the subquery away or plans the update join
	// (compat_exec.go):
	// tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "validateDeleteFrom", false, analyzer.Rule{Id: targetInSubqueryRuleID, Apply: targetInSubqueryRule})
	// A DELETE of one table names its table before its subqueries
	// become joins (joinwrites.go): tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "validateDeleteFrom", false, analyzer.Rule{Id: deleteTargetRuleID, Apply: deleteTargetRule})
	// A recursive CTE's temporal columns take the anchor's types, before
	// the rule above gives its readers those types (sql/compat/derived.go):
	// tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "finalizeSubqueries", true, analyzer.Rule{Id: recursiveCteTypesRuleID, Apply: compat.RecursiveCteTypes})
	insertRule(a, "resolveUnions", false, analyzer.Rule{Id: sortDistinctByColumnRuleID, Apply: compat.SortDistinctByColumn})
	insertRule(a, "resolveUnions", false, analyzer.Rule{Id: unionOrderColumnsRuleID, Apply: inEveryScope(compat.UnionOrderColumns)})
	insertRule(a, "resolveUnions", false, analyzer.Rule{Id: derivedColumnNamesRuleID, Apply: compat.DerivedColumnNames})
	// An UPDATE of joined tables changes a table without a primary key
	// by its rows' hidden row IDs, where GMS refuses it with 1235
	// (keylessjoin.go): tests/sqllogic/testdata/wronganswers.test.
	wrapRule(a, "modifyUpdateExprsForJoin", keylessUpdateJoins)
	// UPDATE ... JOIN enforces foreign keys (sql/foreignkey); without
	// this rule it does not: TestForeignKeyUpdateJoin.
	if apply := ruleApply(a, "applyForeignKeys"); apply != nil {
		insertRule(a, "applyForeignKeys", true, analyzer.Rule{Id: fkUpdateJoinsRuleID, Apply: foreignkey.InUpdateJoins(apply)})
	}
	// MySQL's errors for foreign keys that cannot be made
	// (sql/foreignkey): TestForeignKeyDefinitionErrors.
	insertRule(a, "applyForeignKeys", false, analyzer.Rule{Id: fkDefinitionsRuleID, Apply: foreignkey.CheckDefinitions})
	insertRule(a, "validateAlterTable", true, analyzer.Rule{Id: indexNamesRuleID, Apply: compat.NameGeneratedIndexes})
	// Row constructors on a key, (a, b) IN ((1, 2), (3, 4)), reach
	// GMS's range builder column by column (sql/planrules); without
	// these rules they are full scans: TestExplainSargable catches it.
	insertRule(a, "pushFilters", false, analyzer.Rule{Id: expandRowComparisonsRuleID, Apply: planrules.ExpandRule})
	// Tables below a node with a subquery read only the columns the
	// statement reads, as GMS's pruneTables gives the others
	// (prunesubqueries.go): TestPruneSubqueriesDifferential. After GMS
	// has unnested the IN and EXISTS subqueries it can (pruned before,
	// an IN subquery's outer table lost its lookup join), before the
	// tables become index reads.
	insertRule(a, "pushFilters", false, analyzer.Rule{Id: pruneSubqueriesRuleID, Apply: pruneUnderSubqueries})
	// Its pushFilters loses the conditions of a Filter on a table under
	// another Filter; such stacks become one Filter first
	// (sql/compat/nestedfilters.go): TestValues/nestedfilters.
	wrapRule(a, "pushFilters", compat.MergedNestedFilters)
	// Without statistics GMS reads by a unique index the WHERE clause
	// does not pin rather than by one it pins more of, and sorts rows an
	// index read already gives in order when pinned columns lead the
	// index, and answers MIN and MAX from a whole read where one row of it
	// would do (sql/planrules): TestExplainIndexChoice,
	// TestExplainOrderByIndex, TestMinMaxByIndex.
	// GMS reads any index its WHERE clause bounds, however many of the
	// table's rows the range holds, each row by a point read; a range
	// that the statistics estimate to hold more than a twentieth of
	// them is read by a scan of the table (planrules/tablescan.go):
	// TestPreferTableScan. Inserted before PreferPinnedIndex, so it runs
	// after it, on the index that rule settled on.
	insertRule(a, "optimizeJoins", true, analyzer.Rule{Id: preferTableScanRuleID, Apply: planrules.PreferTableScanRule})
	insertRule(a, "optimizeJoins", true, analyzer.Rule{Id: preferPinnedIndexRuleID, Apply: planrules.PreferPinnedIndexRule})
	// A NOT EXISTS correlated on nullable columns is an anti lookup join,
	// not a nested loop over the whole inner table per outer row
	// (antilookup.go): TestAntiLookupDifferential.
	insertRule(a, "optimizeJoins", true, analyzer.Rule{Id: antiLookupRuleID, Apply: antiLookupJoins})
	// A NOT EXISTS planned as a left join keeps the aliases of the
	// tables it projects, by which a DELETE of joined tables finds its
	// targets (sql/compat/antijoinnames.go):
	// tests/sqllogic/testdata/wronganswers.test.
	insertRule(a, "optimizeJoins", true, analyzer.Rule{Id: antiJoinAliasesRuleID, Apply: compat.AntiJoinAliases})
	insertRule(a, "replaceIdxSort", true, analyzer.Rule{Id: minMaxByIndexRuleID, Apply: planrules.MinMaxByIndexRule})
	// GMS's replaceAgg answers MIN or MAX of a primary key's first
	// column by the first row of a sorted read without the aggregate,
	// so that an empty table (or range) gave no row where MySQL gives
	// one NULL (SELECT MAX(id) FROM t); MinMaxByIndex, which keeps the
	// aggregate over its one-row read, answers that shape too:
	// TestValues/minmaxempty, TestFastPathEndsDifferential.
	removeRule(a, "replaceAgg")
	insertRule(a, "replaceIdxSort", true, analyzer.Rule{Id: orderByIndexRuleID, Apply: planrules.OrderByIndexRule})
	// A filter's conjuncts that a static index read's ranges enforce
	// exactly (inclusive integer bounds on integer columns after pinned
	// ones) are not evaluated again on each row it returns
	// (planrules/enforced.go): TestDropEnforcedFilters. Once the reads
	// and their orders are final (the rules above read the filters),
	// before execution indexes are assigned. A plan cache template keeps
	// its whole filter, from which each execution's ranges are derived
	// again; runBound drops from each execution's plan what its ranges
	// enforce (plancache_exec.go).
	insertRule(a, "assignExecIndexes", false, analyzer.Rule{Id: dropEnforcedFiltersRuleID, Apply: skipInPlanTemplate(planrules.DropEnforcedFiltersRule)})
	// A SELECT ... FOR UPDATE's table read right under a LIMIT locks
	// the rows the LIMIT takes, not a page ahead (lockbound.go): once
	// the filters the reads enforce are gone (a filter left above the
	// read leaves it unbounded). runBound bounds each execution's plan
	// of a cached template: TestPessimisticLockLimit.
	insertRule(a, "assignExecIndexes", false, analyzer.Rule{Id: boundLockedReadsRuleID, Apply: skipInPlanTemplate(boundLockedReadsRule)})
	// A union side's conversion reads the side's columns by position
	// again where GMS found two select items of one name as one column
	// (sql/compat/unionfields.go): tests/sqllogic/testdata/wronganswers.test.
	// Inserted first of the rules after assignExecIndexes, so it runs last.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: unionSideFieldsRuleID, Apply: inEveryScope(compat.UnionSideFields)})
	// A lookup's key that no row of its integer column can equal (out of
	// the column's range, or with a fraction) reads nothing, where GMS's
	// conversion clamped or rounded it (lookupkeys.go):
	// TestBatchedLookupJoinDifferential's tp queries, TestValues/lookupkeys.
	// Inserted next: it runs after the rules that make lookups.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: exactLookupKeysRuleID, Apply: exactLookupKeys})
	// Filters, aggregates, top-N and limits over full scans run next to
	// the data (copr.go), once the plan is final: TestCoprDifferential.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: coprPushdownRuleID, Apply: coprPushdownRule(ruleIDNamed(a, "assignExecIndexes"))})
	// A correlated scalar aggregate whose correlation is a filter over
	// its join runs once, grouped, instead of once per outer row
	// (decorrelate.go): TestGroupedSubqueryDifferential.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: decorrelateRuleID, Apply: decorrelateScalarSubqueries(&p.groupedRuns)})
	// A correlated scalar subquery that reads one row by the primary key
	// is a left lookup join, read in batches (scalarlookup.go):
	// TestScalarLookupDifferential.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: scalarLookupRuleID, Apply: scalarLookupJoins})
	// A window over rows of no columns partitions them one by one
	// (sql/compat/window.go): tests/sqllogic/testdata/functions.test.
	insertRule(a, "assignExecIndexes", false, analyzer.Rule{Id: windowInputColumnsRuleID, Apply: compat.WindowInputColumns})
	// RANGE frames and the default frame of a window with an ORDER BY
	// take in the current row's peers (sql/compat/rangeframes.go):
	// tests/sqllogic/testdata/window.test. Once columns are found by
	// their indexes: the frame changes the window function's text, by
	// which GMS finds the second of two equal window functions.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: rangeFramesRuleID, Apply: compat.RangeFrames})
	// Months that reach a December past the next year, and intervals
	// longer than a time.Duration, move dates as MySQL moves them
	// (sql/compat/dateshift.go): tests/sqllogic/testdata/datearith.test.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: dateShiftsRuleID, Apply: compat.DateShifts})
	// INSERT … SELECT … ON DUPLICATE KEY UPDATE c = o.x reads the
	// SELECT's columns (sql/compat/odku.go): after GMS fixed the
	// assignments' indexes, before resolveInsertRows analyzes the SELECT
	// (sql/testdata/values/odku.txt).
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: selectedColumnsRuleID, Apply: compat.SelectedColumns})
	// DOUBLE results of fixed decimals (PI(), f + 0 of a FLOAT(M,D),
	// ROUND(x, 2)) written with them, in the result and in CAST AS CHAR,
	// CONCAT and GROUP_CONCAT (sql/compat/fixeddecimals.go), once columns
	// are found by their indexes and before the coprocessor pushdown
	// wraps the tables: sql/testdata/values/fixeddecimals.txt.
	insertRule(a, "assignExecIndexes", true, analyzer.Rule{Id: fixedDecimalsRuleID, Apply: compat.FixedDecimals(scaleDecimals, ruleIDNamed(a, "assignExecIndexes"))})
	// The plan cache's templates leave out the process list's progress
	// tracking, whose callbacks would report to the first execution's
	// process (plancache.go).
	// A column of an aggregate that may be NULL (MAX(a), and expressions
	// over one) is nullable in the result's schema, which the wire's
	// column definitions and CREATE TABLE … AS SELECT read
	// (sql/compat/createselect.go): tests/protocol's TestResultNullability.
	insertRule(a, "trackProcess", false, analyzer.Rule{Id: nullableResultsRuleID, Apply: compat.NullableResults})
	wrapRule(a, "trackProcess", skipInPlanTemplate)
	// Lookup joins costed by their lookups, not by a scan of their inner
	// table (joincost.go): TestExplainLookupJoinCost.
	a.Coster = joinCoster{Coster: a.Coster}
	a.ExecBuilder = newExecBuilder(a)
	a.Catalog.StatsProvider = newTableStats(p)
	return a
}

// throughSetOps makes a rule of percdb's that walks the plan with
// transform.Node also rewrite the sides of set operations, which that
// walk does not enter (GMS's SetOp is opaque) and which GMS's own
// analysis of each side starts after the batch these rules run in: in a
// UNION side, DATE + 0 was 19991231000000 (percdb's integer arithmetic
// did not apply). GMS analyzes the derived tables and subqueries of a
// side from that batch on too (its finalizeUnions selector skips the
// first pass that would run these rules), so they are rewritten as
// well, at any depth: AVG of integers in a scalar subquery of a UNION
// side was a DOUBLE. Elsewhere derived tables and subqueries are
// analyzed whole on their own, these rules included. A side's new types
// reach the union through compat.RetypeUnions.
func throughSetOps(rule analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		out, same, err := rule(ctx, a, n, scope, sel, qFlags)
		if err != nil {
			return n, transform.SameTree, err
		}
		deep := func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
			return ruleInScopes(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
				return rule(ctx, a, n, scope, sel, qFlags)
			})
		}
		out, sides, err := transform.Node(out, func(c gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
			if so, ok := c.(*plan.SetOp); ok {
				return withSetOpSides(so, deep)
			}
			return c, transform.SameTree, nil
		})
		if err != nil {
			return n, transform.SameTree, err
		}
		return out, same && sides, nil
	}
}

// ruleInScopes applies rule to n and to every scope inside it: the sides
// of its set operations, its derived tables and its subqueries, at any
// depth.
func ruleInScopes(n gsql.Node, rule func(gsql.Node) (gsql.Node, transform.TreeIdentity, error)) (gsql.Node, transform.TreeIdentity, error) {
	out, same, err := rule(n)
	if err != nil {
		return n, transform.SameTree, err
	}
	deep := func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) { return ruleInScopes(n, rule) }
	out, nested, err := transform.Node(out, func(c gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		switch c := c.(type) {
		case *plan.SetOp:
			return withSetOpSides(c, deep)
		case *plan.SubqueryAlias:
			child, same, err := deep(c.Child)
			if err != nil || same {
				return c, transform.SameTree, err
			}
			ret, err := c.WithChildren(child)
			return ret, transform.NewTree, err
		}
		return c, transform.SameTree, nil
	})
	if err != nil {
		return n, transform.SameTree, err
	}
	out, subs, err := transform.NodeExprs(out, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		sq, ok := e.(*plan.Subquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		q, same, err := deep(sq.Query)
		if err != nil || same {
			return e, transform.SameTree, err
		}
		return sq.WithQuery(q), transform.NewTree, nil
	})
	if err != nil {
		return n, transform.SameTree, err
	}
	return out, same && nested && subs, nil
}

// inEveryScope makes a rule that walks the plan with transform.Node
// apply in every scope: the sides of set operations, derived tables and
// subqueries, at any depth (ruleInScopes).
func inEveryScope(rule analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		return ruleInScopes(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
			return rule(ctx, a, n, scope, sel, qFlags)
		})
	}
}

// withSetOpSides returns so with f applied to its sides.
func withSetOpSides(so *plan.SetOp, f func(gsql.Node) (gsql.Node, transform.TreeIdentity, error)) (gsql.Node, transform.TreeIdentity, error) {
	l, sl, err := f(so.Left())
	if err != nil {
		return so, transform.SameTree, err
	}
	r, sr, err := f(so.Right())
	if err != nil {
		return so, transform.SameTree, err
	}
	if sl && sr {
		return so, transform.SameTree, nil
	}
	ret, err := so.WithChildren(l, r)
	return ret, transform.NewTree, err
}

// wrapRule replaces the Apply of the GMS rule named at with wrap(Apply),
// and reports whether that rule was found.
func wrapRule(a *analyzer.Analyzer, at string, wrap func(analyzer.RuleFunc) analyzer.RuleFunc) bool {
	for _, b := range a.Batches {
		for i, r := range b.Rules {
			if r.Id.String() == at {
				b.Rules[i].Apply = wrap(r.Apply)
				return true
			}
		}
	}
	return false
}

// unplannedOnPanic makes a planning rule that panics leave the plan as it
// was, which is still a plan GMS can run (as when its join planner meets
// a join it does not reorder), only not an optimized one: GMS v0.20.0's
// convertSemiToInnerJoin indexes a pruned table's schema by the column
// IDs of the whole table and panics on an IN subquery inside a derived
// table. The panic is logged, once, with its stack.
func unplannedOnPanic(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (ret gsql.Node, same transform.TreeIdentity, err error) {
		defer func() {
			if r := recover(); r != nil {
				logrus.WithField("query", ctx.Query()).Warnf("join planning panicked, joins left unplanned: %v\n%s", r, debug.Stack())
				ret, same, err = n, transform.SameTree, nil
			}
		}()
		ret, same, err = apply(ctx, a, n, scope, sel, qFlags)
		if err != nil && strings.Contains(err.Error(), "failed to replan join") {
			// The planner's own failure (two semi joins over tables
			// of one alias: "unknown type for rel output cols"), not
			// the query's: the joins are left as written.
			logrus.WithField("query", ctx.Query()).Warnf("join planning failed, joins left unplanned: %v", err)
			return n, transform.SameTree, nil
		}
		return ret, same, err
	}
}

// explainMax1Row works around a GMS defect: the analyzer marks a query
// that returns at most one row (an aggregate without GROUP BY, a primary
// key point lookup) so that the handler reads exactly one row, and keeps
// the mark when the query is only EXPLAINed, whose answer has one row per
// line of the plan: the handler then fails with "result max1Row iterator
// returned more than one row". The analyzer sees only the query under
// EXPLAIN, not the EXPLAIN itself, so the rule looks at the statement text.
//
// GMS also marks a UNION (INTERSECT, EXCEPT) one of whose sides is a
// point lookup or an aggregate without GROUP BY: the mark is the
// query's, and the handler failed the same way on the union's second
// row. The rule clears it for a plan with a set operation too.
func explainMax1Row(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && qFlags.IsSet(gsql.QFlagMax1Row) && (isExplain(ctx.Query()) || hasSetOp(n)) {
		qFlags.Unset(gsql.QFlagMax1Row)
	}
	return n, transform.SameTree, nil
}

// hasSetOp reports whether n has a UNION, INTERSECT or EXCEPT.
func hasSetOp(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		_, found = n.(*plan.SetOp)
		return !found
	})
	return found
}

// isExplain reports whether query is EXPLAIN, DESCRIBE or DESC of a query.
func isExplain(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	for _, w := range []string{"explain", "describe", "desc"} {
		if len(q) > len(w) && strings.EqualFold(q[:len(w)], w) && !lexical.IsWordByte(q[len(w)]) {
			return true
		}
	}
	return false
}

// ruleApply returns the Apply of a's rule named name, or nil.
func ruleApply(a *analyzer.Analyzer, name string) analyzer.RuleFunc {
	for _, b := range a.Batches {
		for _, r := range b.Rules {
			if r.Id.String() == name {
				return r.Apply
			}
		}
	}
	return nil
}
