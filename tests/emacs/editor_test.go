package emacs

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// In interactive Emacs against the real sidecar, with a stand-in CLI (the
// MCP client of testkit) to see what a CLI sees: the mode line shows the
// sidecar's status text; switching buffers with C-x b reports the new
// active file; a proposal killed with C-x k is rejected; a proposal the CLI
// closes disappears and its text goes back to the CLI; M-x
// gemini-companion-status ("open proposals: none" when there are none) and
// M-x gemini-companion-doctor tell the truth.
func TestInteractiveEmacsWithTheSidecar(t *testing.T) {
	requireEmacs(t)
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "one\ntwo\nthree\n")
	b := sb.WriteFile(t, "b.txt", "one\ntwo\nthree\n")
	env := testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "TERM=xterm-256color")
	em := startEmacs(t, sb, env, "gemini", "auto", "a.txt", "b.txt")
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)

	discPath, disc := sb.WaitDiscovery(t, waitTimeout)
	cli := testkit.ConnectCLI(t, disc.Port, disc.AuthToken)
	em.pane.WaitFor(t, "Gemini: 1 CLI connected", waitTimeout)

	// The active file follows C-x b.
	em.pane.Keys(t, "C-x", "b")
	em.pane.Type(t, "a.txt")
	if !testkit.Poll(waitTimeout, func() bool {
		f := latestActive(t, cli)
		return f != nil && f.Path == a
	}) {
		t.Fatalf("the CLI never saw a.txt active: %+v\n%s", latestActive(t, cli), em.pane.Screen())
	}
	em.pane.Keys(t, "C-x", "b")
	em.pane.Type(t, "b.txt")
	if !testkit.Poll(waitTimeout, func() bool {
		f := latestActive(t, cli)
		return f != nil && f.Path == b
	}) {
		t.Fatalf("the CLI never saw b.txt active: %+v\n%s", latestActive(t, cli), em.pane.Screen())
	}

	// A proposal killed with C-x k is rejected.
	ctx := context.Background()
	if res, err := cli.OpenDiff(ctx, a, "one\nTWO\nthree\n"); err != nil || res.IsError {
		t.Fatalf("openDiff: %v %+v", err, res)
	}
	em.pane.WaitFor(t, "Gemini proposes a.txt", waitTimeout)
	em.WaitEval(t, "the proposal selected", `(with-current-buffer (window-buffer (selected-window)) (and gemini-companion-diff--view t))`, waitTimeout)
	em.pane.Keys(t, "C-x", "k")
	em.pane.Type(t, "")
	cli.WaitFor(t, "ide/diffRejected", waitTimeout, func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"filePath":"`+a+`"`)
	})
	em.WaitEval(t, "no proposal", `(null (gemini-companion-diff-views))`, waitTimeout)

	// A proposal the CLI closes goes away; the CLI gets its text back, byte
	// for byte, however large and whatever the characters.
	big := strings.Repeat("new b: é ✓ 😀 \t tab, \"quoted\" \\ back\n", 6000)
	started := time.Now()
	if res, err := cli.OpenDiff(ctx, b, big); err != nil || res.IsError {
		t.Fatalf("openDiff: %v %+v", err, res)
	}
	em.WaitEval(t, "the proposal for b.txt", `(and (member `+quote(b)+` (gemini-companion-diff-views)) t)`, waitTimeout)
	t.Logf("a %d-byte proposal shown in %v", len(big), time.Since(started))
	started = time.Now()
	if got := cli.CloseDiffContent(t, ctx, b); got == nil || *got != big {
		n := -1
		if got != nil {
			n = len(*got)
		}
		t.Errorf("closeDiff content (%d bytes) is not the %d-byte proposal", n, len(big))
	}
	t.Logf("and closed in %v", time.Since(started))
	em.WaitEval(t, "no proposal", `(null (gemini-companion-diff-views))`, waitTimeout)
	if data, _ := os.ReadFile(b); string(data) != "one\ntwo\nthree\n" {
		t.Errorf("b.txt changed: %q", data)
	}

	// M-x gemini-companion-status.
	em.pane.Keys(t, "M-x")
	em.pane.Type(t, "gemini-companion-status")
	em.pane.WaitFor(t, "connected Gemini CLI sessions: 1", waitTimeout)
	em.pane.WaitFor(t, "discovery file: "+discPath, waitTimeout)
	// No proposal is open: it says so.
	em.pane.WaitFor(t, "open proposals: none", waitTimeout)

	// M-x gemini-companion-doctor: the sidecar's doctor, with the CLI's
	// environment, says a CLI started here would connect.
	em.pane.Keys(t, "M-x")
	em.pane.Type(t, "gemini-companion-doctor")
	em.WaitEval(t, "the doctor's verdict", `(with-current-buffer "*gemini-companion doctor*"
  (and (string-match-p "would connect" (buffer-string)) (not (string-match-p "NOT connect" (buffer-string)))))`, waitTimeout)
}

// shown is what the package has shown the user so far: *Messages* and
// *Warnings*, read after a round trip on the link, so that a message the
// sidecar sent before it has been shown.
func (e *Emacs) shown(t testing.TB) string {
	t.Helper()
	var text string
	if err := json.Unmarshal([]byte(e.Eval(t, `(progn
  (gemini-companion-link-request-sync "status/get" nil 10)
  (mapconcat (lambda (name) (if (get-buffer name) (with-current-buffer name (buffer-string)) ""))
             '("*Messages*" "*Warnings*") "\n"))`)), &text); err != nil {
		t.Fatalf("the messages shown: %v", err)
	}
	return text
}

// Accepting a proposal with C-c C-c in a file nobody touched says nothing
// about the disk; a file changed on disk and put back is shown so once
// each, and the next C-c C-c accepts at once.
func TestEmacsSaysNothingOfTheDiskUnlessItChanged(t *testing.T) {
	requireEmacs(t)
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "one\n")
	env := testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "TERM=xterm-256color")
	em := startEmacs(t, sb, env, "gemini", "auto", "a.txt")
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)
	_, disc := sb.WaitDiscovery(t, waitTimeout)
	cli := testkit.ConnectCLI(t, disc.Port, disc.AuthToken)
	ctx := context.Background()
	selected := `(with-current-buffer (window-buffer (selected-window)) (and gemini-companion-diff--view t))`

	if res, err := cli.OpenDiff(ctx, a, "ONE\n"); err != nil || res.IsError {
		t.Fatalf("openDiff: %v %+v", err, res)
	}
	em.WaitEval(t, "the proposal selected", selected, waitTimeout)
	em.pane.Keys(t, "C-c", "C-c")
	cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if text := em.shown(t); strings.Contains(text, "on disk") {
		t.Fatalf("a plain accept told the user about the disk:\n%s", text)
	}

	if res, err := cli.OpenDiff(ctx, a, "TWO\n"); err != nil || res.IsError {
		t.Fatalf("openDiff: %v %+v", err, res)
	}
	em.WaitEval(t, "the second proposal selected", selected, waitTimeout)
	if err := os.WriteFile(a, []byte("changed elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	em.WaitEval(t, "the change on disk", `(with-current-buffer (window-buffer (selected-window))
  (equal (gemini-companion-diff--get :disk) "changedOnDisk"))`, waitTimeout)
	if err := os.WriteFile(a, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	em.WaitEval(t, "the file back", `(with-current-buffer (window-buffer (selected-window))
  (equal (gemini-companion-diff--get :disk) "unchangedOnDisk"))`, waitTimeout)
	if text := em.shown(t); !strings.Contains(text, "a.txt on disk is back to what it was") {
		t.Fatalf("the user was not told the file is back as it was:\n%s", text)
	}
	em.pane.Keys(t, "C-c", "C-c")
	cli.WaitFor(t, "ide/diffAccepted", waitTimeout, func(p json.RawMessage) bool { return strings.Contains(string(p), "TWO") })
	if n := strings.Count(em.shown(t), "back to what it was"); n != 1 {
		t.Fatalf("told %d times that the file is back as it was, want once", n)
	}
}
