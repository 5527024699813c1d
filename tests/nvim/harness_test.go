// Package nvim tests the Neovim plugin (plugins/nvim) against a real
// headless Neovim, the real sidecar binary and, end to end, the real Gemini
// CLI. The test drives Neovim through its msgpack-rpc API (a socket from
// --listen) and plays the CLI with testkit.ConnectCLI.
package nvim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

const (
	// callTimeout bounds one API call; Neovim answers in milliseconds
	// unless it is stuck.
	callTimeout = 20 * time.Second
	// waitTimeout bounds waiting for something the plugin does on its own.
	waitTimeout = 20 * time.Second
)

// requireNvim returns the nvim executable, or fails (CI) / skips the test.
func requireNvim(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("nvim")
	if err != nil {
		tmuxdrive.Missing(t, "nvim is not installed (apt-get install neovim)")
	}
	return p
}

// pluginDir is plugins/nvim in this checkout.
func pluginDir(t testing.TB) string {
	return filepath.Join(testkit.ModuleRoot(t), "plugins", "nvim")
}

// Options configure startNvim.
type Options struct {
	// Setup is merged over the default setup() options the harness passes
	// (sidecar.cmd = the test binary, log to the sandbox).
	Setup map[string]any
	// NoBinary leaves sidecar.cmd unset, so the plugin must find or build
	// the binary itself.
	NoBinary bool
	// Env replaces the environment (default: the sandbox's, with HOME set
	// to its Home).
	Env []string
	// Args are extra arguments for nvim (e.g. files to edit).
	Args []string
	// UI starts nvim inside tmux (a real terminal UI) instead of headless.
	UI bool
}

// Nvim is a running Neovim with the plugin loaded.
type Nvim struct {
	t       testing.TB
	sb      *testkit.Sandbox
	rpc     *client
	sock    string
	logFile string
	pane    *tmuxdrive.Pane
	cmd     *exec.Cmd
	stderr  *lockedBuffer
	exited  chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// initLua is the minimal init.lua: the plugin on the runtimepath, notes of
// every vim.notify kept for the test, setup() with the given options.
const initLua = `
vim.opt.rtp:prepend(%q)
vim.o.swapfile = false
vim.o.shada = ""
_G.gemini_test = { notes = {} }
vim.notify = function(msg, level)
  table.insert(_G.gemini_test.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
require("gemini_companion").setup(vim.json.decode(%q))
`

func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				mergeMaps(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// startNvim starts Neovim in sb.Workspace with the plugin set up, and stops
// it (as a user quits) when the test ends.
func startNvim(t testing.TB, sb *testkit.Sandbox, opts Options) *Nvim {
	t.Helper()
	nvimBin := requireNvim(t)
	setup := map[string]any{
		"sidecar": map[string]any{
			"log_level": "debug",
			"log_file":  filepath.Join(sb.TmpDir, "sidecar.log"),
		},
	}
	if !opts.NoBinary {
		setup["sidecar"].(map[string]any)["cmd"] = testkit.Binary(t)
	}
	mergeMaps(setup, opts.Setup)
	optsJSON, err := json.Marshal(setup)
	if err != nil {
		t.Fatalf("setup options: %v", err)
	}
	initPath := filepath.Join(sb.TmpDir, "init.lua")
	if err := os.WriteFile(initPath, fmt.Appendf(nil, initLua, pluginDir(t), string(optsJSON)), 0o600); err != nil {
		t.Fatalf("write init.lua: %v", err)
	}
	// Unix socket paths are short (108 bytes): keep it out of t.TempDir().
	sockDir, err := os.MkdirTemp("", "gicnv")
	if err != nil {
		t.Fatalf("socket dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	n := &Nvim{t: t, sb: sb, sock: filepath.Join(sockDir, "nvim.sock"), logFile: filepath.Join(sb.TmpDir, "sidecar.log")}

	env := opts.Env
	if env == nil {
		env = testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "NVIM_LOG_FILE="+filepath.Join(sb.TmpDir, "nvim.log"))
	}
	args := []string{"--clean", "-u", initPath, "--listen", n.sock}
	args = append(args, opts.Args...)
	if opts.UI {
		n.pane = tmuxdrive.Start(t, tmuxdrive.Options{
			Dir:     sb.Workspace,
			Env:     env,
			Command: append([]string{nvimBin}, args...),
			Width:   200,
			Height:  50,
		})
	} else {
		n.cmd = exec.Command(nvimBin, append([]string{"--headless"}, args...)...)
		n.cmd.Dir = sb.Workspace
		n.cmd.Env = env
		n.stderr = &lockedBuffer{}
		n.cmd.Stdout = n.stderr
		n.cmd.Stderr = n.stderr
		if err := n.cmd.Start(); err != nil {
			t.Fatalf("start nvim: %v", err)
		}
		n.exited = make(chan struct{})
		go func() {
			_ = n.cmd.Wait()
			close(n.exited)
		}()
	}
	t.Cleanup(n.stop)

	var conn net.Conn
	ok := poll(10*time.Second, func() bool {
		conn, err = net.DialTimeout("unix", n.sock, time.Second)
		return err == nil || n.hasExited()
	})
	if !ok || conn == nil {
		t.Fatalf("cannot connect to nvim at %s: %v\n%s", n.sock, err, n.diagnostics())
	}
	n.rpc = newClient(conn)
	return n
}

// hasExited reports whether a headless nvim has exited.
func (n *Nvim) hasExited() bool {
	if n.exited == nil {
		return false
	}
	select {
	case <-n.exited:
		return true
	default:
		return false
	}
}

// diagnostics is what a failure message shows about Neovim and the sidecar.
func (n *Nvim) diagnostics() string {
	var b strings.Builder
	if n.stderr != nil {
		fmt.Fprintf(&b, "--- nvim output:\n%s\n", n.stderr.String())
	}
	if n.pane != nil {
		fmt.Fprintf(&b, "--- screen:\n%s\n", n.pane.Screen())
	}
	if n.rpc != nil {
		var notes []struct {
			Msg   string `json:"msg"`
			Level int    `json:"level"`
		}
		if raw, err := n.rpc.call(2*time.Second, "nvim_exec_lua", "return vim.json.encode(_G.gemini_test.notes)", []any{}); err == nil {
			if s, ok := raw.(string); ok {
				_ = json.Unmarshal([]byte(s), &notes)
			}
		}
		for _, note := range notes {
			fmt.Fprintf(&b, "--- notify(%d): %s\n", note.Level, note.Msg)
		}
	}
	if data, err := os.ReadFile(n.logFile); err == nil {
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) > 30 {
			lines = lines[len(lines)-30:]
		}
		fmt.Fprintf(&b, "--- sidecar log (tail):\n%s\n", strings.Join(lines, "\n"))
	}
	return b.String()
}

// stop quits Neovim the way a user does (:qa!) and waits for it to exit;
// a Neovim that does not exit is killed.
func (n *Nvim) stop() {
	if n.rpc != nil {
		_ = n.rpc.notify("nvim_command", "qa!")
	}
	if n.cmd != nil {
		select {
		case <-n.exited:
		case <-time.After(10 * time.Second):
			n.t.Errorf("nvim did not exit within 10s of :qa!; killing it\n%s", n.diagnostics())
			_ = n.cmd.Process.Kill()
			<-n.exited
		}
	}
	if n.pane != nil {
		deadline := time.Now().Add(10 * time.Second)
		for {
			exited, _, err := n.pane.Exited()
			if err != nil || exited || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if n.rpc != nil {
		n.rpc.close()
	}
}

// Quit quits Neovim now (as stop does at cleanup) and waits for it.
func (n *Nvim) Quit(t testing.TB) {
	t.Helper()
	n.stop()
	n.rpc = nil
}

// Lua runs Lua code (with ... = args) in Neovim and returns its result.
func (n *Nvim) Lua(t testing.TB, code string, args ...any) any {
	t.Helper()
	if args == nil {
		args = []any{}
	}
	res, err := n.rpc.call(callTimeout, "nvim_exec_lua", code, args)
	if err != nil {
		t.Fatalf("lua %q: %v\n%s", code, err, n.diagnostics())
	}
	return res
}

// LuaJSON runs Lua code that returns a value and decodes it (through JSON)
// into dst.
func (n *Nvim) LuaJSON(t testing.TB, dst any, code string, args ...any) {
	t.Helper()
	wrapped := "local v = (function(...)\n" + code + "\nend)(...)\nreturn vim.json.encode(v == nil and vim.NIL or v)"
	raw := n.Lua(t, wrapped, args...)
	s, ok := raw.(string)
	if !ok {
		t.Fatalf("lua %q returned %T, not JSON text", code, raw)
	}
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		t.Fatalf("lua %q returned %s: %v", code, s, err)
	}
}

// Cmd runs an Ex command.
func (n *Nvim) Cmd(t testing.TB, cmd string) {
	t.Helper()
	if _, err := n.rpc.call(callTimeout, "nvim_command", cmd); err != nil {
		t.Fatalf("command %q: %v\n%s", cmd, err, n.diagnostics())
	}
}

// Input types keys as a user does (nvim_input; "<Esc>", "<CR>", ...).
func (n *Nvim) Input(t testing.TB, keys string) {
	t.Helper()
	if _, err := n.rpc.call(callTimeout, "nvim_input", keys); err != nil {
		t.Fatalf("input %q: %v", keys, err)
	}
}

// Mode is Neovim's current mode ("n", "v", "V", "\x16", "i", "t", ...).
func (n *Nvim) Mode(t testing.TB) string {
	t.Helper()
	var m struct {
		Mode     string `json:"mode"`
		Blocking bool   `json:"blocking"`
	}
	n.LuaJSON(t, &m, "return vim.api.nvim_get_mode()")
	return m.Mode
}

// WaitLua waits until the Lua code returns true.
func (n *Nvim) WaitLua(t testing.TB, what, code string, timeout time.Duration, args ...any) {
	t.Helper()
	var last any
	ok := poll(timeout, func() bool {
		last = n.Lua(t, code, args...)
		b, _ := last.(bool)
		return b
	})
	if !ok {
		t.Fatalf("waited %v for %s (last result %v)\n%s", timeout, what, last, n.diagnostics())
	}
}

// WaitRunning waits until the plugin's sidecar answered initialize.
func (n *Nvim) WaitRunning(t testing.TB) {
	t.Helper()
	n.WaitLua(t, "the sidecar to run", `return require("gemini_companion.sidecar").running()`, waitTimeout)
}

// SidecarPID is the PID of the sidecar the plugin runs now.
func (n *Nvim) SidecarPID(t testing.TB) int {
	t.Helper()
	var pid int
	n.LuaJSON(t, &pid, `return require("gemini_companion.sidecar").state.pid`)
	return pid
}

// Notes are the vim.notify messages so far.
func (n *Nvim) Notes(t testing.TB) []string {
	t.Helper()
	var notes []struct {
		Msg string `json:"msg"`
	}
	n.LuaJSON(t, &notes, "return _G.gemini_test.notes")
	out := make([]string, len(notes))
	for i, note := range notes {
		out[i] = note.Msg
	}
	return out
}

// WaitNote waits for a vim.notify message containing substr.
func (n *Nvim) WaitNote(t testing.TB, substr string, timeout time.Duration) string {
	t.Helper()
	var found string
	ok := poll(timeout, func() bool {
		for _, m := range n.Notes(t) {
			if strings.Contains(m, substr) {
				found = m
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no notification containing %q within %v; notes: %q", substr, timeout, n.Notes(t))
	}
	return found
}

// BufLines is the text of buffer buf (0: current) as lines.
func (n *Nvim) BufLines(t testing.TB, buf int) []string {
	t.Helper()
	var lines []string
	n.LuaJSON(t, &lines, "return vim.api.nvim_buf_get_lines(...,0,-1,false)", buf)
	return lines
}

// poll waits for cond like testkit.Poll.
func poll(timeout time.Duration, cond func() bool) bool { return testkit.Poll(timeout, cond) }

// connect waits for the discovery file and connects a CLI to the sidecar.
func connect(t testing.TB, sb *testkit.Sandbox) *testkit.CLI {
	t.Helper()
	_, f := sb.WaitDiscovery(t, waitTimeout)
	return testkit.ConnectCLI(t, f.Port, f.AuthToken)
}

// writeFile writes content to name inside the workspace and returns its path.
func writeFile(t testing.TB, sb *testkit.Sandbox, name, content string) string {
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

// parseContext decodes an ide/contextUpdate.
func parseContext(t testing.TB, raw json.RawMessage) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("contextUpdate %s: %v", raw, err)
	}
	return c
}

// activeFile is the file the CLI treats as active (the newest, if marked
// active), or nil.
func activeFile(c idectx.IdeContext) *idectx.File {
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

// openPaths lists the paths of the open files, newest first.
func openPaths(c idectx.IdeContext) []string {
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

// want describes the active file a test waits for.
type want struct {
	path      string
	line, col int     // 0: any
	selection *string // nil: none expected
	anySel    bool    // do not look at the selection
}

func (w want) matches(c idectx.IdeContext) bool {
	f := activeFile(c)
	if f == nil || f.Path != w.path {
		return false
	}
	if w.line != 0 && (f.Cursor == nil || f.Cursor.Line != w.line || f.Cursor.Character != w.col) {
		return false
	}
	if w.anySel {
		return true
	}
	if w.selection == nil {
		return f.SelectedText == nil || *f.SelectedText == ""
	}
	return f.SelectedText != nil && *f.SelectedText == *w.selection
}

func (w want) String() string {
	sel := "none"
	if w.anySel {
		sel = "any"
	} else if w.selection != nil {
		sel = fmt.Sprintf("%q", *w.selection)
	}
	return fmt.Sprintf("active %s at %d:%d, selection %s", w.path, w.line, w.col, sel)
}

// latestContext is the last ide/contextUpdate the CLI received, if any.
func latestContext(t testing.TB, cli *testkit.CLI) (idectx.IdeContext, bool) {
	t.Helper()
	notes := cli.All("ide/contextUpdate")
	if len(notes) == 0 {
		return idectx.IdeContext{}, false
	}
	return parseContext(t, notes[len(notes)-1].Params), true
}

// waitActive waits until the CLI's latest context has the active file w
// describes, and returns that context.
func waitActive(t testing.TB, cli *testkit.CLI, w want) idectx.IdeContext {
	t.Helper()
	return waitContext(t, cli, w.String(), w.matches)
}

// waitContext waits until the CLI's latest context satisfies ok.
func waitContext(t testing.TB, cli *testkit.CLI, what string, ok func(idectx.IdeContext) bool) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if !poll(waitTimeout, func() bool {
		var have bool
		c, have = latestContext(t, cli)
		return have && ok(c)
	}) {
		raw, _ := json.Marshal(c)
		t.Fatalf("the CLI's context never became: %s\nlast context: %s", what, raw)
	}
	return c
}

func ptr(s string) *string { return &s }
