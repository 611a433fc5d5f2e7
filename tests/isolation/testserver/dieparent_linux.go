package testserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the server if the test process dies
// first (a test binary killed on timeout must not leave mariadbd running).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
