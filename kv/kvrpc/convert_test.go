package kvrpc

import (
	"errors"
	"reflect"
	"testing"

	"github.com/percdb/percdb/kv"
)

// TestKeyErrorRoundTrip sends every typed error of the contract through
// its wire form and back: the txn layer tells them apart by type and
// reads their fields.
func TestKeyErrorRoundTrip(t *testing.T) {
	lock := kv.LockInfo{Key: []byte("k"), Primary: []byte("p"), StartTS: 7, TTL: 3000, Type: kv.OpPessimisticLock, MinCommitTS: 9, TxnSize: 2, ForUpdateTS: 8}
	for _, want := range []error{
		&kv.KeyIsLockedError{Lock: lock},
		&kv.KeyIsLockedError{Lock: lock, More: []kv.LockInfo{lock, {Key: []byte("k2"), Primary: []byte("p"), StartTS: 3, Type: kv.OpPut}}},
		&kv.WriteConflictError{Key: []byte("k"), StartTS: 1, ConflictStartTS: 2, ConflictCommitTS: 3},
		&kv.AlreadyExistsError{Key: []byte("k")},
		&kv.TxnAbortedError{Key: []byte("k"), StartTS: 4},
		&kv.TxnLockNotFoundError{Key: []byte("k"), StartTS: 5},
		&kv.CommittedError{Key: []byte("k"), StartTS: 5, CommitTS: 6},
		&kv.CommitTSExpiredError{Key: []byte("k"), StartTS: 5, CommitTS: 6, MinCommitTS: 7},
		&kv.DeadlockError{Key: []byte("k"), StartTS: 5, LockTS: 6, Chain: []kv.WaitForEntry{{Txn: 6, WaitForTxn: 7, Key: []byte("a")}}},
		&kv.PessimisticLockNotFoundError{Key: []byte("k"), StartTS: 5},
		&kv.DiskFullError{Dir: "/d", Available: 1, Needed: 2},
		&kv.DiskFullError{Dir: "/d", Available: 1, Needed: 2, Stalled: true},
		&kv.DiskFullError{Dir: "/d", Available: 1, Needed: 2, Stalled: true, CannotCompact: true},
		&kv.GCTooOldError{TS: 5, SafePoint: 9},
		&RemoteError{Addr: "a:1", Message: "start_ts is 0"},
	} {
		got := keyErrorFromPB(keyErrorToPB(want), "a:1")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip of %T:\n got %#v\nwant %#v", want, got, want)
		}
	}
	// An untyped error keeps its text.
	if got := keyErrorFromPB(keyErrorToPB(errors.New("boom")), "a:1"); got.Error() != "kv store a:1: boom" {
		t.Errorf("untyped error: %v", got)
	}
}

// TestRegionErrorRoundTrip checks each region error kind keeps its kind
// (the Reason prefix) and the store's view of the region.
func TestRegionErrorRoundTrip(t *testing.T) {
	cur := &kv.RegionInfo{ID: 3, Start: []byte("a"), End: []byte("m"), Epoch: kv.RegionEpoch{ConfVer: 1, Version: 4}}
	for _, tc := range []struct {
		in   *kv.RegionError
		kind string
		cur  *kv.RegionInfo
	}{
		{&kv.RegionError{RegionID: 3, Reason: "not found"}, ReasonNotFound, nil},
		{&kv.RegionError{RegionID: 3, Reason: "epoch not match", Current: cur}, ReasonEpochNotMatch, cur},
		{&kv.RegionError{RegionID: 3, Reason: `key not in region: "z"`, Current: cur}, ReasonKeyNotInRange, cur},
		{&kv.RegionError{RegionID: 3, Reason: "not leader", Current: &kv.RegionInfo{ID: 3, Addr: "h:2"}}, ReasonNotLeader, &kv.RegionInfo{ID: 3, Addr: "h:2"}},
		{&kv.RegionError{RegionID: 3, Reason: "server is busy: starting"}, ReasonServerIsBusy, nil},
		{&kv.RegionError{RegionID: 3, Reason: "region unavailable: no quorum"}, ReasonRegionUnavailable, nil},
	} {
		got := RegionErrorFromPB(RegionErrorToPB(tc.in))
		if got.RegionID != 3 || !hasPrefix(got.Reason, tc.kind) || !reflect.DeepEqual(got.Current, tc.cur) {
			t.Errorf("%q: got %+v (current %+v)", tc.in.Reason, got, got.Current)
		}
	}
}

// TestValuesKeepPresence checks that an empty value stays present and a
// missing one stays nil across the wire.
func TestValuesKeepPresence(t *testing.T) {
	pairs := pairsFromPB(pairsToPB([]kv.KvPair{{Key: []byte("a"), Value: []byte{}}, {Key: []byte("b"), Value: []byte("x")}}), false)
	if pairs[0].Value == nil || len(pairs[0].Value) != 0 || string(pairs[1].Value) != "x" {
		t.Errorf("pairs: %+v", pairs)
	}
	ms := mutationsFromPB(mutationsToPB([]kv.Mutation{{Op: kv.OpPut, Key: []byte("a"), Value: []byte{}}, {Op: kv.OpDelete, Key: []byte("b")}}))
	if ms[0].Value == nil || ms[1].Value != nil || ms[0].Op != kv.OpPut || ms[1].Op != kv.OpDelete {
		t.Errorf("mutations: %+v", ms)
	}
}
