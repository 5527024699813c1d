package nvim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// cliTimeout bounds waiting for the real Gemini CLI (Node start-up, model
// round trips through the fake API).
const cliTimeout = 60 * time.Second

// cliSession is the real Gemini CLI running in a Neovim terminal, in tmux.
type cliSession struct {
	*testkit.E2E
	nv *Nvim
}

// startCLISession starts Neovim in tmux on app.py, opens the real Gemini
// CLI with :GeminiCli, and waits until the CLI says it is connected to
// Neovim.
func startCLISession(t *testing.T) *cliSession {
	t.Helper()
	return startCLISessionIn(t, 0, map[string]any{"position": "right", "size": 0.6})
}

// startCLISessionIn is startCLISession in a terminal width columns wide
// (0: the harness's default), with these terminal options (over the
// defaults) besides the CLI's command.
func startCLISessionIn(t *testing.T, width int, terminal map[string]any) *cliSession {
	t.Helper()
	requireNvim(t)
	e := testkit.StartE2E(t)
	sb := e.SB
	env := tmuxdrive.MergeEnv(e.Env, "NVIM_LOG_FILE="+filepath.Join(sb.TmpDir, "nvim.log"))
	term := map[string]any{"cmd": []string{e.Gemini}}
	for k, v := range terminal {
		term[k] = v
	}
	nv := startNvim(t, sb, Options{
		UI:    true,
		Width: width,
		Env:   env,
		Args:  []string{"app.py"},
		Setup: map[string]any{"terminal": term},
	})
	nv.WaitRunning(t)
	nv.Cmd(t, "GeminiCli")
	s := &cliSession{E2E: e, nv: nv}
	s.waitTerm(t, "Type your message")
	s.prompt(t, "/ide status")
	s.waitTerm(t, "Connected to Neovim")
	return s
}

func (s *cliSession) waitTerm(t testing.TB, substr string) {
	t.Helper()
	if _, ok := testkit.WaitContains(cliTimeout, func() []string { return []string{termText(t, s.nv)} }, substr); !ok {
		t.Fatalf("the Gemini CLI never showed %q; its terminal shows:\n%s\n%s", substr, termText(t, s.nv), s.nv.diagnostics())
	}
}

// prompt focuses the CLI's terminal and types text and Enter, as a user.
func (s *cliSession) prompt(t testing.TB, text string) {
	t.Helper()
	s.nv.Cmd(t, "GeminiCli")
	s.nv.WaitLua(t, "terminal mode in the CLI", `return vim.api.nvim_get_mode().mode == "t"`, waitTimeout)
	s.nv.pane.Type(t, text)
}

// selectLines goes to the file's window and selects lines first..last
// linewise, then returns to the CLI; an observer connected to the sidecar
// shows when the sidecar has it.
func (s *cliSession) selectLines(t testing.TB, first, last int, text string) {
	t.Helper()
	s.nv.Cmd(t, "wincmd t")
	s.nv.Input(t, "<Esc>"+itoa(first)+"GV"+itoa(last)+"G")
	_, f := s.SB.WaitDiscovery(t, waitTimeout)
	observer := testkit.ConnectCLI(t, f.Port, f.AuthToken)
	testkit.WaitActive(t, observer, testkit.Active{Path: s.File, Line: last, Col: 1, Selection: testkit.Ptr(text)}, waitTimeout)
}

// End to end: the CLI sends the model the file, cursor and selection from
// Neovim; the model's write_file opens a diff in Neovim; the user edits
// the proposal and saves it; the CLI writes exactly that; a second change
// rejected with :q leaves the file alone.
func TestEndToEndWithRealCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	s := startCLISession(t)
	nv := s.nv
	s.selectLines(t, 2, 3, "    print('hello')\n    return 0")

	proposed := "def main():\n    print('hello, world')\n    return 0\n"
	s.API.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.File, "content": proposed}))
	s.prompt(t, "Make it greet the world")
	reqs := s.API.WaitRequests(t, 1, cliTimeout)
	s.CheckRequestContext(t, reqs[0], s.File, 3, "    print('hello')\n    return 0")

	// The diff opens in Neovim; the user edits the proposal and saves.
	nv.WaitLua(t, "the diff view", `
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b) == "gemini://proposal/" .. ... then return vim.api.nvim_get_current_buf() == b end
end
return false`, cliTimeout, s.File)
	st, found := diffTab(t, nv, s.File)
	if !found || !st.Diff[0] || !st.Diff[1] || strings.Join(st.Right, "\n")+"\n" != proposed {
		t.Fatalf("diff view: %+v found=%v", st, found)
	}
	nv.Input(t, "<Esc>Gofoo = 1<Esc>")
	nv.WaitLua(t, "the edit", `return vim.api.nvim_buf_line_count(0) == 4`, waitTimeout)
	nv.Input(t, ":w<CR>")
	accepted := proposed + "foo = 1\n"
	var onDisk []byte
	if !testkit.Poll(cliTimeout, func() bool {
		onDisk, _ = os.ReadFile(s.File)
		return string(onDisk) == accepted
	}) {
		t.Fatalf("the CLI did not write the accepted text; the file holds %q\n%s", onDisk, termText(t, nv))
	}
	waitNoDiffTab(t, nv, s.File, 1)
	nv.WaitLua(t, "app.py to show the new text", `
local path, text = ...
local b = vim.fn.bufnr(path)
return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") .. "\n" == text`, waitTimeout, s.File, accepted)
	noDiskNote(t, nv)
	// The tool result went back to the model, and the CLI says so.
	s.CheckToolResultSent(t, cliTimeout)
	s.waitTerm(t, "WriteFile  app.py → Accepted")
	s.waitTerm(t, "✦ OK.")

	// A second change, rejected in Neovim with :q.
	s.API.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.File, "content": "print('gone')\n"}))
	s.prompt(t, "Replace everything")
	nv.WaitLua(t, "the second diff view", `
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b) == "gemini://proposal/" .. ... then return vim.api.nvim_get_current_buf() == b end
end
return false`, cliTimeout, s.File)
	nv.Input(t, "<Esc>:q<CR>")
	waitNoDiffTab(t, nv, s.File, 1)
	s.waitTerm(t, "WriteFile  app.py → Rejected")
	s.waitTerm(t, "Request cancelled")
	s.CheckRejected(t, accepted)
}
