//go:build !linux

package crash

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie a child's life
// to its parent's; the tests' cleanups still kill their children.
func dieWithParent(*exec.Cmd) {}
