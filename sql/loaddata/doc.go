// Package loaddata reads LOAD DATA [LOCAL] INFILE's file as MySQL does,
// in place of go-mysql-server v0.20.0's reader: FIELDS TERMINATED,
// [OPTIONALLY] ENCLOSED and ESCAPED BY, LINES STARTING and TERMINATED BY,
// IGNORE n LINES, a column list with user variables, SET, and the
// defaults of the columns a short line leaves out. Build returns the row
// iterator of GMS's LoadData node, whose rows GMS's INSERT writes as
// before (duplicates, IGNORE, REPLACE, checks, triggers and the session's
// transaction are the INSERT's); SetLocalInfile sets the global variable
// that allows LOCAL.
//
// It depends on GMS and vitess only. What it needs of the node, showing
// the rows read in the process list, is given to Build by package sql
// (loaddata_exec.go), which builds the iterator in its row-iterator
// builder and sets local_infile at start.
package loaddata
