package servertest

import (
	"os/exec"
	"syscall"
)

// setParentDeath makes the child die with the test process.
func setParentDeath(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
