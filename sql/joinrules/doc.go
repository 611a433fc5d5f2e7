// Package joinrules is percdb's analyzer rules over joins, which
// go-mysql-server v0.20.0 plans badly for many tables:
//
//   - GreedyJoinOrder (joinorder.go) hands GMS's join planner a better
//     order for a join of three or more tables, MySQL's greedy search:
//     the most selective table first, then tables reached through an
//     equality on a unique key, on an indexed column, then through any
//     predicate, cross joins last.
//   - CacheJoinInputs (joincache.go) wraps the right input of a nested-loop
//     join that does not depend on the outer row in GMS's CachedResults,
//     so that a join subtree is read once per query rather than once per
//     outer row.
//
// The rules see GMS's plan only (its nodes, expressions and table
// indexes); they depend on GMS alone. Package sql's newAnalyzer puts
// them among GMS's rules (analyzer.go, analyzerrules.go).
package joinrules
