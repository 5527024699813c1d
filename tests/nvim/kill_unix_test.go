//go:build unix

package nvim

import "syscall"

// kill sends sig to pid (0: only checks that it exists).
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
