package pd_test

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestSchemaLeases: pd keeps each SQL node's reported schema version
// under its lease, the published version only rises, WatchSchema answers
// as soon as a version is published or every node reports the one asked
// for, and a node that stops reporting drops out when its lease ends,
// after which its next report says the lease was not renewed.
func TestSchemaLeases(t *testing.T) {
	ctx := context.Background()
	cfg := pdConfig(t, t.TempDir())
	c := openPDClient(t, &cfg)
	report := func(node string, v uint64) (uint64, bool) {
		t.Helper()
		latest, renewed, err := c.ReportSchemaVersion(ctx, node, v, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return latest, renewed
	}
	if latest, renewed := report("a", 5); latest != 0 || renewed {
		t.Fatalf("first report: latest %d, renewed %v; want 0, false", latest, renewed)
	}
	if _, renewed := report("a", 5); !renewed {
		t.Fatal("a report within the lease did not renew it")
	}
	report("b", 5)
	if latest, err := c.PublishSchemaVersion(ctx, 6); err != nil || latest != 6 {
		t.Fatalf("publish 6: %d, %v", latest, err)
	}
	if latest, err := c.PublishSchemaVersion(ctx, 4); err != nil || latest != 6 {
		t.Fatalf("publish 4 after 6: %d, %v; want 6 kept", latest, err)
	}
	// Published above 5: answered at once.
	start := time.Now()
	latest, nodes, err := c.WatchSchema(ctx, 5, 0, 2*time.Second)
	if err != nil || latest != 6 || nodes["a"] != 5 || nodes["b"] != 5 {
		t.Fatalf("watch newer than 5: %d %v %v", latest, nodes, err)
	}
	// Not every node at 6: the watch waits until b reports it.
	synced := make(chan map[string]uint64, 1)
	go func() {
		_, nodes, err := c.WatchSchema(ctx, math.MaxUint64, 6, 2*time.Second)
		if err != nil {
			t.Error(err)
		}
		synced <- nodes
	}()
	report("a", 6)
	time.Sleep(100 * time.Millisecond)
	report("b", 6)
	if nodes := <-synced; nodes["a"] != 6 || nodes["b"] != 6 {
		t.Fatalf("watch synced at 6 answered %v", nodes)
	}
	t.Logf("watches answered in %v", time.Since(start))
	// b stops reporting: it drops out once its lease ends (etcd's
	// shortest lease is longer than the 1 s asked).
	deadline := time.Now().Add(time.Minute)
	for {
		report("a", 6)
		_, nodes, err := c.WatchSchema(ctx, math.MaxUint64, 7, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := nodes["b"]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b's schema lease never ended: %v", nodes)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, renewed := report("b", 6); renewed {
		t.Fatal("a report after the lease ended says it was renewed")
	}
}
