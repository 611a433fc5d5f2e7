package txntypes

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ShortValueMaxLen is the longest value kept inside Lock and Write records
// (TiKV's limit).
const ShortValueMaxLen = 255

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("corrupt record")

// Tags of the optional fields. A tag is followed by a uvarint payload length
// and the payload.
const (
	tagShortValue         = byte('v')
	tagMinCommitTS        = byte('c')
	tagTxnSize            = byte('t')
	tagOverlappedRollback = byte('R')
	tagForUpdateTS        = byte('f')
	tagNotify             = byte('n')
	tagLastChange         = byte('l')
)

// appendField appends one tagged optional field.
func appendField(b []byte, tag byte, payload []byte) []byte {
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// appendUvarintField appends a tagged field whose payload is a uvarint.
func appendUvarintField(b []byte, tag byte, v uint64) []byte {
	var buf [binary.MaxVarintLen64]byte
	return appendField(b, tag, buf[:binary.PutUvarint(buf[:], v)])
}

// decoder reads a record front to back and remembers the first error.
type decoder struct {
	b    []byte
	what string // "lock" or "write", for error messages
}

// field names a field in decoding errors: a fixed field by name, or an
// optional field (name empty) by its tag. It is formatted only when an
// error is returned, so decoding allocates nothing for names.
type field struct {
	name string
	tag  byte
}

func (f field) String() string {
	if f.name != "" {
		return f.name
	}
	return fmt.Sprintf("field %q", f.tag)
}

// uvarint reads one uvarint.
func (d *decoder) uvarint(f field) (uint64, error) {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, fmt.Errorf("%s record: %s: bad uvarint: %w", d.what, f, ErrCorrupt)
	}
	d.b = d.b[n:]
	return v, nil
}

// view reads a uvarint length and that many bytes, a slice of the input.
func (d *decoder) view(f field) ([]byte, error) {
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		return nil, fmt.Errorf("%s record: %s length: bad uvarint: %w", d.what, f, ErrCorrupt)
	}
	d.b = d.b[k:]
	if n > uint64(len(d.b)) {
		return nil, fmt.Errorf("%s record: %s: length %d, only %d bytes left: %w", d.what, f, n, len(d.b), ErrCorrupt)
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v, nil
}

// bytes is view, copied.
func (d *decoder) bytes(f field) ([]byte, error) {
	v, err := d.view(f)
	if err != nil {
		return nil, err
	}
	return append([]byte{}, v...), nil
}

// field reads the next optional field, its payload a slice of the input.
// Each tag may appear once (seen records them); callers ignore tags they
// do not know, so that records written by a newer version stay readable.
func (d *decoder) field(seen *tagSet) (tag byte, payload []byte, err error) {
	tag = d.b[0]
	d.b = d.b[1:]
	if seen.has(tag) {
		return 0, nil, fmt.Errorf("%s record: field %q appears twice: %w", d.what, tag, ErrCorrupt)
	}
	seen.add(tag)
	payload, err = d.view(field{tag: tag})
	return tag, payload, err
}

// tagSet is a set of field tags, one bit each: 32 bytes to clear per
// record decoded rather than 256.
type tagSet [4]uint64

// has reports whether tag is in the set.
func (s *tagSet) has(tag byte) bool { return s[tag>>6]&(1<<(tag&63)) != 0 }

// add puts tag in the set.
func (s *tagSet) add(tag byte) { s[tag>>6] |= 1 << (tag & 63) }

// fields calls fn for each optional field until the input ends (see
// field); the payloads are copies.
func (d *decoder) fields(fn func(tag byte, payload []byte) error) error {
	var seen tagSet
	for len(d.b) > 0 {
		tag, payload, err := d.field(&seen)
		if err != nil {
			return err
		}
		if err := fn(tag, append([]byte{}, payload...)); err != nil {
			return err
		}
	}
	return nil
}

// shortValue checks a short value payload.
func shortValue(what string, payload []byte) ([]byte, error) {
	if len(payload) > ShortValueMaxLen {
		return nil, fmt.Errorf("%s record: short value of %d bytes exceeds %d: %w", what, len(payload), ShortValueMaxLen, ErrCorrupt)
	}
	return payload, nil
}

// uvarintPayload decodes a payload that must be exactly one uvarint.
func uvarintPayload(what, field string, payload []byte) (uint64, error) {
	v, n := binary.Uvarint(payload)
	if n <= 0 || n != len(payload) {
		return 0, fmt.Errorf("%s record: %s: bad uvarint payload %x: %w", what, field, payload, ErrCorrupt)
	}
	return v, nil
}

// appendUvarint appends v as a uvarint.
func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// appendBytes appends a uvarint length and p.
func appendBytes(b, p []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(p))), p...)
}
