// Package slowlog is MySQL's slow query log of a node: the entry of a
// statement that took at least its session's long_query_time in the
// layout mysqldumpslow and pt-query-digest read (Entry; slowlog.go says
// the layout line by line), the file it is appended to (Log, which
// follows slow_query_log_file and a rotation of the file), and the
// global variables that turn it on and name the file (Start, Enabled).
//
// What a statement's entry holds is package sql's to gather: its
// outermost protocol handler (observe.go) times every statement, and
// writes one that was slow, with its rows, its transaction's timestamps
// and its error, here; the node's console keeps the latest of them too.
package slowlog
