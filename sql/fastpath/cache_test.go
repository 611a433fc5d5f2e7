package fastpath

import (
	"testing"

	"github.com/percdb/percdb/sql/catalog"
)

// testPlan is a user's plan: a Plan and what the user adds to it.
type testPlan struct {
	*Plan
	n int
}

func (p *testPlan) Base() *Plan { return p.Plan }

// TestCacheEvictsLeastRecentlyUsed checks the cache's bound and order,
// and that Put keeps the entry already there.
func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCache[testPlan](2)
	a := &Entry[testPlan, *testPlan]{Key: Key{Digest: "a", DB: "d"}}
	b := &Entry[testPlan, *testPlan]{Key: Key{Digest: "b", DB: "d"}}
	if got := c.Put(a); got != a {
		t.Fatalf("Put(a) = %p, want a", got)
	}
	c.Put(b)
	if got := c.Put(&Entry[testPlan, *testPlan]{Key: a.Key}); got != a {
		t.Fatalf("Put of a second entry for a's key returned %p, want a", got)
	}
	if c.Get(Key{Digest: "a", DB: "other"}) != nil {
		t.Fatal("the key's database is part of it: a found under another database")
	}
	c.Get(b.Key) // a is now the least recently used
	c.Put(&Entry[testPlan, *testPlan]{Key: Key{Digest: "c", DB: "d"}})
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want the bound 2", c.Len())
	}
	if c.Get(a.Key) != nil {
		t.Error("a, least recently used, was kept")
	}
	if c.Get(b.Key) != b {
		t.Error("b, used last, was evicted")
	}
}

// TestEntryPlanFor checks that a plan is resolved once per catalog
// version and database, that a shape that did not resolve is not tried
// again at that version, and that a plan for another database than the
// entry's is not cached.
func TestEntryPlanFor(t *testing.T) {
	e := &Entry[testPlan, *testPlan]{Key: Key{Digest: "x", DB: "d"}, Shape: &Shape{}}
	calls := 0
	fail := false
	resolve := func(cat *catalog.Catalog, db string, _ *Shape) (*testPlan, Reason, bool) {
		calls++
		if fail {
			return nil, ReasonTable, false
		}
		return &testPlan{Plan: &Plan{Version: cat.Version, DB: db}, n: calls}, 0, true
	}
	v1, v2, v3 := catalog.New(1), catalog.New(2), catalog.New(3)
	for i := range 2 {
		pl, _, ok := e.PlanFor(v1, "d", resolve)
		if !ok || pl.n != 1 {
			t.Fatalf("execution %d at version 1: plan %v ok %v, want the first resolution", i, pl, ok)
		}
	}
	if pl, _, ok := e.PlanFor(v2, "d", resolve); !ok || pl.n != 2 {
		t.Fatalf("version 2: plan %v ok %v, want a new resolution", pl, ok)
	}
	if pl, _, ok := e.PlanFor(v2, "elsewhere", resolve); !ok || pl.n != 3 || pl.DB != "elsewhere" {
		t.Fatalf("another database: plan %v ok %v, want a resolution there", pl, ok)
	}
	if pl, _, _ := e.PlanFor(v2, "d", resolve); pl.n != 2 {
		t.Fatalf("the plan for another database replaced the entry's (n %d)", pl.n)
	}
	fail = true
	for i := range 2 {
		if _, reason, ok := e.PlanFor(v3, "d", resolve); ok || reason != ReasonTable {
			t.Fatalf("execution %d at version 3: ok %v reason %v, want ReasonTable", i, ok, reason)
		}
	}
	if calls != 4 {
		t.Errorf("%d resolutions, want 4: a shape that did not resolve is tried once per version", calls)
	}
}
