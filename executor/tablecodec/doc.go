// Package tablecodec is the one place where percdb's rows and indexes become
// keys and values of the transactional key-value store. Every layer that
// reads or writes table data (the KV operators in package executor, the
// go-mysql-server backend, the fast path) goes through it; nothing else
// knows the byte layout. The model is TiDB's pkg/tablecodec and
// pkg/util/codec.
//
// # Datum key encoding (EncodeKey, DecodeKey, SkipKey)
//
// Values that are part of keys are encoded so that comparing the bytes
// compares the values, and so that no encoding is a prefix of another
// (a tuple of values is their concatenation and sorts like the tuple). Each
// value is a flag byte and a payload:
//
//	0x00 NULL       no payload; sorts before every value
//	0x01 bytes      groups of 8 bytes, the last zero-padded, each followed by
//	                a marker 0xFF - (padding bytes); strings, []byte and
//	                collation sort keys
//	0x03 int        8 bytes big-endian, sign bit flipped
//	0x04 uint       8 bytes big-endian
//	0x05 float      8 bytes big-endian: bits|sign for x >= 0, ^bits for x < 0
//	0x06 decimal    0x02 for zero; else sign 0x03 (+) / 0x01 (-), the decimal
//	                exponent e of 0.d1d2..dn x 10^e as an int (inverted when
//	                negative), the digits in pairs as bytes 1..100 and a 0x00
//	                terminator (all inverted when negative)
//	0x07 duration   types.Timespan microseconds, as int
//	0x08 time       Unix seconds as int, then nanoseconds as 4 bytes big-endian
//
// Strings under a case-insensitive collation are passed in as their sort
// key, computed by the SQL layer, so an index key cannot be decoded back
// into column values: rows keep the originals. Decoding is exact for ints,
// uints, floats and bytes, which is what handles need.
//
// # Keys
//
//	row key     't' int(tableID) '_' 'r' handle
//	index key   't' int(tableID) '_' 'i' int(indexID) datum... [handle]
//	ack key     't' int(tableID) '_' 'a' bytes(observer) handle
//
// An ack key holds an observer's acknowledgement of a row (package
// observe): the start_ts of its last committed run for the row, the
// handle in its row-key form. bytes(x) is EncodeBytes, without a flag.
// Acks live under the table prefix so that dropping the table drops them.
//
// where int(x) is the 8-byte int encoding without a flag. A handle is an
// int handle (8 bytes, no flag, in a row key) or a common handle: the datum
// encoding of a clustered primary key's values. A non-unique index appends
// the handle to the key (an int handle as an int datum, flag included, so
// that it is self-delimiting) and stores the placeholder value "0". A
// unique index stores the handle in the value, so that two rows with the
// same indexed values collide on one key, except when an indexed value is
// NULL: NULLs never collide, so such entries append the handle as a
// non-unique index does.
//
// Range scans turn bounds on a prefix of an index's columns into a key
// range [start, end) with LowerBound, UpperBound and PrefixNext: because
// encodings are prefix-free, "first columns equal v" is "key starts with
// the encoding of v".
//
// # Row values (EncodeRow, DecodeRow)
//
// A row value keeps every column's value with its exact Go type, as
// go-mysql-server hands it over and expects it back, tagged by column ID:
//
//	0x80 { uvarint(columnID) type-tag payload }*
//
// Columns are found by ID, not position, so ADD COLUMN and DROP COLUMN need
// no rewrite: DecodeRow reports a column missing from an old row as absent
// (the caller supplies its default) and skips a dropped column's bytes. The
// leading byte names the format version. Payloads are described at
// AppendRow.
//
// Decoders return an error wrapping ErrCorrupt on bad input and never panic.
package tablecodec
