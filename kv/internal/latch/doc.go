// Package latch serializes the store's commands per key. A command that
// reads a key's lock and write records, decides, and writes them back must
// not interleave with another command doing the same to that key; Percolator
// gets this from Bigtable's single-row transactions, the store gets it from
// a latch held across read-check-write-apply.
//
// The table is a fixed array of slots; a key takes the slot its hash picks,
// so two keys may share a slot (harmless, only less concurrency). A command
// takes all its slots in ascending slot order, which rules out deadlock
// between commands that share several slots. Waiting honours ctx.
package latch
