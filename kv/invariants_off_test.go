//go:build !invariants && !race

package kv

// pebbleInvariants: see invariants_on_test.go.
const pebbleInvariants = false
