package vim

import (
	"fmt"
	"os"
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

// cliSession is the real Gemini CLI in a Vim :terminal, Vim in tmux.
type cliSession struct {
	*testkit.E2E
	v *Vim
}

// termText is what the CLI's terminal shows (scrollback and screen).
func termText(t testing.TB, v *Vim) string {
	t.Helper()
	s, _ := v.Eval(t, `gemini_companion#terminal#Buffer() == 0 ? '' : join(getbufline(gemini_companion#terminal#Buffer(), 1, '$') + map(range(1, term_getsize(gemini_companion#terminal#Buffer())[0]), {_, n -> term_getline(gemini_companion#terminal#Buffer(), n)}), "\n")`).(string)
	return s
}

func (s *cliSession) waitTerm(t testing.TB, substr string) {
	t.Helper()
	if _, ok := testkit.WaitContains(cliTimeout, func() []string {
		time.Sleep(20 * time.Millisecond)
		return []string{termText(t, s.v)}
	}, substr); !ok {
		t.Fatalf("the Gemini CLI never showed %q; its terminal shows:\n%s\n%s", substr, termText(t, s.v), s.v.diagnostics())
	}
}

// prompt focuses the CLI's terminal (:GeminiCli) and types text and Enter,
// as a user does.
func (s *cliSession) prompt(t testing.TB, text string) {
	t.Helper()
	s.v.Ex(t, "GeminiCli")
	s.v.WaitFor(t, "Terminal-Job mode in the CLI", `mode() ==# 't'`, waitTimeout)
	s.v.pane.Type(t, text)
}

// startCLISession starts Vim in tmux on app.py (the sidecar starts with
// Vim), opens the real Gemini CLI with :GeminiCli and waits until /ide
// status says it is connected to Vim.
func startCLISession(t *testing.T) *cliSession {
	t.Helper()
	requireVim(t)
	e := testkit.StartE2E(t)
	v := startVim(t, e.SB, Options{
		UI:   true,
		Env:  e.Env,
		Args: []string{"app.py"},
		Config: map[string]any{
			"auto_start": true,
			"cli":        []string{e.Gemini},
			"position":   "right",
			"size":       120,
		},
	})
	v.WaitRunning(t)
	v.Ex(t, "GeminiCli")
	s := &cliSession{E2E: e, v: v}
	s.waitTerm(t, "Type your message")
	s.prompt(t, "/ide status")
	s.waitTerm(t, "Connected to Vim")
	return s
}

// End to end in the real Vim with the real Gemini CLI: the model request
// carries the file, cursor and visual selection from Vim; the model's
// write_file opens a diff in Vim; the user edits the proposal and saves
// it with :w; the CLI writes exactly that; a second change rejected with
// :q leaves the file alone; :qa! leaves no discovery file and no CLI.
func TestEndToEndWithRealCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	s := startCLISession(t)
	v := s.v
	cliPID := int(v.Eval(t, `job_info(term_getjob(gemini_companion#terminal#Buffer())).process`).(float64))
	sidecarPID := int(v.Eval(t, `gemini_companion#link#State().pid`).(float64))

	// The user goes to app.py and selects lines 2-3 linewise, typing.
	v.Ex(t, "wincmd t")
	v.WaitFor(t, "app.py's window", `expand('%:t') ==# 'app.py' && mode() ==# 'n'`, waitTimeout)
	v.pane.Keys(t, "2", "G", "V", "3", "G")
	v.WaitFor(t, "linewise visual mode", `mode() ==# 'V'`, waitTimeout)
	_, f := s.SB.WaitDiscovery(t, waitTimeout)
	observer := testkit.ConnectCLI(t, f.Port, f.AuthToken)
	// Vim's G goes to the first non-blank (startofline): column 5.
	testkit.WaitActive(t, observer, testkit.Active{Path: s.File, Line: 3, Col: 5, Selection: testkit.Ptr("    print('hello')\n    return 0")}, waitTimeout)

	proposed := "def main():\n    print('hello, world')\n    return 0\n"
	s.API.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.File, "content": proposed}))
	s.prompt(t, "Make it greet the world")
	reqs := s.API.WaitRequests(t, 1, cliTimeout)
	s.CheckRequestContext(t, reqs[0], s.File, 3, "    print('hello')\n    return 0")

	// The diff opens in a tab of its own, focused on the proposal.
	prop := "gemini://proposal/" + s.File
	v.WaitFor(t, "the proposal to be focused", fmt.Sprintf("bufname() ==# %s", vimString(prop)), cliTimeout)
	st := diffTab(t, v, s.File)
	if !st.Found || !st.Diff[0] || !st.Diff[1] || strings.Join(st.Right, "\n")+"\n" != proposed || st.LeftModifiable {
		t.Fatalf("diff view: %+v", st)
	}
	v.pane.WaitFor(t, ":w accept", waitTimeout)

	// The user adds a line to the proposal and saves.
	v.pane.Keys(t, "Escape", "G", "o")
	v.WaitFor(t, "insert mode", `mode() ==# 'i'`, waitTimeout)
	v.pane.Keys(t, "-l", "foo = 1")
	v.pane.Keys(t, "Escape")
	v.WaitFor(t, "the edit", `line('$') == 4 && getline(4) ==# 'foo = 1' && mode() ==# 'n'`, waitTimeout)
	v.pane.Keys(t, ":", "w", "Enter")
	accepted := proposed + "foo = 1\n"
	var onDisk []byte
	if !testkit.Poll(cliTimeout, func() bool {
		time.Sleep(20 * time.Millisecond)
		onDisk, _ = os.ReadFile(s.File)
		return string(onDisk) == accepted
	}) {
		t.Fatalf("the CLI did not write the accepted text; the file holds %q\n%s", onDisk, termText(t, v))
	}
	waitNoDiffTab(t, v, s.File)
	v.WaitFor(t, "app.py to show the written text",
		fmt.Sprintf(`join(getbufline(%s, 1, '$'), "\n") . "\n" ==# %s`, vimString(s.File), vimString(accepted)), waitTimeout)
	noDiskNote(t, v)
	s.CheckToolResultSent(t, cliTimeout)
	s.waitTerm(t, "WriteFile  app.py → Accepted")

	// A second change, rejected with :q in the proposal.
	s.API.Reply(fakegemini.Call("write_file", map[string]any{"file_path": s.File, "content": "print('gone')\n"}))
	s.prompt(t, "Replace everything")
	v.WaitFor(t, "the second proposal to be focused", fmt.Sprintf("bufname() ==# %s", vimString(prop)), cliTimeout)
	v.pane.Keys(t, "Escape", ":", "q", "Enter")
	waitNoDiffTab(t, v, s.File)
	s.waitTerm(t, "WriteFile  app.py → Rejected")
	s.CheckRejected(t, accepted)

	// The user quits Vim from the CLI's terminal (CTRL-W :qa!).
	s.v.Ex(t, "GeminiCli")
	v.WaitFor(t, "Terminal-Job mode in the CLI", `mode() ==# 't'`, waitTimeout)
	v.ctl.close()
	v.ctl = nil
	v.pane.Keys(t, "C-w", ":")
	v.pane.Type(t, "qa!")
	if code := v.pane.WaitExit(t, waitTimeout); code != 0 && code != tmuxdrive.UnknownStatus {
		t.Errorf("vim exited with status %d\n%s", code, v.pane.Screen())
	}
	if !testkit.Poll(waitTimeout, func() bool { return len(s.SB.DiscoveryFiles()) == 0 }) {
		t.Errorf("discovery files remain after Vim quit: %v", s.SB.DiscoveryFiles())
	}
	if !testkit.Poll(waitTimeout, func() bool { return !tmuxdrive.GroupAlive(cliPID) }) {
		t.Errorf("processes of the Gemini CLI (group %d) outlived Vim", cliPID)
	}
	if !testkit.Poll(waitTimeout, func() bool { return !tmuxdrive.GroupAlive(sidecarPID) }) {
		t.Errorf("the sidecar (pid %d) outlived Vim", sidecarPID)
	}
}
