package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/pd/pdpb"
	"github.com/percdb/percdb/tests/testproc"
)

// TestDrainUnderBank: four KV nodes, three replicas a region; the first
// region is placed on the first three, so the fourth starts empty. Under
// the bank workload the bank's tables are split into several regions, and
// pd's replica balance moves replicas onto the fourth node until each node
// holds about its share. Then an operator drains the first node with
// `percdb ctl store drain ID --wait`: every replica and leadership moves
// off it and pd marks it a tombstone; the node is stopped (SIGTERM) and
// the workload goes on on the other three. The prober reads the bank's sum
// throughout and no read fails from the drain's start to the end; the
// crash suite's Checker finds nothing acknowledged lost and the sum
// invariant. The times are logged, not asserted.
func TestDrainUnderBank(t *testing.T) {
	// The four KV nodes share this machine's file system, whose free
	// space is what each reports: under the whole suite's load it fell
	// within pd's balance margin above the low-space line, and balance
	// stopped half way (pd/placement.go now applies the margin only to a
	// store that was low on space, and logs when nothing can move).
	bin := testproc.BuildPercdb(t)
	c := startClusterWith(t, bin, 4, []string{"--max-replica-moves", "2"}, nil)
	b := startBank(t, c)
	h, p := b.h, b.p
	db := openDB(t, c.sql.addr, b.cfg.Database, true)
	pdc, err := pd.NewClient([]string{c.pd.addr}, pd.ClientOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer pdc.Close()
	ctx := context.Background()
	storeOf := c.storeIDs(t, pdc)
	stores := func() map[uint64]*pdpb.Store {
		list, err := pdc.GetStores(ctx)
		if err != nil {
			t.Fatalf("list stores: %v\n%s", err, c.logs())
		}
		out := map[uint64]*pdpb.Store{}
		for _, st := range list {
			out[st.GetId()] = st
		}
		return out
	}
	if n := stores()[storeOf[c.kvs[3]]].GetReplicas(); n != 0 {
		t.Fatalf("the fourth kv node holds %d replicas from the start", n)
	}

	for _, stmt := range []string{
		"SPLIT TABLE accounts BY (2), (4), (6), (8)",
		"SPLIT TABLE transfers BETWEEN (0) AND (100000) REGIONS 4",
		"SPLIT TABLE orders BETWEEN (0) AND (100000) REGIONS 2",
	} {
		var total int
		var ratio float64
		if err := db.QueryRow(stmt).Scan(&total, &ratio); err != nil {
			t.Fatalf("%s: %v\n%s", stmt, err, c.logs())
		}
		b.progress(h.Len() + 10)
	}

	// Balance: the fourth node fills up to its share.
	joined := time.Now()
	var counts map[uint64]uint32
	waitFor(t, "replicas balanced onto the fourth kv node", func() bool {
		counts = map[uint64]uint32{}
		lo, hi := ^uint32(0), uint32(0)
		for id, st := range stores() {
			counts[id] = st.GetReplicas()
			lo, hi = min(lo, st.GetReplicas()), max(hi, st.GetReplicas())
		}
		return counts[storeOf[c.kvs[3]]] > 0 && hi-lo <= 1
	}, func() string { return fmt.Sprintf("replicas by store %v\n%s", counts, c.logs()) })
	balanced := time.Since(joined)
	b.progress(h.Len() + 30)

	// Drain the first node with the operator's command.
	drained := c.kvs[0]
	id := storeOf[drained]
	failedBefore := p.failed()
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cctx, bin, "ctl", "--pd", c.pd.addr, "store", "drain", strconv.FormatUint(id, 10), "--wait").CombinedOutput()
	if err != nil {
		t.Fatalf("percdb ctl store drain: %v\n%s\n%s", err, out, c.logs())
	}
	took := time.Since(start)
	if !strings.Contains(string(out), "Tombstone") {
		t.Fatalf("percdb ctl store drain --wait printed %q, want the tombstone", out)
	}
	st := stores()[id]
	if st.GetStatus() != pdpb.StoreStatus_TOMBSTONE || st.GetReplicas() != 0 || st.GetLeaders() != 0 {
		t.Fatalf("drained store: %v", st)
	}
	// information_schema.TIKV_REGION_STATUS shows the placement: no
	// region has a peer on the drained store, each has three, and the
	// accounts' rows are in the five regions SPLIT TABLE made.
	var onDrained, notThree, accountRegions int
	q := `SELECT SUM(FIND_IN_SET(?, PEER_STORE_IDS) > 0 OR LEADER_STORE_ID = ?),
		SUM(LENGTH(PEER_STORE_IDS) - LENGTH(REPLACE(PEER_STORE_IDS, ',', '')) != 2),
		SUM(TABLE_NAME = 'accounts' AND IS_INDEX = 0)
		FROM information_schema.TIKV_REGION_STATUS`
	if err := db.QueryRow(q, id, id).Scan(&onDrained, &notThree, &accountRegions); err != nil {
		t.Fatalf("TIKV_REGION_STATUS: %v\n%s", err, c.logs())
	}
	if onDrained != 0 || notThree != 0 || accountRegions < 5 {
		t.Fatalf("TIKV_REGION_STATUS after the drain: %d rows with the drained store, %d regions without three peers, accounts' rows in %d regions (want 0, 0, 5 or more)",
			onDrained, notThree, accountRegions)
	}
	b.progress(h.Len() + 30)
	drained.stop()
	c.kvs = c.kvs[1:]
	stopped := p.setMark()
	back := p.waitBack(t, "service with "+drained.name+" stopped", c.logs)
	b.progress(h.Len() + 30)
	if n := p.failed() - failedBefore; n > 0 {
		t.Errorf("%d reads failed during the drain and the stop (last: %v)", n, p.err())
	}
	list, err := exec.Command(bin, "ctl", "--pd", c.pd.addr, "store", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("percdb ctl store list: %v\n%s", err, list)
	}
	rep := b.finish()
	t.Logf("%s; the fourth node got its share in %v (replicas by store %v); %s drained in %v; the first read after its stop came %v later (%v); moves: %v; check: %s\n%s",
		h.Summary(), balanced.Round(time.Millisecond), counts, drained.name, took.Round(time.Millisecond), back.Round(time.Millisecond),
		stopped.Format(time.TimeOnly), movesByReason(c.pd.log.String()), rep, list)
	c.stop()
}

// TestLowSpaceStoreIsEmptied: four KV nodes under the bank workload, the
// bank's tables split so that the fourth node receives replicas by
// balance. The fourth node is restarted with --capacity 1KiB, less than
// its data directory holds: it reports no space available, pd counts it
// low on space and moves every replica off it to the three nodes with
// room, and balance puts none back while it stays so. Restarted without
// the cap, it fills up again. The Checker finds nothing acknowledged lost.
func TestLowSpaceStoreIsEmptied(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startClusterWith(t, bin, 4, nil, nil)
	b := startBank(t, c)
	h := b.h
	db := openDB(t, c.sql.addr, b.cfg.Database, true)
	pdc, err := pd.NewClient([]string{c.pd.addr}, pd.ClientOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer pdc.Close()
	ctx := context.Background()
	storeOf := c.storeIDs(t, pdc)
	small := c.kvs[3]
	store := func() *pdpb.Store {
		list, err := pdc.GetStores(ctx)
		if err != nil {
			t.Fatalf("list stores: %v\n%s", err, c.logs())
		}
		for _, st := range list {
			if st.GetId() == storeOf[small] {
				return st
			}
		}
		t.Fatalf("store %d not listed", storeOf[small])
		return nil
	}
	for _, stmt := range []string{"SPLIT TABLE accounts BY (2), (4), (6), (8)", "SPLIT TABLE transfers BETWEEN (0) AND (100000) REGIONS 4"} {
		var total int
		var ratio float64
		if err := db.QueryRow(stmt).Scan(&total, &ratio); err != nil {
			t.Fatalf("%s: %v\n%s", stmt, err, c.logs())
		}
	}
	var st *pdpb.Store
	waitFor(t, "replicas balanced onto "+small.name, func() bool { st = store(); return st.GetReplicas() >= 3 },
		func() string { return fmt.Sprintf("%v\n%s", st, c.logs()) })
	b.progress(h.Len() + 30)

	small.stop()
	args := slices.Clone(small.args)
	small.args = append(small.args, "--capacity", "1KiB")
	small.start()
	start := time.Now()
	waitFor(t, small.name+" emptied", func() bool {
		st = store()
		return st.GetLowSpace() && st.GetReplicas() == 0
	}, func() string { return fmt.Sprintf("%v\n%s", st, c.logs()) })
	emptied := time.Since(start)
	b.progress(h.Len() + 30)
	if st = store(); st.GetReplicas() != 0 {
		t.Fatalf("a replica was placed on the store low on space: %v", st)
	}

	small.stop()
	small.args = args
	small.start()
	waitFor(t, small.name+" filled again", func() bool { st = store(); return !st.GetLowSpace() && st.GetReplicas() >= 3 },
		func() string { return fmt.Sprintf("%v\n%s", st, c.logs()) })
	b.progress(h.Len() + 30)
	rep := b.finish()
	t.Logf("%s; %s emptied %v after its restart with --capacity 1KiB, filled again to %d replicas without it; moves: %v; check: %s",
		h.Summary(), small.name, emptied.Round(time.Millisecond), st.GetReplicas(), movesByReason(c.pd.log.String()), rep)
	c.stop()
}

// movesByReason counts pd's logged replica moves by reason.
func movesByReason(pdLog string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(pdLog, "\n") {
		if !strings.Contains(line, "pd: moving a replica") {
			continue
		}
		if i := strings.Index(line, "reason="); i >= 0 {
			r := strings.TrimPrefix(line[i:], "reason=")
			if strings.HasPrefix(r, `"`) {
				r = r[1 : strings.Index(r[1:], `"`)+1]
			} else if j := strings.IndexByte(r, ' '); j >= 0 {
				r = r[:j]
			}
			out[r]++
		}
	}
	return out
}
