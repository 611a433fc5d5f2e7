// Package keyspace lays the Percolator columns and the store's own metadata
// out in one ordered Pebble key space. Pebble has no column families, so
// each column is a key space told apart by its first byte; inside a space,
// user keys are memcomparable-encoded so that a timestamp can follow them
// without breaking key order. The whole layout is in keyspace.go.
package keyspace
