//go:build windows

package tmuxdrive

import (
	"os"
	"syscall"
)

// alive returns those of procs that still run.
func alive(procs []proc) []proc {
	var out []proc
	for _, p := range procs {
		if h, err := os.FindProcess(p.pid); err == nil {
			h.Release()
			out = append(out, p)
		}
	}
	return out
}

// kill ends pid: Windows has no signals to send, only termination.
func kill(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
