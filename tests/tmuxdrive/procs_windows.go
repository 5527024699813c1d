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

// Kill ends pid for any signal but 0, which only checks that it exists:
// Windows has no signals to send, only termination.
func Kill(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil || sig == 0 {
		return err
	}
	return p.Kill()
}
