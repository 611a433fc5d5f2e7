package main

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/percdb/percdb/pd/pdpb"
)

// TestCtlRefusesBadCommands: percdb ctl names what is wrong with a command
// line before it asks pd anything (the pd address given listens nowhere).
func TestCtlRefusesBadCommands(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pd", "127.0.0.1:1"}, "want a command"},
		{[]string{"--pd", "127.0.0.1:1", "region"}, "want a command"},
		{[]string{"--pd", "127.0.0.1:1", "store", "frob"}, `unknown command "frob"`},
		{[]string{"--pd", "127.0.0.1:1", "store", "drain"}, "want one store id"},
		{[]string{"--pd", "127.0.0.1:1", "store", "drain", "x"}, `store id "x"`},
		{[]string{"--pd", "127.0.0.1:1", "store", "drain", "0"}, `store id "0"`},
		{[]string{"--pd", "127.0.0.1:1", "store", "cancel-drain", "1", "2"}, "want one store id"},
		{[]string{"--pd", "127.0.0.1:1", "store", "list", "4"}, "unexpected arguments"},
		{[]string{"--pd", "", "store"}, "pd"},
	} {
		var out bytes.Buffer
		err := runCtl(c.args, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("percdb ctl %q: %v, want an error with %q", c.args, err, c.want)
		}
	}
}

// TestStoreListTable: store list's table names each store's status port
// (where its /metrics and /store are), "-" for a store that reported none,
// and its replicas, leaders, the sizes of its regions and of those it
// leads, and its weight in balance by size.
func TestStoreListTable(t *testing.T) {
	var out bytes.Buffer
	stores := []*pdpb.Store{
		{Id: 1, Addr: "10.0.0.1:20160", StatusAddr: "10.0.0.1:20180", Status: pdpb.StoreStatus_UP, Replicas: 3, Leaders: 1,
			RegionSize: 5 << 20, LeaderSize: 2 << 20, RegionWeight: 6 << 20,
			Labels: []*pdpb.StoreLabel{{Key: "zone", Value: "z1"}, {Key: "host", Value: "h1"}}},
		{Id: 2, Addr: "10.0.0.2:20160", Status: pdpb.StoreStatus_OFFLINE},
	}
	if err := printStores(&out, stores, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("store list:\n%s", out.String())
	}
	if f := strings.Fields(lines[1]); f[len(f)-1] != "zone=z1,host=h1" {
		t.Errorf("store 1's labels: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[len(f)-1] != "-" {
		t.Errorf("store 2 without labels: %q", lines[2])
	}
	for i, want := range [][]string{
		{"ID", "ADDRESS", "STATUS", "ADDRESS", "STATUS", "REPLICAS", "LEADERS", "REGION", "SIZE", "LEADER", "SIZE", "WEIGHT"},
		{"1", "10.0.0.1:20160", "10.0.0.1:20180", "Up", "3", "1", "5.0", "MiB", "2.0", "MiB", "6.0", "MiB"},
		{"2", "10.0.0.2:20160", "-", "Offline"},
	} {
		if got := strings.Fields(lines[i]); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
			t.Errorf("line %d: %q, want it to begin with %q", i, lines[i], want)
		}
	}
}

// TestParseLabels: --labels takes key=value pairs, each key once.
func TestParseLabels(t *testing.T) {
	got, err := parseLabels(" zone=z1, host=h1 ,")
	if err != nil || !maps.Equal(got, map[string]string{"zone": "z1", "host": "h1"}) {
		t.Fatalf("parseLabels: %v, %v", got, err)
	}
	if got, err := parseLabels(""); err != nil || len(got) != 0 {
		t.Fatalf("no labels: %v, %v", got, err)
	}
	for _, bad := range []string{"zone", "zone=", "=z1", "zone=z1,zone=z2"} {
		if _, err := parseLabels(bad); err == nil {
			t.Errorf("--labels %q accepted", bad)
		}
	}
}
