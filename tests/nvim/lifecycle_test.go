package nvim

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := tmuxdrive.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// The sidecar starts with Neovim (processId = nvim's PID, workspace = its
// cwd, ideInfo Neovim) and goes away with it, discovery file included.
func TestSidecarStartsAndStopsWithNeovim(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{})
	nv.WaitRunning(t)
	path, f := sb.WaitDiscovery(t, waitTimeout)
	if f.IDEInfo.DisplayName != "Neovim" || f.IDEInfo.Name != "neovim" {
		t.Errorf("ideInfo = %+v, want neovim/Neovim", f.IDEInfo)
	}
	if f.WorkspacePath != sb.Workspace {
		t.Errorf("workspacePath = %q, want %q", f.WorkspacePath, sb.Workspace)
	}
	var info struct {
		Env    map[string]string `json:"env"`
		IDEPID int               `json:"idePid"`
	}
	nv.LuaJSON(t, &info, `return require("gemini_companion.sidecar").state.info`)
	if info.Env["GEMINI_CLI_IDE_SERVER_PORT"] == "" || info.Env["GEMINI_CLI_IDE_AUTH_TOKEN"] != f.AuthToken {
		t.Errorf("terminal env %v does not match the discovery file", info.Env)
	}
	pid := nv.SidecarPID(t)
	if !processAlive(pid) {
		t.Fatalf("sidecar pid %d is not alive", pid)
	}
	nv.Quit(t)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("discovery file %s still exists after Neovim quit (err %v)", path, err)
	}
	if !testkit.Poll(waitTimeout, func() bool { return !processAlive(pid) }) {
		t.Errorf("sidecar %d still runs after Neovim quit", pid)
	}
}

// A sidecar that dies is restarted, with a notification, and the CLI can
// connect to the new one and sees the open file.
func TestSidecarRestartsAfterCrash(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Args: []string{"a.txt"}})
	nv.WaitRunning(t)
	oldPath, _ := sb.WaitDiscovery(t, waitTimeout)
	pid := nv.SidecarPID(t)
	if err := tmuxdrive.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	nv.WaitNote(t, "restarting", waitTimeout)
	nv.WaitLua(t, "a new sidecar", `local s = require("gemini_companion.sidecar"); return s.running() and s.state.pid ~= ...`, waitTimeout, pid)
	// The dead one's file is gone (a CLI must not find its dead port);
	// the new one wrote its own.
	var newPath string
	if !testkit.Poll(waitTimeout, func() bool {
		files := sb.DiscoveryFiles()
		if len(files) == 1 && files[0] != oldPath {
			newPath = files[0]
			return true
		}
		return false
	}) {
		t.Fatalf("want only a new discovery file (old %s); have %v", oldPath, sb.DiscoveryFiles())
	}
	var port int
	var token string
	nv.LuaJSON(t, &port, `return require("gemini_companion.sidecar").state.info.port`)
	nv.LuaJSON(t, &token, `return require("gemini_companion.sidecar").state.info.authToken`)
	if !strings.Contains(newPath, "-"+itoa(port)+".json") {
		t.Errorf("new discovery file %s is not for port %d", newPath, port)
	}
	cli := testkit.ConnectCLI(t, port, token)
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 1, Col: 1}, waitTimeout)
	// The status notification may come after the context the CLI got.
	nv.WaitLua(t, "the statusline to count the CLI", `return vim.startswith(require("gemini_companion").statusline(), "Gemini: 1 CLI")`, waitTimeout)
}

func itoa(n int) string { return strconv.Itoa(n) }

// goEnv is `go env name`.
func goEnv(t testing.TB, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// :GeminiStop, :GeminiStart and :GeminiRestart do what they say; the
// statusline and :GeminiStatus tell the user.
func TestStartStopRestartAndStatus(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Setup: map[string]any{"auto_start": false}})
	if got := nv.Lua(t, `return require("gemini_companion").statusline()`); got != "Gemini: off" {
		t.Errorf("statusline before start = %v", got)
	}
	if files := sb.DiscoveryFiles(); len(files) != 0 {
		t.Fatalf("auto_start = false, yet a discovery file exists: %v", files)
	}
	nv.Cmd(t, "GeminiStart")
	nv.WaitRunning(t)
	// The sidecar's own text, as it sends it ("Gemini: no CLI connected").
	if got, _ := nv.Lua(t, `return require("gemini_companion").statusline()`).(string); !strings.HasPrefix(got, "Gemini: no CLI") {
		t.Errorf("statusline when running = %v", got)
	}
	_, f := sb.WaitDiscovery(t, waitTimeout)
	cli := testkit.ConnectCLI(t, f.Port, f.AuthToken)
	_ = cli
	nv.WaitLua(t, "the statusline to count the CLI", `return vim.startswith(require("gemini_companion").statusline(), "Gemini: 1 CLI")`, waitTimeout)

	var lines []string
	nv.LuaJSON(t, &lines, `return require("gemini_companion.status").lines()`)
	text := strings.Join(lines, "\n")
	for _, wantText := range []string{"sidecar: running", "port: " + itoa(f.Port), "connected Gemini CLI sessions: 1", "workspace: " + sb.Workspace} {
		if !strings.Contains(text, wantText) {
			t.Errorf(":GeminiStatus does not say %q:\n%s", wantText, text)
		}
	}

	pid := nv.SidecarPID(t)
	nv.Cmd(t, "GeminiRestart")
	nv.WaitLua(t, "a restarted sidecar", `local s = require("gemini_companion.sidecar"); return s.running() and s.state.pid ~= ...`, waitTimeout, pid)
	if !testkit.Poll(waitTimeout, func() bool { return len(sb.DiscoveryFiles()) == 1 && !processAlive(pid) }) {
		t.Errorf("after :GeminiRestart: discovery files %v, old pid alive %v", sb.DiscoveryFiles(), processAlive(pid))
	}

	nv.Cmd(t, "GeminiStop")
	nv.WaitLua(t, "the sidecar to stop", `return require("gemini_companion.sidecar").state.status == "stopped"`, waitTimeout)
	if !testkit.Poll(waitTimeout, func() bool { return len(sb.DiscoveryFiles()) == 0 }) {
		t.Errorf("discovery files remain after :GeminiStop: %v", sb.DiscoveryFiles())
	}
	if got := nv.Lua(t, `return require("gemini_companion").statusline()`); got != "Gemini: off" {
		t.Errorf("statusline after stop = %v", got)
	}
	if notes := nv.Notes(t); slices.ContainsFunc(notes, func(s string) bool { return strings.Contains(s, "restarting") }) {
		t.Errorf("a deliberate stop or restart was reported as a crash: %q", notes)
	}
}

// setup() rejects options of the wrong type with a message naming them,
// and reports unknown ones with a suggestion.
func TestSetupValidatesOptions(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Setup: map[string]any{"auto_start": false}})
	cases := []struct {
		opts string
		want []string
	}{
		{`{ auto_start = "yes" }`, []string{"auto_start", "boolean"}},
		{`{ terminal = { position = "sideways" } }`, []string{"terminal.position", "float"}},
		{`{ terminal = { cmd = {} } }`, []string{"terminal.cmd"}},
		{`{ sidecar = { max_restarts = -1 } }`, []string{"sidecar.max_restarts"}},
		{`{ diff = { keymaps = { accept = 3 } } }`, []string{"diff.keymaps.accept"}},
		{`"everything"`, []string{"expected a table"}},
	}
	for _, c := range cases {
		var res struct {
			OK  bool   `json:"ok"`
			Err string `json:"err"`
		}
		nv.LuaJSON(t, &res, `local ok, err = pcall(require("gemini_companion").setup, `+c.opts+`); return { ok = ok, err = tostring(err) }`)
		if res.OK {
			t.Errorf("setup(%s) succeeded", c.opts)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(res.Err, w) {
				t.Errorf("setup(%s) error %q does not mention %q", c.opts, res.Err, w)
			}
		}
	}
	nv.Lua(t, `require("gemini_companion").setup({ auto_start = false, terminal = { postion = "float" }, colour = 1 })`)
	nv.WaitNote(t, "unknown option 'terminal.postion' (did you mean 'terminal.position'?)", waitTimeout)
	nv.WaitNote(t, "unknown option 'colour'", waitTimeout)
}

// A sidecar.cmd that does not exist gives a clear error, not a crash.
func TestMissingBinaryIsReported(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Setup: map[string]any{"sidecar": map[string]any{"cmd": "/nonexistent/gemini-ide-companion"}}})
	msg := nv.WaitNote(t, "not an executable", waitTimeout)
	if !strings.Contains(msg, "sidecar.cmd") || !strings.Contains(msg, "/nonexistent/gemini-ide-companion") {
		t.Errorf("message %q does not say which setting is wrong", msg)
	}
	if got := nv.Lua(t, `return require("gemini_companion").statusline()`); got != "Gemini: off" {
		t.Errorf("statusline = %v", got)
	}
}

// With no binary configured or on PATH, the plugin builds it from the
// checkout with `go build` and runs it.
func TestBuildsSidecarWhenMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sidecar (slow); skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	sb := testkit.NewSandbox(t)
	buildDir := filepath.Join(sb.TmpDir, "bin")
	// PATH with go and the usual tools, without any gemini-ide-companion.
	env := testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "PATH="+filepath.Dir(goBin)+":/usr/bin:/bin",
		"GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOPATH="+goEnv(t, "GOPATH"), "GOFLAGS="+goEnv(t, "GOFLAGS"))
	nv := startNvim(t, sb, Options{NoBinary: true, Env: env, Setup: map[string]any{"sidecar": map[string]any{"build_dir": buildDir}}})
	nv.WaitNote(t, "building gemini-ide-companion", waitTimeout)
	nv.WaitLua(t, "the built sidecar to run", `return require("gemini_companion.sidecar").running()`, 5*waitTimeout)
	built := filepath.Join(buildDir, "gemini-ide-companion")
	if got := nv.Lua(t, `return require("gemini_companion.sidecar").state.path`); got != built {
		t.Errorf("running %v, want the build in %s", got, built)
	}
	if _, err := os.Stat(built); err != nil {
		t.Errorf("built binary: %v", err)
	}
	sb.WaitDiscovery(t, waitTimeout)
}

// A sidecar that keeps dying is not restarted forever: after max_restarts
// the user is told, and :GeminiStart tries again.
func TestRestartGivesUp(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Setup: map[string]any{"sidecar": map[string]any{"max_restarts": 1}}})
	nv.WaitRunning(t)
	first := nv.SidecarPID(t)
	if err := tmuxdrive.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	nv.WaitLua(t, "a restarted sidecar", `local s = require("gemini_companion.sidecar"); return s.running() and s.state.pid ~= ...`, waitTimeout, first)
	second := nv.SidecarPID(t)
	if err := tmuxdrive.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	nv.WaitNote(t, "not restarting it", waitTimeout)
	if got := nv.Lua(t, `return require("gemini_companion").statusline()`); got != "Gemini: off" {
		t.Errorf("statusline = %v", got)
	}
	if files := sb.DiscoveryFiles(); len(files) != 0 {
		t.Errorf("discovery files of dead sidecars remain: %v", files)
	}
	nv.Cmd(t, "GeminiStart")
	nv.WaitRunning(t)
}

// trusted = false reaches the CLI (it then runs in its untrusted mode),
// also when set by a later setup() call.
func TestTrustReachesTheCLI(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Setup: map[string]any{"trusted": false}, Args: []string{"a.txt"}})
	cli := testkit.Connect(t, sb, waitTimeout)
	trusted := func(want bool) func(idectx.IdeContext) bool {
		return func(c idectx.IdeContext) bool {
			return c.WorkspaceState != nil && c.WorkspaceState.IsTrusted != nil && *c.WorkspaceState.IsTrusted == want &&
				slices.Contains(testkit.OpenPaths(c), a)
		}
	}
	testkit.WaitContext(t, cli, "an untrusted workspace", waitTimeout, trusted(false))
	nv.Lua(t, `require("gemini_companion").setup({ trusted = true })`)
	testkit.WaitContext(t, cli, "a trusted workspace", waitTimeout, trusted(true))
}
