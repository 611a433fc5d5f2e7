//go:build invariants || race

package kv

// pebbleInvariants says whether Pebble was built with its invariant
// checks (build tags invariants or race, as Pebble's internal/invariants
// decides): they panic on some inconsistencies a test may build on
// purpose.
const pebbleInvariants = true
