package nvim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// termText is the text of the CLI terminal's buffer ("" when none).
func termText(t testing.TB, nv *Nvim) string {
	t.Helper()
	var s string
	nv.LuaJSON(t, &s, `
local term = require("gemini_companion.terminal").term
if not term.buf or not vim.api.nvim_buf_is_valid(term.buf) then return "" end
return table.concat(vim.api.nvim_buf_get_lines(term.buf, 0, -1, false), "\n")`)
	return s
}

func waitTermText(t testing.TB, nv *Nvim, substr string) {
	t.Helper()
	var last string
	if !testkit.Poll(waitTimeout, func() bool {
		last = termText(t, nv)
		return strings.Contains(last, substr)
	}) {
		t.Fatalf("the terminal never showed %q; it shows:\n%s\n%s", substr, last, nv.diagnostics())
	}
}

// :GeminiCli runs the CLI command in a terminal whose environment leads it
// to this Neovim's sidecar; :GeminiSend types @-references to the current
// file or lines into it; :GeminiToggle hides and shows it.
func TestGeminiCliTerminalAndSend(t *testing.T) {
	sb := testkit.NewSandbox(t)
	sb.WriteFile(t, "a.txt", "one\ntwo\nthree\n")
	sb.WriteFile(t, "dir/my file(1).txt", "x\n")
	envOut := filepath.Join(sb.TmpDir, "cli-env.txt")
	// A stand-in CLI: saves its environment, shows the prompt text the
	// real CLI shows, then echoes what it is sent.
	script := "env > '" + envOut + "'; printf 'Type your message\\n'; exec cat"
	nv := startNvim(t, sb, Options{Setup: map[string]any{
		"terminal": map[string]any{"cmd": []string{"sh", "-c", script}, "position": "bottom"},
	}, Args: []string{"a.txt"}})
	nv.WaitRunning(t)

	nv.Cmd(t, "GeminiCli")
	waitTermText(t, nv, "Type your message")
	if m := nv.Mode(t); m != "t" {
		t.Errorf("mode after :GeminiCli = %q, want terminal mode", m)
	}
	data, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	var info struct {
		Port      int    `json:"port"`
		AuthToken string `json:"authToken"`
		IDEPID    int    `json:"idePid"`
	}
	nv.LuaJSON(t, &info, `return require("gemini_companion.sidecar").state.info`)
	wantEnv := map[string]string{
		"GEMINI_CLI_IDE_SERVER_PORT":    itoa(info.Port),
		"GEMINI_CLI_IDE_AUTH_TOKEN":     info.AuthToken,
		"GEMINI_CLI_IDE_WORKSPACE_PATH": sb.Workspace,
		"GEMINI_CLI_IDE_PID":            itoa(info.IDEPID),
	}
	if _, err := os.Stat("/.dockerenv"); err == nil && os.Getenv("SSH_CONNECTION") == "" && os.Getenv("REMOTE_CONTAINERS") == "" {
		wantEnv["REMOTE_CONTAINERS"] = "1"
	}
	for k, v := range wantEnv {
		if env[k] != v {
			t.Errorf("the CLI's %s = %q, want %q", k, env[k], v)
		}
	}

	// Back to the file; send it whole, then a range, then a visual selection.
	nv.Cmd(t, "wincmd p")
	nv.Cmd(t, "GeminiSend")
	waitTermText(t, nv, "@a.txt")
	nv.Cmd(t, "wincmd p")
	nv.Cmd(t, "2,3GeminiSend")
	waitTermText(t, nv, "@a.txt#L2-3")
	nv.Cmd(t, "wincmd p")
	nv.Cmd(t, "xmap <F7> <Plug>(GeminiSend)")
	nv.Input(t, "<Esc>ggVj<F7>")
	waitTermText(t, nv, "@a.txt#L1-2")
	nv.Cmd(t, "wincmd p")
	nv.Cmd(t, "edit dir/my\\ file(1).txt")
	nv.Cmd(t, "GeminiSend")
	waitTermText(t, nv, `@dir/my\ file\(1\).txt`)

	// Toggle hides the window (the CLI keeps running) and shows it again.
	nv.Cmd(t, "GeminiToggle")
	nv.WaitLua(t, "the terminal window to close", `return #vim.fn.win_findbuf(require("gemini_companion.terminal").term.buf) == 0`, waitTimeout)
	nv.Cmd(t, "GeminiToggle")
	nv.WaitLua(t, "the terminal window to show", `return #vim.fn.win_findbuf(require("gemini_companion.terminal").term.buf) == 1`, waitTimeout)
	if !strings.Contains(termText(t, nv), "@a.txt#L2-3") {
		t.Errorf("the CLI lost its input when hidden")
	}
}

// :GeminiSend before the CLI runs starts it and waits for its prompt.
func TestSendStartsTheCli(t *testing.T) {
	sb := testkit.NewSandbox(t)
	sb.WriteFile(t, "a.txt", "one\n")
	// The prompt shows only after a while; text sent earlier would be lost.
	script := "sleep 1; printf 'Type your message\\n'; exec cat"
	nv := startNvim(t, sb, Options{Setup: map[string]any{
		"terminal": map[string]any{"cmd": []string{"sh", "-c", script}},
	}, Args: []string{"a.txt"}})
	nv.Cmd(t, "GeminiSend")
	waitTermText(t, nv, "@a.txt")
	text := termText(t, nv)
	if strings.Index(text, "@a.txt") < strings.Index(text, "Type your message") {
		t.Errorf("the reference was typed before the prompt showed:\n%s", text)
	}
}

// A CLI command that does not exist is reported; nothing breaks.
func TestMissingCliIsReported(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Setup: map[string]any{
		"terminal": map[string]any{"cmd": []string{"/nonexistent/gemini"}},
	}})
	nv.Cmd(t, "GeminiCli")
	msg := nv.WaitNote(t, "cannot start the Gemini CLI", waitTimeout)
	if !strings.Contains(msg, "/nonexistent/gemini") {
		t.Errorf("message %q does not name the command", msg)
	}
	var wins int
	nv.LuaJSON(t, &wins, `return #vim.api.nvim_list_wins()`)
	if wins != 1 {
		t.Errorf("%d windows after a failed :GeminiCli, want 1", wins)
	}
}

// position = "float" opens the CLI in a floating window; :GeminiCli! stops
// it and starts a new one with the given arguments.
func TestFloatTerminalAndRestartWithArgs(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Setup: map[string]any{
		"terminal": map[string]any{"cmd": []string{"sh", "-c", `echo "args:[$*]"; exec cat`, "sh"}, "position": "float"},
	}})
	nv.Cmd(t, "GeminiCli")
	waitTermText(t, nv, "args:[]")
	var float bool
	nv.LuaJSON(t, &float, `return vim.api.nvim_win_get_config(0).relative == "editor"`)
	if !float {
		t.Errorf("the CLI is not in a floating window")
	}
	var oldJob int
	nv.LuaJSON(t, &oldJob, `return require("gemini_companion.terminal").term.job`)
	nv.Cmd(t, "GeminiCli! --model fast")
	waitTermText(t, nv, "args:[--model fast]")
	nv.WaitLua(t, "the old CLI to stop", `return vim.fn.jobwait({...}, 0)[1] ~= -1`, waitTimeout, oldJob)
	var wins int
	nv.LuaJSON(t, &wins, `return #vim.api.nvim_list_wins()`)
	if wins != 2 {
		t.Errorf("%d windows, want the editor's and one CLI float", wins)
	}
}
