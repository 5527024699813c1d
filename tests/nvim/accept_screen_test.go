package nvim

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// messages is what :messages shows.
func messages(t testing.TB, nv *Nvim) string {
	t.Helper()
	var s string
	nv.LuaJSON(t, &s, `return vim.api.nvim_exec("messages", true)`)
	return s
}

// acceptProposal has the model propose content for the session's file,
// waits for the proposal and accepts it with :w, and waits until the CLI
// wrote it and the file's buffer shows it.
func (s *cliSession) acceptProposal(t testing.TB, content string, n int) {
	t.Helper()
	nv := s.nv
	s.API.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.File, "content": content}))
	s.API.Reply(fakegemini.Text("Done."))
	s.prompt(t, fmt.Sprintf("Change %d", n))
	nv.WaitLua(t, "the proposal focused", `return vim.api.nvim_buf_get_name(0) == "gemini://proposal/" .. ...`, cliTimeout, s.File)
	nv.Input(t, "<Esc>:w<CR>")
	if !testkit.Poll(cliTimeout, func() bool {
		data, _ := os.ReadFile(s.File)
		return string(data) == content
	}) {
		t.Fatalf("the CLI did not write change %d\n%s", n, termText(t, nv))
	}
	waitNoDiffTab(t, nv, s.File, 1)
	nv.WaitLua(t, "app.py to show the written text", `
local path, text = ...
local b = vim.fn.bufnr(path)
return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") .. "\n" == text`, waitTimeout, s.File, content)
	// The turn is over: the CLI has long finished writing.
	if !testkit.Poll(cliTimeout, func() bool { return strings.Count(termText(t, nv), "✦ Done.") >= n }) {
		t.Fatalf("the CLI never ended turn %d:\n%s", n, termText(t, nv))
	}
}

// After an accept with :w, :messages shows the accepted file reloaded once,
// with the lines the CLI wrote: never as the empty file the CLI truncates
// before it writes ("app.py" 0L, 0B), never twice.
func TestAcceptedFileIsReloadedOnceWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	s := startCLISession(t)
	reload := regexp.MustCompile(`"app\.py" (\d+)L, (\d+)B`)
	var want []string
	for n := 1; n <= 4; n++ {
		content := "def main():\n" + strings.Repeat(fmt.Sprintf("    print('change %d')\n", n), n) + "    return 0\n"
		s.acceptProposal(t, content, n)
		want = append(want, fmt.Sprintf(`"app.py" %dL, %dB`, n+2, len(content)))
	}
	got := reload.FindAllString(messages(t, s.nv), -1)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf(":messages shows the file reloaded as\n%s\nwant once per accept, with its lines:\n%s\nall of :messages:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"), messages(t, s.nv))
	}
}

// statuslineOf is what the screen shows on the statusline of the window
// showing the buffer named name in the current tab.
func statuslineOf(t testing.TB, nv *Nvim, name string) string {
	t.Helper()
	var w struct {
		Row   int `json:"row"`
		Col   int `json:"col"`
		Width int `json:"width"`
		Found bool
	}
	nv.LuaJSON(t, &w, `
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)) == ... then
    local pos = vim.api.nvim_win_get_position(win)
    return { row = pos[1] + vim.api.nvim_win_get_height(win), col = pos[2], width = vim.api.nvim_win_get_width(win), found = true }
  end
end
return { found = false }`, name)
	if !w.Found {
		t.Fatalf("no window shows %s in the current tab", name)
	}
	lines := strings.Split(nv.pane.Screen(), "\n")
	if w.Row >= len(lines) {
		t.Fatalf("row %d is off the screen:\n%s", w.Row, nv.pane.Screen())
	}
	line := []rune(lines[w.Row])
	end := min(w.Col+w.Width, len(line))
	if w.Col >= end {
		return ""
	}
	return string(line[w.Col:end])
}

// With the CLI sharing the diff's tab (the default layout: the CLI on the
// right, 40% of the screen), the proposal's statusline shows the keys
// that answer it, whole, at 120 and at 200 columns.
func TestProposalStatuslineShowsTheKeysBesideTheCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	for _, width := range []int{120, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			s := startCLISessionIn(t, width, nil)
			nv := s.nv
			s.API.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.File, "content": "print('hi')\n"}))
			s.prompt(t, "Say hi")
			prop := "gemini://proposal/" + s.File
			nv.WaitLua(t, "the proposal focused", `return vim.api.nvim_buf_get_name(0) == ...`, cliTimeout, prop)
			nv.WaitLua(t, "the CLI in the diff's tab", `
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  if vim.api.nvim_buf_get_option(vim.api.nvim_win_get_buf(win), "buftype") == "terminal" then return true end
end
return false`, waitTimeout)
			var line string
			if !testkit.Poll(waitTimeout, func() bool {
				line = strings.TrimSpace(statuslineOf(t, nv, prop))
				return strings.HasPrefix(line, ":w accepts  :q rejects")
			}) {
				t.Fatalf("the proposal's statusline reads %q, not the keys first\n%s", line, nv.pane.Screen())
			}
			t.Logf("%d columns: %q", width, line)
			if width >= 200 && !strings.HasPrefix(line, ":w accepts  :q rejects  app.py (proposed by") {
				t.Errorf("at %d columns the proposal's statusline does not name the file: %q", width, line)
			}
		})
	}
}
