package txntypes

import (
	"fmt"
)

// LockType is what a prewritten key will become at commit.
type LockType byte

const (
	// LockPut: the key gets a new value.
	LockPut LockType = 'P'
	// LockDelete: the key is deleted.
	LockDelete LockType = 'D'
	// LockLock: the key is only locked (SELECT ... FOR UPDATE); such locks
	// never block readers.
	LockLock LockType = 'L'
	// LockPessimistic: a pessimistic transaction holds the key before its
	// prewrite (AcquirePessimisticLock). It carries no value, so it never
	// blocks readers; it blocks writers and other lockers, and its own
	// transaction's prewrite turns it into a Put, Delete or Lock lock. It
	// never commits as it is: a pessimistic lock left by a transaction
	// that committed was not part of the commit and is simply removed.
	LockPessimistic LockType = 'S'
)

// String names the type.
func (t LockType) String() string {
	switch t {
	case LockPut:
		return "Put"
	case LockDelete:
		return "Delete"
	case LockLock:
		return "Lock"
	case LockPessimistic:
		return "Pessimistic"
	}
	return fmt.Sprintf("LockType(%#x)", byte(t))
}

// valid reports whether t is one of the defined types.
func (t LockType) valid() bool {
	return t == LockPut || t == LockDelete || t == LockLock || t == LockPessimistic
}

// Lock is the record in the lock space: a transaction has prewritten the key.
//
// Encoding:
//
//	type(1) | uvarint len(primary) | primary | uvarint start_ts | uvarint ttl
//	        | optional fields: tag(1) uvarint len payload, in any order:
//	          'v' short value (raw bytes, at most 255)
//	          'c' min_commit_ts (uvarint), present when non-zero
//	          't' txn_size (uvarint), present when non-zero
//	          'f' for_update_ts (uvarint), present when non-zero: the lock
//	              is (or was, before its prewrite) a pessimistic lock
//	          'n' notify columns, present when there are some: each a
//	              uvarint length and the column's bytes
type Lock struct {
	Type    LockType
	Primary []byte
	StartTS uint64
	// TTL is in milliseconds from the physical time of StartTS.
	TTL uint64
	// ShortValue is the value of a LockPut whose value is at most
	// ShortValueMaxLen bytes. nil means there is none (the value is in the
	// data space, or the type has no value); an empty value is a non-nil
	// empty slice.
	ShortValue []byte
	// MinCommitTS: the transaction may not commit below it. A reader whose
	// timestamp is below it may read past the lock. Zero means unset.
	MinCommitTS uint64
	// TxnSize is the number of keys in the transaction, a hint for resolvers.
	TxnSize uint64
	// ForUpdateTS is the for_update_ts at which a pessimistic transaction
	// locked the key, kept when its prewrite converts the lock. Versions
	// of the key may have committed between StartTS and ForUpdateTS, never
	// above it while the lock is held. Zero for an optimistic lock.
	ForUpdateTS uint64
	// Notify names the observer columns whose notify entries the commit
	// of this lock sets (Percolator's notifications): they ride in the
	// lock so that whoever commits it, the transaction or a resolver
	// rolling it forward, writes them in the same batch as the commit
	// record.
	Notify [][]byte
}

// Encode returns the encoding of l.
func (l *Lock) Encode() []byte {
	b := make([]byte, 0, 1+len(l.Primary)+2*10+len(l.ShortValue)+36)
	b = append(b, byte(l.Type))
	b = appendBytes(b, l.Primary)
	b = appendUvarint(b, l.StartTS)
	b = appendUvarint(b, l.TTL)
	if l.ShortValue != nil {
		b = appendField(b, tagShortValue, l.ShortValue)
	}
	if l.MinCommitTS != 0 {
		b = appendUvarintField(b, tagMinCommitTS, l.MinCommitTS)
	}
	if l.TxnSize != 0 {
		b = appendUvarintField(b, tagTxnSize, l.TxnSize)
	}
	if l.ForUpdateTS != 0 {
		b = appendUvarintField(b, tagForUpdateTS, l.ForUpdateTS)
	}
	if len(l.Notify) > 0 {
		var cols []byte
		for _, c := range l.Notify {
			cols = appendBytes(cols, c)
		}
		b = appendField(b, tagNotify, cols)
	}
	return b
}

// DecodeLock decodes a Lock. It returns an error wrapping ErrCorrupt when
// b is not a valid encoding.
func DecodeLock(b []byte) (*Lock, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("lock record: empty: %w", ErrCorrupt)
	}
	l := &Lock{Type: LockType(b[0])}
	if !l.Type.valid() {
		return nil, fmt.Errorf("lock record: unknown type %#x: %w", b[0], ErrCorrupt)
	}
	d := decoder{b: b[1:], what: "lock"}
	var err error
	if l.Primary, err = d.bytes(field{name: "primary"}); err != nil {
		return nil, err
	}
	if l.StartTS, err = d.uvarint(field{name: "start_ts"}); err != nil {
		return nil, err
	}
	if l.StartTS == 0 {
		return nil, fmt.Errorf("lock record: start_ts is 0: %w", ErrCorrupt)
	}
	if l.TTL, err = d.uvarint(field{name: "ttl"}); err != nil {
		return nil, err
	}
	err = d.fields(func(tag byte, payload []byte) error {
		var err error
		switch tag {
		case tagShortValue:
			l.ShortValue, err = shortValue(d.what, payload)
		case tagMinCommitTS:
			l.MinCommitTS, err = uvarintPayload(d.what, "min_commit_ts", payload)
		case tagTxnSize:
			l.TxnSize, err = uvarintPayload(d.what, "txn_size", payload)
		case tagForUpdateTS:
			l.ForUpdateTS, err = uvarintPayload(d.what, "for_update_ts", payload)
		case tagNotify:
			l.Notify, err = notifyColumns(payload)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// notifyColumns decodes the payload of the notify field.
func notifyColumns(payload []byte) ([][]byte, error) {
	d := decoder{b: payload, what: "lock"}
	var cols [][]byte
	for len(d.b) > 0 {
		c, err := d.bytes(field{name: "notify column"})
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("lock record: empty notify field: %w", ErrCorrupt)
	}
	return cols, nil
}
