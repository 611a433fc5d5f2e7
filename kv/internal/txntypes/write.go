package txntypes

import "fmt"

// WriteType is what a transaction did to a key, as recorded in the write
// space.
type WriteType byte

const (
	// WritePut: the key got a new value.
	WritePut WriteType = 'P'
	// WriteDelete: the key was deleted.
	WriteDelete WriteType = 'D'
	// WriteLock: the key was only locked; readers skip it.
	WriteLock WriteType = 'L'
	// WriteRollback: the transaction was rolled back; kept at start_ts so a
	// late prewrite of it fails. Readers skip it.
	WriteRollback WriteType = 'R'
)

// String names the type.
func (t WriteType) String() string {
	switch t {
	case WritePut:
		return "Put"
	case WriteDelete:
		return "Delete"
	case WriteLock:
		return "Lock"
	case WriteRollback:
		return "Rollback"
	}
	return fmt.Sprintf("WriteType(%#x)", byte(t))
}

// valid reports whether t is one of the defined types.
func (t WriteType) valid() bool {
	return t == WritePut || t == WriteDelete || t == WriteLock || t == WriteRollback
}

// WriteTypeOf returns the write type a lock of type t commits as. A
// LockPessimistic never commits (see LockPessimistic); callers handle it
// before asking.
func WriteTypeOf(t LockType) WriteType {
	switch t {
	case LockDelete:
		return WriteDelete
	case LockLock:
		return WriteLock
	}
	return WritePut
}

// Write is the record in the write space at a commit timestamp.
//
// Encoding:
//
//	type(1) | uvarint start_ts
//	        | optional fields: tag(1) uvarint len payload, in any order:
//	          'v' short value (raw bytes, at most 255)
//	          'R' overlapped rollback (empty payload), present when true
type Write struct {
	Type    WriteType
	StartTS uint64
	// ShortValue is the value of a WritePut of at most ShortValueMaxLen
	// bytes; nil means the value is in the data space at StartTS.
	ShortValue []byte
	// OverlappedRollback says that a Rollback record of the transaction
	// whose start_ts equals this record's commit_ts belongs at this very
	// key and timestamp. A calculated (1PC) commit timestamp is not unique,
	// so the rollback is folded into the commit record instead of
	// overwriting it (tikv#8349).
	OverlappedRollback bool
}

// Encode returns the encoding of w.
func (w *Write) Encode() []byte {
	b := make([]byte, 0, 1+10+len(w.ShortValue)+6)
	b = append(b, byte(w.Type))
	b = appendUvarint(b, w.StartTS)
	if w.ShortValue != nil {
		b = appendField(b, tagShortValue, w.ShortValue)
	}
	if w.OverlappedRollback {
		b = appendField(b, tagOverlappedRollback, nil)
	}
	return b
}

// DecodeWrite decodes a Write. It returns an error wrapping ErrCorrupt when
// b is not a valid encoding.
func DecodeWrite(b []byte) (*Write, error) {
	w, err := ParseWrite(b)
	if err != nil {
		return nil, err
	}
	if w.ShortValue != nil {
		w.ShortValue = append([]byte{}, w.ShortValue...)
	}
	return &w, nil
}

// PeekWriteType returns the type of the encoded Write b, its first byte,
// without decoding the rest: a walk that steps over Lock and Rollback
// records, and needs nothing of a Delete but its type, parses only the
// Put records it returns.
func PeekWriteType(b []byte) (WriteType, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("write record: empty: %w", ErrCorrupt)
	}
	if t := WriteType(b[0]); t.valid() {
		return t, nil
	}
	return 0, fmt.Errorf("write record: unknown type %#x: %w", b[0], ErrCorrupt)
}

// ParseWrite is DecodeWrite without allocating: the returned record's
// ShortValue is a slice of b, valid as long as b is. A scan decodes a
// record per key and keeps none of them.
func ParseWrite(b []byte) (Write, error) {
	if len(b) == 0 {
		return Write{}, fmt.Errorf("write record: empty: %w", ErrCorrupt)
	}
	w := Write{Type: WriteType(b[0])}
	if !w.Type.valid() {
		return Write{}, fmt.Errorf("write record: unknown type %#x: %w", b[0], ErrCorrupt)
	}
	d := decoder{b: b[1:], what: "write"}
	var err error
	if w.StartTS, err = d.uvarint(field{name: "start_ts"}); err != nil {
		return Write{}, err
	}
	if w.StartTS == 0 {
		return Write{}, fmt.Errorf("write record: start_ts is 0: %w", ErrCorrupt)
	}
	var seen [256]bool
	for len(d.b) > 0 {
		tag, payload, err := d.field(&seen)
		if err != nil {
			return Write{}, err
		}
		switch tag {
		case tagShortValue:
			if w.ShortValue, err = shortValue(d.what, payload); err != nil {
				return Write{}, err
			}
		case tagOverlappedRollback:
			if len(payload) != 0 {
				return Write{}, fmt.Errorf("write record: overlapped rollback flag with %d payload bytes: %w", len(payload), ErrCorrupt)
			}
			w.OverlappedRollback = true
		}
	}
	return w, nil
}
