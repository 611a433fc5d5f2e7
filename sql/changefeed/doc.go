// Package changefeed is CHANGEFEED FOR [db.]table: the statement's
// syntax (Parse) and an open feed (Feed), which reads the changes
// committed to a table in an interval of timestamps
// (txn.Store.ScanChanges) and turns them into the feed's rows, in
// commit_ts order, with the resolved rows that promise no earlier change
// follows. changefeed.go says what a feed sends and how a client resumes
// it.
//
// Package sql runs the statement (changefeed_exec.go): it checks the
// privileges, finds the table in the catalog, keeps the service safe
// point that holds GC back at the feed's position, and sends the rows as
// one result set that does not end, polling every Poll.
package changefeed
