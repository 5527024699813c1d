//go:build !windows

package launch

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the server in its own process group so that stopping it
// also stops what it spawned (shell commands of the agent).
func setProcAttr(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func terminate(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

func kill(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
