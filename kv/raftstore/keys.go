package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble"
	"google.golang.org/protobuf/proto"

	pb "go.etcd.io/raft/v3/raftpb"
)

// The raft engine's keys, the one place they are laid out (all integers
// big-endian, so a region's entries sort by index):
//
//	'r' | region id (8) | 'e' | index (8)   raftpb.Entry, proto
//	'r' | region id (8) | 'h'               raftpb.HardState, proto
//	'r' | region id (8) | 't'               truncated state: index (8) | term (8)
//	'r' | region id (8) | 'c'               configuration at the truncated index: conf_ver (8) | raftpb.ConfState, proto
//	'r' | region id (8) | 'x'               tombstone: conf_ver (8) of the configuration that removed the replica
//	'r' | region id (8) | 'd'               descriptor at the persisted applied index: Descriptor.appendTo
//	'r' | region id (8) | 'a'               applied floor: index (8) up to which the KV store made the log's effects durable
//
// The configuration record is written with every truncated state (and
// when an initialized replica is created), so that it is the group's
// configuration as of the truncated index: a restarted replica starts
// from it and applies the conf changes after the index again, each once.
// conf_ver counts the conf change entries the group applied (1: its
// initial voters), the same on every replica since they apply the same
// log; a snapshot carries it in its data. A replica with neither record
// nor log is uninitialized: a replica added by a conf change, waiting
// for its leader's snapshot. A tombstone is what is left of a replica
// removed from its group: the region is not created again on this store
// at that configuration or an older one.
//
// A split (split.go) makes the KV store durable up to the split's entry
// and records that index as the replica's applied floor, with the new
// descriptor (the region's key range and epoch version) and the new
// region's initial state, in one synced batch. A restarted replica
// never applies a command from before a split again: the keys that went
// to the new region are written by the new region's log from then on,
// and an old entry of the parent applied again would take them back.
// Raft delivers its log again from the truncated index all the same, and
// the conf changes up to the floor are applied again (to raft and to
// conf_ver): the configuration record is the one at the truncated index,
// and a replica that skipped them would go on from an old configuration. The
// descriptor record is the one in force there (truncations and
// snapshots rewrite it); a replica without one (created before splits
// existed) has the range its node gave it at version 1.
//
// A region's log starts after its initial state (initIndex, initTerm,
// the voters from pd's directory), which every replica derives alike, or
// after its truncated state: the last entry dropped from the log, whose
// effects the KV store had made durable (kv.Store.Sync) before it was
// dropped. A restarted replica takes the truncated index as its applied
// index and applies the rest of the log again from there (every
// replicated batch is a sequence of blind puts and deletes, so applying
// a suffix of the log again leaves the same state; kv.ApplyReplicated).
const (
	keyPrefix  = 'r'
	keyEntry   = 'e'
	keyHardSt  = 'h'
	keyTrunc   = 't'
	keyConf    = 'c'
	keyTomb    = 'x'
	keyDesc    = 'd'
	keyFloor   = 'a'
	regionLen  = 1 + 8
	entryKeyLn = regionLen + 1 + 8
)

// initIndex and initTerm are the index and term of every region's initial
// state (as TiKV's RAFT_INIT_LOG_INDEX): above zero, so that a replica
// created from the directory and one that raft would create from a
// snapshot are told apart.
const (
	initIndex = 5
	initTerm  = 5
)

func regionKey(region uint64, kind byte) []byte {
	k := make([]byte, regionLen, entryKeyLn)
	k[0] = keyPrefix
	binary.BigEndian.PutUint64(k[1:], region)
	return append(k, kind)
}

func entryKey(region, index uint64) []byte {
	return binary.BigEndian.AppendUint64(regionKey(region, keyEntry), index)
}

func hardStateKey(region uint64) []byte { return regionKey(region, keyHardSt) }

func truncKey(region uint64) []byte { return regionKey(region, keyTrunc) }

func confKey(region uint64) []byte { return regionKey(region, keyConf) }

func tombKey(region uint64) []byte { return regionKey(region, keyTomb) }

func descKey(region uint64) []byte { return regionKey(region, keyDesc) }

func floorKey(region uint64) []byte { return regionKey(region, keyFloor) }

// confAt is a group's configuration and its conf_ver.
type confAt struct {
	ver  uint64
	conf *pb.ConfState
}

func (c confAt) encode() ([]byte, error) {
	b, err := proto.Marshal(c.conf)
	if err != nil {
		return nil, err
	}
	return append(binary.BigEndian.AppendUint64(nil, c.ver), b...), nil
}

func decodeConfAt(v []byte) (confAt, error) {
	if len(v) < 8 {
		return confAt{}, errCorruptLog
	}
	cs := &pb.ConfState{}
	if err := proto.Unmarshal(v[8:], cs); err != nil {
		return confAt{}, fmt.Errorf("%w: %w", errCorruptLog, err)
	}
	return confAt{ver: binary.BigEndian.Uint64(v), conf: cs}, nil
}

// snapshotData is a snapshot's data: the conf_ver of its configuration
// and the region's descriptor at its index (the keys travel on the
// snapshot stream, not in the message):
//
//	conf_ver (8) | Descriptor.appendTo
func snapshotData(confVer uint64, d Descriptor) []byte {
	return d.appendTo(binary.BigEndian.AppendUint64(nil, confVer))
}

func snapshotConfVer(data []byte) uint64 {
	if len(data) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(data)
}

// snapshotDesc returns the descriptor a snapshot's data carries; false
// for data without one.
func snapshotDesc(data []byte) (Descriptor, bool) {
	if len(data) <= 8 {
		return Descriptor{}, false
	}
	d, err := decodeDescriptor(data[8:])
	return d, err == nil
}

// appendTo appends the descriptor's encoding, the one place it is laid
// out (the descriptor record and snapshots carry it):
//
//	version (8) | uvarint len(start) | start | end
func (d Descriptor) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, d.Version)
	b = binary.AppendUvarint(b, uint64(len(d.Start)))
	b = append(b, d.Start...)
	return append(b, d.End...)
}

func decodeDescriptor(v []byte) (Descriptor, error) {
	if len(v) < 9 {
		return Descriptor{}, errCorruptLog
	}
	d := Descriptor{Version: binary.BigEndian.Uint64(v)}
	n, w := binary.Uvarint(v[8:])
	if w <= 0 || n > uint64(len(v)-8-w) {
		return Descriptor{}, errCorruptLog
	}
	rest := v[8+w:]
	d.Start = append([]byte(nil), rest[:n]...)
	if len(rest[n:]) > 0 {
		d.End = append([]byte(nil), rest[n:]...)
	}
	return d, nil
}

// truncated is a region's truncated state: the index and term of the
// last entry dropped from its log.
type truncated struct{ index, term uint64 }

func (t truncated) encode() []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, t.index), t.term)
}

func decodeTruncated(v []byte) (truncated, error) {
	if len(v) != 16 {
		return truncated{}, errCorruptLog
	}
	return truncated{index: binary.BigEndian.Uint64(v), term: binary.BigEndian.Uint64(v[8:])}, nil
}

// errCorruptLog: a raft record that does not decode.
var errCorruptLog = errors.New("raftstore: corrupt raft log record")

// persisted is what a region's replica kept: its hard state, where its
// log starts, the configuration there (nil: none recorded), the log, and
// the tombstone's conf_ver (0: none).
type persisted struct {
	hardState *pb.HardState
	trunc     truncated
	hasTrunc  bool
	conf      *confAt
	entries   []*pb.Entry
	tombstone uint64
	// desc is the descriptor in force at the persisted applied index
	// (nil: none recorded); floor is the applied floor (0: none).
	desc  *Descriptor
	floor uint64
}

// initialized reports whether the replica has a state to start from: a
// configuration, a truncated state, a hard state or a log (before
// configurations were recorded, a replica created from its initial state
// had only the last three).
func (p *persisted) initialized() bool {
	return p.conf != nil || p.hasTrunc || p.hardState.GetCommit() > 0 || len(p.entries) > 0
}

// getValue reads key from db: nil, nil when it is absent.
func getValue(db *pebble.DB, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

// loadRegion reads region's hard state and log from db.
func loadRegion(db *pebble.DB, region uint64) (*persisted, error) {
	out := &persisted{trunc: truncated{index: initIndex, term: initTerm}}
	v, err := getValue(db, truncKey(region))
	if err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read truncated state: %w", region, err)
	}
	if v != nil {
		out.hasTrunc = true
		if out.trunc, err = decodeTruncated(v); err != nil {
			return nil, fmt.Errorf("raftstore: region %d: truncated state: %w", region, err)
		}
	}
	if v, err = getValue(db, confKey(region)); err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read configuration: %w", region, err)
	}
	if v != nil {
		c, err := decodeConfAt(v)
		if err != nil {
			return nil, fmt.Errorf("raftstore: region %d: configuration: %w", region, err)
		}
		out.conf = &c
	}
	if v, err = getValue(db, descKey(region)); err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read descriptor: %w", region, err)
	}
	if v != nil {
		d, err := decodeDescriptor(v)
		if err != nil {
			return nil, fmt.Errorf("raftstore: region %d: descriptor: %w", region, err)
		}
		out.desc = &d
	}
	if v, err = getValue(db, floorKey(region)); err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read applied floor: %w", region, err)
	}
	if len(v) == 8 {
		out.floor = binary.BigEndian.Uint64(v)
	}
	if v, err = getValue(db, tombKey(region)); err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read tombstone: %w", region, err)
	}
	if len(v) == 8 {
		out.tombstone = binary.BigEndian.Uint64(v)
	}
	v, closer, err := db.Get(hardStateKey(region))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("raftstore: region %d: read hard state: %w", region, err)
	default:
		hs := &pb.HardState{}
		err = proto.Unmarshal(v, hs)
		_ = closer.Close()
		if err != nil {
			return nil, fmt.Errorf("raftstore: region %d: hard state: %w: %w", region, errCorruptLog, err)
		}
		out.hardState = hs
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: entryKey(region, out.trunc.index+1), UpperBound: entryKey(region, math.MaxUint64)})
	if err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read log: %w", region, err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		e := &pb.Entry{}
		if err := proto.Unmarshal(it.Value(), e); err != nil {
			return nil, fmt.Errorf("raftstore: region %d: entry %x: %w: %w", region, it.Key(), errCorruptLog, err)
		}
		prev := out.trunc.index
		if n := len(out.entries); n > 0 {
			prev = out.entries[n-1].GetIndex()
		}
		if prev+1 != e.GetIndex() {
			return nil, fmt.Errorf("raftstore: region %d: entry %d after %d: %w", region, e.GetIndex(), prev, errCorruptLog)
		}
		out.entries = append(out.entries, e)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read log: %w", region, err)
	}
	return out, nil
}

// writeReady adds a Ready round's entries and hard state of region to b.
// Entries replace the log from their first index on: a new leader may
// overwrite an uncommitted suffix, so the persisted entries past the last
// new one are deleted.
func writeReady(b *pebble.Batch, region uint64, entries []*pb.Entry, hs *pb.HardState) error {
	for _, e := range entries {
		v, err := proto.Marshal(e)
		if err != nil {
			return fmt.Errorf("raftstore: region %d: encode entry %d: %w", region, e.GetIndex(), err)
		}
		if err := b.Set(entryKey(region, e.GetIndex()), v, nil); err != nil {
			return err
		}
	}
	if n := len(entries); n > 0 {
		if err := b.DeleteRange(entryKey(region, entries[n-1].GetIndex()+1), entryKey(region, math.MaxUint64), nil); err != nil {
			return err
		}
	}
	if hs != nil && (hs.GetTerm() != 0 || hs.GetVote() != 0 || hs.GetCommit() != 0) {
		v, err := proto.Marshal(hs)
		if err != nil {
			return fmt.Errorf("raftstore: region %d: encode hard state: %w", region, err)
		}
		if err := b.Set(hardStateKey(region), v, nil); err != nil {
			return err
		}
	}
	return nil
}

// writeTruncate adds to b the truncation of region's log up to and
// including t: the truncated state with the configuration there, and the
// entries up to it deleted.
func writeTruncate(b *pebble.Batch, region uint64, t truncated, c confAt, d Descriptor) error {
	if err := b.DeleteRange(entryKey(region, 0), entryKey(region, t.index+1), nil); err != nil {
		return err
	}
	return writeState(b, region, t, c, d)
}

// writeState adds to b region's truncated state, its configuration and
// its descriptor there.
func writeState(b *pebble.Batch, region uint64, t truncated, c confAt, d Descriptor) error {
	v, err := c.encode()
	if err != nil {
		return fmt.Errorf("raftstore: region %d: encode configuration: %w", region, err)
	}
	if err := b.Set(confKey(region), v, nil); err != nil {
		return err
	}
	if err := b.Set(descKey(region), d.appendTo(nil), nil); err != nil {
		return err
	}
	return b.Set(truncKey(region), t.encode(), nil)
}

// writeSnapshot adds to b a snapshot's replacement of region's log: the
// truncated state at the snapshot with its configuration, and every
// entry deleted (raft installs a snapshot only over a log that does not
// hold its index; the Ready's entries, written after, follow it).
func writeSnapshot(b *pebble.Batch, region uint64, t truncated, c confAt, d Descriptor) error {
	if err := b.DeleteRange(entryKey(region, 0), entryKey(region, math.MaxUint64), nil); err != nil {
		return err
	}
	return writeState(b, region, t, c, d)
}

// writeTombstone adds to b the removal of region's replica: everything
// the raft engine held of it goes, and a tombstone at confVer stays.
func writeTombstone(b *pebble.Batch, region, confVer uint64) error {
	if err := b.DeleteRange(regionKey(region, 0), regionKey(region+1, 0), nil); err != nil {
		return err
	}
	return b.Set(tombKey(region), binary.BigEndian.AppendUint64(nil, confVer), nil)
}
