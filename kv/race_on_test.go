//go:build race

package kv

// raceEnabled: the race detector slows the long randomized tests about
// tenfold, so they run fewer steps under it.
const raceEnabled = true
