package raftstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Splits, after TiKV's BatchSplit: a region's leader proposes a split
// entry naming the key and the new region's id (which pd allocated); every
// replica applies it at the same index of the log, so every replica cuts
// the region alike: the region keeps [start, key) and its id, the new
// region takes [key, end) with the same voters, and both get the next
// epoch version. The new region's raft group is created on each store
// from the split, not from messages: its replica starts from the region's
// initial state (initIndex, initTerm, the voters), over the keys the
// store already holds, which are the parent's as of the split's index,
// the same on every replica. On the store whose replica leads the parent
// the new replica campaigns at once; messages that reach a store before
// it applied the split wait for it for a while (Store.round's orphans).
//
// Every command entry carries the region's version as its leader saw it
// when it decided the command (Leadership.Region): an entry whose version
// is no longer the region's when it is applied, one decided before a
// split that applied first, is skipped on every replica and its proposer
// gets *EpochError (the client routes again: its keys may be the new
// region's now, whose log alone may write them). A split is refused, on
// every replica alike, while the group is in a joint configuration or has
// learners (a conf change under way), or when the key does not cut the
// region in two.

// Descriptor is a region's key range [Start, End) (End nil: to the end)
// and its epoch version, which every split bumps.
type Descriptor struct {
	Start, End []byte
	Version    uint64
}

// Contains reports whether key lies in the region.
func (d Descriptor) Contains(key []byte) bool {
	return bytes.Compare(key, d.Start) >= 0 && (len(d.End) == 0 || bytes.Compare(key, d.End) < 0)
}

// clone returns a copy that shares no memory with d.
func (d Descriptor) clone() Descriptor {
	d.Start = append([]byte(nil), d.Start...)
	if d.End != nil {
		d.End = append([]byte(nil), d.End...)
	}
	return d
}

// splitAt returns the two halves of d cut at key.
func (d Descriptor) splitAt(key []byte) (left, right Descriptor) {
	k := append([]byte(nil), key...)
	left = Descriptor{Start: append([]byte(nil), d.Start...), End: k, Version: d.Version + 1}
	right = Descriptor{Start: k, Version: d.Version + 1}
	if d.End != nil {
		right.End = append([]byte(nil), d.End...)
	}
	return left, right
}

// EpochError: a command was decided under a version of its region that a
// split ended before the command's entry was applied; it was applied
// nowhere. Current is the region as this replica has it now.
type EpochError struct {
	RegionID uint64
	Version  uint64
	Current  Descriptor
}

func (e *EpochError) Error() string {
	return fmt.Sprintf("raftstore: region %d: epoch version %d is not the region's %d (it was split)", e.RegionID, e.Version, e.Current.Version)
}

// ErrSplitRefused is wrapped by the outcome of a split that was applied
// as a refusal (on every replica alike).
var ErrSplitRefused = errors.New("raftstore: split refused")

// ErrConfChangeUnderWay is wrapped, with ErrSplitRefused, by the outcome
// of a split refused because the region's membership is changing (a
// replica being added or moved): the split may be tried again once the
// change is done.
var ErrConfChangeUnderWay = errors.New("a conf change under way")

// RegionID is the id of the leadership's region.
func (l Leadership) RegionID() uint64 { return l.r.id }

// Region returns the descriptor under which the leadership's commands
// are decided, as the replica had it when Leading returned. Its slices
// are shared and must not be modified (descriptors are never modified in
// place: a split makes new ones).
func (l Leadership) Region() Descriptor { return l.desc }

// AppliedBytes returns how many bytes of write batches this replica
// applied since it was created (a split check's measure of growth).
func (r *Replica) AppliedBytes() uint64 { return r.appliedBytes.Load() }

// Region returns the region's descriptor as this replica applied it
// (shared slices, as Leadership.Region's).
func (r *Replica) Region() Descriptor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.desc
}

// Version returns the region's epoch version as this replica applied it.
func (r *Replica) Version() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.desc.Version
}

// Split proposes cutting the region at key, the part from key on to
// become region newID (pd allocated the id), and returns once this
// replica applied it (the new region's replica then exists on this
// store) with the two descriptors, or with the reason it was not:
// *NotLeaderError, *EpochError (the region changed since Leading),
// ErrSplitRefused, or, as Replicate, an outcome settled after ctx ended.
func (l Leadership) Split(ctx context.Context, key []byte, newID uint64) (left, right Descriptor, err error) {
	if newID == 0 || newID == l.r.id {
		return left, right, fmt.Errorf("%w: new region id %d", ErrSplitRefused, newID)
	}
	if !l.desc.Contains(key) || bytes.Equal(key, l.desc.Start) {
		return left, right, fmt.Errorf("%w: key %q does not cut region %d [%q, %q) in two", ErrSplitRefused, key, l.r.id, l.desc.Start, l.desc.End)
	}
	body := binary.BigEndian.AppendUint64(nil, newID)
	if err := l.replicate(ctx, kindSplit, append(body, key...)); err != nil {
		return left, right, err
	}
	left, right = l.desc.splitAt(key)
	return left, right, nil
}

// applySplit applies a split entry at index (body: the new region's id
// (8) | the key), whose version matched the region's. Loop only.
func (r *Replica) applySplit(ctx context.Context, index uint64, body []byte) error {
	if len(body) < 9 {
		return fmt.Errorf("%w: malformed split entry at %d", ErrSplitRefused, index)
	}
	newID, key := binary.BigEndian.Uint64(body), body[8:]
	d := r.desc
	switch {
	case newID == r.id || !d.Contains(key) || bytes.Equal(key, d.Start):
		return fmt.Errorf("%w: key %q, region %d [%q, %q)", ErrSplitRefused, key, newID, d.Start, d.End)
	case len(r.conf.GetVotersOutgoing()) > 0 || len(r.conf.GetLearners()) > 0 || len(r.conf.GetLearnersNext()) > 0:
		return fmt.Errorf("%w: region %d has %w", ErrSplitRefused, r.id, ErrConfChangeUnderWay)
	}
	left, right := d.splitAt(key)
	// The keys of both halves are durable as of this index before the
	// split is recorded: no entry before it is applied again (keys.go).
	if err := r.s.cfg.Applier.Sync(ctx); err != nil {
		return fmt.Errorf("raftstore: region %d: split at %d: %w", r.id, index, err)
	}
	child, err := r.s.createSplit(r.id, index, left, newID, right, confAt{ver: r.confVer, conf: r.conf})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.desc = left
	r.mu.Unlock()
	r.s.cfg.Logger.Info("raftstore: region split", "region", r.id, "index", index, "key", fmt.Sprintf("%q", key),
		"new_region", newID, "version", left.Version)
	if child != nil && r.rn.BasicStatus().RaftState == raft.StateLeader {
		// The parent's leader leads the new region too, unless a store
		// that applied the split sooner got there first.
		if err := child.rn.Campaign(); err != nil {
			r.s.cfg.Logger.Warn("raftstore: new region's campaign", "region", newID, "err", err)
		}
	}
	r.s.splitDone(r.id, newID)
	return nil
}

// createSplit records a split of region parent at index in the raft
// engine, in one synced batch: the parent's new descriptor and applied
// floor, and the new region's initial state (its descriptor, the
// parent's configuration), unless the new region is known here already
// (a replay after a restart, or a replica removed from this store since:
// a tombstone). Then it creates the new region's replica, which it
// returns (nil when it existed). A replica of newID created uninitialized
// before (pd listed the region first) is replaced: it holds nothing.
// Loop only.
func (s *Store) createSplit(parent, index uint64, left Descriptor, newID uint64, right Descriptor, at confAt) (*Replica, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(descKey(parent), left.appendTo(nil), nil); err != nil {
		return nil, err
	}
	if err := b.Set(floorKey(parent), binary.BigEndian.AppendUint64(nil, index), nil); err != nil {
		return nil, err
	}
	old := s.replicas[newID]
	if old != nil && len(old.Conf().Voters) > 0 {
		old = nil // initialized: it is the split's already
	}
	kept, err := loadRegion(s.db, newID)
	if err != nil {
		return nil, err
	}
	create := (s.replicas[newID] == nil || old != nil) && kept.tombstone == 0
	if create && !kept.initialized() {
		cs := proto.Clone(at.conf).(*pb.ConfState)
		if err := writeState(b, newID, truncated{index: initIndex, term: initTerm}, confAt{ver: at.ver, conf: cs}, right); err != nil {
			return nil, err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, fmt.Errorf("raftstore: region %d: record split at %d: %w", parent, index, err)
	}
	if !create {
		return nil, nil
	}
	if old != nil {
		old.failAll(&NotLeaderError{RegionID: newID}, true)
		delete(s.replicas, newID)
	}
	voters := slices.Clone(at.conf.GetVoters())
	child, err := newReplica(s, newID, right, voters, at.ver)
	if err != nil {
		return nil, fmt.Errorf("raftstore: region %d: create the split's region %d: %w", parent, newID, err)
	}
	s.replicas[newID] = child
	s.touch(child)
	return child, nil
}

// splitDone tells the node that region parent split off region child on
// this store.
func (s *Store) splitDone(parent, child uint64) {
	if f := s.cfg.OnSplit; f != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			f(parent, child)
		}()
	}
}
