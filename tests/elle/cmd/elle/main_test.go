package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/elle"
)

func TestCheckSavedHistory(t *testing.T) {
	ok := func(ops ...elle.MicroOp) elle.Txn {
		return elle.Txn{Status: elle.OK, Invoke: 0, Complete: 10, Ops: ops}
	}
	cases := []struct {
		name    string
		h       []elle.Txn
		code    int
		outputs []string
	}{
		{
			name: "valid",
			h: []elle.Txn{
				ok(elle.AppendOp(1, 1)),
				ok(elle.ReadOp(1, []int{1})),
			},
			code:    0,
			outputs: []string{"checked (committed, in the graph): 2", "anomalies: none", "valid under snapshot isolation"},
		},
		{
			name: "lost update",
			h: []elle.Txn{
				ok(elle.ReadOp(1, []int{}), elle.AppendOp(1, 1)),
				ok(elle.ReadOp(1, []int{}), elle.AppendOp(1, 2)),
				ok(elle.ReadOp(1, []int{1, 2})),
			},
			code:    1,
			outputs: []string{"anomaly G-single: 1", "NOT valid"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			if err := writeHistory(path, tc.h); err != nil {
				t.Fatal(err)
			}
			var out, errOut strings.Builder
			if code := run(context.Background(), []string{"-check", path}, &out, &errOut); code != tc.code {
				t.Errorf("exit status %d, want %d; stderr %s", code, tc.code, errOut.String())
			}
			for _, want := range tc.outputs {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{},                                 // no server
		{"-dsn", "x", "-start", "mariadb"}, // both
		{"-start", "oracle"},
		{"-check", missing},
		{"-check", bad},
		{"-clients", "many"},
	} {
		var out, errOut strings.Builder
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%q: exit status %d, want 2", args, code)
		}
		if errOut.Len() == 0 {
			t.Errorf("%q: nothing on stderr", args)
		}
	}
}
