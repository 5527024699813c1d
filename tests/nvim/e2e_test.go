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

// requestContext finds the editor context the CLI put in a model request.
func requestContext(t testing.TB, req fakegemini.Request) fakegemini.EditorContext {
	t.Helper()
	c, ok := req.EditorContext()
	if !ok {
		t.Fatalf("the model request carries no editor context:\n%s", req.Text())
	}
	return c
}

// cliSession is the real Gemini CLI running in a Neovim terminal, in tmux.
type cliSession struct {
	sb   *testkit.Sandbox
	nv   *Nvim
	api  *fakegemini.Server
	file string
}

// startCLISession starts Neovim in tmux on app.py, opens the real Gemini
// CLI with :GeminiCli, and waits until the CLI says it is connected to
// Neovim.
func startCLISession(t *testing.T) *cliSession {
	t.Helper()
	requireNvim(t)
	tmuxdrive.Require(t)
	bin := tmuxdrive.GeminiBin(t)
	sb := testkit.NewSandbox(t)
	api := fakegemini.Start(t)
	file := writeFile(t, sb, "app.py", "def main():\n    print('hello')\n    return 0\n")

	env := tmuxdrive.MergeEnv(sb.Env(), tmuxdrive.GeminiEnv(t, sb.Home, sb.TmpDir, api.URL)...)
	env = tmuxdrive.MergeEnv(env, "NVIM_LOG_FILE="+filepath.Join(sb.TmpDir, "nvim.log"))
	// No SSH_CONNECTION: in a container the plugin itself must lead the CLI
	// to 127.0.0.1, as it does for users.
	kept := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SSH_CONNECTION=") {
			kept = append(kept, kv)
		}
	}
	nv := startNvim(t, sb, Options{
		UI:   true,
		Env:  kept,
		Args: []string{"app.py"},
		Setup: map[string]any{"terminal": map[string]any{
			"cmd": []string{bin}, "position": "right", "size": 0.6,
		}},
	})
	nv.WaitRunning(t)
	nv.Cmd(t, "GeminiCli")
	s := &cliSession{sb: sb, nv: nv, api: api, file: file}
	s.waitTerm(t, "Type your message")
	s.prompt(t, "/ide status")
	s.waitTerm(t, "Connected to Neovim")
	return s
}

func (s *cliSession) waitTerm(t testing.TB, substr string) {
	t.Helper()
	var last string
	if !poll(cliTimeout, func() bool {
		last = termText(t, s.nv)
		return strings.Contains(last, substr)
	}) {
		t.Fatalf("the Gemini CLI never showed %q; its terminal shows:\n%s\n%s", substr, last, s.nv.diagnostics())
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
	_, f := s.sb.WaitDiscovery(t, waitTimeout)
	observer := testkit.ConnectCLI(t, f.Port, f.AuthToken)
	waitActive(t, observer, want{path: s.file, line: last, col: 1, selection: ptr(text)})
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
	s.api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.file, "content": proposed}))
	s.prompt(t, "Make it greet the world")
	reqs := s.api.WaitRequests(t, 1, cliTimeout)
	c := requestContext(t, reqs[0])
	if c.ActiveFile == nil || c.ActiveFile.Path != s.file {
		t.Fatalf("editor context %+v does not name %s as the active file", c, s.file)
	}
	if c.ActiveFile.Cursor == nil || c.ActiveFile.Cursor.Line != 3 {
		t.Errorf("editor context cursor = %+v, want line 3", c.ActiveFile.Cursor)
	}
	if c.ActiveFile.SelectedText != "    print('hello')\n    return 0" {
		t.Errorf("editor context selection = %q", c.ActiveFile.SelectedText)
	}

	// The diff opens in Neovim; the user edits the proposal and saves.
	nv.WaitLua(t, "the diff view", `
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b) == "gemini://proposal/" .. ... then return vim.api.nvim_get_current_buf() == b end
end
return false`, cliTimeout, s.file)
	st, found := diffTab(t, nv, s.file)
	if !found || !st.Diff[0] || !st.Diff[1] || strings.Join(st.Right, "\n")+"\n" != proposed {
		t.Fatalf("diff view: %+v found=%v", st, found)
	}
	nv.Input(t, "<Esc>Gofoo = 1<Esc>")
	nv.WaitLua(t, "the edit", `return vim.api.nvim_buf_line_count(0) == 4`, waitTimeout)
	nv.Input(t, ":w<CR>")
	accepted := proposed + "foo = 1\n"
	var onDisk []byte
	if !poll(cliTimeout, func() bool {
		onDisk, _ = os.ReadFile(s.file)
		return string(onDisk) == accepted
	}) {
		t.Fatalf("the CLI did not write the accepted text; the file holds %q\n%s", onDisk, termText(t, nv))
	}
	waitNoDiffTab(t, nv, s.file, 1)
	nv.WaitLua(t, "app.py to show the new text", `
local path, text = ...
local b = vim.fn.bufnr(path)
return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") .. "\n" == text`, waitTimeout, s.file, accepted)
	// The tool result went back to the model, and the CLI says so.
	reqs = s.api.WaitRequests(t, 2, cliTimeout)
	if fr := reqs[1].FunctionResponses(); len(fr) == 0 || fr[len(fr)-1].Name != "write_file" {
		t.Errorf("the second request carries no write_file result: %+v", fr)
	}
	s.waitTerm(t, "WriteFile  app.py → Accepted")
	s.waitTerm(t, "✦ OK.")

	// A second change, rejected in Neovim with :q.
	s.api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.file, "content": "print('gone')\n"}))
	s.prompt(t, "Replace everything")
	nv.WaitLua(t, "the second diff view", `
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(b) == "gemini://proposal/" .. ... then return vim.api.nvim_get_current_buf() == b end
end
return false`, cliTimeout, s.file)
	nv.Input(t, "<Esc>:q<CR>")
	waitNoDiffTab(t, nv, s.file, 1)
	s.waitTerm(t, "WriteFile  app.py → Rejected")
	s.waitTerm(t, "Request cancelled")
	if data, _ := os.ReadFile(s.file); string(data) != accepted {
		t.Errorf("after the rejection the file holds %q, want it untouched", data)
	}
	if n := len(s.api.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (the rejection ends the turn)", n)
	}
}
