//go:build !linux && !windows

package tmuxdrive

import (
	"errors"
	"syscall"
)

// proc identifies a process. Without /proc only the PID is known.
type proc struct {
	pid int
}

// family returns pid itself: without /proc its descendants are not known.
func family(pid int) []proc { return alive([]proc{{pid: pid}}) }

// alive returns those of procs that still run.
func alive(procs []proc) []proc {
	var out []proc
	for _, p := range procs {
		if err := syscall.Kill(p.pid, 0); err == nil || !errors.Is(err, syscall.ESRCH) {
			out = append(out, p)
		}
	}
	return out
}
