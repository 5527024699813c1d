//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package review

import (
	"os"

	"golang.org/x/sys/unix"
)

// KeyMode puts the terminal f into cbreak mode (keys are delivered one at a
// time, without echo; Ctrl-C still stops the program) and returns the
// function that restores it. ok is false when f is not a terminal, and the
// caller reads lines instead.
func KeyMode(f *os.File) (restore func(), ok bool) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGet)
	if err != nil {
		return func() {}, false
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSet, &t); err != nil {
		return func() {}, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSet, old) }, true
}
