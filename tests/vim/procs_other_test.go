//go:build !linux

package vim

import (
	"os"
	"syscall"
)

// processGroupAlive reports whether process pgid still exists (without
// /proc, only the leader itself is checked).
func processGroupAlive(pgid int) bool {
	p, err := os.FindProcess(pgid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// pidAlive reports whether pid runs.
func pidAlive(pid int) bool { return processGroupAlive(pid) }
