package main

import (
	"math"
	"testing"
)

func TestGCFromFlags(t *testing.T) {
	const gib = int64(1) << 30
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, tc := range []struct {
		name         string
		percent      int
		percentGiven bool
		limit        string
		limitGiven   bool
		env          map[string]string
		machine      int64
		want         gcSettings
		wantErr      bool
	}{
		{name: "defaults", percent: 400, limit: "auto", machine: 8 * gib, want: gcSettings{percent: 400, limit: 6 * gib}},
		{name: "unknown machine", percent: 400, limit: "auto", want: gcSettings{percent: 400}},
		{name: "GOGC wins over the default", percent: 400, limit: "auto", env: map[string]string{"GOGC": "100"}, machine: 8 * gib, want: gcSettings{limit: 6 * gib}},
		{name: "the flag wins over GOGC", percent: 200, percentGiven: true, limit: "auto", env: map[string]string{"GOGC": "100"}, want: gcSettings{percent: 200}},
		{name: "GOMEMLIMIT wins over the default", percent: 400, limit: "auto", env: map[string]string{"GOMEMLIMIT": "1GiB"}, machine: 8 * gib, want: gcSettings{percent: 400}},
		{name: "the flag wins over GOMEMLIMIT", percent: 400, limit: "2GiB", limitGiven: true, env: map[string]string{"GOMEMLIMIT": "1GiB"}, want: gcSettings{percent: 400, limit: 2 * gib}},
		{name: "no limit", percent: 400, limit: "0", limitGiven: true, machine: 8 * gib, want: gcSettings{percent: 400, limit: math.MaxInt64}},
		{name: "collector off", percent: -1, percentGiven: true, limit: "auto", want: gcSettings{percent: -1}},
		{name: "zero percent", percent: 0, percentGiven: true, limit: "auto", wantErr: true},
		{name: "bad percent", percent: -5, percentGiven: true, limit: "auto", wantErr: true},
		{name: "bad limit", percent: 400, limit: "lots", limitGiven: true, wantErr: true},
		{name: "negative limit", percent: 400, limit: "-1", limitGiven: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gcFromFlags(tc.percent, tc.percentGiven, tc.limit, tc.limitGiven, env(tc.env), tc.machine)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "4k": 4 << 10, "3 MiB": 3 << 20, "2GB": 2 << 30, "7b": 7} {
		got, err := parseByteSize(in)
		if err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1", "1.5G", "9999999999999G"} {
		if _, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q): no error", in)
		}
	}
}

func TestMachineMemory(t *testing.T) {
	// Linux has /proc/meminfo; elsewhere 0 is the answer.
	if n := machineMemory(); n < 0 {
		t.Fatalf("machineMemory() = %d", n)
	}
}
