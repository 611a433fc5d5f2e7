// Package testdisk gives tests of a full disk their file systems: a
// small tmpfs mounted for the test (skipped where the test cannot mount,
// without root), a file that fills it to a given free space, and a
// deadline that turns a hung server or store into a failure with every
// goroutine's stack instead of a hung test binary.
package testdisk
