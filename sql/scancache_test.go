package sql

import (
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
)

// TestProjectionKey checks that scan keys tell every projection apart:
// two reads of one range with different columns decoded must not share
// cached rows.
func TestProjectionKey(t *testing.T) {
	seen := map[string][]int{}
	for _, p := range [][]int{nil, {}, {0}, {1}, {0, 1}, {1, 0}, {10}, {1, 0, 2}, {12}} {
		k := projectionKey(p)
		if q, ok := seen[k]; ok {
			t.Errorf("projections %v and %v share the key %q", q, p, k)
		}
		seen[k] = p
	}
}

// TestScanCacheKeepsRepeats checks the scan cache's protocol: a range is
// noted the first time a statement reads it, kept the second time, served
// from memory after that, and forgotten when the next statement starts.
func TestScanCacheKeepsRepeats(t *testing.T) {
	var c scanCache
	def := &catalog.TableDef{Name: "t"}
	key := newScanKey(def, 0, keyRange{}, false, "")
	other := newScanKey(def, 1, keyRange{}, false, "")
	rows := []executor.Row{{Values: []any{int64(1)}}}
	step := func(pid uint64, k scanKey, wantCached, wantKeep bool) {
		t.Helper()
		got, cached, keep := c.lookup(pid, k)
		if cached != wantCached || keep != wantKeep {
			t.Fatalf("lookup(%d, %v) = cached %v, keep %v; want %v, %v", pid, k.index, cached, keep, wantCached, wantKeep)
		}
		if cached && len(got) != len(rows) {
			t.Fatalf("lookup(%d) = %d rows, want %d", pid, len(got), len(rows))
		}
		if keep {
			c.put(pid, k, rows)
		}
	}
	step(1, key, false, false) // first read: noted only
	step(1, other, false, false)
	step(1, key, false, true) // second: kept
	step(1, key, true, false) // then served
	step(1, other, false, true)
	step(2, key, false, false) // a new statement starts afresh
	step(2, key, false, true)
	step(2, key, true, false)
}
