//go:build unix

package osproc

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/shirou/gopsutil/v4/process"
)

// Mine reports whether the current user owns the file fi describes.
func Mine(path string, fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// Owner returns a printable name of the file's owner (its uid).
func Owner(path string, fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return "uid " + strconv.Itoa(int(st.Uid))
	}
	return "an unknown user"
}

// OthersCanWrite reports whether users other than the owner may add,
// remove or replace entries in the directory at path, which fi describes:
// it is writable by everyone without the sticky bit.
func OthersCanWrite(path string, fi fs.FileInfo) bool {
	return fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0
}

// MakePrivate removes every permission of group and others from path: mode
// 0700 for a directory, 0600 for a file, unless it already has none.
func MakePrivate(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	mode := fs.FileMode(0o600)
	if dir {
		mode = 0o700
	}
	return os.Chmod(path, mode)
}

// OpenNoFollow opens path for reading. It fails on a symbolic link instead
// of following it and never blocks: a FIFO or device opens at once (in
// non-blocking mode) and the caller's check that it is a regular file
// turns it away.
func OpenNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// Replace renames oldpath to newpath, replacing newpath if it exists, in
// one step: a reader sees the old file or the new one, never a part.
func Replace(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Alive reports whether pid names a running process (of any user). A
// zombie counts as gone.
func Alive(pid int) bool {
	if !validPID(pid) {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return false
	}
	if st, err := p.Status(); err == nil {
		for _, s := range st {
			if s == process.Zombie {
				return false
			}
		}
	}
	return true
}

// StopSignals are the signals that ask the companion to stop cleanly.
func StopSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
}

// SurviveBrokenPipe keeps SIGPIPE from killing the process when the reader
// of its stdout or stderr goes away (Go's default for those two): the
// write fails with EPIPE instead. The signal is caught, not ignored, so
// processes started later get the default disposition back.
func SurviveBrokenPipe() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// Pollable returns a file for f's descriptor in non-blocking mode, which
// the runtime polls: closing it then releases a pending read. It returns f
// unchanged when the mode cannot be set.
func Pollable(f *os.File) *os.File {
	fd := int(f.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}

// OwnGroup makes cmd start in a process group of its own, so that stopping
// the group also stops what the process spawned.
func OwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// TerminateGroup asks the process group of cmd (started with OwnGroup) to
// stop (SIGTERM).
func TerminateGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

// KillGroup kills the process group of cmd (started with OwnGroup).
func KillGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// Parents returns a snapshot of the running processes: each PID with its
// parent's PID.
func Parents() (map[int]int, error) {
	procs, err := process.Processes()
	if err != nil {
		return nil, err
	}
	out := make(map[int]int, len(procs))
	for _, p := range procs {
		if ppid, err := p.Ppid(); err == nil {
			out[int(p.Pid)] = int(ppid)
		}
	}
	return out, nil
}

// KeepFromChildren makes f's descriptor one that no process started later
// inherits. Go opens every descriptor close-on-exec already.
func KeepFromChildren(*os.File) error { return nil }

// OnTerminal makes cmd start in a session of its own whose controlling
// terminal is cmd's stdin, which must be the slave side of a
// pseudo-terminal: what a program started in a terminal emulator gets.
func OnTerminal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
}
