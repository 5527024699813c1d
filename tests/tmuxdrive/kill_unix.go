//go:build unix

package tmuxdrive

import "syscall"

// kill sends sig to pid.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
