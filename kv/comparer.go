package kv

import (
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// The store's Pebble comparer knows where a version key's timestamp
// begins (keyspace.VersionSplit), so that a walk leaves a key's older
// versions in one step (Iterator.NextPrefix) and a point read consults the
// sstables' bloom filters by the user key (Iterator.SeekPrefixGE), as
// CockroachDB's and TiKV's do. Its order is bytes.Compare, exactly as
// before: no key moves.
//
// Compatibility with stores written before it (whose comparer had no
// Split). Pebble records the comparer's name in the MANIFEST and OPTIONS
// and refuses a different one, so the name stays
// "leveldb.BytewiseComparator": Compare, Equal, AbbreviatedKey,
// Separator and Successor are that comparer's own, and the name promises
// exactly the order. What a Split changes on disk, and why mixing is safe:
//
//   - Bloom filters. A table's filter holds what Split returned when it
//     was written: whole keys before, version prefixes now, and a probe
//     uses the reader's Split. An old filter probed with a prefix would
//     deny keys it holds (a version read as missing), so the filters of
//     new tables go by a name of their own (versionBloomName) and Pebble
//     uses a table's filter only when its name is in Options.Filters: a
//     table written before has its filter ignored (it is read without
//     one until a compaction rewrites it), and a binary from before this
//     change ignores the new filters the same way.
//   - Value blocks and the per-key "same prefix" bit of sstable format
//     Pebblev3, which NextPrefix trusts without comparing keys: a table
//     written with another Split would mark the versions of one key as
//     different prefixes. The store opens at storeFormat
//     (FormatSSTableValueBlocks), the last format at which Pebble writes
//     Pebblev3 tables only when Options.Experimental.EnableValueBlocks says
//     so; this store says so, a percdb from before the split never did
//     (its tables, and those it writes into a store this one ratcheted,
//     are RocksDBv2 or Pebblev2, without prefix bits, and NextPrefix
//     compares their keys). So every table with prefix bits was written
//     with the version split. Above storeFormat every table carries them
//     whatever the option says, so Open refuses such a store
//     (checkFormat), and a walk still checks that NextPrefix left the key
//     (decideForward): a wrong bit costs steps, never a wrong row
//     (TestWalkDistrustsPrefixBits). Stores written before this format
//     are ratcheted at Open (Pebble's migrations: a rewrite of the few
//     tables that split a user key, then the format marker); a percdb
//     between the split and this change refuses the ratcheted store
//     (its checkFormat), one from before the split opens it.
//   - Nothing else Pebble writes depends on Split (sstable properties
//     record the comparer's name only).
//
// TestStoreOpensPreSplitData opens a store written with the comparer of
// before and reads every version of it.

// versionBloomName names the store's bloom filters, which hold version
// prefixes (see above): "fullfilter."+versionBloomName is the filter
// block's name in an sstable.
const versionBloomName = "percdb.VersionPrefixBloom"

// versionBloom is Pebble's bloom filter (10 bits a key, about 1% false
// positives) under versionBloomName.
type versionBloom struct{ bloom.FilterPolicy }

// Name implements pebble.FilterPolicy.
func (versionBloom) Name() string { return versionBloomName }

// newVersionBloom returns the store's filter policy.
func newVersionBloom() pebble.FilterPolicy { return versionBloom{bloom.FilterPolicy(10)} }

// newComparer returns the store's comparer: bytewise order, with the
// version split.
func newComparer() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Split = keyspace.VersionSplit
	c.ImmediateSuccessor = keyspace.AppendPrefixSuccessor
	return &c
}

// storeFormat is the Pebble format the store opens at (see above).
const storeFormat = pebble.FormatSSTableValueBlocks

// checkFormat refuses a database at a format above storeFormat, whose
// sstables carry prefix bits whichever percdb wrote them, including one
// without the version split (see above).
func checkFormat(db *pebble.DB) error {
	if v := db.FormatMajorVersion(); v > storeFormat {
		return fmt.Errorf("pebble format major version %s: above it every sstable carries prefix marks, which a percdb without the version split would write wrong; this store supports formats up to %s",
			v, storeFormat)
	}
	return nil
}
