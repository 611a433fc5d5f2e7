// Package changefeed is CHANGEFEED FOR [db.]table: the statement's
// syntax (Parse) and an open feed (Feed), which every Poll reads the
// changes committed to a table since its last scan
// (txn.Store.ScanChanges) and sends them as the feed's rows, in commit_ts
// order, with the resolved rows that promise no earlier change follows
// (Feed.Run). changefeed.go says what a feed sends and how a client
// resumes it.
//
// Package sql runs the statement (changefeed_exec.go): it checks the
// privileges, finds the table in the catalog, sets the service safe
// point that holds GC back at the feed's position (Run renews it through
// a function sql gives it), sends the rows to the client as one result
// set that does not end, and turns errors into MySQL's.
package changefeed
