package vim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// :GeminiStatus typed in Vim shows the status on the screen (the lines
// and the hit-enter prompt) and leaves it in :messages.
func TestGeminiStatusShowsTheStatus(t *testing.T) {
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	v := startVim(t, sb, Options{UI: true, Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	discovery, f := sb.WaitDiscovery(t, waitTimeout)
	testkit.ConnectCLI(t, f.Port, f.AuthToken)
	v.WaitFor(t, "the CLI counted", `gemini_companion#Statusline() ==# 'Gemini: 1 CLI connected'`, waitTimeout)

	want := []string{
		"sidecar: running",
		"port: " + strconv.Itoa(f.Port),
		"discovery file: " + discovery,
		"connected Gemini CLI sessions: 1",
		"open proposals: none",
		"Gemini CLI terminal: not running",
	}
	v.pane.Keys(t, ":")
	v.pane.Type(t, "GeminiStatus")
	v.pane.WaitUntil(t, "the status and the hit-enter prompt", waitTimeout, func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return strings.Contains(s, "Press ENTER")
	})
	v.pane.Keys(t, "Enter")
	v.pane.WaitUntil(t, "the prompt answered", waitTimeout, func(s string) bool { return !strings.Contains(s, "Press ENTER") })
	messages := v.Ex(t, "messages")
	for _, w := range want {
		if !strings.Contains(messages, w) {
			t.Errorf(":messages lacks %q:\n%s", w, messages)
		}
	}
}

// :'<,'>GeminiCli on a visual selection (what typing : in visual mode
// gives) opens the real Gemini CLI with an @-reference to the selected
// lines at its prompt, ready for the question; the model gets the
// question with the reference and the selection.
func TestGeminiCliWithARange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	requireVim(t)
	e := testkit.StartE2E(t)
	v := startVim(t, e.SB, Options{
		UI:     true,
		Env:    e.Env,
		Args:   []string{"app.py"},
		Config: map[string]any{"auto_start": true, "cli": []string{e.Gemini}, "size": 120},
	})
	v.WaitRunning(t)
	s := &cliSession{E2E: e, v: v}
	selection := "    print('hello')\n    return 0"

	// Lines 2-3, selected linewise; ":" gives :'<,'>.
	v.pane.Keys(t, "2", "G", "V", "j")
	v.WaitFor(t, "linewise visual mode", `mode() ==# 'V'`, waitTimeout)
	_, f := e.SB.WaitDiscovery(t, waitTimeout)
	observer := testkit.ConnectCLI(t, f.Port, f.AuthToken)
	testkit.WaitActive(t, observer, testkit.Active{Path: s.File, Line: 3, Col: 5, Selection: testkit.Ptr(selection)}, waitTimeout)
	v.pane.Keys(t, ":")
	v.pane.WaitFor(t, ":'<,'>", waitTimeout)
	v.pane.Type(t, "GeminiCli")
	screen := v.pane.WaitUntil(t, "the reference at the CLI's prompt, or an error", cliTimeout, func(s string) bool {
		return strings.Contains(s, "@app.py#L2-3") || strings.Contains(s, "E481")
	})
	if strings.Contains(screen, "E481") {
		t.Fatalf("Vim refused the range:\n%s", screen)
	}
	s.waitTerm(t, "@app.py#L2-3")
	v.WaitFor(t, "Terminal-Job mode in the CLI", `mode() ==# 't'`, waitTimeout)

	// The user asks about them.
	s.API.Reply(fakegemini.Text("They print and return."))
	v.pane.Type(t, "what do these lines do?")
	req := s.API.WaitRequests(t, 1, cliTimeout)[0]
	if text := req.Text(); !strings.Contains(text, "@app.py#L2-3 what do these lines do?") {
		t.Errorf("the model's request lacks the reference and the question:\n%s", text)
	}
	s.CheckRequestContext(t, req, s.File, 3, selection)
	s.waitTerm(t, "They print and return.")
}
