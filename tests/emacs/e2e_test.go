package emacs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// cliTimeout bounds waiting for the real Gemini CLI (Node start-up, model
// round trips through the fake API).
const cliTimeout = 60 * time.Second

// initEl is the init file of the interactive Emacs: the package from this
// checkout, the sidecar under test, the real Gemini CLI, and a server so
// that the test can look at Emacs' state.
const initEl = `
(setq inhibit-startup-screen t make-backup-files nil auto-save-default nil
      create-lockfiles nil ring-bell-function #'ignore)
;; Debian's ELPA packages are compiled natively on first use, in each fresh
;; HOME here, and the compiler's warnings about them (seq-25.el) would pop
;; up over whichever window, the CLI's too.
(setq native-comp-async-report-warnings-errors 'silent)
(require 'server)
(setq server-socket-dir %s server-name "e2e")
(server-start)
(setq load-prefer-newer t)               ; the sources, even beside older .elc files
(add-to-list 'load-path %s)
(require 'gemini-companion)
(setq gemini-companion-sidecar-program %s
      gemini-companion-sidecar-args (list "--log-level" "debug" "--log-file" %s)
      gemini-companion-cli-command (list %s)
      gemini-companion-terminal '%s)
%s
(gemini-companion-mode 1)
`

// Emacs is an interactive `emacs -nw` in tmux with the package on.
type Emacs struct {
	pane   *tmuxdrive.Pane
	socket string
	log    string
}

// startEmacs starts interactive Emacs in sb.Workspace on args, with
// gemini-companion-terminal set to terminal.
func startEmacs(t *testing.T, sb *testkit.Sandbox, env []string, gemini, terminal string, args ...string) *Emacs {
	t.Helper()
	return startEmacsWith(t, sb, env, "", gemini, terminal, args...)
}

// startEmacsWith is startEmacs with more of the user's init file (extra),
// before gemini-companion-mode is turned on.
func startEmacsWith(t *testing.T, sb *testkit.Sandbox, env []string, extra, gemini, terminal string, args ...string) *Emacs {
	t.Helper()
	emacs := requireEmacs(t)
	if _, err := exec.LookPath("emacsclient"); err != nil {
		tmuxdrive.Missing(t, "emacsclient is not installed (apt-get install emacs-nox)")
	}
	// Unix socket paths are short: keep the server's out of t.TempDir().
	sockDir, err := os.MkdirTemp("", "gicem")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	if err := os.Chmod(sockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	e := &Emacs{socket: filepath.Join(sockDir, "e2e"), log: filepath.Join(sb.TmpDir, "sidecar.log")}
	init := filepath.Join(sb.TmpDir, "init.el")
	text := fmt.Sprintf(initEl, quote(sockDir), quote(testkit.PluginDir(t, "emacs")), quote(testkit.Binary(t)), quote(e.log), quote(gemini), terminal, extra)
	if err := os.WriteFile(init, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	e.pane = tmuxdrive.Start(t, tmuxdrive.Options{
		Dir:     sb.Workspace,
		Env:     env,
		Command: append([]string{emacs, "-nw", "-q", "--no-splash", "-l", init}, args...),
		Width:   200,
		Height:  50,
	})
	return e
}

// Eval evaluates expr in Emacs and returns the printed value.
func (e *Emacs) Eval(t testing.TB, expr string) string {
	t.Helper()
	out, err := e.eval(expr)
	if err != nil {
		t.Fatalf("emacsclient --eval %s: %v\n%s\nscreen:\n%s", expr, err, out, e.pane.Screen())
	}
	return out
}

func (e *Emacs) eval(expr string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "emacsclient", "-s", e.socket, "--eval", expr).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// WaitEval waits until expr evaluates to t in Emacs.
func (e *Emacs) WaitEval(t testing.TB, what, expr string, timeout time.Duration) {
	t.Helper()
	var out string
	var err error
	if !testkit.Poll(timeout, func() bool {
		out, err = e.eval(expr)
		if err == nil && out == "t" {
			return true
		}
		time.Sleep(50 * time.Millisecond)
		return false
	}) {
		state, _ := e.eval(`(list :views (gemini-companion-diff-views) :selected (buffer-name (window-buffer (selected-window)))
  :windows (mapcar (lambda (w) (buffer-name (window-buffer w))) (window-list))
  :messages (with-current-buffer "*Messages*" (buffer-substring (max (point-min) (- (point-max) 1500)) (point-max))))`)
		t.Fatalf("waited %v for %s: %s gives %q (%v)\nEmacs: %s\nscreen:\n%s\nsidecar log tail:\n%s", timeout, what, expr, out, err, state, e.pane.Screen(), tail(e.log))
	}
}

// tail returns the end of a log file.
func tail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 3000 {
		data = data[len(data)-3000:]
	}
	return string(data)
}

// latestActive is the active file of the last context the observer got.
func latestActive(t testing.TB, cli *testkit.CLI) *idectx.File {
	notes := cli.All("ide/contextUpdate")
	if len(notes) == 0 {
		return nil
	}
	var c idectx.IdeContext
	if err := json.Unmarshal(notes[len(notes)-1].Params, &c); err != nil {
		t.Fatalf("contextUpdate: %v", err)
	}
	if c.WorkspaceState == nil {
		return nil
	}
	for i := range c.WorkspaceState.OpenFiles {
		if c.WorkspaceState.OpenFiles[i].IsActive {
			return &c.WorkspaceState.OpenFiles[i]
		}
	}
	return nil
}

// End to end in real interactive Emacs with the real Gemini CLI 0.61.0:
// M-x gemini-companion-cli opens the CLI, which says it is connected to
// Emacs; the selection and the active file reach the model; the model's
// write_file opens a proposal that the user edits and accepts with C-c
// C-c, and the CLI writes exactly that; a second proposal is rejected with
// C-c C-k and the file stays as it was; C-x C-c quits without asking
// about processes and leaves no discovery file and no CLI process behind.
func TestEndToEndWithRealCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	// The CLI in vterm (what `auto' picks when installed), and in term.el,
	// the fallback that comes with Emacs.
	t.Run("vterm", func(t *testing.T) {
		if vterm, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/vterm-[0-9]*"); len(vterm) == 0 {
			tmuxdrive.Missing(t, "vterm is not installed (apt-get install elpa-vterm)")
		}
		endToEnd(t, "vterm")
	})
	t.Run("term", func(t *testing.T) { endToEnd(t, "ansi-term") })
}

func endToEnd(t *testing.T, terminal string) {
	requireEmacs(t)
	// No SSH_CONNECTION in e.Env: in a container the environment the
	// package gets from the sidecar (terminal/env) must lead the CLI to
	// 127.0.0.1, as it does for users.
	e := testkit.StartE2E(t)
	sb, api, file := e.SB, e.API, e.File
	em := startEmacs(t, sb, e.Env, e.Gemini, terminal, "app.py")
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)

	// M-x gemini-companion-cli, as a user types it.
	em.pane.Keys(t, "M-x")
	em.pane.Type(t, "gemini-companion-cli")
	em.pane.WaitFor(t, "Type your message", cliTimeout)
	em.pane.Type(t, "/ide status")
	em.pane.WaitFor(t, "Connected to Emacs", cliTimeout)

	// Select lines 2-3 of app.py with keys, then go back to the CLI.
	_, disc := sb.WaitDiscovery(t, waitTimeout)
	observer := testkit.ConnectCLI(t, disc.Port, disc.AuthToken)
	em.pane.Keys(t, "C-x", "o")
	em.WaitEval(t, "app.py selected", `(equal (buffer-name (window-buffer (selected-window))) "app.py")`, waitTimeout)
	em.pane.Keys(t, "M-<", "C-n", "C-Space", "C-n", "C-e")
	selection := "    print('hello')\n    return 0"
	if !testkit.Poll(waitTimeout, func() bool {
		f := latestActive(t, observer)
		return f != nil && f.Path == file && f.SelectedText != nil && *f.SelectedText == selection &&
			f.Cursor != nil && f.Cursor.Line == 3 && f.Cursor.Character == 13
	}) {
		t.Fatalf("the sidecar never had the selection; last active file %+v\n%s", latestActive(t, observer), em.pane.Screen())
	}
	em.pane.Keys(t, "C-x", "o")
	em.WaitEval(t, "the CLI selected", `(eq (window-buffer (selected-window)) gemini-companion--cli-buffer)`, waitTimeout)

	proposed := "def main():\n    print('hello, world')\n    return 0\n"
	api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": file, "content": proposed}))
	em.pane.Type(t, "Make it greet the world")
	reqs := api.WaitRequests(t, 1, cliTimeout)
	e.CheckRequestContext(t, reqs[0], file, 3, selection)

	// The proposal opens, selected, with hunks as smerge conflicts; the
	// user adds a line and accepts with C-c C-c.
	em.WaitEval(t, "the proposal to show", `(with-current-buffer (window-buffer (selected-window))
  (and gemini-companion-diff--view smerge-mode
       (string-match-p "C-c C-c accept" (format-mode-line header-line-format)) t))`, cliTimeout)
	em.pane.WaitFor(t, "Gemini proposes app.py", waitTimeout)
	em.pane.Keys(t, "M->")
	em.pane.Type(t, "foo = 1")
	em.WaitEval(t, "the edit", `(with-current-buffer (window-buffer (selected-window))
  (string-suffix-p "foo = 1\n" (buffer-string)))`, waitTimeout)
	em.pane.Keys(t, "C-c", "C-c")
	accepted := proposed + "foo = 1\n"
	var onDisk []byte
	if !testkit.Poll(cliTimeout, func() bool {
		onDisk, _ = os.ReadFile(file)
		return string(onDisk) == accepted
	}) {
		t.Fatalf("the CLI did not write the accepted text; the file holds %q\n%s", onDisk, em.pane.Screen())
	}
	em.WaitEval(t, "the proposal closed, the CLI selected again, app.py reverted", fmt.Sprintf(`(and (null (gemini-companion-diff-views))
  (eq (window-buffer (selected-window)) gemini-companion--cli-buffer)
  (equal (with-current-buffer (get-file-buffer %s) (buffer-string)) %s))`, quote(file), quote(accepted)), waitTimeout)
	e.CheckToolResultSent(t, cliTimeout)
	if text := em.shown(t); strings.Contains(text, "on disk") {
		t.Fatalf("a plain accept told the user about the disk:\n%s", text)
	}

	// A second change, rejected with C-c C-k.
	api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": file, "content": "print('gone')\n"}))
	em.pane.Type(t, "Replace everything")
	em.WaitEval(t, "the second proposal", `(with-current-buffer (window-buffer (selected-window)) (and gemini-companion-diff--view t))`, cliTimeout)
	em.pane.Keys(t, "C-c", "C-k")
	em.WaitEval(t, "the proposal closed", `(null (gemini-companion-diff-views))`, waitTimeout)
	em.pane.WaitFor(t, "Request cancelled", cliTimeout)
	e.CheckRejected(t, accepted)

	// C-x C-c: Emacs ends the CLI it started and the sidecar.
	cliPID, _ := strconv.Atoi(em.Eval(t, `(process-id (get-buffer-process gemini-companion--cli-buffer))`))
	sidecarPID, _ := strconv.Atoi(em.Eval(t, `(process-id gemini-companion-link--proc)`))
	procs := append(tmuxdrive.Descendants(cliPID), sidecarPID)
	if len(procs) < 2 || cliPID == 0 || sidecarPID == 0 {
		t.Fatalf("no CLI (%d) or sidecar (%d) process", cliPID, sidecarPID)
	}
	// It does not ask whether to kill them: they are the package's own.
	em.pane.Keys(t, "C-x", "C-c")
	screen := em.pane.WaitUntil(t, "Emacs to exit or ask", waitTimeout, func(s string) bool {
		exited, _, _ := em.pane.Exited()
		return exited || strings.Contains(s, "(yes or no)") || strings.Contains(s, "(y or n)")
	})
	if exited, _, _ := em.pane.Exited(); !exited {
		t.Fatalf("C-x C-c asked a question instead of quitting:\n%s", screen)
	}
	// tmux sometimes cannot tell a dead pane's status (UnknownStatus).
	if code := em.pane.WaitExit(t, waitTimeout); code != 0 && code != tmuxdrive.UnknownStatus {
		t.Errorf("Emacs exited with %d", code)
	}
	if !testkit.Poll(waitTimeout, func() bool {
		for _, p := range procs {
			if tmuxdrive.PIDAlive(p) {
				return false
			}
		}
		return true
	}) {
		var left []int
		for _, p := range procs {
			if tmuxdrive.PIDAlive(p) {
				left = append(left, p)
			}
		}
		t.Errorf("processes outlived Emacs: %v (CLI %d, sidecar %d)", left, cliPID, sidecarPID)
	}
	if files := sb.DiscoveryFiles(); len(files) != 0 {
		t.Errorf("discovery files left behind: %v", files)
	}
}
