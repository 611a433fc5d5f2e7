package kvrpc

import (
	"errors"
	"fmt"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvpb"
)

// This file is the one place where kv's types become kvpb's and back.
// Every conversion is exact: a value that crosses the wire and comes back
// is the value sent (convert_test.go checks each type both ways).

func regionCtxToPB(rc kv.RegionCtx) *kvpb.RegionCtx {
	return &kvpb.RegionCtx{RegionId: rc.RegionID, Epoch: &kvpb.RegionEpoch{ConfVer: rc.Epoch.ConfVer, Version: rc.Epoch.Version}}
}

func regionCtxFromPB(rc *kvpb.RegionCtx) kv.RegionCtx {
	return kv.RegionCtx{RegionID: rc.GetRegionId(), Epoch: epochFromPB(rc.GetEpoch())}
}

func epochFromPB(e *kvpb.RegionEpoch) kv.RegionEpoch {
	return kv.RegionEpoch{ConfVer: e.GetConfVer(), Version: e.GetVersion()}
}

// RegionInfoToPB converts a region descriptor to its wire form.
func RegionInfoToPB(r kv.RegionInfo) *kvpb.RegionInfo {
	return &kvpb.RegionInfo{Id: r.ID, Start: r.Start, End: r.End, Epoch: &kvpb.RegionEpoch{ConfVer: r.Epoch.ConfVer, Version: r.Epoch.Version}, Addr: r.Addr}
}

// RegionInfoFromPB converts a region descriptor from its wire form; nil
// gives nil.
func RegionInfoFromPB(r *kvpb.RegionInfo) *kv.RegionInfo {
	if r == nil {
		return nil
	}
	return &kv.RegionInfo{ID: r.GetId(), Start: r.GetStart(), End: r.GetEnd(), Epoch: epochFromPB(r.GetEpoch()), Addr: r.GetAddr()}
}

func regionInfoPtrToPB(r *kv.RegionInfo) *kvpb.RegionInfo {
	if r == nil {
		return nil
	}
	return RegionInfoToPB(*r)
}

func lockToPB(l kv.LockInfo) *kvpb.LockInfo {
	return &kvpb.LockInfo{Key: l.Key, Primary: l.Primary, StartTs: l.StartTS, Ttl: l.TTL, Type: kvpb.Op(l.Type),
		MinCommitTs: l.MinCommitTS, TxnSize: l.TxnSize, ForUpdateTs: l.ForUpdateTS}
}

func lockFromPB(l *kvpb.LockInfo) kv.LockInfo {
	return kv.LockInfo{Key: l.GetKey(), Primary: l.GetPrimary(), StartTS: l.GetStartTs(), TTL: l.GetTtl(), Type: kv.Op(l.GetType()),
		MinCommitTS: l.GetMinCommitTs(), TxnSize: l.GetTxnSize(), ForUpdateTS: l.GetForUpdateTs()}
}

// Region error kinds as kv.RegionError.Reason. kv's own reasons for the
// first three ("not found", "epoch not match", "key not in region: %q")
// are the store's; the client reads the kind, not the text.
const (
	ReasonNotFound      = "not found"
	ReasonEpochNotMatch = "epoch not match"
	ReasonKeyNotInRange = "key not in region"
	ReasonNotLeader     = "not leader"
	ReasonServerIsBusy  = "server is busy"
	// ReasonRegionUnavailable: the replica asked has known no leader for
	// longer than elections take (a quorum of the region's replicas is
	// lost); the client fails the request with kv.ErrRegionUnavailable
	// rather than retrying it for its whole budget.
	ReasonRegionUnavailable = "region unavailable"
	// ReasonNoRoute: the client's router has no route for the region
	// (its cache entry was dropped since LocateKey): re-locate.
	ReasonNoRoute = "no route"
)

// RegionErrorToPB converts a *kv.RegionError to its wire form, the kind
// read from its Reason.
func RegionErrorToPB(e *kv.RegionError) *kvpb.RegionError {
	out := &kvpb.RegionError{RegionId: e.RegionID, Message: e.Reason}
	cur := regionInfoPtrToPB(e.Current)
	switch {
	case hasPrefix(e.Reason, ReasonEpochNotMatch):
		out.Kind = &kvpb.RegionError_EpochNotMatch{EpochNotMatch: &kvpb.EpochNotMatch{Current: cur}}
	case hasPrefix(e.Reason, ReasonKeyNotInRange):
		out.Kind = &kvpb.RegionError_KeyNotInRegion{KeyNotInRegion: &kvpb.KeyNotInRegion{Current: cur}}
	case hasPrefix(e.Reason, ReasonNotLeader):
		leader := ""
		if e.Current != nil {
			leader = e.Current.Addr
		}
		out.Kind = &kvpb.RegionError_NotLeader{NotLeader: &kvpb.NotLeader{LeaderAddr: leader}}
	case hasPrefix(e.Reason, ReasonServerIsBusy):
		out.Kind = &kvpb.RegionError_ServerIsBusy{ServerIsBusy: &kvpb.ServerIsBusy{Reason: e.Reason}}
	case hasPrefix(e.Reason, ReasonRegionUnavailable):
		out.Kind = &kvpb.RegionError_RegionUnavailable{RegionUnavailable: &kvpb.RegionUnavailable{}}
	default:
		out.Kind = &kvpb.RegionError_NotFound{NotFound: &kvpb.RegionNotFound{}}
	}
	return out
}

// RegionErrorFromPB converts a wire region error to a *kv.RegionError,
// whose Reason starts with the kind's Reason constant.
func RegionErrorFromPB(e *kvpb.RegionError) *kv.RegionError {
	out := &kv.RegionError{RegionID: e.GetRegionId(), Reason: e.GetMessage()}
	kind := ReasonNotFound
	switch k := e.GetKind().(type) {
	case *kvpb.RegionError_EpochNotMatch:
		kind, out.Current = ReasonEpochNotMatch, RegionInfoFromPB(k.EpochNotMatch.GetCurrent())
	case *kvpb.RegionError_KeyNotInRegion:
		kind, out.Current = ReasonKeyNotInRange, RegionInfoFromPB(k.KeyNotInRegion.GetCurrent())
	case *kvpb.RegionError_NotLeader:
		kind = ReasonNotLeader
		if a := k.NotLeader.GetLeaderAddr(); a != "" {
			out.Current = &kv.RegionInfo{ID: e.GetRegionId(), Addr: a}
		}
	case *kvpb.RegionError_ServerIsBusy:
		kind = ReasonServerIsBusy
	case *kvpb.RegionError_RegionUnavailable:
		kind = ReasonRegionUnavailable
	}
	if !hasPrefix(out.Reason, kind) {
		out.Reason = kind + ": " + out.Reason
	}
	return out
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// keyErrorToPB converts a command's error to its wire form: one of kv's
// typed errors field for field, anything else as text.
func keyErrorToPB(err error) *kvpb.KeyError {
	var (
		locked   *kv.KeyIsLockedError
		conflict *kv.WriteConflictError
		exists   *kv.AlreadyExistsError
		aborted  *kv.TxnAbortedError
		notFound *kv.TxnLockNotFoundError
		commit   *kv.CommittedError
		expired  *kv.CommitTSExpiredError
		deadlock *kv.DeadlockError
		pessNF   *kv.PessimisticLockNotFoundError
		full     *kv.DiskFullError
		tooOld   *kv.GCTooOldError
	)
	switch {
	case errors.As(err, &locked):
		l := &kvpb.Locked{Lock: lockToPB(locked.Lock)}
		for _, m := range locked.More {
			l.More = append(l.More, lockToPB(m))
		}
		return &kvpb.KeyError{Kind: &kvpb.KeyError_Locked{Locked: l}}
	case errors.As(err, &conflict):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_Conflict{Conflict: &kvpb.WriteConflict{Key: conflict.Key, StartTs: conflict.StartTS,
			ConflictStartTs: conflict.ConflictStartTS, ConflictCommitTs: conflict.ConflictCommitTS}}}
	case errors.As(err, &exists):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_AlreadyExists{AlreadyExists: &kvpb.AlreadyExists{Key: exists.Key}}}
	case errors.As(err, &aborted):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_Aborted{Aborted: &kvpb.TxnAborted{Key: aborted.Key, StartTs: aborted.StartTS}}}
	case errors.As(err, &notFound):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_LockNotFound{LockNotFound: &kvpb.TxnLockNotFound{Key: notFound.Key, StartTs: notFound.StartTS}}}
	case errors.As(err, &commit):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_Committed{Committed: &kvpb.Committed{Key: commit.Key, StartTs: commit.StartTS, CommitTs: commit.CommitTS}}}
	case errors.As(err, &expired):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_CommitTsExpired{CommitTsExpired: &kvpb.CommitTsExpired{Key: expired.Key, StartTs: expired.StartTS,
			CommitTs: expired.CommitTS, MinCommitTs: expired.MinCommitTS}}}
	case errors.As(err, &deadlock):
		d := &kvpb.Deadlock{Key: deadlock.Key, StartTs: deadlock.StartTS, LockTs: deadlock.LockTS}
		for _, w := range deadlock.Chain {
			d.Chain = append(d.Chain, &kvpb.WaitForEntry{Txn: w.Txn, WaitForTxn: w.WaitForTxn, Key: w.Key})
		}
		return &kvpb.KeyError{Kind: &kvpb.KeyError_Deadlock{Deadlock: d}}
	case errors.As(err, &pessNF):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_PessimisticLockNotFound{PessimisticLockNotFound: &kvpb.PessimisticLockNotFound{Key: pessNF.Key, StartTs: pessNF.StartTS}}}
	case errors.As(err, &full):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_DiskFull{DiskFull: &kvpb.DiskFull{Dir: full.Dir, Available: full.Available, Needed: full.Needed,
			Stalled: full.Stalled, CannotCompact: full.CannotCompact}}}
	case errors.As(err, &tooOld):
		return &kvpb.KeyError{Kind: &kvpb.KeyError_GcTooOld{GcTooOld: &kvpb.GCTooOld{Ts: tooOld.TS, SafePoint: tooOld.SafePoint}}}
	}
	var remote *RemoteError
	if errors.As(err, &remote) {
		// A node passing on another store's error keeps its text.
		return &kvpb.KeyError{Kind: &kvpb.KeyError_Other{Other: remote.Message}}
	}
	return &kvpb.KeyError{Kind: &kvpb.KeyError_Other{Other: err.Error()}}
}

// RemoteError is a command error that is none of kv's typed errors, as the
// store described it.
type RemoteError struct {
	Addr    string
	Message string
}

func (e *RemoteError) Error() string { return fmt.Sprintf("kv store %s: %s", e.Addr, e.Message) }

// keyErrorFromPB converts a wire key error back to kv's typed error; addr
// names the store for an untyped one.
func keyErrorFromPB(e *kvpb.KeyError, addr string) error {
	switch k := e.GetKind().(type) {
	case *kvpb.KeyError_Locked:
		out := &kv.KeyIsLockedError{Lock: lockFromPB(k.Locked.GetLock())}
		for _, m := range k.Locked.GetMore() {
			out.More = append(out.More, lockFromPB(m))
		}
		return out
	case *kvpb.KeyError_Conflict:
		c := k.Conflict
		return &kv.WriteConflictError{Key: c.GetKey(), StartTS: c.GetStartTs(), ConflictStartTS: c.GetConflictStartTs(), ConflictCommitTS: c.GetConflictCommitTs()}
	case *kvpb.KeyError_AlreadyExists:
		return &kv.AlreadyExistsError{Key: k.AlreadyExists.GetKey()}
	case *kvpb.KeyError_Aborted:
		return &kv.TxnAbortedError{Key: k.Aborted.GetKey(), StartTS: k.Aborted.GetStartTs()}
	case *kvpb.KeyError_LockNotFound:
		return &kv.TxnLockNotFoundError{Key: k.LockNotFound.GetKey(), StartTS: k.LockNotFound.GetStartTs()}
	case *kvpb.KeyError_Committed:
		c := k.Committed
		return &kv.CommittedError{Key: c.GetKey(), StartTS: c.GetStartTs(), CommitTS: c.GetCommitTs()}
	case *kvpb.KeyError_CommitTsExpired:
		c := k.CommitTsExpired
		return &kv.CommitTSExpiredError{Key: c.GetKey(), StartTS: c.GetStartTs(), CommitTS: c.GetCommitTs(), MinCommitTS: c.GetMinCommitTs()}
	case *kvpb.KeyError_Deadlock:
		d := k.Deadlock
		out := &kv.DeadlockError{Key: d.GetKey(), StartTS: d.GetStartTs(), LockTS: d.GetLockTs()}
		for _, w := range d.GetChain() {
			out.Chain = append(out.Chain, kv.WaitForEntry{Txn: w.GetTxn(), WaitForTxn: w.GetWaitForTxn(), Key: w.GetKey()})
		}
		return out
	case *kvpb.KeyError_PessimisticLockNotFound:
		return &kv.PessimisticLockNotFoundError{Key: k.PessimisticLockNotFound.GetKey(), StartTS: k.PessimisticLockNotFound.GetStartTs()}
	case *kvpb.KeyError_DiskFull:
		return &kv.DiskFullError{Dir: k.DiskFull.GetDir(), Available: k.DiskFull.GetAvailable(), Needed: k.DiskFull.GetNeeded(),
			Stalled: k.DiskFull.GetStalled(), CannotCompact: k.DiskFull.GetCannotCompact()}
	case *kvpb.KeyError_GcTooOld:
		return &kv.GCTooOldError{TS: k.GcTooOld.GetTs(), SafePoint: k.GcTooOld.GetSafePoint()}
	case *kvpb.KeyError_Other:
		return &RemoteError{Addr: addr, Message: k.Other}
	}
	return &RemoteError{Addr: addr, Message: "key error of an unknown kind"}
}

func pairsToPB(pairs []kv.KvPair) []*kvpb.KvPair {
	out := make([]*kvpb.KvPair, len(pairs))
	for i, p := range pairs {
		out[i] = &kvpb.KvPair{Key: p.Key, Value: p.Value}
	}
	return out
}

// pairsFromPB converts pairs back; a value that arrived empty is an empty
// value, not nil (a pair is only returned when found), unless keyOnly.
func pairsFromPB(pairs []*kvpb.KvPair, keyOnly bool) []kv.KvPair {
	out := make([]kv.KvPair, len(pairs))
	for i, p := range pairs {
		v := p.GetValue()
		if v == nil && !keyOnly {
			v = []byte{}
		}
		out[i] = kv.KvPair{Key: p.GetKey(), Value: v}
	}
	return out
}

func mutationsToPB(ms []kv.Mutation) []*kvpb.Mutation {
	out := make([]*kvpb.Mutation, len(ms))
	for i, m := range ms {
		out[i] = &kvpb.Mutation{Op: kvpb.Op(m.Op), Key: m.Key, Value: m.Value, Pessimistic: m.Pessimistic, Notify: m.Notify}
	}
	return out
}

func mutationsFromPB(ms []*kvpb.Mutation) []kv.Mutation {
	out := make([]kv.Mutation, len(ms))
	for i, m := range ms {
		v := m.GetValue()
		op := kv.Op(m.GetOp())
		if v == nil && (op == kv.OpPut || op == kv.OpInsert) {
			v = []byte{}
		}
		out[i] = kv.Mutation{Op: op, Key: m.GetKey(), Value: v, Pessimistic: m.GetPessimistic(), Notify: m.GetNotify()}
	}
	return out
}

// nonNil keeps a present empty byte string present: protobuf decodes an
// empty bytes field as nil, where kv's types tell nil (absent) from empty.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func keyRangesToPB(rs []kv.KeyRange) []*kvpb.KeyRange {
	out := make([]*kvpb.KeyRange, len(rs))
	for i, r := range rs {
		out[i] = &kvpb.KeyRange{Start: r.Start, End: r.End}
	}
	return out
}

func keyRangesFromPB(rs []*kvpb.KeyRange) []kv.KeyRange {
	out := make([]kv.KeyRange, len(rs))
	for i, r := range rs {
		out[i] = kv.KeyRange{Start: r.GetStart(), End: r.GetEnd()}
	}
	return out
}

func notifyEntriesToPB(es []kv.NotifyEntry) []*kvpb.NotifyEntry {
	out := make([]*kvpb.NotifyEntry, len(es))
	for i, e := range es {
		out[i] = &kvpb.NotifyEntry{Key: e.Key, Column: e.Column, Ts: e.TS}
	}
	return out
}

func notifyEntriesFromPB(es []*kvpb.NotifyEntry) []kv.NotifyEntry {
	out := make([]kv.NotifyEntry, len(es))
	for i, e := range es {
		out[i] = kv.NotifyEntry{Key: e.GetKey(), Column: e.GetColumn(), TS: e.GetTs()}
	}
	return out
}

// changesToPB and changesFromPB carry kv.Change's nil (deleted, no
// previous value) apart from empty values.
func changesToPB(cs []kv.Change) []*kvpb.Change {
	out := make([]*kvpb.Change, len(cs))
	for i, c := range cs {
		out[i] = &kvpb.Change{Key: c.Key, CommitTs: c.CommitTS, Value: c.Value, Deleted: c.Value == nil, Prev: c.Prev, HasPrev: c.Prev != nil}
	}
	return out
}

func changesFromPB(cs []*kvpb.Change) []kv.Change {
	out := make([]kv.Change, len(cs))
	for i, c := range cs {
		out[i] = kv.Change{Key: c.GetKey(), CommitTS: c.GetCommitTs()}
		if !c.GetDeleted() {
			out[i].Value = nonNil(c.GetValue())
		}
		if c.GetHasPrev() {
			out[i].Prev = nonNil(c.GetPrev())
		}
	}
	return out
}
