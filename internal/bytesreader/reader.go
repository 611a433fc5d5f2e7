// Package bytesreader decodes the small varint-based byte layouts that
// percdb stores or sends between its own processes (stored table
// statistics, the output of a coprocessor sampling program): unsigned and
// signed varints (encoding/binary's), counts of items, and runs of bytes.
//
// Every layout that uses it is read from input that may be truncated or
// corrupt (a disk, a network, a different version), so the Reader checks
// every step and never panics or allocates beyond what the input can hold:
// a count of items is refused when the rest of the input cannot hold that
// many items of their minimum size. The first error sticks: later reads
// return zero values, and the caller checks Err (or End) once at the end,
// which keeps a decoder as short as its layout.
package bytesreader

import (
	"encoding/binary"
	"fmt"
)

// Reader reads a byte layout from the front of a slice.
type Reader struct {
	b       []byte
	err     error
	what    string
	corrupt error
}

// New returns a Reader of b. Its errors start with what (the layout's
// name, e.g. "statistics") and wrap corrupt, the caller's sentinel for
// malformed input.
func New(b []byte, what string, corrupt error) *Reader {
	return &Reader{b: b, what: what, corrupt: corrupt}
}

// Fail records a decoding error unless one is already recorded.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(r.what+": "+format+": %w", append(args, r.corrupt)...)
	}
}

// Err is the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Len is the number of bytes not read yet.
func (r *Reader) Len() int { return len(r.b) }

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail("bad integer")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Varint reads a signed (zig-zag) varint.
func (r *Reader) Varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.Fail("bad integer")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Count reads a count of items of at least min bytes each (min >= 1),
// refusing one the rest of the input cannot hold.
func (r *Reader) Count(min int) int {
	n := r.Uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.Fail("%d items in %d bytes", n, len(r.b))
		return 0
	}
	return int(n)
}

// Bytes reads n bytes. The result aliases the input, with its capacity
// capped so that an append to it cannot overwrite what follows.
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.Fail("truncated")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// LenBytes reads a run of bytes prefixed by its length as an unsigned
// varint.
func (r *Reader) LenBytes() []byte { return r.Bytes(r.Count(1)) }

// Uint64 reads 8 bytes as a big-endian unsigned integer.
func (r *Reader) Uint64() uint64 {
	if b := r.Bytes(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// End is Err, or an error when bytes are left over: a layout is read
// whole.
func (r *Reader) End() error {
	if r.err == nil && len(r.b) > 0 {
		r.Fail("%d trailing bytes", len(r.b))
	}
	return r.err
}
