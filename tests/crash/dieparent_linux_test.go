package crash

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd if the test process dies first
// (a test binary killed on timeout must not leave servers or clients
// running).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
