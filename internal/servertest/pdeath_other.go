//go:build !linux

package servertest

import "os/exec"

func setParentDeath(cmd *exec.Cmd) {}
