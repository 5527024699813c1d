// Package nvim tests the Neovim plugin (plugins/nvim) against a real
// headless Neovim, the real sidecar binary and, end to end, the real Gemini
// CLI. The test drives Neovim through its msgpack-rpc API (a socket from
// --listen) and plays the CLI with testkit.ConnectCLI.
package nvim

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	return tmuxdrive.RequireProgram(t, "nvim", "nvim is not installed (apt-get install neovim)")
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
	// Width is the UI's terminal width in columns (default 200), or a
	// headless Neovim's 'columns' (default 80).
	Width int
	// InitLua is more of the user's init.lua, run before setup() (e.g. a
	// language server configured through vim.lsp).
	InitLua string
}

// Nvim is a running Neovim with the plugin loaded.
type Nvim struct {
	t       testing.TB
	sb      *testkit.Sandbox
	rpc     *client
	sock    string
	logFile string
	pane    *tmuxdrive.Pane
	proc    *testkit.Process // a headless nvim
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
%s
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
	if err := os.WriteFile(initPath, fmt.Appendf(nil, initLua, testkit.PluginDir(t, "nvim"), opts.InitLua, string(optsJSON)), 0o600); err != nil {
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
	if !opts.UI && opts.Width > 0 {
		args = append(args, "--cmd", fmt.Sprintf("set columns=%d", opts.Width))
	}
	args = append(args, opts.Args...)
	if opts.UI {
		width := opts.Width
		if width == 0 {
			width = 200
		}
		n.pane = tmuxdrive.Start(t, tmuxdrive.Options{
			Dir:     sb.Workspace,
			Env:     env,
			Command: append([]string{nvimBin}, args...),
			Width:   width,
			Height:  50,
		})
	} else {
		cmd := exec.Command(nvimBin, append([]string{"--headless"}, args...)...)
		cmd.Dir = sb.Workspace
		cmd.Env = env
		n.proc = testkit.StartProcess(t, cmd)
	}
	t.Cleanup(n.stop)

	var conn net.Conn
	ok := testkit.Poll(10*time.Second, func() bool {
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
func (n *Nvim) hasExited() bool { return n.proc != nil && n.proc.HasExited() }

// diagnostics is what a failure message shows about Neovim and the sidecar.
func (n *Nvim) diagnostics() string {
	var b strings.Builder
	if n.proc != nil {
		fmt.Fprintf(&b, "--- nvim output:\n%s\n", n.proc.Output.String())
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
	b.WriteString(testkit.SidecarLogTail(n.logFile))
	return b.String()
}

// stop quits Neovim the way a user does (:qa!) and waits for it to exit;
// a Neovim that does not exit is killed.
func (n *Nvim) stop() {
	if n.rpc != nil {
		_ = n.rpc.notify("nvim_command", "qa!")
	}
	if n.proc != nil {
		n.proc.WaitOrKill(n.t, 10*time.Second, n.diagnostics)
	}
	if n.pane != nil {
		n.pane.AwaitExit(10 * time.Second)
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
	ok := testkit.Poll(timeout, func() bool {
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
	found, ok := testkit.WaitContains(timeout, func() []string { return n.Notes(t) }, substr)
	if !ok {
		t.Fatalf("no notification containing %q within %v; notes: %q", substr, timeout, n.Notes(t))
	}
	return found
}

// LinkRoundTrip asks the sidecar for its status through the plugin and
// waits for the answer: every message the sidecar sent before it has been
// handled, and shown, by then.
func (n *Nvim) LinkRoundTrip(t testing.TB) {
	t.Helper()
	if ok, _ := n.Lua(t, `return require("gemini_companion.sidecar").request_sync("status/get", vim.empty_dict(), 5000) == nil`).(bool); !ok {
		t.Fatalf("status/get got no answer\n%s", n.diagnostics())
	}
}

// noDiskNote fails when the plugin told the user that a file changed on
// disk (or is back as it was) although nothing touched it: checked after a
// round trip on the link, so a message on its way would be seen.
func noDiskNote(t testing.TB, nv *Nvim) {
	t.Helper()
	nv.LinkRoundTrip(t)
	for _, note := range nv.Notes(t) {
		if strings.Contains(note, "on disk") {
			t.Fatalf("the user was told about a change on disk that never happened: %q\n%s", note, nv.diagnostics())
		}
	}
}

// BufLines is the text of buffer buf (0: current) as lines.
func (n *Nvim) BufLines(t testing.TB, buf int) []string {
	t.Helper()
	var lines []string
	n.LuaJSON(t, &lines, "return vim.api.nvim_buf_get_lines(...,0,-1,false)", buf)
	return lines
}
