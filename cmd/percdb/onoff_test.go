package main

import (
	"flag"
	"io"
	"testing"
)

// TestOnOffFlag checks the spellings --statement-stats takes.
func TestOnOffFlag(t *testing.T) {
	for _, c := range []struct {
		args    []string
		want    bool
		wantErr bool
	}{
		{nil, true, false},
		{[]string{"--statement-stats=off"}, false, false},
		{[]string{"--statement-stats=OFF"}, false, false},
		{[]string{"--statement-stats=false"}, false, false},
		{[]string{"--statement-stats=0"}, false, false},
		{[]string{"--statement-stats=ON"}, true, false},
		{[]string{"--statement-stats=off", "--statement-stats"}, true, false},
		{[]string{"--statement-stats=maybe"}, false, true},
	} {
		fs := flag.NewFlagSet("percdb", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		v := onOff(true)
		fs.Var(&v, "statement-stats", "")
		err := fs.Parse(c.args)
		if (err != nil) != c.wantErr {
			t.Errorf("%q: error %v, want error %v", c.args, err, c.wantErr)
			continue
		}
		if err == nil && bool(v) != c.want {
			t.Errorf("%q: %v, want %v", c.args, bool(v), c.want)
		}
	}
}
