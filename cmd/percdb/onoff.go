package main

import (
	"fmt"
	"strings"
)

// onOff is a boolean flag that also takes MySQL's spellings of a
// boolean option (ON and OFF, any case, as in --performance-schema=OFF),
// besides Go's (true, false, 1, 0). Given alone (--statement-stats) it
// is on.
type onOff bool

// String implements flag.Value.
func (b *onOff) String() string {
	if b != nil && *b {
		return "on"
	}
	return "off"
}

// Set implements flag.Value.
func (b *onOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "true", "1":
		*b = true
	case "off", "false", "0":
		*b = false
	default:
		return fmt.Errorf("%q is not on or off", s)
	}
	return nil
}

// IsBoolFlag makes the flag package accept the flag without a value.
func (b *onOff) IsBoolFlag() bool { return true }
