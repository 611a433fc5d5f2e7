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
//
// A region's log starts after its initial state (initIndex, initTerm,
// the voters from pd's directory), which every replica derives alike, so
// nothing else needs to be kept: the log is never truncated in this
// version, and a restarted replica re-applies it from the start (every
// replicated batch is a sequence of blind puts and deletes, so applying
// a suffix of the log again leaves the same state; kv.ApplyReplicated).
const (
	keyPrefix  = 'r'
	keyEntry   = 'e'
	keyHardSt  = 'h'
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

// errCorruptLog: a raft record that does not decode.
var errCorruptLog = errors.New("raftstore: corrupt raft log record")

// persisted is what a region's replica kept: its hard state and log.
type persisted struct {
	hardState *pb.HardState
	entries   []*pb.Entry
}

// loadRegion reads region's hard state and log from db.
func loadRegion(db *pebble.DB, region uint64) (*persisted, error) {
	out := &persisted{}
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
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: entryKey(region, 0), UpperBound: entryKey(region, math.MaxUint64)})
	if err != nil {
		return nil, fmt.Errorf("raftstore: region %d: read log: %w", region, err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		e := &pb.Entry{}
		if err := proto.Unmarshal(it.Value(), e); err != nil {
			return nil, fmt.Errorf("raftstore: region %d: entry %x: %w: %w", region, it.Key(), errCorruptLog, err)
		}
		if n := len(out.entries); n > 0 && out.entries[n-1].GetIndex()+1 != e.GetIndex() {
			return nil, fmt.Errorf("raftstore: region %d: entry %d after %d: %w", region, e.GetIndex(), out.entries[n-1].GetIndex(), errCorruptLog)
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
