package nvim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// What the user sees of a proposal's state: b:gemini_diff on the proposal
// and the status lines of the two diff windows (as drawn, in an editor 200
// columns wide).
type viewState struct {
	DiffID           int    `json:"diff_id"`
	Owner            string `json:"owner"`
	OutsideWorkspace bool   `json:"outside_workspace"`
	Orphaned         bool   `json:"orphaned"`
	Disk             string `json:"disk"`
	Queued           int    `json:"queued"`
	Label            string `json:"label"`
	RightStatus      string `json:"right_status"`
	LeftStatus       string `json:"left_status"`
	Left             []string
}

func viewOf(t testing.TB, nv *Nvim, path string) (viewState, bool) {
	t.Helper()
	var out struct {
		viewState
		Found bool     `json:"found"`
		Left  []string `json:"left"`
	}
	nv.LuaJSON(t, &out, `
local path = ...
local api = vim.api
for _, tab in ipairs(api.nvim_list_tabpages()) do
  local wins = api.nvim_tabpage_list_wins(tab)
  if #wins == 2 and api.nvim_buf_get_name(api.nvim_win_get_buf(wins[2])) == "gemini://proposal/" .. path then
    local ok, st = pcall(api.nvim_buf_get_var, api.nvim_win_get_buf(wins[2]), "gemini_diff")
    st = ok and st or {}
    st.found = true
    local function shown(w)
      return api.nvim_eval_statusline(api.nvim_win_get_option(w, "statusline"), { winid = w }).str
    end
    st.right_status = shown(wins[2])
    st.left_status = shown(wins[1])
    st.left = api.nvim_buf_get_lines(api.nvim_win_get_buf(wins[1]), 0, -1, false)
    return st
  end
end
return { found = false }`, path)
	out.viewState.Left = out.Left
	return out.viewState, out.Found
}

func waitView(t testing.TB, nv *Nvim, path, what string, ok func(viewState) bool) viewState {
	t.Helper()
	var v viewState
	if !testkit.Poll(waitTimeout, func() bool {
		var found bool
		v, found = viewOf(t, nv, path)
		return found && ok(v)
	}) {
		t.Fatalf("diff view for %s never showed %s: %+v\n%s", path, what, v, nv.diagnostics())
	}
	return v
}

// A second CLI's proposal for a file already under review waits its turn:
// the open view says so, the user's accept goes only to the first CLI, and
// then the second proposal opens as a view of its own.
func TestDiffFromASecondSessionIsQueuedAndLabelled(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Width: 200})
	one := testkit.Connect(t, sb, waitTimeout)
	two := testkit.Connect(t, sb, waitTimeout)

	one.MustOpenDiff(t, a, "from one\n")
	first := waitView(t, nv, a, "the first proposal", func(v viewState) bool { return v.DiffID > 0 })
	two.MustOpenDiff(t, a, "from two\n")
	v := waitView(t, nv, a, "the queue", func(v viewState) bool { return v.Queued == 1 })
	if v.DiffID != first.DiffID || !strings.Contains(v.RightStatus, "1 more proposal queued") {
		t.Fatalf("the open view changed or does not say a proposal is queued: %+v", v)
	}
	if s, _ := diffTab(t, nv, a); strings.Join(s.Right, "\n") != "from one" {
		t.Fatalf("the first proposal was swapped: %q", s.Right)
	}
	nv.WaitNote(t, "Another Gemini CLI session proposed a change", waitTimeout)

	nv.Cmd(t, "GeminiAccept")
	raw := one.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "from one\n" {
		t.Fatalf("first CLI got %s", raw)
	}
	second := waitView(t, nv, a, "the second proposal", func(v viewState) bool { return v.DiffID != first.DiffID })
	if second.Owner == first.Owner || !strings.Contains(second.RightStatus, "CLI "+second.Owner) {
		t.Fatalf("the second view does not name its own CLI: %+v (first %+v)", second, first)
	}
	if s, _ := diffTab(t, nv, a); strings.Join(s.Right, "\n") != "from two" {
		t.Fatalf("second view shows %q", s.Right)
	}
	if len(two.All("ide/diffAccepted")) != 0 {
		t.Fatal("the second CLI was told about the first proposal's decision")
	}
	nv.Cmd(t, "GeminiReject")
	two.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	if n := len(one.All("ide/diffAccepted")) + len(one.All("ide/diffRejected")); n != 1 {
		t.Fatalf("first CLI got %d decisions", n)
	}
}

// The file changes on disk under an open diff: the left side shows it, the
// view says so, and a first :w does not overwrite it; a second does.
func TestDiffChangedOnDiskAsksBeforeOverwriting(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Width: 200})
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "proposed\n")
	waitView(t, nv, a, "the view", func(v viewState) bool { return v.DiffID > 0 })

	if err := os.WriteFile(a, []byte("changed elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := waitView(t, nv, a, "the change on disk", func(v viewState) bool {
		return v.Disk == "changedOnDisk" && strings.Join(v.Left, "\n") == "changed elsewhere"
	})
	if strings.Join(v.Left, "\n") != "changed elsewhere" || !strings.Contains(v.RightStatus, "CHANGED ON DISK") || !strings.Contains(v.LeftStatus, "On disk now") {
		t.Fatalf("the view does not show the change: %+v", v)
	}
	nv.WaitNote(t, "changed on disk while this proposal is open", waitTimeout)

	nv.Cmd(t, "GeminiAccept")
	nv.WaitNote(t, "accept again (:w) to overwrite", waitTimeout)
	if _, found := viewOf(t, nv, a); !found {
		t.Fatal("the first accept over a change on disk closed the view")
	}
	if len(cli.All("ide/diffAccepted")) != 0 {
		t.Fatal("accepted over a change on disk without asking")
	}
	nv.Cmd(t, "GeminiAccept")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "proposed\n" {
		t.Fatalf("diffAccepted %s", raw)
	}
	waitNoDiffTab(t, nv, a, 1)
}

// The file changes on disk under an open diff and is then put back as it
// was: the view says so once each, and the next :w accepts at once.
func TestDiffFilePutBackOnDiskIsAcceptedAtOnce(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{})
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "proposed\n")
	waitView(t, nv, a, "the view", func(v viewState) bool { return v.DiffID > 0 })
	if err := os.WriteFile(a, []byte("changed elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitView(t, nv, a, "the change on disk", func(v viewState) bool { return v.Disk == "changedOnDisk" })
	if err := os.WriteFile(a, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := waitView(t, nv, a, "the file back", func(v viewState) bool {
		return v.Disk == "unchangedOnDisk" && strings.Join(v.Left, "\n") == "alpha"
	})
	if strings.Contains(v.RightStatus, "ON DISK") {
		t.Fatalf("the view still warns about the disk: %+v", v)
	}
	nv.WaitNote(t, "a.txt on disk is back to what it was", waitTimeout)
	nv.Cmd(t, "GeminiAccept")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "proposed\n" {
		t.Fatalf("diffAccepted %s", raw)
	}
	nv.LinkRoundTrip(t)
	back := 0
	for _, note := range nv.Notes(t) {
		if strings.Contains(note, "back to what it was") {
			back++
		}
	}
	if back != 1 {
		t.Fatalf("told %d times that the file is back as it was, want once: %q", back, nv.Notes(t))
	}
}

// The file is deleted on disk under an open diff.
func TestDiffDeletedOnDiskIsShown(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Width: 200})
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "proposed\n")
	waitView(t, nv, a, "the view", func(v viewState) bool { return v.DiffID > 0 })
	os.Remove(a)
	v := waitView(t, nv, a, "the delete", func(v viewState) bool { return v.Disk == "deletedOnDisk" })
	if strings.Join(v.Left, "\n") != "" || !strings.Contains(v.RightStatus, "DELETED ON DISK") {
		t.Fatalf("the view does not show the delete: %+v", v)
	}
	nv.WaitNote(t, "Accepting will create it again", waitTimeout)
	nv.Cmd(t, "GeminiReject")
	cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	if _, err := os.Stat(a); err == nil {
		t.Fatal("the file came back")
	}
}

// The proposing CLI goes away: the view says it is orphaned, and accepting
// opens the text in a buffer of its own, since nothing was written.
func TestDiffOrphanedWhenItsCLIGoes(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Width: 200})
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "proposed\n")
	waitView(t, nv, a, "the view", func(v viewState) bool { return v.DiffID > 0 })
	cli.Session.Close()
	v := waitView(t, nv, a, "the orphaned state", func(v viewState) bool { return v.Orphaned })
	if !strings.Contains(v.RightStatus, "ORPHANED") {
		t.Fatalf("status line %q", v.RightStatus)
	}
	nv.WaitNote(t, "accepting writes nothing", waitTimeout)
	nv.Cmd(t, "GeminiAccept")
	nv.WaitNote(t, "nothing was written", waitTimeout)
	nv.WaitLua(t, "the unwritten text in a buffer", `
local path = ...
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  local ok, p = pcall(vim.api.nvim_buf_get_var, b, "gemini_unwritten")
  if ok and p == path and table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") == "proposed" then
    return true
  end
end
return false`, waitTimeout, a)
	if data, _ := os.ReadFile(a); string(data) != "alpha\n" {
		t.Fatalf("the file was written: %q", data)
	}
}

// A proposal for a file outside the workspace is shown, with a note.
func TestDiffOutsideTheWorkspaceHasANote(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Width: 200})
	cli := testkit.Connect(t, sb, waitTimeout)
	out := filepath.Join(sb.Home, "notes.txt")
	cli.MustOpenDiff(t, out, "x\n")
	v := waitView(t, nv, out, "the view", func(v viewState) bool { return v.DiffID > 0 })
	if !v.OutsideWorkspace || !strings.Contains(v.RightStatus, "outside the workspace") {
		t.Fatalf("no note: %+v", v)
	}
	nv.WaitNote(t, "outside every workspace folder", waitTimeout)
}

// The file changes on disk an instant before the user accepts, before the
// plugin has heard of it: the sidecar refuses the accept, and the plugin
// shows the proposal again, as the user left it, against the file as it is
// now; accepting that is the explicit choice.
func TestDiffAcceptRacingAChangeOnDiskIsShownAgain(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\n")
	nv := startNvim(t, sb, Options{Width: 200})
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "proposed\n")
	waitView(t, nv, a, "the view", func(v viewState) bool { return v.DiffID > 0 })
	nv.Lua(t, `
local path = ...
local f = assert(io.open(path, "w"))
f:write("written an instant before\n")
f:close()
vim.cmd("GeminiAccept")`, a)
	v := waitView(t, nv, a, "the proposal shown again", func(v viewState) bool { return v.Disk == "changedOnDisk" })
	if strings.Join(v.Left, "\n") != "written an instant before" {
		t.Fatalf("left side %q", v.Left)
	}
	if len(cli.All("ide/diffAccepted")) != 0 {
		t.Fatal("the accept went through over the change on disk")
	}
	nv.Cmd(t, "GeminiAccept")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "proposed\n" {
		t.Fatalf("diffAccepted %s", raw)
	}
}
