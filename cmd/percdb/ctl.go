package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/pd/pdpb"
)

// ctlUsage is the ctl role's synopsis.
const ctlUsage = `usage: percdb ctl --pd HOST:PORT[,...] [--json] store [list]
       percdb ctl --pd HOST:PORT[,...] store drain ID [--wait]
       percdb ctl --pd HOST:PORT[,...] store cancel-drain ID

store list          the kv stores: id, address, status port, status (Up,
                    Offline: being drained, Tombstone: drained), replicas, leaders,
                    the sizes of its regions and of those it leads, its weight
                    in balance by size, disk space as last reported, whether pd
                    counts it low on space, its labels
store drain ID      move every replica and leadership off store ID; pd then
                    marks it Tombstone and its kv node can be stopped (as
                    pd-ctl's "store delete", CockroachDB's "node decommission");
                    --wait waits for the tombstone, printing the replicas left
store cancel-drain  set a store being drained Up again (not a tombstone)`

// runCtl runs an operator's command against pd and writes its answer to
// out.
func runCtl(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("percdb ctl", flag.ContinueOnError)
	pdFlag := fs.String("pd", "127.0.0.1:2379", "comma-separated host:port of the pd members")
	asJSON := fs.Bool("json", false, "store list: print pdpb.GetStoresResponse as JSON (protojson, the proto field names)")
	wait := fs.Bool("wait", false, "store drain: wait until the store is a tombstone")
	timeout := fs.Duration("timeout", 15*time.Second, "how long a pd call may retry an unreachable pd")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), ctlUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] != "store" {
		return fmt.Errorf("percdb ctl: want a command\n%s", ctlUsage)
	}
	rest = rest[1:]
	// Flags may follow the command too (percdb ctl store drain 4 --wait).
	var pos []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, rest = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	addrs, err := splitAddrs("pd", *pdFlag)
	if err != nil {
		return err
	}
	c, err := pd.NewClient(addrs, pd.ClientOptions{Timeout: *timeout})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd := "list"
	if len(pos) > 0 {
		cmd = pos[0]
	}
	storeArg := func() (uint64, error) {
		if len(pos) != 2 {
			return 0, fmt.Errorf("percdb ctl store %s: want one store id\n%s", cmd, ctlUsage)
		}
		id, err := strconv.ParseUint(pos[1], 10, 64)
		if err != nil || id == 0 {
			return 0, fmt.Errorf("percdb ctl store %s: store id %q: want a positive integer", cmd, pos[1])
		}
		return id, nil
	}
	switch cmd {
	case "list":
		if len(pos) > 1 {
			return fmt.Errorf("percdb ctl store list: unexpected arguments %q", pos[1:])
		}
		stores, err := c.GetStores(ctx)
		if err != nil {
			return err
		}
		return printStores(out, stores, *asJSON)
	case "drain", "cancel-drain":
		id, err := storeArg()
		if err != nil {
			return err
		}
		status := pdpb.StoreStatus_OFFLINE
		if cmd == "cancel-drain" {
			status = pdpb.StoreStatus_UP
		}
		st, err := c.SetStoreStatus(ctx, id, status)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "store %d: %s\n", id, statusName(st.GetStatus()))
		if cmd == "drain" && *wait {
			return waitDrained(ctx, c, id, out)
		}
		return nil
	}
	return fmt.Errorf("percdb ctl store: unknown command %q\n%s", cmd, ctlUsage)
}

// waitDrained polls pd until store id is a tombstone, printing how many
// replicas it still holds when that changes.
func waitDrained(ctx context.Context, c *pd.Client, id uint64, out io.Writer) error {
	last := int64(-1)
	for {
		stores, err := c.GetStores(ctx)
		if err != nil {
			return err
		}
		for _, st := range stores {
			if st.GetId() != id {
				continue
			}
			switch st.GetStatus() {
			case pdpb.StoreStatus_TOMBSTONE:
				fmt.Fprintf(out, "store %d: Tombstone: drained, its kv node can be stopped\n", id)
				return nil
			case pdpb.StoreStatus_UP:
				return fmt.Errorf("store %d: the drain was cancelled", id)
			}
			if n := int64(st.GetReplicas()); n != last {
				fmt.Fprintf(out, "store %d: %d replicas, %d leaders left\n", id, n, st.GetLeaders())
				last = n
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for store %d to drain: %w", id, context.Cause(ctx))
		case <-time.After(time.Second):
		}
	}
}

// statusName is a store status as operators read it.
func statusName(s pdpb.StoreStatus) string {
	switch s {
	case pdpb.StoreStatus_OFFLINE:
		return "Offline"
	case pdpb.StoreStatus_TOMBSTONE:
		return "Tombstone"
	}
	return "Up"
}

// printStores writes stores as a table, or as JSON: pdpb.GetStoresResponse
// in protojson with the proto field names ({"stores": [{"id": "1",
// "addr": ..., "status": "OFFLINE", "space": {...}}]}; 64-bit integers are
// strings, as protojson writes them), the form tools should read.
func printStores(out io.Writer, stores []*pdpb.Store, asJSON bool) error {
	if asJSON {
		b, err := protojson.MarshalOptions{UseProtoNames: true, Multiline: true, EmitUnpopulated: true}.Marshal(&pdpb.GetStoresResponse{Stores: stores})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tADDRESS\tSTATUS ADDRESS\tSTATUS\tREPLICAS\tLEADERS\tREGION SIZE\tLEADER SIZE\tWEIGHT\tCAPACITY\tAVAILABLE\tLOW SPACE\tLAST HEARTBEAT\tLABELS")
	for _, st := range stores {
		beat := "never"
		if ms := st.GetLastHeartbeatUnixMs(); ms > 0 {
			beat = time.Since(time.UnixMilli(ms)).Round(time.Millisecond).String() + " ago"
		}
		capacity, avail := "-", "-"
		if sp := st.GetSpace(); sp != nil {
			capacity, avail = mib(sp.GetCapacity()), mib(sp.GetAvailable())
		}
		var labels []string
		for _, l := range st.GetLabels() {
			labels = append(labels, l.GetKey()+"="+l.GetValue())
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\n", st.GetId(), st.GetAddr(), cmp.Or(st.GetStatusAddr(), "-"), statusName(st.GetStatus()),
			st.GetReplicas(), st.GetLeaders(), mib(st.GetRegionSize()), mib(st.GetLeaderSize()), mib(st.GetRegionWeight()), capacity, avail, st.GetLowSpace(), beat, cmp.Or(strings.Join(labels, ","), "-"))
	}
	return tw.Flush()
}

// mib renders bytes in MiB.
func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
