package kv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// waitForScripts holds the wait-for graph's scripts.
const waitForScripts = "testdata/waitfor"

// TestWaitForGraph runs the scripts under testdata/waitfor, each on an
// empty graph whose clock stands still until told (tick):
//
//	detect txn=<n> wait=<n> key=<key>   record a wait, or print the cycle it would close
//	ensure txn=<n> wait=<n> key=<key>   record a wait unchecked unless recorded (a re-sent one)
//	done txn=<n> wait=<n>               end one wait
//	tick s=<n>                          move the clock n seconds on
//	expire s=<n>                        drop the edges last recorded more than n seconds ago
//	reset
//	edges                               print the graph's edges
func TestWaitForGraph(t *testing.T) {
	datadriven.Walk(t, waitForScripts, func(t *testing.T, path string) {
		now := time.Unix(1000, 0)
		g := NewWaitForGraph(func() time.Time { return now })
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var txn, wait uint64
			var key string
			var secs int
			if d.HasArg("txn") {
				d.ScanArgs(t, "txn", &txn)
			}
			if d.HasArg("wait") {
				d.ScanArgs(t, "wait", &wait)
			}
			if d.HasArg("key") {
				d.ScanArgs(t, "key", &key)
			}
			if d.HasArg("s") {
				d.ScanArgs(t, "s", &secs)
			}
			switch d.Cmd {
			case "detect":
				var de *DeadlockError
				err := g.Detect(context.Background(), txn, wait, []byte(key))
				if errors.As(err, &de) {
					return fmt.Sprintf("deadlock: %d -> %d on %s closes %s", de.StartTS, de.LockTS, de.Key, formatChain(de.Chain))
				}
				if err != nil {
					t.Fatal(err)
				}
				return "ok"
			case "ensure":
				g.Ensure(txn, wait, []byte(key))
				return "ok"
			case "done":
				g.Done(txn, wait)
				return "ok"
			case "tick":
				now = now.Add(time.Duration(secs) * time.Second)
				return "ok"
			case "expire":
				return fmt.Sprintf("expired %d", g.ExpireBefore(now.Add(-time.Duration(secs)*time.Second)))
			case "reset":
				g.Reset()
				return "ok"
			case "edges":
				e := g.Edges()
				if len(e) == 0 {
					return "(none)"
				}
				var b strings.Builder
				for _, x := range e {
					fmt.Fprintf(&b, "%d -> %d on %s\n", x.Txn, x.WaitForTxn, x.Key)
				}
				return b.String()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

func formatChain(c []WaitForEntry) string {
	var parts []string
	for _, e := range c {
		parts = append(parts, fmt.Sprintf("%d -(%s)-> %d", e.Txn, e.Key, e.WaitForTxn))
	}
	return strings.Join(parts, ", ")
}
