package memcomparable

import (
	"errors"
	"fmt"
)

// Byte layout. The input is cut into groups of GroupSize bytes; each group is
// written whole and followed by one marker byte:
//
//	[ 8 data bytes ][ marker ]  [ 8 data bytes ][ marker ] ...
//
// A full group (8 real bytes, more to follow or not) has marker 0xFF. The
// last group holds the remaining 0..7 bytes padded with 0x00 to 8, and its
// marker is 0xFF minus the number of padding bytes (0xF7..0xFE). So an input
// whose length is a multiple of 8, the empty input included, ends with a
// group of eight 0x00 and marker 0xF7:
//
//	""          -> 00 00 00 00 00 00 00 00 F7
//	"abc"       -> 61 62 63 00 00 00 00 00 FA
//	"12345678"  -> 31 32 33 34 35 36 37 38 FF 00 00 00 00 00 00 00 00 F7
//
// The encoded length is always (len/8 + 1) * 9.
const (
	// GroupSize is the number of data bytes in a group.
	GroupSize = 8
	// marker follows a group that is full and not the last one.
	marker = byte(0xFF)
	// pad fills the last group.
	pad = byte(0x00)
)

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed memcomparable bytes")

// EncodedLen returns the length of the encoding of n bytes.
func EncodedLen(n int) int { return (n/GroupSize + 1) * (GroupSize + 1) }

// EncodeBytes appends the encoding of data to dst and returns the result.
func EncodeBytes(dst, data []byte) []byte {
	dst = growTo(dst, EncodedLen(len(data)))
	for i := 0; ; i += GroupSize {
		remain := len(data) - i
		if remain >= GroupSize {
			dst = append(dst, data[i:i+GroupSize]...)
			dst = append(dst, marker)
			continue
		}
		padCount := GroupSize - remain
		dst = append(dst, data[i:]...)
		for j := 0; j < padCount; j++ {
			dst = append(dst, pad)
		}
		return append(dst, marker-byte(padCount))
	}
}

// DecodeBytes decodes one encoded string from the front of b and returns
// the bytes after it and the decoded string (a new slice). It returns an
// error wrapping ErrMalformed when b is truncated, a marker is out of range,
// or padding bytes are not zero.
func DecodeBytes(b []byte) (rest, data []byte, err error) {
	return AppendDecodeBytes(make([]byte, 0, len(b)/(GroupSize+1)*GroupSize), b)
}

// AppendDecodeBytes is DecodeBytes appending the decoded string to dst:
// a scan that decodes one key per row reuses one buffer.
func AppendDecodeBytes(dst, b []byte) (rest, data []byte, err error) {
	data = dst
	for off := 0; ; off += GroupSize + 1 {
		if len(b)-off < GroupSize+1 {
			return nil, nil, fmt.Errorf("decode bytes at offset %d: %d bytes left, want a group of %d: %w", off, len(b)-off, GroupSize+1, ErrMalformed)
		}
		group := b[off : off+GroupSize]
		m := b[off+GroupSize]
		if m == marker {
			data = append(data, group...)
			continue
		}
		padCount := int(marker - m)
		if padCount > GroupSize {
			return nil, nil, fmt.Errorf("decode bytes at offset %d: marker %#x: %w", off+GroupSize, m, ErrMalformed)
		}
		realLen := GroupSize - padCount
		for _, p := range group[realLen:] {
			if p != pad {
				return nil, nil, fmt.Errorf("decode bytes at offset %d: padding byte %#x is not zero: %w", off, p, ErrMalformed)
			}
		}
		data = append(data, group[:realLen]...)
		return b[off+GroupSize+1:], data, nil
	}
}

// growTo makes sure dst can take n more bytes without reallocating twice.
func growTo(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	grown := make([]byte, len(dst), len(dst)+n)
	copy(grown, dst)
	return grown
}
