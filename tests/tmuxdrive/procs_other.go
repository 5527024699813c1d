//go:build !linux && !windows

package tmuxdrive

import (
	"errors"
	"syscall"
)

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
