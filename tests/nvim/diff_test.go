package nvim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// diffState is what a user sees of a diff view in Neovim.
type diffState struct {
	Tabs       int      `json:"tabs"`
	CurrentTab int      `json:"current_tab"`
	Wins       int      `json:"wins"`
	Diff       []bool   `json:"diff"`
	Left       []string `json:"left"`
	LeftMod    bool     `json:"left_modifiable"`
	Right      []string `json:"right"`
	RightName  string   `json:"right_name"`
	RightBuf   int      `json:"right_buf"`
	CurrentBuf int      `json:"current_buf"`
}

// diffTab describes the tab holding the diff view for path (or Tabs only,
// when there is none).
func diffTab(t testing.TB, nv *Nvim, path string) (diffState, bool) {
	t.Helper()
	var s struct {
		diffState
		Found bool `json:"found"`
	}
	nv.LuaJSON(t, &s, `
local path = ...
local api = vim.api
local out = { tabs = #api.nvim_list_tabpages(), current_tab = vim.fn.tabpagenr(), found = false }
for _, tab in ipairs(api.nvim_list_tabpages()) do
  local wins = api.nvim_tabpage_list_wins(tab)
  local names = {}
  for _, w in ipairs(wins) do names[#names + 1] = api.nvim_buf_get_name(api.nvim_win_get_buf(w)) end
  -- The CLI's terminal may share the tab (on the right), to keep its size.
  local term_too = #wins == 3 and api.nvim_buf_get_option(api.nvim_win_get_buf(wins[3]), "buftype") == "terminal"
  if (#wins == 2 or term_too) and names[2] == "gemini://proposal/" .. path then
    local l, r = api.nvim_win_get_buf(wins[1]), api.nvim_win_get_buf(wins[2])
    out.found = true
    out.wins = term_too and 2 or #wins
    out.diff = { api.nvim_win_get_option(wins[1], "diff"), api.nvim_win_get_option(wins[2], "diff") }
    out.left = api.nvim_buf_get_lines(l, 0, -1, false)
    out.left_modifiable = api.nvim_buf_get_option(l, "modifiable")
    out.right = api.nvim_buf_get_lines(r, 0, -1, false)
    out.right_name = names[2]
    out.right_buf = r
  end
end
out.current_buf = api.nvim_get_current_buf()
return out`, path)
	return s.diffState, s.Found
}

func waitNoDiffTab(t testing.TB, nv *Nvim, path string, tabs int) {
	t.Helper()
	var s diffState
	var found bool
	if !testkit.Poll(waitTimeout, func() bool {
		s, found = diffTab(t, nv, path)
		return !found && s.Tabs == tabs
	}) {
		t.Fatalf("the diff tab for %s did not close (found=%v, tabs=%d, want %d)\n%s", path, found, s.Tabs, tabs, nv.diagnostics())
	}
}

// The diff opens in a tab of its own next to the user's tabs and windows,
// original left (read-only) and proposal right; the user's edit in the
// proposal and :w accept it, the CLI gets the edited text, the tab closes,
// the user is back where they were, and once the CLI writes the file the
// buffer shows it.
func TestDiffAcceptWithUserEdit(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\nbeta\ngamma\n")
	sb.WriteFile(t, "other.txt", "other\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)

	// Two tabs, the first split in two.
	nv.Cmd(t, "edit a.txt | vsplit other.txt | tabnew | edit other.txt | tabfirst")
	cli.MustOpenDiff(t, a, "alpha\nBETA\ngamma\n")

	s, found := diffTab(t, nv, a)
	if !found {
		t.Fatalf("no diff tab for %s after openDiff returned: %+v", a, s)
	}
	if s.Tabs != 3 || s.CurrentTab != 2 {
		t.Errorf("tabs = %d, current = %d; want the diff in a new tab next to the user's, focused", s.Tabs, s.CurrentTab)
	}
	if !s.Diff[0] || !s.Diff[1] {
		t.Errorf("windows are not in diff mode: %v", s.Diff)
	}
	if strings.Join(s.Left, "\n") != "alpha\nbeta\ngamma" || s.LeftMod {
		t.Errorf("left side = %q (modifiable %v), want the original, read-only", s.Left, s.LeftMod)
	}
	if strings.Join(s.Right, "\n") != "alpha\nBETA\ngamma" {
		t.Errorf("right side = %q, want the proposal", s.Right)
	}
	if s.CurrentBuf != s.RightBuf {
		t.Errorf("the cursor is not in the proposal")
	}

	// The user changes the first word of the proposal, then saves.
	nv.Input(t, "ggcwALPHA<Esc>")
	nv.WaitLua(t, "the edit", `return vim.api.nvim_get_current_line() == "ALPHA"`, waitTimeout)
	nv.Input(t, ":w<CR>")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if p, c := testkit.DiffNote(t, raw); p != a || c != "ALPHA\nBETA\ngamma\n" {
		t.Errorf("diffAccepted = %s, want the edited proposal for %s", raw, a)
	}
	waitNoDiffTab(t, nv, a, 2)
	var where struct {
		Tab  int    `json:"tab"`
		Name string `json:"name"`
	}
	nv.LuaJSON(t, &where, `return { tab = vim.fn.tabpagenr(), name = vim.api.nvim_buf_get_name(0) }`)
	if where.Tab != 1 {
		t.Errorf("after accepting, the current tab is %d, want 1 (where the user was)", where.Tab)
	}
	if data, _ := os.ReadFile(a); string(data) != "alpha\nbeta\ngamma\n" {
		t.Errorf("the plugin wrote the file itself: %q", data)
	}
	noDiskNote(t, nv)

	// The CLI writes the accepted content; the buffer follows.
	if err := os.WriteFile(a, []byte("ALPHA\nBETA\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nv.WaitLua(t, "a.txt to be reloaded", `
local path = ...
local b = vim.fn.bufnr(path)
return b > 0 and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") == "ALPHA\nBETA\ngamma"`, waitTimeout, a)
	if len(cli.All("ide/diffRejected")) != 0 {
		t.Errorf("a rejection was sent too")
	}
}

// :q in the proposal rejects the change; nothing is written.
func TestDiffRejectWithQuit(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "edit a.txt")

	cli.MustOpenDiff(t, a, "changed\n")
	if _, found := diffTab(t, nv, a); !found {
		t.Fatalf("no diff tab")
	}
	nv.Input(t, "ggdd") // an edit does not stop :q from rejecting
	nv.Input(t, ":q<CR>")
	raw := cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	if p, _ := testkit.DiffNote(t, raw); p != a {
		t.Errorf("diffRejected for %q, want %q", p, a)
	}
	waitNoDiffTab(t, nv, a, 1)
	if data, _ := os.ReadFile(a); string(data) != "alpha\n" {
		t.Errorf("file changed to %q", data)
	}
	if len(cli.All("ide/diffAccepted")) != 0 {
		t.Errorf("an acceptance was sent too")
	}
	if lines := nv.BufLines(t, 0); strings.Join(lines, "\n") != "alpha" {
		t.Errorf("the user's buffer now holds %q", lines)
	}
}

// Closing the diff tab (:tabclose) rejects too.
func TestDiffRejectWithTabclose(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "edit a.txt")
	cli.MustOpenDiff(t, a, "changed\n")
	nv.Input(t, ":tabclose<CR>")
	raw := cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	if p, _ := testkit.DiffNote(t, raw); p != a {
		t.Errorf("diffRejected for %q, want %q", p, a)
	}
	waitNoDiffTab(t, nv, a, 1)
}

// closeDiff (the user answered in the CLI) returns the proposal as the user
// left it, closes the tab, and no decision follows.
func TestCloseDiffReturnsEditedProposal(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\nbeta\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "edit a.txt")

	cli.MustOpenDiff(t, a, "alpha\nBETA\n")
	nv.Input(t, "Gonew line<Esc>")
	nv.WaitLua(t, "the edit", `return vim.api.nvim_buf_line_count(0) == 3`, waitTimeout)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := cli.CloseDiffContent(t, ctx, a)
	if got == nil || *got != "alpha\nBETA\nnew line\n" {
		t.Fatalf("closeDiff content = %v, want the edited proposal", got)
	}
	waitNoDiffTab(t, nv, a, 1)

	// A later event proves the plugin has nothing more to say about it.
	nv.Input(t, "j")
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 2, Col: 1}, waitTimeout)
	if n := len(cli.All("ide/diffAccepted")) + len(cli.All("ide/diffRejected")); n != 0 {
		t.Errorf("%d decisions were sent after closeDiff", n)
	}

	// closeDiff for a file with no view: null content.
	if got := cli.CloseDiffContent(t, ctx, a); got != nil {
		t.Errorf("closeDiff with no view = %q, want null", *got)
	}
}

// A diff for a file that does not exist yet has an empty left side; a
// second openDiff for the same file replaces the first view; with
// diff.focus = false the user stays where they are and accepts from there
// (:GeminiAccept) without visiting the diff.
func TestDiffNewFileReplacedAndAcceptedFromElsewhere(t *testing.T) {
	sb := testkit.NewSandbox(t)
	sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Setup: map[string]any{"diff": map[string]any{"focus": false}}})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "edit a.txt")
	newPath := filepath.Join(sb.Workspace, "new", "file.go")

	cli.MustOpenDiff(t, newPath, "package one\n")
	s, found := diffTab(t, nv, newPath)
	if !found || s.Tabs != 2 || s.CurrentTab != 1 {
		t.Fatalf("want the diff in a second tab and the user still in the first: %+v found=%v", s, found)
	}
	if strings.Join(s.Left, "\n") != "" {
		t.Errorf("left side of a new file = %q, want empty", s.Left)
	}
	nv.WaitNote(t, "Gemini proposes a change", waitTimeout)

	cli.MustOpenDiff(t, newPath, "package two\n")
	s, found = diffTab(t, nv, newPath)
	if !found || s.Tabs != 2 || strings.Join(s.Right, "\n") != "package two" {
		t.Fatalf("the second openDiff did not replace the first: %+v found=%v", s, found)
	}
	if len(cli.All("ide/diffRejected")) != 0 {
		t.Errorf("replacing a view sent a rejection")
	}

	nv.Cmd(t, "GeminiAccept")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if p, c := testkit.DiffNote(t, raw); p != newPath || c != "package two\n" {
		t.Errorf("diffAccepted = %s", raw)
	}
	waitNoDiffTab(t, nv, newPath, 1)
	if _, err := os.Stat(newPath); err == nil {
		t.Errorf("the plugin created %s itself", newPath)
	}
}

// <Plug>(GeminiReject) mapped by the user rejects the diff shown in the
// current buffer; a proposal without a final newline keeps it that way.
func TestPlugMappingRejects(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "nmap <F5> <Plug>(GeminiReject)")
	nv.Cmd(t, "nmap <F6> <Plug>(GeminiAccept)")
	cli.MustOpenDiff(t, a, "one\ntwo")
	nv.Input(t, "<F6>")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "one\ntwo" {
		t.Errorf("accepted content = %q, want it without a final newline, as proposed", c)
	}
	waitNoDiffTab(t, nv, a, 1)

	cli.MustOpenDiff(t, a, "three\n")
	nv.Input(t, "<F5>")
	raw = cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	if p, _ := testkit.DiffNote(t, raw); p != a {
		t.Errorf("diffRejected = %s", raw)
	}
	waitNoDiffTab(t, nv, a, 1)
}

// A diff that pops up while the user types in the CLI's terminal takes the
// focus; once decided, the user is back in the terminal, in terminal mode.
func TestDiffReturnsToTheTerminal(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)
	nv.Cmd(t, "terminal")
	nv.Cmd(t, "startinsert")
	nv.WaitLua(t, "terminal mode", `return vim.api.nvim_get_mode().mode == "t"`, waitTimeout)

	cli.MustOpenDiff(t, a, "beta\n")
	nv.WaitLua(t, "normal mode in the proposal",
		`return vim.api.nvim_buf_get_name(0):find("^gemini://proposal/") ~= nil and vim.api.nvim_get_mode().mode == "n"`, waitTimeout)
	nv.Input(t, ":w<CR>")
	cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	nv.WaitLua(t, "terminal mode in the terminal again",
		`return vim.bo.buftype == "terminal" and vim.api.nvim_get_mode().mode == "t"`, waitTimeout)
}

// Large proposals (MiB-sized lines on the editor link) arrive whole and go
// back whole.
func TestLargeDiffRoundTrip(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "big.txt", "small\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)
	var b strings.Builder
	for i := range 100000 {
		b.WriteString("line ")
		b.WriteString(itoa(i))
		b.WriteString(" ü😀\n")
	}
	b.WriteString(strings.Repeat("x", 2<<20))
	b.WriteString("\n")
	content := b.String()
	cli.MustOpenDiff(t, a, content)
	var lines int
	nv.LuaJSON(t, &lines, `return vim.api.nvim_buf_line_count(0)`)
	if lines != 100001 {
		t.Errorf("the proposal has %d lines, want 100001", lines)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := cli.CloseDiffContent(t, ctx, a)
	if got == nil || *got != content {
		n := -1
		if got != nil {
			n = len(*got)
		}
		t.Fatalf("closeDiff returned %d bytes, want the %d bytes proposed", n, len(content))
	}
}
