package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"no target":   {dir},
		"two targets": {"-dsn", "root@tcp(127.0.0.1:1)/", "-percdb", dir},
		"no paths":    {"-dsn", "root@tcp(127.0.0.1:1)/"},
		"bad types":   {"-dsn", "root@tcp(127.0.0.1:1)/", "-types", "fuzzy", dir},
		"no files":    {"-dsn", "root@tcp(127.0.0.1:1)/", dir},
		"bad flag":    {"-frobnicate"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errs bytes.Buffer
			if code := run(args, &out, &errs); code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", code, errs.String())
			}
		})
	}
}

func TestFloor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "floor.txt")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	write("# pass count\n\n1234\n")
	n, err := readFloor(path)
	if err != nil || n != 1234 {
		t.Fatalf("readFloor = %d, %v; want 1234", n, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "lots\n", "-5\n"} {
		write(bad)
		if n, err := readFloor(path); err == nil {
			t.Errorf("readFloor(%q) = %d, want an error", bad, n)
		}
	}

	for _, tc := range []struct {
		ok, floor, code int
		says            string
	}{
		{99, 100, 1, "below the floor"},
		{100, 100, 0, "at the floor"},
		{101, 100, 0, "raise it"},
	} {
		var out bytes.Buffer
		if code := checkFloor(&out, tc.ok, tc.floor, path); code != tc.code || !strings.Contains(out.String(), tc.says) {
			t.Errorf("checkFloor(%d, %d) = %d, %q; want %d and %q", tc.ok, tc.floor, code, out.String(), tc.code, tc.says)
		}
	}
}

func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		flag  int
		given bool
		env   string
		want  int
		set   bool
	}{
		{defaultGOGC, false, "", defaultGOGC, true},
		{defaultGOGC, false, "100", 0, false},
		{50, true, "100", 50, true},
		{-1, true, "", -1, true},
	} {
		got, set := gcPercent(tc.flag, tc.given, tc.env)
		if got != tc.want || set != tc.set {
			t.Errorf("gcPercent(%d, %v, %q) = %d, %v; want %d, %v", tc.flag, tc.given, tc.env, got, set, tc.want, tc.set)
		}
	}
}
