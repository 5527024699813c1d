//go:build windows

package nvim

import (
	"os"
	"syscall"
)

// kill ends pid for any signal but 0, which only checks that it exists:
// Windows has no signals to send.
func kill(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil || sig == 0 {
		return err
	}
	return p.Kill()
}
