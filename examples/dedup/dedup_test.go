package main

import (
	"strings"
	"testing"
)

// TestDedup runs the example: documents with duplicates converge to one
// canonical row per distinct content through two chained observers, and
// again after changes and deletes (run checks both against a
// recomputation from scratch).
func TestDedup(t *testing.T) {
	var out strings.Builder
	if err := run(t.TempDir(), "127.0.0.1:0", 120, 15, false, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
}
