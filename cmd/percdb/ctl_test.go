package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCtlRefusesBadCommands: percdb ctl names what is wrong with a command
// line before it asks pd anything (the pd address given listens nowhere).
func TestCtlRefusesBadCommands(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pd", "127.0.0.1:1"}, "want a command"},
		{[]string{"--pd", "127.0.0.1:1", "region"}, "want a command"},
		{[]string{"--pd", "127.0.0.1:1", "store", "frob"}, `unknown command "frob"`},
		{[]string{"--pd", "127.0.0.1:1", "store", "drain"}, "want one store id"},
		{[]string{"--pd", "127.0.0.1:1", "store", "drain", "x"}, `store id "x"`},
		{[]string{"--pd", "127.0.0.1:1", "store", "drain", "0"}, `store id "0"`},
		{[]string{"--pd", "127.0.0.1:1", "store", "cancel-drain", "1", "2"}, "want one store id"},
		{[]string{"--pd", "127.0.0.1:1", "store", "list", "4"}, "unexpected arguments"},
		{[]string{"--pd", "", "store"}, "pd"},
	} {
		var out bytes.Buffer
		err := runCtl(c.args, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("percdb ctl %q: %v, want an error with %q", c.args, err, c.want)
		}
	}
}
