// Package observeraction parses and checks the built-in actions of
// Percolator observers, the SQL after DO in ADMIN WATCH ... FOR OBSERVER
// name DO ...: one INSERT, REPLACE, UPDATE or DELETE, or a BEGIN ... END
// block of them, whose NEW.column references become bind variables
// (NewBind) that the runner binds to the notified row's values.
//
// It knows the text only. Running actions is package sql's
// (observeractions.go: a Runner of package observe whose runs are
// transactions of the SQL layer, each statement run through GMS in a
// session of the watch's owner), as is recording a watch in the catalog
// (observers.go); package observe is the notification and
// acknowledgement machinery below both.
package observeraction
