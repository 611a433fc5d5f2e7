package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/percdb/percdb/kv/memcomparable"
)

// Byte layout of every Pebble key the store writes. enc is memcomparable
// encoding (package memcomparable); ^ts is the bitwise complement of a
// timestamp, 8 bytes big-endian, so that newer versions of a key sort
// before older ones and a forward seek to enc(key)+^ts lands on the newest
// version at or below ts.
//
//	lock   'l' enc(key)               -> Lock record (at most one per key)
//	write  'w' enc(key) ^commit_ts    -> Write record
//	data   'd' enc(key) ^start_ts     -> value longer than the short-value limit
//	latest 'v' enc(key)               -> commit_ts (8 BE) + Write record: a
//	                                     copy of key's newest Put or Delete
//	                                     record, rewritten in place at each
//	                                     commit (forward walks at the
//	                                     present read it instead of the
//	                                     write space's versions)
//	notify 'n' enc(key) enc(column)   -> commit_ts (8 BE): the newest commit
//	                                     of key that asked to notify column
//	meta   'm' kind ...               -> store-local metadata:
//	       'm' 'r' region_id(8 BE)    -> region descriptor
//	       'm' 'g'                    -> GC safe point (8 BE): the highest
//	                                     safe point this store collected at
//	       'm' 'v'                    -> empty: the latest space is complete
//
// The spaces sort data < lock < meta < notify < latest < write; nothing depends on
// that order except that a space is one contiguous range. A write or data
// key is a version: its prefix (space and enc(key)) and its suffix (^ts)
// are what Pebble's comparer splits it into (split.go).
const (
	// Data is the prefix of the data space.
	Data = byte('d')
	// Lock is the prefix of the lock space.
	Lock = byte('l')
	// Meta is the prefix of the store-local metadata space.
	Meta = byte('m')
	// Notify is the prefix of the notify space: Percolator's notify
	// column, the hints that tell observers which keys changed.
	Notify = byte('n')
	// Write is the prefix of the write space.
	Write = byte('w')
	// Latest is the prefix of the latest space: each key's newest Put or
	// Delete write record, under the key alone.
	Latest = byte('v')

	// metaRegion is the kind byte of region descriptors in the meta space.
	metaRegion = byte('r')
	// metaGCSafePoint is the kind byte of the store's GC safe point.
	metaGCSafePoint = byte('g')
	// metaLatestBuilt is the kind byte of the marker that the latest
	// space holds a copy for every key of the write space.
	metaLatestBuilt = byte('v')
	// tsLen is the length of an encoded timestamp suffix.
	tsLen = 8
)

// ErrBadKey is wrapped by every decoding error.
var ErrBadKey = errors.New("bad store key")

// LockKey returns the lock-space key of key.
func LockKey(key []byte) []byte { return encode(Lock, key, 0) }

// WriteKey returns the write-space key of key's version committed at
// commitTS.
func WriteKey(key []byte, commitTS uint64) []byte {
	return appendTS(encode(Write, key, tsLen), commitTS)
}

// DataKey returns the data-space key of the value key was given by the
// transaction startTS.
func DataKey(key []byte, startTS uint64) []byte {
	return appendTS(encode(Data, key, tsLen), startTS)
}

// AppendDataKey appends DataKey(key, startTS) to dst, for a reader that
// builds many data-space keys in one buffer.
func AppendDataKey(dst, key []byte, startTS uint64) []byte {
	dst = append(dst, Data)
	return appendTS(memcomparable.EncodeBytes(dst, key), startTS)
}

// NotifyKey returns the notify-space key of key's notification for
// column. enc is prefix-free, so the notifications of key sort together,
// after NotifyBound(key) and before NotifyBound of any greater key: a
// region's notifications are the range [NotifyBound(start),
// NotifyBound(end)).
func NotifyKey(key, column []byte) []byte {
	b := encode(Notify, key, memcomparable.EncodedLen(len(column)))
	return memcomparable.EncodeBytes(b, column)
}

// NotifyBound returns the notify-space key that sorts before every
// notification of key and after those of every smaller key.
func NotifyBound(key []byte) []byte { return encode(Notify, key, 0) }

// WritePrefix returns the prefix shared by every write-space key of key,
// and only by them.
func WritePrefix(key []byte) []byte { return encode(Write, key, 0) }

// KeyBound returns the smallest key of space that sorts at or above every
// record of key in it (and above every record of a smaller key): with
// KeyBound(space, end) it bounds the records of the user keys in
// [start, end). Memcomparable encoding is order-preserving and no
// encoding is a prefix of another, so a timestamp suffix cannot carry a
// key's records past the bound of a greater key.
func KeyBound(space byte, key []byte) []byte { return encode(space, key, 0) }

// SpaceStart returns the first key of space's range [SpaceStart, SpaceEnd).
func SpaceStart(space byte) []byte { return []byte{space} }

// SpaceEnd returns the end (exclusive) of space's range.
func SpaceEnd(space byte) []byte { return []byte{space + 1} }

// PrefixEnd returns the smallest key greater than every key that starts
// with prefix, or nil when there is none (prefix is all 0xFF).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// DecodeLockKey returns the user key of a lock-space key.
func DecodeLockKey(k []byte) ([]byte, error) { return decodeNoTS(Lock, k) }

// LatestKey returns the latest-space key of key.
func LatestKey(key []byte) []byte { return encode(Latest, key, 0) }

// DecodeLatestKey returns the user key of a latest-space key.
func DecodeLatestKey(k []byte) ([]byte, error) { return decodeNoTS(Latest, k) }

// AppendDecodeLatestKey is DecodeLatestKey appending the user key to dst.
func AppendDecodeLatestKey(dst, k []byte) ([]byte, error) {
	if len(k) == 0 || k[0] != Latest {
		return nil, fmt.Errorf("key %x is not in the %c space: %w", k, Latest, ErrBadKey)
	}
	rest, key, err := memcomparable.AppendDecodeBytes(dst, k[1:])
	if err != nil {
		return nil, fmt.Errorf("%c-space key %x: %w: %w", Latest, k, ErrBadKey, err)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%c-space key %x: %d trailing bytes: %w", Latest, k, len(rest), ErrBadKey)
	}
	return key, nil
}

// DecodeNotifyKey returns the user key and the column of a notify-space
// key.
func DecodeNotifyKey(k []byte) (key, column []byte, err error) {
	rest, key, err := decodeUserKey(Notify, k)
	if err != nil {
		return nil, nil, err
	}
	rest, column, err = memcomparable.DecodeBytes(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("n-space key %x: column: %w: %w", k, ErrBadKey, err)
	}
	if len(rest) != 0 {
		return nil, nil, fmt.Errorf("n-space key %x: %d trailing bytes: %w", k, len(rest), ErrBadKey)
	}
	return key, column, nil
}

// DecodeWriteKey returns the user key and commit timestamp of a write-space
// key.
func DecodeWriteKey(k []byte) (key []byte, commitTS uint64, err error) {
	return decodeTS(Write, k)
}

// AppendDecodeWriteKey is DecodeWriteKey appending the user key to dst.
func AppendDecodeWriteKey(dst, k []byte) (key []byte, commitTS uint64, err error) {
	if len(k) == 0 || k[0] != Write {
		return nil, 0, fmt.Errorf("key %x is not in the %c space: %w", k, Write, ErrBadKey)
	}
	rest, key, err := memcomparable.AppendDecodeBytes(dst, k[1:])
	if err != nil {
		return nil, 0, fmt.Errorf("%c-space key %x: %w: %w", Write, k, ErrBadKey, err)
	}
	if len(rest) != tsLen {
		return nil, 0, fmt.Errorf("%c-space key %x: %d bytes after the user key, want %d: %w", Write, k, len(rest), tsLen, ErrBadKey)
	}
	return key, ^binary.BigEndian.Uint64(rest), nil
}

// DecodeDataKey returns the user key and start timestamp of a data-space
// key.
func DecodeDataKey(k []byte) (key []byte, startTS uint64, err error) {
	return decodeTS(Data, k)
}

// RegionKey returns the meta-space key of region id's descriptor.
func RegionKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{Meta, metaRegion}, id)
}

// GCSafePointKey returns the meta-space key of the store's GC safe point,
// whose value is the safe point, 8 bytes big-endian (EncodeTS).
func GCSafePointKey() []byte { return []byte{Meta, metaGCSafePoint} }

// LatestBuiltKey returns the key of the marker written once the latest
// space is complete: a store written before the space existed has none,
// and its walks keep to the write space until Open has built it.
func LatestBuiltKey() []byte { return []byte{Meta, metaLatestBuilt} }

// EncodeTS returns ts as 8 bytes big-endian, the value layout of
// GCSafePointKey.
func EncodeTS(ts uint64) []byte { return binary.BigEndian.AppendUint64(nil, ts) }

// DecodeTS decodes a value written by EncodeTS.
func DecodeTS(b []byte) (uint64, error) {
	if len(b) != tsLen {
		return 0, fmt.Errorf("timestamp value %x: %d bytes, want %d: %w", b, len(b), tsLen, ErrBadKey)
	}
	return binary.BigEndian.Uint64(b), nil
}

// RegionKeyPrefix returns the prefix of every region descriptor key.
func RegionKeyPrefix() []byte { return []byte{Meta, metaRegion} }

// DecodeRegionKey returns the region id of a region descriptor key.
func DecodeRegionKey(k []byte) (uint64, error) {
	if len(k) != 2+8 || k[0] != Meta || k[1] != metaRegion {
		return 0, fmt.Errorf("region descriptor key %x: %w", k, ErrBadKey)
	}
	return binary.BigEndian.Uint64(k[2:]), nil
}

// encode returns space + enc(key) with room for extra more bytes.
func encode(space byte, key []byte, extra int) []byte {
	b := make([]byte, 1, 1+memcomparable.EncodedLen(len(key))+extra)
	b[0] = space
	return memcomparable.EncodeBytes(b, key)
}

// appendTS appends the inverted big-endian ts.
func appendTS(b []byte, ts uint64) []byte { return binary.BigEndian.AppendUint64(b, ^ts) }

// decodeNoTS decodes space + enc(key), which must be all of k.
func decodeNoTS(space byte, k []byte) ([]byte, error) {
	rest, key, err := decodeUserKey(space, k)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%c-space key %x: %d trailing bytes: %w", space, k, len(rest), ErrBadKey)
	}
	return key, nil
}

// decodeTS decodes space + enc(key) + ^ts, which must be all of k.
func decodeTS(space byte, k []byte) ([]byte, uint64, error) {
	rest, key, err := decodeUserKey(space, k)
	if err != nil {
		return nil, 0, err
	}
	if len(rest) != tsLen {
		return nil, 0, fmt.Errorf("%c-space key %x: %d bytes after the user key, want %d: %w", space, k, len(rest), tsLen, ErrBadKey)
	}
	return key, ^binary.BigEndian.Uint64(rest), nil
}

// decodeUserKey checks the space byte and decodes the user key after it.
func decodeUserKey(space byte, k []byte) (rest, key []byte, err error) {
	if len(k) == 0 || k[0] != space {
		return nil, nil, fmt.Errorf("key %x is not in the %c space: %w", k, space, ErrBadKey)
	}
	rest, key, err = memcomparable.DecodeBytes(k[1:])
	if err != nil {
		return nil, nil, fmt.Errorf("%c-space key %x: %w: %w", space, k, ErrBadKey, err)
	}
	return rest, key, nil
}

// LatestKeyOfWrite returns the latest-space key of the user key of the
// write-space key k, and k's commit timestamp, without decoding the user
// key (both spaces are the prefix byte then enc(key)); ok is false when k
// is not a write-space key.
func LatestKeyOfWrite(k []byte) (latest []byte, commitTS uint64, ok bool) {
	if len(k) < 1+tsLen || k[0] != Write {
		return nil, 0, false
	}
	n := len(k) - tsLen
	latest = make([]byte, n)
	latest[0] = Latest
	copy(latest[1:], k[1:n])
	return latest, ^binary.BigEndian.Uint64(k[n:]), true
}
