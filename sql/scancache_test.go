package sql

import "testing"

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
