package emacs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// A language server that is slow to answer, and what the user sees while an
// agent waits for it: Emacs goes on taking typed keys.

// slowLSEnv names the log file of the slow language server; set only in the
// environment of the Emacs that starts this test binary as one.
const slowLSEnv = "GIC_EMACS_SLOWLS_LOG"

func TestMain(m *testing.M) {
	testkit.SlowLSMain(slowLSEnv)
	os.Exit(m.Run())
}

// slowLSInit starts the slow language server for text files with eglot, as
// a user sets up a server for a mode.
const slowLSInit = `
(require 'eglot)
(add-to-list 'eglot-server-programs '(text-mode . (%s)))
(add-hook 'text-mode-hook #'eglot-ensure)
`

func TestTypingWhileAnAgentWaitsForASlowLanguageServer(t *testing.T) {
	requireEmacs(t)
	tmuxdrive.Require(t)
	requireElpa(t, "eglot")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sb := testkit.NewSandbox(t)
	logPath := filepath.Join(sb.TmpDir, "slowls.log")
	notes := sb.WriteFile(t, "notes.txt", "alpha\nbeta\ngamma\n")
	env := testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "TERM=xterm-256color", slowLSEnv+"="+logPath)
	em := startEmacsWith(t, sb, env, fmt.Sprintf(slowLSInit, quote(exe)), "gemini", "auto", "notes.txt")
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)
	em.WaitEval(t, "eglot to manage notes.txt with the slow server",
		`(with-current-buffer "notes.txt" (and (eglot-current-server) (eglot-managed-p) t))`, waitTimeout)
	name, err := strconv.Unquote(em.Eval(t, `(jsonrpc-name (with-current-buffer "notes.txt" (eglot-current-server)))`))
	if err != nil {
		t.Fatalf("the language server's name: %v", err)
	}
	tc := em.startTools(t, sb)
	more := func() string {
		b, _ := os.ReadFile(logPath)
		return "screen:\n" + em.pane.Screen() + "\nlanguage server log:\n" + string(b) + "\nsidecar log tail:\n" + tail(em.log)
	}

	// getDefinition as an agent calls it; the answer comes on the channel.
	ask := func(line int) <-chan testkit.ToolAnswer {
		return tc.Start("getDefinition", map[string]any{"path": notes, "line": line, "character": 1})
	}
	logged := func(t *testing.T, what string) {
		t.Helper()
		testkit.WaitFileHas(t, logPath, what, waitTimeout, more)
	}
	// typed types text at the end of the first line, as a user does, and
	// waits until Emacs shows the line; pending, if given, must not have
	// answered by then.
	typed := func(t *testing.T, text, line1 string, pending <-chan testkit.ToolAnswer) {
		t.Helper()
		em.pane.Keys(t, append([]string{"M-<", "C-e"}, keyNames(text)...)...)
		em.pane.WaitFor(t, line1, waitTimeout)
		if pending != nil {
			select {
			case a := <-pending:
				t.Fatalf("the tool answered (%+v) before Emacs showed the typed text\n%s", a, more())
			default:
			}
		}
	}
	receive := func(t *testing.T, ch <-chan testkit.ToolAnswer) testkit.ToolAnswer {
		t.Helper()
		return testkit.AwaitAnswer(t, ch, more)
	}

	t.Run("the answer comes after the user's typing", func(t *testing.T) {
		// The server answers once the document changed: only when Emacs
		// took the keys typed while the agent waited.
		ch := ask(1)
		logged(t, "definition 1 ")
		typed(t, " one", "alpha one", nil)
		a := receive(t, ch)
		testkit.CheckSlowLSLocation(t, a, notes, more)
	})

	t.Run("the deadline passes while the user types", func(t *testing.T) {
		ch := ask(2)
		logged(t, "definition 2 ")
		typed(t, " two", "alpha one two", ch)
		a := receive(t, ch)
		testkit.CheckDeadlineError(t, a, name)
		// What was typed is what is saved.
		em.pane.Keys(t, "C-x", "C-s")
		if !testkit.Poll(waitTimeout, func() bool {
			b, _ := os.ReadFile(notes)
			return string(b) == "alpha one two\nbeta\ngamma\n"
		}) {
			b, _ := os.ReadFile(notes)
			t.Errorf("notes.txt on disk after C-x C-s: %q\n%s", b, more())
		}
	})
}
