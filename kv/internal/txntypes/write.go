package txntypes

import (
	"encoding/binary"
	"fmt"
)

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
//	          'l' last change, Lock records only, present when known:
//	              uvarint last_change_ts | uvarint versions_to_last_change
//	              (versions >= 1; last_change_ts 0: no Put or Delete below)
//
// Records written before the last-change field existed lack it and read
// as "not known": readers then step over the record as they always did.
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
	// LastChangeTS and VersionsToLastChange, on a Lock record, say where
	// the key's value below it is decided, so that a reader at or above
	// the record's commit_ts need not step over the run of Lock (and
	// Rollback) records every committed SELECT ... FOR UPDATE leaves
	// (TiKV's last_change_ts). VersionsToLastChange 0 means not known
	// (the field is absent); otherwise the newest Put or Delete below the
	// record is at commit_ts LastChangeTS, about VersionsToLastChange
	// records down (1: the next one), and LastChangeTS 0 says there is no
	// Put or Delete below it at all: the key has no value there. A
	// reader seeks to LastChangeTS and decides from the records at or
	// below it as before, so a Delete GC has since removed, with all
	// below it, still reads as no value. The count is an estimate
	// (Rollback records may land between later), used only to choose
	// between stepping and seeking.
	LastChangeTS         uint64
	VersionsToLastChange uint64
}

// HasLastChange reports whether w carries a last-change pointer.
func (w *Write) HasLastChange() bool { return w.VersionsToLastChange > 0 }

// NextLastChange returns the last-change pointer of a Lock record
// committed directly above w, w's own commit timestamp being commitTS:
// a Put or Delete is the last change itself, one record down; a record
// that carries a pointer passes it on one record further. known is false
// for a Lock or Rollback record without one: the caller must look below
// it.
func (w *Write) NextLastChange(commitTS uint64) (ts, versions uint64, known bool) {
	switch {
	case w.Type == WritePut || w.Type == WriteDelete:
		return commitTS, 1, true
	case w.HasLastChange():
		return w.LastChangeTS, w.VersionsToLastChange + 1, true
	}
	return 0, 0, false
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
	if w.HasLastChange() {
		var buf [2 * binary.MaxVarintLen64]byte
		p := binary.AppendUvarint(buf[:0], w.LastChangeTS)
		p = binary.AppendUvarint(p, w.VersionsToLastChange)
		b = appendField(b, tagLastChange, p)
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
	if startTS, v, ok := parseShortPut(b); ok {
		return Write{Type: WritePut, StartTS: startTS, ShortValue: v}, nil
	}
	return parseWriteFields(b)
}

// parseWriteFields is ParseWrite's general walk over the record's fields.
func parseWriteFields(b []byte) (Write, error) {
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
	var seen tagSet
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
		case tagLastChange:
			if w.LastChangeTS, w.VersionsToLastChange, err = lastChange(w.Type, payload); err != nil {
				return Write{}, err
			}
		}
	}
	return w, nil
}

// parseShortPut reads b when it is a Put record whose only field is its
// short value, the record of nearly every committed row a scan meets,
// without the general walk over the fields: what ParseWrite would return
// for it, ok false for any other record (ParseWrite then reads it whole,
// errors included). A scan parses one record per key: the general walk
// was about a tenth of the CPU of a filtered scan's MVCC step.
func parseShortPut(b []byte) (startTS uint64, value []byte, ok bool) {
	if len(b) < 4 || WriteType(b[0]) != WritePut {
		return 0, nil, false
	}
	startTS, n := binary.Uvarint(b[1:])
	if n <= 0 || startTS == 0 {
		return 0, nil, false
	}
	rest := b[1+n:]
	if len(rest) < 2 || rest[0] != tagShortValue {
		return 0, nil, false
	}
	size, m := binary.Uvarint(rest[1:])
	// The value must end the record: another field after it is the
	// general walk's.
	if m <= 0 || size > ShortValueMaxLen || size != uint64(len(rest)-1-m) {
		return 0, nil, false
	}
	value = rest[1+m:]
	return startTS, value[:len(value):len(value)], true
}

// lastChange decodes the payload of a last-change field of a record of
// type t.
func lastChange(t WriteType, payload []byte) (ts, versions uint64, err error) {
	if t != WriteLock {
		return 0, 0, fmt.Errorf("write record: last change on a %v record: %w", t, ErrCorrupt)
	}
	ts, n := binary.Uvarint(payload)
	if n <= 0 {
		return 0, 0, fmt.Errorf("write record: last change: bad uvarint payload %x: %w", payload, ErrCorrupt)
	}
	versions, m := binary.Uvarint(payload[n:])
	if m <= 0 || n+m != len(payload) || versions == 0 {
		return 0, 0, fmt.Errorf("write record: last change: bad payload %x: %w", payload, ErrCorrupt)
	}
	return ts, versions, nil
}
