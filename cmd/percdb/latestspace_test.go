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

// TestParseBlockCacheSize: --block-cache-size takes a positive size with
// a suffix; zero, a negative or a word is refused.
func TestParseBlockCacheSize(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "256m": 256 << 20, "1GiB": 1 << 30, "1048576": 1 << 20} {
		if got, err := parseBlockCacheSize(in); err != nil || got != want {
			t.Errorf("parseBlockCacheSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "auto", ""} {
		if _, err := parseBlockCacheSize(in); err == nil {
			t.Errorf("parseBlockCacheSize(%q): no error", in)
		}
	}
}
