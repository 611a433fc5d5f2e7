// Package storedproc runs the bodies of stored procedures as MySQL does:
// percdb's interpreter, in place of go-mysql-server v0.20.0's
// (procedures.Call), which has no handlers for an error number, an
// SQLSTATE, a named condition or SQLWARNING, runs a handler's statement
// wrongly unless it is a SET of one variable or a SIGNAL (and for one that
// gives rows starts the body over, forever), has no RESIGNAL, no GET
// DIAGNOSTICS, no DO, and keeps a cursor's iterator open across the
// statements' own commits.
//
// The interpreter walks the body's syntax tree (vitess's, as GMS parses
// it) statement by statement. Variables and parameters live in scopes, one
// per BEGIN ... END block; a statement of the body that is not a control
// statement is run by GMS's engine (a Runner) with each reference to a
// variable replaced by its value (the ColName's StoredProcVal, which GMS's
// planner reads as a literal). An error of a statement is looked up among
// the handlers of the enclosing blocks, innermost block first and, within
// a block, the most specific handler first (an error number, then an
// SQLSTATE, then SQLEXCEPTION, SQLWARNING or NOT FOUND), as MySQL does; a
// handler's own statement runs with its block's handlers inactive. A
// cursor reads its rows when it is opened (MySQL materialises them too).
//
// GET DIAGNOSTICS and DO are not in vitess's grammar: Rewrite replaces
// each in a CREATE PROCEDURE's text by a SELECT of a marker literal that
// carries the statement's text, which the interpreter recognises, and
// Restore turns the marked text back into what the user wrote (for the
// catalog and SHOW CREATE PROCEDURE).
//
// Stored functions (function.go) are run by the same interpreter: a
// RETURN ends the body with its value. CREATE, DROP and SHOW CREATE
// FUNCTION, which vitess's grammar lacks, are rewritten as GMS's
// statements of a procedure whose name carries FunctionPrefix.
//
// The package knows nothing of percdb's sessions or catalog: the caller
// (package sql) gives it the statement runner, the procedures' texts, the
// mapping of errors to MySQL's, and where result sets go (Env).
package storedproc
