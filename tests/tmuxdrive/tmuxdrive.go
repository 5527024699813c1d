// Package tmuxdrive runs interactive terminal programs (the Gemini CLI, a
// standalone companion, an editor) inside a private tmux server so that a test
// can read their screen and type into them the way a user does.
//
// Each [Pane] has its own tmux server on its own socket, killed (with every
// process it started) when the test ends, so tests never see each other's
// sessions or the user's.
package tmuxdrive

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TypePause is how long [Pane.Type] waits between the typed text and the
// Enter key. The Gemini CLI treats keys that arrive together as a paste, in
// which an Enter becomes a newline instead of submitting the prompt.
const TypePause = 500 * time.Millisecond

// echoWait bounds how long [Pane.Type] waits for the typed text to show.
const echoWait = 10 * time.Second

// pollInterval is how often WaitFor looks at the screen.
const pollInterval = 50 * time.Millisecond

// Options describe the program to run in a new pane.
type Options struct {
	// Dir is the program's working directory (default: the test's).
	Dir string
	// Env is the program's whole environment (default: os.Environ()).
	Env []string
	// Command is the program and its arguments, run directly (not through a
	// shell). Required.
	Command []string
	// Width and Height are the terminal size in cells (default 200x50).
	Width, Height int
}

// Pane is one program running in its own tmux server.
type Pane struct {
	socket string
	target string
	env    []string
	conf   string
}

// Require fails the test when tmux is missing and the CI environment variable
// is set, and skips it otherwise.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		Missing(t, "tmux is not installed (apt-get install tmux)")
	}
}

// RequireProgram returns the path of the executable name (an editor),
// or stops the test as Missing does, saying why: its install hint.
func RequireProgram(t testing.TB, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, why)
	}
	return p
}

// Missing stops a test that needs something this machine lacks: with CI set
// (CI=true, as CI systems do) it fails, so that a broken CI image cannot pass
// by skipping; elsewhere it skips with the reason.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "0" && ci != "false" {
		t.Fatalf("%s; CI is set, so this is a failure", reason)
	}
	t.Skipf("skipping: %s", reason)
}

// Start runs opts.Command in a new tmux server and returns its pane. The
// server is killed when the test ends. The pane stays on screen after the
// program exits, so its last output can still be read.
func Start(t testing.TB, opts Options) *Pane {
	t.Helper()
	Require(t)
	if len(opts.Command) == 0 {
		t.Fatalf("tmuxdrive.Start: Options.Command is empty")
	}
	if opts.Width <= 0 {
		opts.Width = 200
	}
	if opts.Height <= 0 {
		opts.Height = 50
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	// The server's socket lives in a folder of its own, removed at the end
	// (tmux leaves its socket file behind when the server is killed). Unix
	// socket paths are short, so this is not under t.TempDir().
	sockDir, err := os.MkdirTemp("", "gic-tmux-")
	if err == nil && len(sockDir) > 90 {
		os.RemoveAll(sockDir)
		sockDir, err = os.MkdirTemp("/tmp", "gic-tmux-")
	}
	if err != nil {
		t.Fatalf("tmuxdrive: socket folder: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(sockDir); err != nil {
			t.Logf("tmuxdrive: removing %s: %v", sockDir, err)
		}
	})
	p := &Pane{
		socket: filepath.Join(sockDir, "tmux.sock"),
		target: "main:0.0",
		env:    opts.Env,
	}
	// A private configuration, read when the server starts and so before the
	// program does: the pane stays after the program exits (a program that
	// fails at once leaves its message readable), with a deep scrollback.
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 10000\nset -g status off\n"), 0o600); err != nil {
		t.Fatalf("tmuxdrive: writing tmux.conf: %v", err)
	}
	p.conf = conf
	args := []string{"new-session", "-d", "-s", "main",
		"-x", strconv.Itoa(opts.Width), "-y", strconv.Itoa(opts.Height)}
	if opts.Dir != "" {
		args = append(args, "-c", opts.Dir)
	}
	// The program's environment is the server's: this client starts the
	// server with opts.Env, and tmux gives it to the panes.
	args = append(args, "--")
	args = append(args, opts.Command...)
	// Registered first, so that it runs even when the start fails half-way
	// (and, being registered after the socket folder's removal, before it).
	t.Cleanup(func() {
		// Note the program's processes while they still hang together: once
		// the program dies, its children move to another parent.
		pid, pidErr := p.pid()
		var procs []proc
		if pidErr == nil {
			procs = family(pid)
		}
		if out, err := p.tmux("kill-server"); err != nil && !strings.Contains(out, "no server") &&
			!strings.Contains(out, "error connecting") && !strings.Contains(out, "No such file") {
			t.Logf("tmuxdrive: kill-server: %v", err)
		}
		// The program gets SIGHUP and may still be writing (into the
		// test's temporary folders) on its way out: wait for it and what
		// it started, so that nothing outlives the test.
		if pidErr == nil {
			reap(t, append(procs, family(pid)...))
		}
	})
	if _, err := p.tmux(args...); err != nil {
		t.Fatalf("tmuxdrive: starting %q: %v", opts.Command, err)
	}
	return p
}

// tmux runs one tmux command against the pane's server and returns its
// combined output.
func (p *Pane) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", p.socket, "-f", p.conf}, args...)...)
	cmd.Env = withoutTMUX(p.env)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// withoutTMUX drops TMUX and TMUX_PANE, so that running the tests from inside
// tmux does not confuse the private server with the user's.
// withoutTMUX cleans the environment a pane starts with, so it is a user's
// terminal: not inside the test's own tmux, and not in CI. Gemini CLI reads
// CI, CONTINUOUS_INTEGRATION and any CI_* variable as "no one is at the
// keyboard" and refuses to start interactively.
func withoutTMUX(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "TMUX", name == "TMUX_PANE", name == "CI", name == "CONTINUOUS_INTEGRATION", strings.HasPrefix(name, "CI_"):
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Screen returns what the pane shows now: its visible lines, trailing blanks
// trimmed. It returns an error text (never panics) when the server is gone.
func (p *Pane) Screen() string {
	out, err := p.tmux("capture-pane", "-p", "-t", p.target)
	if err != nil {
		return fmt.Sprintf("<tmuxdrive: cannot capture the pane: %v>", err)
	}
	return strings.TrimRight(out, "\n ")
}

// History returns the pane's scrollback and visible lines together.
func (p *Pane) History() string {
	out, err := p.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", p.target)
	if err != nil {
		return fmt.Sprintf("<tmuxdrive: cannot capture the pane: %v>", err)
	}
	return strings.TrimRight(out, "\n ")
}

// WaitFor waits until substr is on the screen and returns the screen. It
// fails the test, printing the screen, if that does not happen within
// timeout.
func (p *Pane) WaitFor(t testing.TB, substr string, timeout time.Duration) string {
	t.Helper()
	return p.WaitUntil(t, fmt.Sprintf("%q on screen", substr), timeout, func(screen string) bool {
		return strings.Contains(screen, substr)
	})
}

// WaitUntil waits until ok accepts the screen and returns that screen. It
// fails the test with what and the last screen if timeout passes first.
func (p *Pane) WaitUntil(t testing.TB, what string, timeout time.Duration, ok func(screen string) bool) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := p.Screen()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("tmuxdrive: waited %v for %s; the screen is:\n%s", timeout, what, screen)
			return screen
		}
		time.Sleep(pollInterval)
	}
}

// Type types text into the pane literally, waits until the program shows
// it (on a loaded machine it may read the keys late, and keys read together
// with the Enter count as a paste), then waits [TypePause] and presses Enter
// on its own, the way a person submits a prompt.
func (p *Pane) Type(t testing.TB, text string) {
	t.Helper()
	if text != "" {
		tail := text
		if i := strings.LastIndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		if r := []rune(tail); len(r) > 20 {
			tail = string(r[len(r)-20:])
		}
		seen := strings.Count(p.Screen(), tail)
		if _, err := p.tmux("send-keys", "-t", p.target, "-l", text); err != nil {
			t.Fatalf("tmuxdrive: typing %q: %v", text, err)
		}
		// A text wrapped across screen lines may never match: then this
		// only costs the wait.
		deadline := time.Now().Add(echoWait)
		for tail != "" && strings.Count(p.Screen(), tail) <= seen && time.Now().Before(deadline) {
			time.Sleep(pollInterval)
		}
	}
	time.Sleep(TypePause)
	p.Keys(t, "Enter")
}

// Keys sends keys as tmux key names ("Enter", "Escape", "C-c", "y", ...).
func (p *Pane) Keys(t testing.TB, keys ...string) {
	t.Helper()
	args := append([]string{"send-keys", "-t", p.target}, keys...)
	if _, err := p.tmux(args...); err != nil {
		t.Fatalf("tmuxdrive: sending keys %q: %v", keys, err)
	}
}

// PID returns the process ID of the program running in the pane.
func (p *Pane) PID(t testing.TB) int {
	t.Helper()
	pid, err := p.pid()
	if err != nil {
		t.Fatalf("tmuxdrive: %v", err)
	}
	return pid
}

func (p *Pane) pid() (int, error) {
	out, err := p.tmux("display-message", "-p", "-t", p.target, "#{pane_pid}")
	if err != nil {
		return 0, fmt.Errorf("pane pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("pane pid %q: %w", out, err)
	}
	return pid, nil
}

// reapGrace is how long a pane's programs get to exit after SIGTERM before
// they are killed.
const reapGrace = 5 * time.Second

// reap ends procs (a pane's program and the processes it started) and
// waits until they are gone: SIGTERM first (some programs, the Gemini CLI
// among them, outlive the hangup that killing the tmux server sends),
// SIGKILL after reapGrace.
func reap(t testing.TB, procs []proc) {
	start := time.Now()
	signalled := map[proc]syscall.Signal{}
	for {
		left := alive(procs)
		if len(left) == 0 {
			return
		}
		sig := syscall.SIGTERM
		if time.Since(start) > reapGrace {
			sig = syscall.SIGKILL
		}
		for _, p := range left {
			if signalled[p] != sig {
				_ = Kill(p.pid, sig)
				signalled[p] = sig
			}
		}
		if time.Since(start) > 2*reapGrace {
			t.Logf("tmuxdrive: processes %v outlived their pane", left)
			return
		}
		time.Sleep(pollInterval)
	}
}

// UnknownStatus is the exit status reported when tmux saw the program end
// but could not tell its status.
const UnknownStatus = -1

// Exited reports whether the program has exited and, if so, its exit status:
// the code it exited with, 128+N when signal N killed it, or UnknownStatus
// when tmux has not (yet) collected it.
func (p *Pane) Exited() (exited bool, status int, err error) {
	out, err := p.tmux("display-message", "-p", "-t", p.target, "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}")
	if err != nil {
		return false, 0, err
	}
	fields := strings.Split(strings.TrimSpace(out), "|")
	if len(fields) != 3 {
		return false, 0, fmt.Errorf("tmuxdrive: unexpected pane status %q", out)
	}
	if fields[0] != "1" {
		return false, 0, nil
	}
	if code, err := strconv.Atoi(fields[1]); err == nil {
		return true, code, nil
	}
	if sig, err := strconv.Atoi(fields[2]); err == nil {
		return true, 128 + sig, nil
	}
	return true, UnknownStatus, nil
}

// AwaitExit waits up to timeout for the program to exit (or for tmux to
// be gone) and reports whether it did; unlike WaitExit it never fails the
// test, for cleanups that only give the program time to quit.
func (p *Pane) AwaitExit(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		exited, _, err := p.Exited()
		if err != nil || exited {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitExit waits until the program exits and returns its exit status (see
// [Pane.Exited]). It fails the test if the program is still running after
// timeout.
func (p *Pane) WaitExit(t testing.TB, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	// tmux may notice the pane's end (its terminal closing) a moment before
	// it collects the exit status; give the status that moment.
	var unknownSince time.Time
	for {
		exited, status, err := p.Exited()
		if err != nil {
			t.Fatalf("tmuxdrive: %v", err)
		}
		if exited && status != UnknownStatus {
			return status
		}
		if exited && unknownSince.IsZero() {
			unknownSince = time.Now()
		}
		if exited && time.Since(unknownSince) > time.Second {
			return UnknownStatus
		}
		if time.Now().After(deadline) {
			if exited {
				return UnknownStatus
			}
			t.Fatalf("tmuxdrive: the program still runs after %v; the screen is:\n%s", timeout, p.Screen())
		}
		time.Sleep(pollInterval)
	}
}
