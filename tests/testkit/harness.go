package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// This file holds what the editor suites (tests/nvim, tests/vim,
// tests/emacs) share of their harness: where the plugin is, files in the
// workspace, the headless editor process, what a failure shows of the
// sidecar, and waiting for what the CLI sees of the editor.

// PluginDir is plugins/<name> in this checkout.
func PluginDir(t testing.TB, name string) string {
	return filepath.Join(ModuleRoot(t), "plugins", name)
}

// WriteFile writes content to name inside the workspace (making its
// folders) and returns its path.
func (sb *Sandbox) WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(sb.Workspace, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// SidecarLogTail is the last 30 lines of the sidecar's log file at path
// as a failure message shows them, or "" when there is no log.
func SidecarLogTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return fmt.Sprintf("--- sidecar log (tail):\n%s\n", strings.Join(lines, "\n"))
}

// Process is a program a test runs without a terminal (a headless
// editor): its output is kept for failure messages and its exit watched.
type Process struct {
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

// WaitContains waits up to timeout until one of texts() (the messages an
// editor showed so far, what a terminal shows) contains substr, and
// returns it.
func WaitContains(timeout time.Duration, texts func() []string, substr string) (string, bool) {
	var found string
	ok := Poll(timeout, func() bool {
		for _, m := range texts() {
			if strings.Contains(m, substr) {
				found = m
				return true
			}
		}
		return false
	})
	return found, ok
}

// Connect waits for the sidecar's discovery file and connects a CLI to it.
func Connect(t testing.TB, sb *Sandbox, timeout time.Duration) *CLI {
	t.Helper()
	_, f := sb.WaitDiscovery(t, timeout)
	return ConnectCLI(t, f.Port, f.AuthToken)
}

// MustOpenDiff calls the CLI's openDiff and fails the test when the call or
// the tool fails.
func (c *CLI) MustOpenDiff(t testing.TB, path, content string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.OpenDiff(ctx, path, content)
	if err != nil {
		t.Fatalf("openDiff: %v", err)
	}
	if res.IsError {
		raw, _ := json.Marshal(res.Content)
		t.Fatalf("openDiff failed: %s", raw)
	}
}

// DiffNote decodes the file path and content of an ide/diffAccepted or
// ide/diffRejected notification.
func DiffNote(t testing.TB, raw json.RawMessage) (path, content string) {
	t.Helper()
	var p struct {
		FilePath string `json:"filePath"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("diff notification %s: %v", raw, err)
	}
	return p.FilePath, p.Content
}

// ParseContext decodes an ide/contextUpdate.
func ParseContext(t testing.TB, raw json.RawMessage) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("contextUpdate %s: %v", raw, err)
	}
	return c
}

// LatestContext is the last ide/contextUpdate the CLI received, if any.
func LatestContext(t testing.TB, cli *CLI) (idectx.IdeContext, bool) {
	t.Helper()
	notes := cli.All("ide/contextUpdate")
	if len(notes) == 0 {
		return idectx.IdeContext{}, false
	}
	return ParseContext(t, notes[len(notes)-1].Params), true
}

// WaitContext waits up to timeout until the CLI's latest context
// satisfies ok, and returns it; what says what the test waits for.
func WaitContext(t testing.TB, cli *CLI, what string, timeout time.Duration, ok func(idectx.IdeContext) bool) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if !Poll(timeout, func() bool {
		var have bool
		c, have = LatestContext(t, cli)
		return have && ok(c)
	}) {
		raw, _ := json.Marshal(c)
		t.Fatalf("the CLI's context never became: %s\nlast context: %s", what, raw)
	}
	return c
}

// ActiveFile is the file the CLI treats as active (the newest, if marked
// active), or nil.
func ActiveFile(c idectx.IdeContext) *idectx.File {
	if c.WorkspaceState == nil || len(c.WorkspaceState.OpenFiles) == 0 {
		return nil
	}
	newest := &c.WorkspaceState.OpenFiles[0]
	for i := range c.WorkspaceState.OpenFiles {
		f := &c.WorkspaceState.OpenFiles[i]
		if f.Timestamp > newest.Timestamp {
			newest = f
		}
	}
	if !newest.IsActive {
		return nil
	}
	return newest
}

// OpenPaths lists the paths of the open files, newest first.
func OpenPaths(c idectx.IdeContext) []string {
	if c.WorkspaceState == nil {
		return nil
	}
	files := append([]idectx.File(nil), c.WorkspaceState.OpenFiles...)
	for i := range files {
		for j := i + 1; j < len(files); j++ {
			if files[j].Timestamp > files[i].Timestamp {
				files[i], files[j] = files[j], files[i]
			}
		}
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Path
	}
	return out
}

// Active describes the active file a test waits for in the CLI's context.
type Active struct {
	Path      string
	Line, Col int     // Line 0: any cursor
	Selection *string // nil: none expected
	AnySel    bool    // do not look at the selection
}

// Matches reports whether c has the active file a describes.
func (a Active) Matches(c idectx.IdeContext) bool {
	f := ActiveFile(c)
	if f == nil || f.Path != a.Path {
		return false
	}
	if a.Line != 0 && (f.Cursor == nil || f.Cursor.Line != a.Line || f.Cursor.Character != a.Col) {
		return false
	}
	if a.AnySel {
		return true
	}
	if a.Selection == nil {
		return f.SelectedText == nil || *f.SelectedText == ""
	}
	return f.SelectedText != nil && *f.SelectedText == *a.Selection
}

func (a Active) String() string {
	sel := "none"
	if a.AnySel {
		sel = "any"
	} else if a.Selection != nil {
		sel = fmt.Sprintf("%q", *a.Selection)
	}
	return fmt.Sprintf("active %s at %d:%d, selection %s", a.Path, a.Line, a.Col, sel)
}

// WaitActive waits up to timeout until the CLI's latest context has the
// active file a describes, and returns that context.
func WaitActive(t testing.TB, cli *CLI, a Active, timeout time.Duration) idectx.IdeContext {
	t.Helper()
	return WaitContext(t, cli, a.String(), timeout, a.Matches)
}

// Ptr returns a pointer to s (for Active.Selection).
func Ptr(s string) *string { return &s }
