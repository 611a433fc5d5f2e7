//go:build !linux

package testserver

import "os/exec"

// dieWithParent does nothing where the kernel offers no parent-death
// signal: a killed test process may leave the server running.
func dieWithParent(*exec.Cmd) {}
