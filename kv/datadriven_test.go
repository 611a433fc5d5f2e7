package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
	"github.com/percdb/percdb/tso"
)

// TestDataDriven runs the scripts under testdata/, each on a fresh store.
// Commands (timestamps are integers, "max", or "<n>ms" for a timestamp at
// physical time n ms and logical 0, or "<n>ms+<l>" with logical l; TTLs
// are measured on the physical part):
//
//	prewrite start=<ts> primary=<key> [ttl=<ms>] [txn_size=<n>] [for_update=<ts>] [snapshot=<ts>] [one_pc max_commit=<ts>]
//	  <put|insert> <key> <value | "" | len=<n>> [notify=<col>,...] [pessimistic]
//	  <delete|lock|check_not_exists> <key> [notify=<col>,...] [pessimistic]
//	acquire_pessimistic_lock start=<ts> for_update=<ts> primary=<key> [ttl=<ms>] [return_values] [lock_with_conflict]
//	  <key> [check_not_exists]
//	pessimistic_rollback start=<ts> for_update=<ts> keys=(<key>, ...)
//	commit start=<ts> commit=<ts> keys=(<key>, ...)
//	rollback start=<ts> keys=(<key>, ...)
//	cleanup key=<key> start=<ts> [current=<ts>]
//	check_txn_status primary=<key> lock_ts=<ts> current=<ts> [caller=<ts>] [rollback_if_not_exist]
//	resolve_lock start=<ts> [commit=<ts>] [keys=(<key>, ...)]
//	heartbeat primary=<key> start=<ts> ttl=<ms>
//	get key=<key> ts=<ts>
//	batch_get keys=(<key>, ...) ts=<ts>
//	scan [start=<key>] [end=<key>] ts=<ts> [limit=<n>] [reverse] [key_only] [bypass=(<ts>, ...)] [ignore_locks]
//	validate_reads from=<ts> to=<ts> [keys=(<key>, ...)] [ranges=(<start>-<end>, ...)] [bypass=(<ts>, ...)] [changes_first]
//	  (an empty <end> is +infinity)
//	scan_changes [start=<key>] [end=<key>] from=<ts> to=<ts> [limit=<n>] [bypass=(<ts>, ...)]
//	scan_notify [start=<key>] [end=<key>] [limit=<n>]
//	clear_notify
//	  <key> <column> <ts>
//	dump                      print every lock, write, data and notify record
//	split key=<key>
//	regions
//	update_max_read_ts ts=<ts>
//	max_read_ts               print each region's max_read_ts
//	lock_set                  print the keys the store's lock set holds
//
// and the garbage collector's (gc_test.go):
//
//	gc safe_point=<ts> [start=<key>] [limit=<n>] [all]
//	scan_lock max_ts=<ts> [start=<key>] [limit=<n>]
//	destroy_range start=<key> [end=<key>]
//	gc_safe_point             print the store's GC safe point
//
// After every command the runner checks that the lock set holds exactly
// the keys of the lock space (lockSet), failing the test otherwise.
// Every command that takes keys routes to the region of its first key,
// unless region=<id> [version=<v>] names the RegionCtx to send. The
// scripts under testdata/waitfor are the wait-for graph's
// (TestWaitForGraph).
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.HasPrefix(path, waitForScripts) {
			t.Skip("a wait-for graph script: TestWaitForGraph")
		}
		h := &scriptRunner{s: openTestStore(t)}
		datadriven.RunTest(t, path, h.run)
	})
}

// scriptRunner runs one script's commands against its store.
type scriptRunner struct {
	s *Store
}

func (h *scriptRunner) run(t *testing.T, d *datadriven.TestData) string {
	ctx := context.Background()
	out, err := h.exec(ctx, t, d)
	if set, space := h.lockSetKeys(), h.lockSpaceKeys(t); set != space {
		t.Fatalf("%s: after %s: lock set holds\n%s\nbut the lock space\n%s", d.Pos, d.Cmd, set, space)
	}
	if err != nil {
		return fmtErr(err) + "\n"
	}
	if out == "" {
		return "ok\n"
	}
	return out
}

func (h *scriptRunner) exec(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "prewrite":
		req := &PrewriteRequest{
			Primary: []byte(strArg(t, d, "primary")),
			StartTS: tsArg(t, d, "start"),
			LockTTL: 3000,
		}
		d.MaybeScanArgs(t, "ttl", &req.LockTTL)
		d.MaybeScanArgs(t, "txn_size", &req.TxnSize)
		req.ForUpdateTS = optTSArg(t, d, "for_update")
		req.SnapshotTS = optTSArg(t, d, "snapshot")
		if d.HasArg("one_pc") {
			req.TryOnePC = true
			req.MaxCommitTS = tsArg(t, d, "max_commit")
		}
		req.Mutations = parseMutations(t, d)
		routeBy := req.Primary
		if len(req.Mutations) > 0 {
			routeBy = req.Mutations[0].Key
		}
		req.Region = h.region(t, d, routeBy)
		resp, err := h.s.Prewrite(ctx, req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, e := range resp.Errors {
			fmt.Fprintln(&b, fmtErr(e))
		}
		if resp.OnePCCommitTS != 0 {
			fmt.Fprintf(&b, "one_pc commit_ts=%s\n", fmtTS(resp.OnePCCommitTS))
		}
		return b.String(), nil
	case "acquire_pessimistic_lock":
		req := &AcquirePessimisticLockRequest{
			Primary:          []byte(optStrArg(t, d, "primary")),
			StartTS:          tsArg(t, d, "start"),
			ForUpdateTS:      tsArg(t, d, "for_update"),
			LockTTL:          3000,
			ReturnValues:     d.HasArg("return_values"),
			LockWithConflict: d.HasArg("lock_with_conflict"),
			LockOnlyIfExists: d.HasArg("lock_only_if_exists"),
		}
		d.MaybeScanArgs(t, "ttl", &req.LockTTL)
		for _, line := range strings.Split(d.Input, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			req.Keys = append(req.Keys, PessimisticKey{Key: []byte(f[0]), CheckNotExists: len(f) > 1 && f[1] == "check_not_exists"})
		}
		req.Region = h.region(t, d, req.Keys[0].Key)
		resp, err := h.s.AcquirePessimisticLock(ctx, req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		if resp.ConflictTS != 0 {
			fmt.Fprintf(&b, "locked with conflict at %s\n", fmtTS(resp.ConflictTS))
		}
		for i, v := range resp.Values {
			if v == nil {
				fmt.Fprintf(&b, "%q: <not found>\n", req.Keys[i].Key)
				continue
			}
			fmt.Fprintf(&b, "%q: %s\n", req.Keys[i].Key, fmtValue(v))
		}
		return b.String(), nil
	case "lock_range":
		// A locking range read (AcquirePessimisticLockRequest.Range),
		// not waiting: from= and to= bound the range (to= empty: the
		// region's end).
		lr := &LockRange{Start: []byte(optStrArg(t, d, "from")), End: []byte(optStrArg(t, d, "to"))}
		d.MaybeScanArgs(t, "limit", &lr.Limit)
		lr.Reverse = d.HasArg("reverse")
		req := &AcquirePessimisticLockRequest{
			Primary:          []byte(optStrArg(t, d, "primary")),
			StartTS:          tsArg(t, d, "start"),
			ForUpdateTS:      tsArg(t, d, "for_update"),
			LockTTL:          3000,
			LockWithConflict: d.HasArg("lock_with_conflict"),
			Range:            lr,
		}
		req.Region = h.region(t, d, lr.Start)
		resp, err := h.s.AcquirePessimisticLock(ctx, req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		if resp.ConflictTS != 0 {
			fmt.Fprintf(&b, "locked with conflict at %s\n", fmtTS(resp.ConflictTS))
		}
		for _, p := range resp.Pairs {
			if p.Value == nil {
				fmt.Fprintf(&b, "%q: <not found>\n", p.Key)
				continue
			}
			fmt.Fprintf(&b, "%q: %s\n", p.Key, fmtValue(p.Value))
		}
		if len(resp.Pairs) == 0 {
			b.WriteString("nothing locked\n")
		}
		return b.String(), nil
	case "pessimistic_rollback":
		keys := keysArg(t, d, "keys")
		return "", h.s.PessimisticRollback(ctx, h.region(t, d, keys[0]), keys, tsArg(t, d, "start"), tsArg(t, d, "for_update"))
	case "commit":
		keys := keysArg(t, d, "keys")
		return "", h.s.Commit(ctx, &CommitRequest{Region: h.region(t, d, keys[0]), Keys: keys, StartTS: tsArg(t, d, "start"), CommitTS: tsArg(t, d, "commit")})
	case "rollback":
		keys := keysArg(t, d, "keys")
		return "", h.s.BatchRollback(ctx, h.region(t, d, keys[0]), keys, tsArg(t, d, "start"))
	case "cleanup":
		key := []byte(strArg(t, d, "key"))
		return "", h.s.Cleanup(ctx, h.region(t, d, key), key, tsArg(t, d, "start"), optTSArg(t, d, "current"))
	case "check_txn_status":
		key := []byte(strArg(t, d, "primary"))
		resp, err := h.s.CheckTxnStatus(ctx, &CheckTxnStatusRequest{
			Region:             h.region(t, d, key),
			PrimaryKey:         key,
			LockTS:             tsArg(t, d, "lock_ts"),
			CallerStartTS:      optTSArg(t, d, "caller"),
			CurrentTS:          tsArg(t, d, "current"),
			RollbackIfNotExist: d.HasArg("rollback_if_not_exist"),
		})
		if err != nil {
			return "", err
		}
		s := fmt.Sprintf("action=%s", actionName(resp.Action))
		if resp.Action == TxnActionCommitted {
			s += " commit_ts=" + fmtTS(resp.CommitTS)
		}
		if resp.Lock != nil {
			s += fmt.Sprintf(" ttl=%d min_commit_ts=%s", resp.LockTTL, fmtTS(resp.Lock.MinCommitTS))
		}
		return s + "\n", nil
	case "resolve_lock":
		req := &ResolveLockRequest{StartTS: tsArg(t, d, "start"), CommitTS: optTSArg(t, d, "commit")}
		if d.HasArg("keys") {
			req.Keys = keysArg(t, d, "keys")
			req.Region = h.region(t, d, req.Keys[0])
		} else {
			req.Region = h.region(t, d, nil)
		}
		return "", h.s.ResolveLock(ctx, req)
	case "heartbeat":
		key := []byte(strArg(t, d, "primary"))
		var ttl uint64
		d.ScanArgs(t, "ttl", &ttl)
		got, err := h.s.TxnHeartBeat(ctx, h.region(t, d, key), key, tsArg(t, d, "start"), ttl)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("ttl=%d\n", got), nil
	case "get":
		key := []byte(strArg(t, d, "key"))
		v, err := h.s.Get(ctx, h.region(t, d, key), key, tsArg(t, d, "ts"))
		if err != nil {
			return "", err
		}
		if v == nil {
			return "<not found>\n", nil
		}
		return fmtValue(v) + "\n", nil
	case "batch_get":
		keys := keysArg(t, d, "keys")
		pairs, err := h.s.BatchGet(ctx, h.region(t, d, keys[0]), keys, tsArg(t, d, "ts"))
		return fmtPairs(pairs), err
	case "scan":
		req := &ScanRequest{Version: tsArg(t, d, "ts"), Reverse: d.HasArg("reverse"), KeyOnly: d.HasArg("key_only")}
		req.Start = []byte(optStrArg(t, d, "start"))
		req.End = []byte(optStrArg(t, d, "end"))
		d.MaybeScanArgs(t, "limit", &req.Limit)
		if d.HasArg("bypass") {
			for _, k := range keysArg(t, d, "bypass") {
				req.BypassLocks = append(req.BypassLocks, parseTS(t, d, string(k)))
			}
		}
		req.IgnoreLocks = d.HasArg("ignore_locks")
		req.Ranges = rangesArg(t, d)
		first := req.Start
		if len(req.Ranges) > 0 {
			first = req.Ranges[0].Start
		}
		req.Region = h.region(t, d, first)
		pairs, err := h.s.Scan(ctx, req)
		if err != nil || len(req.Ranges) == 0 {
			return fmtPairs(pairs), err
		}
		// A multi-range read: each range's pairs under its name.
		var b strings.Builder
		for i, ps := range SplitPairs(req.Ranges, pairs) {
			fmt.Fprintf(&b, "[%q, %q):\n", req.Ranges[i].Start, req.Ranges[i].End)
			if len(ps) > 0 {
				b.WriteString(fmtPairs(ps))
			}
		}
		return b.String(), nil
	case "validate_reads":
		return h.validateReads(ctx, t, d)
	case "scan_changes":
		req := &ScanChangesRequest{Start: []byte(optStrArg(t, d, "start")), End: []byte(optStrArg(t, d, "end")),
			FromTS: tsArg(t, d, "from"), ToTS: tsArg(t, d, "to")}
		d.MaybeScanArgs(t, "limit", &req.Limit)
		if arg, ok := d.Arg("bypass"); ok {
			for _, v := range arg.Vals {
				req.BypassLocks = append(req.BypassLocks, parseTS(t, d, v))
			}
		}
		req.Region = h.region(t, d, req.Start)
		changes, err := h.s.ScanChanges(ctx, req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, c := range changes {
			fmt.Fprintf(&b, "%q@%s: ", c.Key, fmtTS(c.CommitTS))
			if c.Value != nil {
				fmt.Fprintf(&b, "put %s\n", fmtValue(c.Value))
			} else if c.Prev != nil {
				fmt.Fprintf(&b, "delete (was %s)\n", fmtValue(c.Prev))
			} else {
				b.WriteString("delete\n")
			}
		}
		if b.Len() == 0 {
			return "<none>\n", nil
		}
		return b.String(), nil
	case "scan_notify":
		req := &ScanNotifyRequest{Start: []byte(optStrArg(t, d, "start")), End: []byte(optStrArg(t, d, "end"))}
		d.MaybeScanArgs(t, "limit", &req.Limit)
		req.Region = h.region(t, d, req.Start)
		resp, err := h.s.ScanNotify(ctx, req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, e := range resp.Entries {
			fmt.Fprintf(&b, "%q/%q: %s\n", e.Key, e.Column, fmtTS(e.TS))
		}
		if b.Len() == 0 {
			return "<none>\n", nil
		}
		return b.String(), nil
	case "clear_notify":
		var entries []NotifyEntry
		for _, line := range strings.Split(d.Input, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if len(f) != 3 {
				t.Fatalf("%s: want <key> <column> <ts>: %q", d.Pos, line)
			}
			entries = append(entries, NotifyEntry{Key: []byte(f[0]), Column: []byte(f[1]), TS: parseTS(t, d, f[2])})
		}
		return "", h.s.ClearNotify(ctx, h.region(t, d, entries[0].Key), entries)
	case "dump":
		return h.dump(t), nil
	case "split":
		left, right, err := h.s.SplitRegion(ctx, []byte(strArg(t, d, "key")))
		if err != nil {
			return "", err
		}
		return fmtRegion(left) + "\n" + fmtRegion(right) + "\n", nil
	case "regions":
		var b strings.Builder
		for _, r := range h.s.Regions() {
			fmt.Fprintln(&b, fmtRegion(r))
		}
		return b.String(), nil
	case "update_max_read_ts":
		h.s.UpdateMaxReadTS(tsArg(t, d, "ts"))
		return "", nil
	case "lock_set":
		if keys := h.lockSetKeys(); keys != "" {
			return keys, nil
		}
		return "<empty>\n", nil
	case "max_read_ts":
		var b strings.Builder
		h.s.regions.mu.RLock()
		for _, r := range h.s.regions.sorted {
			fmt.Fprintf(&b, "region %d: %s\n", r.info.ID, fmtTS(r.maxReadTS.Load()))
		}
		h.s.regions.mu.RUnlock()
		return b.String(), nil
	}
	if out, err, ok := h.execGC(ctx, t, d); ok {
		return out, err
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return "", nil
}

// rangesArg returns the ranges of argument ranges=(<start>-<end>, ...),
// nil when there is none.
func rangesArg(t *testing.T, d *datadriven.TestData) []KeyRange {
	if !d.HasArg("ranges") {
		return nil
	}
	var ranges []KeyRange
	for _, r := range keysArg(t, d, "ranges") {
		start, end, ok := bytes.Cut(r, []byte("-"))
		if !ok {
			t.Fatalf("%s: range %q is not <start>-<end>", d.Pos, r)
		}
		ranges = append(ranges, KeyRange{Start: start, End: end})
	}
	return ranges
}

// validateReads runs the validate_reads command.
func (h *scriptRunner) validateReads(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	req := &ValidateReadsRequest{From: tsArg(t, d, "from"), To: tsArg(t, d, "to")}
	if d.HasArg("keys") {
		req.Keys = keysArg(t, d, "keys")
	}
	req.Ranges = rangesArg(t, d)
	if d.HasArg("bypass") {
		for _, k := range keysArg(t, d, "bypass") {
			req.BypassLocks = append(req.BypassLocks, parseTS(t, d, string(k)))
		}
	}
	req.ChangesFirst = d.HasArg("changes_first")
	first := []byte{}
	if len(req.Keys) > 0 {
		first = req.Keys[0]
	} else if len(req.Ranges) > 0 {
		first = req.Ranges[0].Start
	}
	req.Region = h.region(t, d, first)
	resp, err := h.s.ValidateReads(ctx, req)
	if err != nil {
		return "", err
	}
	if len(resp.Changes) == 0 {
		return "unchanged\n", nil
	}
	var b strings.Builder
	b.WriteString("changed")
	for i, c := range resp.Changes {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %q at %s", c.Key, fmtTS(c.CommitTS))
	}
	if resp.More {
		b.WriteString(" and more")
	}
	if resp.LocksUnchecked {
		b.WriteString(" (locks unchecked)")
	}
	return b.String() + "\n", nil
}

// region returns the RegionCtx a command sends: region=<id> [version=<v>]
// when given, else the current region of key.
func (h *scriptRunner) region(t *testing.T, d *datadriven.TestData, key []byte) RegionCtx {
	if d.HasArg("region") {
		rc := RegionCtx{Epoch: RegionEpoch{ConfVer: 1, Version: 1}}
		d.ScanArgs(t, "region", &rc.RegionID)
		d.MaybeScanArgs(t, "version", &rc.Epoch.Version)
		return rc
	}
	r, err := h.s.LocateKey(key)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	return r.Ctx()
}

// dump prints every record of the lock, write and data spaces in store
// order, decoded.
func (h *scriptRunner) dump(t *testing.T) string {
	iter, err := h.s.db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Close()
	var b strings.Builder
	for ok := iter.First(); ok; ok = iter.Next() {
		k, v := iter.Key(), iter.Value()
		switch k[0] {
		case keyspace.Data:
			key, ts, err := keyspace.DecodeDataKey(k)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "data  %q@%s: %s\n", key, fmtTS(ts), fmtValue(v))
		case keyspace.Lock:
			key, err := keyspace.DecodeLockKey(k)
			if err != nil {
				t.Fatal(err)
			}
			l, err := txntypes.DecodeLock(v)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "lock  %q: %s primary=%q start=%s ttl=%d", key, l.Type, l.Primary, fmtTS(l.StartTS), l.TTL)
			if l.ShortValue != nil {
				fmt.Fprintf(&b, " value=%s", fmtValue(l.ShortValue))
			}
			if l.MinCommitTS != 0 {
				fmt.Fprintf(&b, " min_commit_ts=%s", fmtTS(l.MinCommitTS))
			}
			if l.TxnSize != 0 {
				fmt.Fprintf(&b, " txn_size=%d", l.TxnSize)
			}
			if l.ForUpdateTS != 0 {
				fmt.Fprintf(&b, " for_update_ts=%s", fmtTS(l.ForUpdateTS))
			}
			if len(l.Notify) > 0 {
				fmt.Fprintf(&b, " notify=%q", l.Notify)
			}
			b.WriteString("\n")
		case keyspace.Notify:
			key, col, err := keyspace.DecodeNotifyKey(k)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := decodeNotifyValue(k, v)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "notify %q/%q: %s\n", key, col, fmtTS(ts))
		case keyspace.Write:
			key, ts, err := keyspace.DecodeWriteKey(k)
			if err != nil {
				t.Fatal(err)
			}
			w, err := txntypes.DecodeWrite(v)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "write %q@%s: %s start=%s", key, fmtTS(ts), w.Type, fmtTS(w.StartTS))
			if w.ShortValue != nil {
				fmt.Fprintf(&b, " value=%s", fmtValue(w.ShortValue))
			}
			if w.OverlappedRollback {
				b.WriteString(" overlapped_rollback")
			}
			b.WriteString("\n")
		}
	}
	if b.Len() == 0 {
		return "<empty>\n"
	}
	return b.String()
}

// lockSetKeys returns the keys the store's lock set holds, sorted, one
// per line.
func (h *scriptRunner) lockSetKeys() string {
	var keys []string
	var total int64
	for i := range h.s.locks.shards {
		total += h.s.locks.shards[i].n.Load()
		sh := &h.s.locks.shards[i]
		sh.mu.Lock()
		if int64(len(sh.keys)) != sh.n.Load() || sh.seq.Load()%2 != 0 {
			keys = append(keys, fmt.Sprintf("shard %d: %d keys, count %d, seq %d", i, len(sh.keys), sh.n.Load(), sh.seq.Load()))
		}
		for k := range sh.keys {
			keys = append(keys, strconv.Quote(k))
		}
		sh.mu.Unlock()
	}
	if all := h.s.locks.all.Load(); all != total {
		keys = append(keys, fmt.Sprintf("count of all shards %d, shards hold %d", all, total))
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintln(&b, k)
	}
	return b.String()
}

// lockSpaceKeys returns the keys of the lock space, sorted, one per line,
// as lockSetKeys prints them.
func (h *scriptRunner) lockSpaceKeys(t *testing.T) string {
	var keys []string
	r := newMVCCReader(h.s.db)
	defer r.close()
	err := r.locks(nil, nil, false, func(key []byte, _ *txntypes.Lock) bool {
		keys = append(keys, strconv.Quote(string(key)))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintln(&b, k)
	}
	return b.String()
}

// parseMutations reads a prewrite's input lines.
func parseMutations(t *testing.T, d *datadriven.TestData) []Mutation {
	var ms []Mutation
	for _, line := range strings.Split(d.Input, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			t.Fatalf("%s: bad mutation %q", d.Pos, line)
		}
		m := Mutation{Key: []byte(f[1])}
		if f[len(f)-1] == "pessimistic" {
			m.Pessimistic = true
			f = f[:len(f)-1]
		}
		if cols, ok := strings.CutPrefix(f[len(f)-1], "notify="); ok {
			for _, c := range strings.Split(cols, ",") {
				m.Notify = append(m.Notify, []byte(c))
			}
			f = f[:len(f)-1]
		}
		switch f[0] {
		case "put", "insert":
			m.Op = OpPut
			if f[0] == "insert" {
				m.Op = OpInsert
			}
			if len(f) != 3 {
				t.Fatalf("%s: %s needs a value: %q", d.Pos, f[0], line)
			}
			m.Value = []byte(f[2])
			if f[2] == `""` {
				m.Value = []byte{}
			}
			if n, ok := strings.CutPrefix(f[2], "len="); ok {
				size, err := strconv.Atoi(n)
				if err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				m.Value = bytes.Repeat([]byte("v"), size)
			}
		case "delete":
			m.Op = OpDelete
		case "lock":
			m.Op = OpLock
		case "check_not_exists":
			m.Op = OpCheckNotExists
		default:
			t.Fatalf("%s: unknown mutation %q", d.Pos, f[0])
		}
		ms = append(ms, m)
	}
	return ms
}

func strArg(t *testing.T, d *datadriven.TestData, name string) string {
	var s string
	d.ScanArgs(t, name, &s)
	return s
}

func optStrArg(t *testing.T, d *datadriven.TestData, name string) string {
	var s string
	d.MaybeScanArgs(t, name, &s)
	return s
}

func keysArg(t *testing.T, d *datadriven.TestData, name string) [][]byte {
	arg, ok := d.Arg(name)
	if !ok || len(arg.Vals) == 0 {
		t.Fatalf("%s: missing %s", d.Pos, name)
	}
	keys := make([][]byte, len(arg.Vals))
	for i, v := range arg.Vals {
		keys[i] = []byte(v)
	}
	return keys
}

func tsArg(t *testing.T, d *datadriven.TestData, name string) uint64 {
	if !d.HasArg(name) {
		t.Fatalf("%s: missing %s", d.Pos, name)
	}
	return optTSArg(t, d, name)
}

// optTSArg parses a timestamp argument, 0 when absent.
func optTSArg(t *testing.T, d *datadriven.TestData, name string) uint64 {
	var s string
	if !d.MaybeScanArgs(t, name, &s) {
		return 0
	}
	return parseTS(t, d, s)
}

// parseTS parses one timestamp: an integer, "max", "<n>ms" or "<n>ms+<l>".
func parseTS(t *testing.T, d *datadriven.TestData, s string) uint64 {
	if s == "max" {
		return MaxTS
	}
	if phys, logical, ok := strings.Cut(s, "ms"); ok {
		n, err := strconv.ParseInt(phys, 10, 64)
		var l int64
		if err == nil && logical != "" {
			l, err = strconv.ParseInt(strings.TrimPrefix(logical, "+"), 10, 64)
		}
		if err != nil {
			t.Fatalf("%s: timestamp %q: %v", d.Pos, s, err)
		}
		return tso.Compose(n, l)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: timestamp %q: %v", d.Pos, s, err)
	}
	return n
}

// fmtTS prints a timestamp the way optTSArg parses it.
func fmtTS(ts uint64) string {
	switch {
	case ts == MaxTS:
		return "max"
	case tso.Physical(ts) == 0:
		return strconv.FormatUint(ts, 10)
	case tso.Logical(ts) == 0:
		return fmt.Sprintf("%dms", tso.Physical(ts))
	}
	return fmt.Sprintf("%dms+%d", tso.Physical(ts), tso.Logical(ts))
}

// fmtValue prints a value, or only its length when it is long.
func fmtValue(v []byte) string {
	if len(v) > 32 {
		return fmt.Sprintf("len=%d", len(v))
	}
	return strconv.Quote(string(v))
}

func fmtPairs(pairs []KvPair) string {
	var b strings.Builder
	for _, p := range pairs {
		if p.Value == nil {
			fmt.Fprintf(&b, "%q\n", p.Key)
			continue
		}
		fmt.Fprintf(&b, "%q: %s\n", p.Key, fmtValue(p.Value))
	}
	if b.Len() == 0 {
		return "<empty>\n"
	}
	return b.String()
}

func fmtRegion(r RegionInfo) string {
	return fmt.Sprintf("region %d [%q, %q) version=%d", r.ID, r.Start, r.End, r.Epoch.Version)
}

// fmtErr prints an error with the name of its contract type, if any.
func fmtErr(err error) string {
	var re *RegionError
	if errors.As(err, &re) {
		s := fmt.Sprintf("RegionError: %v", re)
		if re.Current != nil {
			s += " (current: " + fmtRegion(*re.Current) + ")"
		}
		return s
	}
	var locked *KeyIsLockedError
	if errors.As(err, &locked) && len(locked.More) > 0 {
		// Every lock, one per line: which locks a read reports matters.
		var b strings.Builder
		fmt.Fprintf(&b, "KeyIsLockedError: %d locks", len(locked.Locks()))
		for _, l := range locked.Locks() {
			fmt.Fprintf(&b, "\n  %q: txn %s primary %q", l.Key, fmtTS(l.StartTS), l.Primary)
		}
		return b.String()
	}
	if isContractError(err) {
		return strings.TrimPrefix(fmt.Sprintf("%T: %v", err, err), "*kv.")
	}
	return "error: " + err.Error()
}

func actionName(a TxnAction) string {
	names := map[TxnAction]string{
		TxnActionNone:                 "none",
		TxnActionCommitted:            "committed",
		TxnActionTTLExpireRollback:    "ttl_expire_rollback",
		TxnActionLockNotExistRollback: "lock_not_exist_rollback",
		TxnActionRolledBack:           "rolled_back",
		TxnActionMinCommitTSPushed:    "min_commit_ts_pushed",
	}
	if n, ok := names[a]; ok {
		return n
	}
	return fmt.Sprintf("action(%d)", a)
}
