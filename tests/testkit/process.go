package testkit

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Process is a program a test runs without a terminal (a headless
// editor): its output is kept for failure messages and its exit watched.
type Process struct {
	// Cmd is the command as started.
	Cmd *exec.Cmd
	// Output is what it wrote on stdout and stderr.
	Output *SyncBuffer
	exited chan struct{}
}

// StartProcess starts cmd (Dir, Env and Stdin set by the caller) with
// its stdout and stderr in Output.
func StartProcess(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Output: &SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Output, p.Output
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", filepath.Base(cmd.Path), err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// HasExited reports whether the process has exited.
func (p *Process) HasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// WaitOrKill waits up to timeout for the process to exit (after the test
// asked it to, as a user quits); when it does not, the test fails with
// diagnostics() and the process is killed.
func (p *Process) WaitOrKill(t testing.TB, timeout time.Duration, diagnostics func() string) {
	select {
	case <-p.exited:
	case <-time.After(timeout):
		t.Errorf("%s did not exit within %v of being asked to; killing it\n%s", filepath.Base(p.Cmd.Path), timeout, diagnostics())
		_ = p.Cmd.Process.Kill()
		<-p.exited
	}
}
