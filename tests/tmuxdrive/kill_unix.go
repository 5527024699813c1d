//go:build unix

package tmuxdrive

import "syscall"

// Kill sends sig to pid (0: only checks that it exists), for tests that
// end or probe the processes an editor started.
func Kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
