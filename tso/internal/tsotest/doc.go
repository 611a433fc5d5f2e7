// Package tsotest drives the tests and benchmarks that package tso and its
// gRPC service share: many concurrent callers asking for timestamps, the
// checks every set of issued timestamps must pass, and the figures.
package tsotest
