//go:build linux

package osproc

import (
	"context"
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WatchExit returns a channel closed once process pid has exited (a
// zombie counts as gone, as for Alive). Its goroutine ends when ctx does.
// On Linux it waits on a pidfd through the runtime's poller, which costs
// nothing until the process exits; where pidfd_open is missing (Linux
// before 5.3) it checks every 500 ms.
func WatchExit(ctx context.Context, pid int) <-chan struct{} {
	gone := make(chan struct{})
	if !validPID(pid) {
		close(gone)
		return gone
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		close(gone)
		return gone
	}
	if err != nil || unix.SetNonblock(fd, true) != nil {
		if err == nil {
			_ = unix.Close(fd)
		}
		go pollExit(ctx, pid, gone)
		return gone
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		go pollExit(ctx, pid, gone)
		return gone
	}
	go func() {
		defer f.Close()
		stop := context.AfterFunc(ctx, func() { _ = f.Close() })
		defer stop()
		exited := false
		err := rc.Read(func(fd uintptr) bool {
			exited = pidfdReadable(fd)
			return exited
		})
		if err == nil && exited {
			close(gone)
		}
	}()
	return gone
}

// pidfdReadable reports whether the pidfd says its process has exited,
// without waiting.
func pidfdReadable(fd uintptr) bool {
	p := unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	var ts unix.Timespec
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&p)), 1, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return e == 0 && n == 1 && p.Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
}
