package nvim

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// The CLI sees the file the user focuses, the cursor (1-based line,
// UTF-16 column + 1, multibyte text included) and the visual selection in
// all three visual modes.
func TestContextFollowsFocusCursorAndSelection(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\nbeta\ngamma\n")
	m := sb.WriteFile(t, "m.txt", "first\naé😀bc d\n")
	b := sb.WriteFile(t, "sub/b.txt", "abcdef\nαβγδεζ\n123456\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)

	nv.Cmd(t, "edit a.txt")
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 1, Col: 1}, waitTimeout)

	nv.Lua(t, "vim.api.nvim_win_set_cursor(0, {3, 2})")
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 3, Col: 3}, waitTimeout)

	// Line 2 of m.txt is "aé😀bc d": byte 7 is 'b', after 1+1+2 UTF-16
	// units, so the CLI's character is 5.
	nv.Cmd(t, "edit m.txt")
	nv.Lua(t, "vim.api.nvim_win_set_cursor(0, {2, 7})")
	c := testkit.WaitActive(t, cli, testkit.Active{Path: m, Line: 2, Col: 5}, waitTimeout)
	if got := testkit.OpenPaths(c); !slices.Equal(got, []string{m, a}) {
		t.Errorf("open files = %q, want m.txt then a.txt", got)
	}

	// Charwise: from 'a' to 'b' on that line, typed as a user would.
	nv.Input(t, "0v3l")
	testkit.WaitActive(t, cli, testkit.Active{Path: m, Line: 2, Col: 5, Selection: testkit.Ptr("aé😀b")}, waitTimeout)

	// Leaving visual mode clears the selection; the cursor stays.
	nv.Input(t, "<Esc>")
	testkit.WaitActive(t, cli, testkit.Active{Path: m, Line: 2, Col: 5}, waitTimeout)

	// Charwise over a line break, backwards: the cursor is where the
	// motion ended.
	nv.Input(t, "vk")
	testkit.WaitActive(t, cli, testkit.Active{Path: m, Line: 1, Col: 5, Selection: testkit.Ptr("t\naé😀b")}, waitTimeout)
	nv.Input(t, "<Esc>")

	// Linewise, two lines.
	nv.Cmd(t, "edit a.txt")
	nv.Input(t, "gg0Vj")
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 2, Col: 1, Selection: testkit.Ptr("alpha\nbeta")}, waitTimeout)
	nv.Input(t, "<Esc>")

	// Blockwise: columns 2-4 of three lines, one of them Greek (two bytes
	// per letter, one cell each).
	nv.Cmd(t, "edit sub/b.txt")
	nv.Input(t, "gg0l<C-v>2j2l")
	testkit.WaitActive(t, cli, testkit.Active{Path: b, Line: 3, Col: 4, Selection: testkit.Ptr("bcd\nβγδ\n234")}, waitTimeout)
	// $ extends the block to the end of every line (the cursor goes past
	// the last character, as Vim puts it in visual mode).
	nv.Input(t, "$")
	testkit.WaitActive(t, cli, testkit.Active{Path: b, Line: 3, Col: 7, Selection: testkit.Ptr("bcdef\nβγδεζ\n23456")}, waitTimeout)
	nv.Input(t, "<Esc>")
	c = testkit.WaitActive(t, cli, testkit.Active{Path: b, Line: 3, Col: 6}, waitTimeout)
	if got := testkit.OpenPaths(c); !slices.Equal(got, []string{b, a, m}) {
		t.Errorf("open files = %q, want b, a, m (most recent first)", got)
	}
}

// Moving from a file to a terminal (where the Gemini CLI runs) keeps the
// file's selection, as an IDE keeps it when its terminal gets the focus.
func TestContextKeepsSelectionWhenFocusMovesToTerminal(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\nbeta\ngamma\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)

	nv.Cmd(t, "edit a.txt")
	nv.Cmd(t, "botright vsplit | terminal")
	nv.Input(t, "<C-w>p")
	nv.Input(t, "jVj")
	sel := testkit.Active{Path: a, Line: 3, Col: 1, Selection: testkit.Ptr("beta\ngamma")}
	testkit.WaitActive(t, cli, sel, waitTimeout)

	// Record what the plugin sends from here on.
	nv.Lua(t, `
local sidecar = require("gemini_companion.sidecar")
_G.gemini_test.sent = {}
local notify = sidecar.notify
sidecar.notify = function(method, params)
  table.insert(_G.gemini_test.sent, method)
  return notify(method, params)
end`)
	nv.Input(t, "<C-w>l")
	nv.WaitLua(t, "the terminal window to be current", `return vim.bo.buftype == "terminal"`, waitTimeout)
	var sent []string
	nv.LuaJSON(t, &sent, `require("gemini_companion.context").flush(); return _G.gemini_test.sent`)
	if len(sent) != 0 {
		t.Errorf("moving to the terminal sent %q; the selection must stay", sent)
	}
	// A CLI that connects now (as one started in that terminal would) gets
	// the file with its selection.
	_, f := sb.WaitDiscovery(t, waitTimeout)
	late := testkit.ConnectCLI(t, f.Port, f.AuthToken)
	testkit.WaitActive(t, late, sel, waitTimeout)

	// Back in the file, in normal mode, the selection is gone.
	nv.Input(t, "<C-w>p")
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 3, Col: 1}, waitTimeout)
}

// Terminals, help, quickfix, scratch and unnamed buffers never reach the
// CLI, and do not take the place of the active file.
func TestContextIgnoresBuffersThatAreNotFiles(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\nbeta\n")
	b := sb.WriteFile(t, "b.txt", "one\ntwo\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)

	nv.Cmd(t, "edit a.txt")
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 1, Col: 1}, waitTimeout)
	before := cli.Len()

	nv.Cmd(t, "help help")
	nv.Input(t, "jj")
	nv.Cmd(t, "terminal")
	nv.Cmd(t, "enew | setlocal buftype=nofile | call setline(1, 'scratch')")
	nv.Cmd(t, "enew")
	nv.Input(t, "ihello<Esc>")
	nv.Cmd(t, "call setqflist([{'filename': 'a.txt', 'lnum': 1, 'text': 'x'}]) | copen")
	nv.Input(t, "j")
	nv.Cmd(t, "wincmd p | edit! b.txt")
	c := testkit.WaitActive(t, cli, testkit.Active{Path: b, Line: 1, Col: 1}, waitTimeout)
	if got := testkit.OpenPaths(c); !slices.Equal(got, []string{b, a}) {
		t.Errorf("open files = %q, want only b.txt and a.txt", got)
	}
	for _, note := range cli.All("ide/contextUpdate")[before:] {
		for _, p := range testkit.OpenPaths(testkit.ParseContext(t, note.Params)) {
			if p != a && p != b {
				t.Errorf("a buffer that is not a file reached the CLI: %q", p)
			}
		}
	}
}

// Closing a buffer removes its file; renaming it (as file managers do,
// after moving the file on disk) replaces the old path with the new one.
func TestContextFileClosedAndRenamed(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	b := sb.WriteFile(t, "b.txt", "beta\n")
	c := sb.WriteFile(t, "c.txt", "gamma\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)

	nv.Cmd(t, "edit a.txt | edit b.txt | edit c.txt")
	testkit.WaitContext(t, cli, "a, b and c open", waitTimeout, func(ctx idectx.IdeContext) bool {
		return slices.Equal(testkit.OpenPaths(ctx), []string{c, b, a})
	})

	nv.Cmd(t, "bwipeout "+a)
	testkit.WaitContext(t, cli, "a.txt closed", waitTimeout, func(ctx idectx.IdeContext) bool {
		return slices.Equal(testkit.OpenPaths(ctx), []string{c, b})
	})

	moved := filepath.Join(sb.Workspace, "moved.txt")
	if err := os.Rename(c, moved); err != nil {
		t.Fatal(err)
	}
	nv.Cmd(t, "file moved.txt")
	ctx := testkit.WaitContext(t, cli, "c.txt renamed to moved.txt", waitTimeout, func(ctx idectx.IdeContext) bool {
		return slices.Equal(testkit.OpenPaths(ctx), []string{moved, b})
	})
	if f := testkit.ActiveFile(ctx); f == nil || f.Path != moved {
		t.Errorf("active file = %+v, want moved.txt", f)
	}

	// :saveas gives the buffer a new file; the old one stays on disk but is
	// no longer open.
	nv.Cmd(t, "saveas saved.txt")
	saved := filepath.Join(sb.Workspace, "saved.txt")
	testkit.WaitContext(t, cli, "moved.txt saved as saved.txt", waitTimeout, func(ctx idectx.IdeContext) bool {
		return slices.Equal(testkit.OpenPaths(ctx), []string{saved, b})
	})

	// A new file reaches the CLI once it exists on disk.
	nv.Cmd(t, "edit new.txt")
	nv.Input(t, "ihello<Esc>")
	nv.Cmd(t, "write")
	newPath := filepath.Join(sb.Workspace, "new.txt")
	testkit.WaitActive(t, cli, testkit.Active{Path: newPath, Line: 1, Col: 5}, waitTimeout)
}

// :cd moves the workspace: the discovery file and the environment for new
// terminals follow.
func TestWorkspaceFollowsCd(t *testing.T) {
	sb := testkit.NewSandbox(t)
	sb.WriteFile(t, "sub/x.txt", "x\n")
	nv := startNvim(t, sb, Options{})
	nv.WaitRunning(t)
	_, f := sb.WaitDiscovery(t, waitTimeout)
	if f.WorkspacePath != sb.Workspace {
		t.Fatalf("workspacePath = %q, want %q", f.WorkspacePath, sb.Workspace)
	}
	nv.Cmd(t, "cd sub")
	sub := filepath.Join(sb.Workspace, "sub")
	var got string
	if !testkit.Poll(waitTimeout, func() bool {
		_, f := sb.WaitDiscovery(t, waitTimeout)
		got = f.WorkspacePath
		return got == sub
	}) {
		t.Fatalf("after :cd sub the discovery file's workspacePath is %q, want %q", got, sub)
	}
	var env map[string]string
	nv.LuaJSON(t, &env, `return require("gemini_companion.sidecar").env()`)
	if env["GEMINI_CLI_IDE_WORKSPACE_PATH"] != sub {
		t.Errorf("terminal env workspace = %q, want %q", env["GEMINI_CLI_IDE_WORKSPACE_PATH"], sub)
	}
	if env["GEMINI_CLI_IDE_SERVER_PORT"] != strconv.Itoa(f.Port) {
		t.Errorf("terminal env port = %q, want the discovery file's %d", env["GEMINI_CLI_IDE_SERVER_PORT"], f.Port)
	}
}
