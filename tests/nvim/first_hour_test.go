package nvim

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// When the sidecar cannot start, :GeminiCli says why and still opens the
// CLI (without IDE integration), instead of failing with E475.
func TestGeminiCliSaysWhyTheSidecarFailed(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{NoBinary: true, Setup: map[string]any{
		"auto_start": false,
		"sidecar":    map[string]any{"cmd": "/nonexistent/gemini-ide-companion", "build": false},
		"terminal":   map[string]any{"cmd": []string{"sh", "-c", "echo cli-started; exec cat"}},
	}})
	nv.Cmd(t, "GeminiCli")
	msg := nv.WaitNote(t, "the sidecar could not start", waitTimeout)
	if !strings.Contains(msg, "/nonexistent/gemini-ide-companion") {
		t.Errorf("the message does not say which sidecar failed: %q", msg)
	}
	waitTermText(t, nv, "cli-started")
	for _, n := range nv.Notes(t) {
		if strings.Contains(n, "E475") {
			t.Errorf("E475 reached the user: %q", n)
		}
	}
}

// Every window's statusline follows the plugin's state, not only the
// current window's (real Neovim in tmux, so what is drawn is checked).
func TestStatuslinesOfAllWindowsFollowTheState(t *testing.T) {
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	sb.WriteFile(t, "a.txt", "a\n")
	sb.WriteFile(t, "b.txt", "b\n")
	nv := startNvim(t, sb, Options{UI: true, Args: []string{"-O", "a.txt", "b.txt"}})
	nv.WaitRunning(t)
	nv.Cmd(t, "set laststatus=2 statusline=%f\\ [%{v:lua.require'gemini_companion'.statusline()}]")
	nv.Cmd(t, "redraw!")
	nv.pane.WaitUntil(t, "both statuslines saying no CLI", waitTimeout, func(s string) bool {
		return strings.Count(s, "[Gemini: no CLI") == 2
	})
	cli := testkit.Connect(t, sb, waitTimeout)
	_ = cli
	nv.pane.WaitUntil(t, "both statuslines saying 1 CLI", waitTimeout, func(s string) bool {
		return strings.Count(s, "[Gemini: 1 CLI") == 2
	})
}

// A file changed on disk (the CLI writes accepted edits itself) is
// reloaded in its unmodified buffer; a buffer with unsaved changes keeps
// them and the user is warned.
func TestBuffersFollowTheirFilesOnDisk(t *testing.T) {
	sb := testkit.NewSandbox(t)
	path := sb.WriteFile(t, "a.txt", "one\n")
	nv := startNvim(t, sb, Options{Args: []string{"a.txt"}})
	nv.WaitRunning(t)
	if err := os.WriteFile(path, []byte("one\ntwo, written by the CLI\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nv.WaitLua(t, "the buffer to show the new text", `return vim.api.nvim_buf_get_lines(0, 0, -1, false)[2] == "two, written by the CLI"`, waitTimeout)

	nv.Lua(t, `vim.api.nvim_buf_set_lines(0, 0, 1, false, {"my unsaved edit"})`)
	if err := os.WriteFile(path, []byte("three, written by the CLI\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nv.WaitNote(t, "has unsaved changes", waitTimeout)
	var first string
	nv.LuaJSON(t, &first, `return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]`)
	if first != "my unsaved edit" {
		t.Errorf("the unsaved edit was lost: first line %q", first)
	}
}

// :qa stops the CLI the plugin started, including processes it started
// that ignore the terminal's hangup (the Gemini CLI runs itself again as a
// child process).
func TestQuitStopsTheCli(t *testing.T) {
	sb := testkit.NewSandbox(t)
	pidFile := filepath.Join(sb.TmpDir, "child.pid")
	script := "(trap '' HUP; exec sleep 600) & echo $! > '" + pidFile + "'; echo cli-started; wait"
	nv := startNvim(t, sb, Options{Setup: map[string]any{
		"terminal": map[string]any{"cmd": []string{"sh", "-c", script}},
	}})
	nv.WaitRunning(t)
	nv.Cmd(t, "GeminiCli")
	waitTermText(t, nv, "cli-started")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tmuxdrive.Kill(pid, syscall.SIGKILL) })
	nv.Quit(t)
	if !testkit.Poll(waitTimeout, func() bool { return !tmuxdrive.PIDAlive(pid) }) {
		t.Fatalf("the CLI's child process %d still runs after :qa", pid)
	}
}

// A diff that opens while the focus is in a terminal shows, on screen,
// what it is and how to answer (in its windows' statuslines, which no
// message or mode change clears) and a readable tab label; after :q the
// focus is back where the user was.
func TestDiffHintLabelsAndFocusReturn(t *testing.T) {
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	sb.WriteFile(t, "b.txt", "b\n")
	nv := startNvim(t, sb, Options{UI: true, Args: []string{"b.txt"}})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "botright vsplit | terminal")
	nv.Cmd(t, "startinsert")
	nv.WaitLua(t, "terminal mode", `return vim.api.nvim_get_mode().mode == "t"`, waitTimeout)

	cli.MustOpenDiff(t, a, "beta\n")
	screen := nv.pane.WaitUntil(t, "the diff's hint and label on screen", waitTimeout, func(s string) bool {
		return strings.Contains(s, ":w accepts  :q rejects  a.txt (proposed by Gemini)") &&
			strings.Contains(s, "a.txt (now, read-only)") && strings.Contains(s, "Gemini: a.txt")
	})
	if strings.Contains(screen, "gemini://") {
		t.Errorf("internal buffer names are on screen:\n%s", screen)
	}
	nv.Input(t, ":q<CR>")
	cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	nv.WaitLua(t, "the focus back in the terminal, in terminal mode",
		`return vim.bo.buftype == "terminal" and vim.api.nvim_get_mode().mode == "t"`, waitTimeout)

	// From a file window: back to that window.
	nv.Input(t, `<C-\><C-n>`)
	nv.Cmd(t, "wincmd h")
	nv.WaitLua(t, "b.txt focused", `return vim.fn.expand("%:t") == "b.txt"`, waitTimeout)
	cli.MustOpenDiff(t, a, "gamma\n")
	nv.WaitLua(t, "the proposal focused", `return vim.api.nvim_buf_get_name(0):find("^gemini://proposal/") ~= nil`, waitTimeout)
	nv.Input(t, ":w<CR>")
	cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	nv.WaitLua(t, "b.txt focused again", `return vim.fn.expand("%:t") == "b.txt" and #vim.api.nvim_list_tabpages() == 1`, waitTimeout)
}

// keep_terminal_focus: a diff opening while the user types in the CLI's
// terminal leaves the focus there.
func TestKeepTerminalFocus(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Setup: map[string]any{"diff": map[string]any{"keep_terminal_focus": true}}})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "terminal")
	nv.Cmd(t, "startinsert")
	nv.WaitLua(t, "terminal mode", `return vim.api.nvim_get_mode().mode == "t"`, waitTimeout)
	cli.MustOpenDiff(t, a, "beta\n")
	nv.WaitNote(t, "Gemini proposes a change to a.txt (tab 2)", waitTimeout)
	nv.WaitLua(t, "the focus still in the terminal, in terminal mode",
		`return #vim.api.nvim_list_tabpages() == 2 and vim.bo.buftype == "terminal" and vim.api.nvim_get_mode().mode == "t"`, waitTimeout)
}

// In a file tree, :GeminiSend sends the entry under the cursor. nvim-tree,
// neo-tree and oil cannot be installed here (no network), so each is
// stood in for by its documented Lua call returning the entry.
func TestSendFromFileTrees(t *testing.T) {
	sb := testkit.NewSandbox(t)
	sb.WriteFile(t, "src/one.go", "package one\n")
	sb.WriteFile(t, "src/two.go", "package two\n")
	sb.WriteFile(t, "three.txt", "3\n")
	nv := startNvim(t, sb, Options{Setup: map[string]any{
		"terminal": map[string]any{"cmd": []string{"sh", "-c", "printf 'Type your message\\n'; exec cat"}, "position": "bottom"},
	}})
	nv.WaitRunning(t)
	root := sb.Workspace
	nv.Lua(t, `
local root = ...
package.loaded["nvim-tree.api"] = { tree = { get_node_under_cursor = function() return { absolute_path = root .. "/src/one.go" } end } }
package.loaded["neo-tree.sources.manager"] = { get_state = function() return { tree = { get_node = function() return { path = root .. "/src/two.go" } end } } end }
package.loaded["oil"] = { get_cursor_entry = function() return { name = "three.txt" } end, get_current_dir = function() return root .. "/" end }
`, root)
	for _, c := range []struct{ ft, want string }{{"NvimTree", "@src/one.go"}, {"neo-tree", "@src/two.go"}, {"oil", "@three.txt"}} {
		nv.Cmd(t, "enew")
		nv.Cmd(t, "setlocal buftype=nofile filetype="+c.ft)
		nv.Cmd(t, "GeminiSend")
		waitTermText(t, nv, c.want)
		nv.Input(t, `<C-\><C-n>`)
		nv.Cmd(t, "wincmd p")
	}
}

// The CLI's terminal keeps its size while a diff tab is open and after it
// closes (a resize makes the real CLI redraw its screen garbled). The
// stand-in CLI prints its terminal's size each time it reads a line.
func TestTerminalSizeStableAcrossDiffs(t *testing.T) {
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	script := `echo "size0 $(stty size </dev/tty)"; printf 'Type your message\n'; n=0; while read l; do n=$((n+1)); echo "size$n $(stty size </dev/tty)"; done`
	nv := startNvim(t, sb, Options{UI: true, Args: []string{"a.txt"}, Setup: map[string]any{
		"terminal": map[string]any{"cmd": []string{"sh", "-c", script}, "position": "right", "size": 80},
	}})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "GeminiCli")
	waitTermText(t, nv, "Type your message")
	size := func(n int) string {
		t.Helper()
		nv.Lua(t, `vim.fn.chansend(require("gemini_companion.terminal").term.job, "x\n")`)
		key := "size" + strconv.Itoa(n) + " "
		waitTermText(t, nv, key)
		for _, l := range strings.Split(termText(t, nv), "\n") {
			if i := strings.Index(l, key); i >= 0 {
				return strings.TrimSpace(l[i+len(key):])
			}
		}
		return ""
	}
	before := size(1)
	cli.MustOpenDiff(t, a, "beta\n")
	nv.WaitLua(t, "the proposal focused", `return vim.api.nvim_buf_get_name(0):find("^gemini://proposal/") ~= nil`, waitTimeout)
	nv.Cmd(t, "redraw")
	if during := size(2); during != before {
		t.Errorf("the terminal is %s while the diff is open, %s before", during, before)
	}
	nv.Input(t, ":q<CR>")
	cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	nv.WaitLua(t, "back in the terminal", `return vim.bo.buftype == "terminal"`, waitTimeout)
	nv.Cmd(t, "redraw")
	if after := size(3); after != before {
		t.Errorf("the terminal is %s after the diff, %s before", after, before)
	}
}

// diff.layout = "vsplit": the diff opens beside the user's windows in the
// current tab; answering closes only its two windows.
func TestDiffAsVerticalSplit(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	sb.WriteFile(t, "b.txt", "b\n")
	nv := startNvim(t, sb, Options{Args: []string{"b.txt"}, Setup: map[string]any{"diff": map[string]any{"layout": "vsplit"}}})
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "beta\n")
	nv.WaitLua(t, "the diff beside b.txt in the same tab", `
local names = {}
for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  table.insert(names, vim.fn.fnamemodify(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)), ":t"))
end
return #vim.api.nvim_list_tabpages() == 1 and #names == 3 and names[3] == "b.txt"
  and vim.api.nvim_buf_get_name(0):find("^gemini://proposal/") ~= nil and vim.wo.diff`, waitTimeout)
	nv.Input(t, ":w<CR>")
	cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	nv.WaitLua(t, "only b.txt left, focused", `return #vim.api.nvim_list_tabpages() == 1 and #vim.api.nvim_list_wins() == 1 and vim.fn.expand("%:t") == "b.txt"`, waitTimeout)
	cli.MustOpenDiff(t, a, "gamma\n")
	nv.WaitLua(t, "the proposal focused", `return vim.api.nvim_buf_get_name(0):find("^gemini://proposal/") ~= nil`, waitTimeout)
	nv.Input(t, ":q<CR>")
	cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	nv.WaitLua(t, "only b.txt left again", `return #vim.api.nvim_list_wins() == 1 and vim.fn.expand("%:t") == "b.txt"`, waitTimeout)
}
