// Package plancache is the plan cache of prepared statements that run
// through GMS: a session's cache of analysed plans by statement text
// (Cache, Stmt), the test of whether an analysed plan is a template that
// new parameter values can be put into without changing what it means
// (NewPlan), and the substitution of an execution's values into a cached
// plan, deriving its index reads' ranges from their filters again
// (Plan.Bind, RebuildLookup). plancache.go says which plans qualify and
// why.
//
// It knows GMS's plans and expressions only. Package sql owns the rest:
// the analysis of a statement's first execution in the session, what a
// plan is used under (the catalog, the database, the session's epoch of
// variables), the node's counters, and running a plan through GMS's
// handler (sql/plancache_exec.go, sql/boundexec.go). The expressions of
// package sql's own making that keep an execution's rows are named to
// NewPlan by a function, so that this package imports nothing of sql.
package plancache
