//go:build linux

package osproc

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// QuietReader returns a reader of f (stdin, a pipe from the editor) that
// costs the process as few wake-ups as the data allow, and that a Close
// from another goroutine releases from a pending Read, as Pollable's does.
// Its Pause waits without a timer of the Go runtime.
//
// Reading through os.File has costs that a stream of small messages feels.
// Every read enters the runtime's syscall path, which wakes the runtime's
// system monitor from its deep sleep, and the monitor then polls every
// 20 µs for a millisecond before it sleeps again: an editor writing every
// few milliseconds kept it polling all the time. The runtime's poller
// watches the pipe edge-triggered, so every write of the editor wakes a
// thread, even while nobody reads: a reader that batches its reads gains
// nothing. And every timer of the runtime wakes the system monitor as well
// as the thread that runs it.
//
// This reader reads without the syscall path (a non-blocking read never
// blocks) and watches the pipe through an epoll instance of its own, armed
// for one event only when a read found the pipe empty; the runtime's
// poller watches that instance. Data that come while the reader is busy,
// or pausing between reads, wake no one. Pause waits on a timerfd in the
// same instance.
//
// A file that cannot be watched so (a regular file) is returned as
// Pollable returns it.
func QuietReader(f *os.File) io.Reader {
	fd := int(f.Fd())
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return Pollable(f)
	}
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		_ = unix.Close(ep)
		return Pollable(f)
	}
	fail := func() io.Reader {
		_ = unix.Close(tfd)
		_ = unix.Close(ep)
		return Pollable(f)
	}
	pipeEv := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(fd)}
	if unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &pipeEv) != nil {
		return fail()
	}
	timerEv := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(tfd)}
	if unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, tfd, &timerEv) != nil ||
		unix.SetNonblock(fd, true) != nil || unix.SetNonblock(ep, true) != nil {
		return fail()
	}
	epf := os.NewFile(uintptr(ep), "epoll")
	rc, err := epf.SyscallConn()
	if err != nil {
		_ = epf.Close()
		_ = unix.Close(tfd)
		return Pollable(f)
	}
	return &quietReader{f: f, fd: fd, tfd: tfd, ep: epf, rc: rc, pipeEv: pipeEv, armed: true}
}

type quietReader struct {
	f      *os.File        // the pipe
	fd     int             // its descriptor, non-blocking
	tfd    int             // a timerfd for Pause
	ep     *os.File        // the epoll instance watching fd and tfd, polled by the runtime
	rc     syscall.RawConn // of ep
	pipeEv unix.EpollEvent // the one-shot watch of fd
	// armed: the instance watches fd for one event, which may have come;
	// the next read takes it off, so that the instance reads as idle and
	// further data do not signal it again.
	armed bool
}

// drain takes what events the instance ep holds off it: with the pipe's,
// its one-shot watch is spent.
func drain(ep uintptr) {
	var got [2]unix.EpollEvent
	_, _, _ = unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, ep, uintptr(unsafe.Pointer(&got[0])), uintptr(len(got)), 0, 0, 0)
}

// Read reads what the pipe holds, or waits until it holds something.
func (q *quietReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	// The pipe is read inside ep's RawConn: Close waits for a read in
	// progress before it closes the pipe.
	err := q.rc.Read(func(ep uintptr) bool {
		if q.armed {
			drain(ep)
			q.armed = false
		}
		for {
			r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(q.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				// Empty: arm the instance for the next data and wait for
				// them. Data that came since the read make it ready at
				// once.
				ev := q.pipeEv
				if err := unix.EpollCtl(int(ep), unix.EPOLL_CTL_MOD, q.fd, &ev); err != nil {
					errno = err.(syscall.Errno)
					return true
				}
				q.armed = true
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	return q.result(n, errno, err)
}

func (q *quietReader) result(n int, errno syscall.Errno, err error) (int, error) {
	switch {
	case err != nil:
		if errors.Is(err, os.ErrClosed) {
			return 0, os.ErrClosed
		}
		return 0, &os.PathError{Op: "read", Path: q.f.Name(), Err: err}
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: q.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Pause waits for d, or until the reader is closed, on the instance's
// timerfd. It is called between reads, from the reading goroutine. Data
// that come meanwhile do not end it: the pipe's watch is spent.
func (q *quietReader) Pause(d time.Duration) {
	if d <= 0 {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if unix.TimerfdSettime(q.tfd, 0, &spec, nil) != nil {
		time.Sleep(d)
		return
	}
	_ = q.rc.Read(func(ep uintptr) bool {
		if q.armed {
			drain(ep)
			q.armed = false
		}
		var buf [8]byte
		_, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(q.tfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == unix.EAGAIN {
			return false
		}
		drain(ep)
		return true
	})
}

// Close ends a pending Read and closes the pipe.
func (q *quietReader) Close() error {
	err := q.ep.Close()
	_ = unix.Close(q.tfd)
	return errors.Join(err, q.f.Close())
}
