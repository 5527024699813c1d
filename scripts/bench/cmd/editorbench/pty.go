//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// A terminal is the master side of a pseudo-terminal an editor runs on:
// what the driver writes to it, the editor reads as typed keys.
type terminal struct {
	master *os.File
	mu     sync.Mutex
	tail   []byte // the last bytes the editor drew, for error messages
}

// startOnTerminal starts cmd with a new pseudo-terminal of rows×cols as its
// controlling terminal and stdin, stdout and stderr, and drains what the
// editor draws.
func startOnTerminal(cmd *exec.Cmd, rows, cols int) (*terminal, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("pty number: %w", err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		master.Close()
		return nil, fmt.Errorf("pty size: %w", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("open pty slave: %w", err)
	}
	defer slave.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	osproc.OnTerminal(cmd)
	if err := cmd.Start(); err != nil {
		master.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	t := &terminal{master: master}
	go t.drain()
	return t, nil
}

func (t *terminal) drain() {
	buf := make([]byte, 32<<10)
	for {
		n, err := t.master.Read(buf)
		if n > 0 {
			t.mu.Lock()
			t.tail = append(t.tail, buf[:n]...)
			if len(t.tail) > 8<<10 {
				t.tail = append(t.tail[:0], t.tail[len(t.tail)-4<<10:]...)
			}
			t.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// Type writes keys as if typed.
func (t *terminal) Type(keys string) error {
	_, err := t.master.WriteString(keys)
	return err
}

// Tail is the end of what the editor drew, control sequences included.
func (t *terminal) Tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.tail)
}

func (t *terminal) Close() error { return t.master.Close() }
