// Package observeraction is the built-in actions of Percolator
// observers, the SQL after DO in ADMIN WATCH ... FOR OBSERVER name DO
// ...: their text, parsed and checked (Parse: one INSERT, REPLACE, UPDATE
// or DELETE, or a BEGIN ... END block of them, whose NEW.column
// references become bind variables, NewBind), and the node's Runner,
// which keeps a Runner of package observe with one observer per name
// whose watches carry an action, in step with the latest catalog.
//
// What a run does is the Host's (package sql's observeractions.go: a
// transaction of the SQL layer, each statement run through GMS in a
// session of the watch's owner with NEW bound to the notified row), as
// is recording a watch in the catalog (observers.go); package observe
// is the notification and acknowledgement machinery below both.
package observeraction
