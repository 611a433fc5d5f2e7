package keyspace

import "github.com/percdb/percdb/kv/memcomparable"

// Version prefixes. A write-space or data-space key is a version of a user
// key: its version prefix is the space byte and enc(key), its version
// suffix the 8 bytes of ^ts after it:
//
//	'w' enc(key) | ^commit_ts
//	'd' enc(key) | ^start_ts
//	\__________/   \_______/
//	   prefix        suffix
//
// Every other key (lock, notify, meta, and any bound that is not a whole
// version key) is its own prefix. Pebble's Comparer.Split is VersionSplit:
// with it, an iterator leaves all the versions of a key in one step
// (Iterator.NextPrefix) and the sstables' bloom filters hold version
// prefixes, so that a read of a key's newest version (SeekPrefixGE) skips
// the files that have none of its versions.
//
// The order of keys does not change: it is still bytes.Compare. Split only
// names the boundary, found by walking enc's groups of 9 bytes (8 data
// bytes and a marker) to the first group whose marker is not 0xFF, the
// last group of enc(key). A key whose bytes end before such a group is
// its own prefix. Because the walk's stopping point depends only on the
// bytes before it, no prefix is a proper byte prefix of another key's
// prefix unless that key is the shorter prefix itself, which is what makes
// bytewise order sort keys by prefix first (Pebble's Split contract;
// TestVersionSplitContract).

// groupLen is the length of one memcomparable group: data and marker.
const groupLen = memcomparable.GroupSize + 1

// VersionSplit returns the length of k's version prefix: for a key of the
// write or data space, the space byte and the user key's encoding (the
// rest, normally the 8-byte timestamp, is the version suffix); for any
// other key, len(k). It accepts any bytes.
func VersionSplit(k []byte) int {
	if len(k) == 0 || (k[0] != Write && k[0] != Data) {
		return len(k)
	}
	for end := 1 + groupLen; end <= len(k); end += groupLen {
		if k[end-1] != 0xFF {
			return end
		}
	}
	return len(k)
}

// IsVersionPrefix reports whether prefix is a whole version prefix: a key
// of the write or data space that ends right after its user key's
// encoding, so that versions (prefix + suffix) of it can exist.
func IsVersionPrefix(prefix []byte) bool {
	n := len(prefix)
	return n > 1 && (prefix[0] == Write || prefix[0] == Data) &&
		(n-1)%groupLen == 0 && prefix[n-1] != 0xFF && VersionSplit(prefix) == n
}

// AppendPrefixSuccessor appends to dst the smallest prefix (a key k with
// VersionSplit(k) == len(k)) greater than prefix, itself a prefix, and
// returns the result (Pebble's Comparer.ImmediateSuccessor). Every version
// of a version prefix sorts between the prefix and this successor, which
// is the prefix with its last marker byte raised by one: a key that
// starts with the prefix has the prefix as its own and so is no prefix
// unless it is the prefix itself, and the next key that does not start
// with it is the raised one. Any other prefix is followed by itself plus
// a 0x00 byte, as under plain bytewise order.
func AppendPrefixSuccessor(dst, prefix []byte) []byte {
	dst = append(dst, prefix...)
	if IsVersionPrefix(prefix) {
		dst[len(dst)-1]++
		return dst
	}
	return append(dst, 0)
}
