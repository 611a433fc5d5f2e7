//go:build !race

package kv

// raceEnabled: see race_on_test.go.
const raceEnabled = false
