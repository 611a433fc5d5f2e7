package main

import (
	"testing"

	"github.com/percdb/percdb/kv"
)

// TestParseLatestSpace checks --latest-space's words and its refusal of
// anything else.
func TestParseLatestSpace(t *testing.T) {
	for in, want := range map[string]kv.LatestMode{"auto": kv.LatestAuto, "ON": kv.LatestAlways, " off ": kv.LatestOff} {
		if got, err := parseLatestSpace(in); err != nil || got != want {
			t.Errorf("parseLatestSpace(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "always", "1", "true"} {
		if _, err := parseLatestSpace(bad); err == nil {
			t.Errorf("parseLatestSpace(%q) accepted", bad)
		}
	}
}
