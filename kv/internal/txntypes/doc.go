// Package txntypes defines the two records of the Percolator protocol as the
// store keeps them: a Lock, in the lock space, says a transaction has
// prewritten a key and not yet committed or rolled it back; a Write, in the
// write space at the commit timestamp, says what a transaction did to the
// key (Put, Delete, Lock) or that it was rolled back (Rollback). A pessimistic
// transaction also keeps Locks of type Pessimistic, with no value, on the keys
// it has locked before its prewrite.
//
// A value of at most ShortValueMaxLen bytes rides in the Lock and moves into
// the Write at commit, so a read finds it with the one seek that finds the
// Write; a longer value is kept in the data space under the transaction's
// start timestamp.
//
// Both records are encoded compactly: a type byte, the mandatory fields as
// varints, then optional fields each tagged and length-prefixed, so a field
// can be added later without breaking the records already on disk (an older
// decoder skips tags it does not know). Decoders check every length and
// never panic on corrupt input (see the fuzz targets).
package txntypes
