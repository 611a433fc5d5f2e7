package node

import (
	"context"
	"testing"
	"time"

	"github.com/percdb/percdb/kv/raftstore"
	"github.com/percdb/percdb/pd/pdpb"
)

// nopApplier applies nothing: the test below looks only at which
// replicas the node holds.
type nopApplier struct{}

func (nopApplier) ApplyReplicated(context.Context, []byte) error { return nil }
func (nopApplier) UpdateMaxReadTS(uint64)                        {}
func (nopApplier) Sync(context.Context) error                    { return nil }
func (nopApplier) ExportRange(context.Context, []byte, []byte, int, func([]byte) error) error {
	return nil
}
func (nopApplier) ImportRange(context.Context, []byte, []byte, [][]byte) error { return nil }

type nopTransport struct{}

func (nopTransport) Send(uint64, []raftstore.Envelope) {}
func (nopTransport) SendSnapshot(context.Context, uint64, raftstore.Envelope, func(func([]byte) error) error) error {
	return nil
}

// TestReaddedReplicaIsCreated: a conf change removes the store's replica
// of a region (the store destroys it, leaving a tombstone) and another
// adds the store back before a heartbeat told pd of the removal, so pd
// goes on listing the region for the store, at a newer configuration.
// The node must create the new replica, not keep routing to (and
// reporting) the destroyed one: kept, the replica pd added never exists,
// and the move that added it never finishes (tests/cluster's
// TestLowSpaceStoreIsEmptied hung on it). The node notices the destroyed
// replica by itself, so that its next heartbeat asks for the list whole.
func TestReaddedReplicaIsCreated(t *testing.T) {
	rs, err := raftstore.Open(raftstore.Config{StoreID: 1, InMemory: true, Applier: nopApplier{}, Transport: nopTransport{},
		FreshTS: func(context.Context) (uint64, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	rs.Start()
	defer rs.Close()
	n := &Node{raft: rs, regions: map[uint64]*replica{}}
	region := func(confVer uint64) []*pdpb.Region {
		return []*pdpb.Region{{Id: 7, ConfVer: confVer, Version: 1, StoreId: 1, Peers: []uint64{1}}}
	}
	if _, _, _, err := n.setRegions(region(1), nil); err != nil {
		t.Fatal(err)
	}
	first := n.regions[7].raft
	if first == nil || rs.Replica(7) != first {
		t.Fatalf("region 7 not created: node %v, store %v", first, rs.Replica(7))
	}
	n.rep.tookRegions(5) // the list is as of revision 5
	if _, _, stale := n.regionStates(); stale {
		t.Fatal("a live replica read as destroyed")
	}
	rs.RemoveRegion(7) // what applying the conf change that removed the store does
	for deadline := time.Now().Add(time.Minute); rs.Replica(7) != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the store did not destroy its replica of region 7")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The node sees its replica destroyed: its heartbeat asks pd for the
	// list whole (pd answers it only when the store's regions changed,
	// and the re-add may have come before the list the node holds).
	if _, _, stale := n.regionStates(); !stale {
		t.Fatal("the destroyed replica not noticed")
	}
	// pd's record, a conf change later: the store is a member again.
	if _, _, _, err := n.setRegions(region(3), nil); err != nil {
		t.Fatal(err)
	}
	got := n.regions[7]
	if got == nil || got.raft == first || got.raft != rs.Replica(7) || rs.Replica(7) == nil {
		t.Fatalf("after the re-add: node holds %v (destroyed: %v), store holds %v", got, got != nil && got.raft == first, rs.Replica(7))
	}
}
