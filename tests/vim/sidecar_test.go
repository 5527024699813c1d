package vim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// inProposal runs an Ex command in the proposal's window of path, as a
// user does there.
func inProposal(t testing.TB, v *Vim, path, cmd string) {
	t.Helper()
	v.Ex(t, fmt.Sprintf("call win_gotoid(win_findbuf(bufnr(%s))[0]) | %s", vimString("gemini://proposal/"+path), cmd))
}

// A proposal from a real CLI through the real sidecar: a diff tab next to
// the user's tabs, original left (read-only), proposal right and focused;
// the user's edit and :w accept it, the CLI gets the edited text, the tab
// closes and the user is back where they were; once the CLI writes the
// file, its buffer shows it. A second proposal, rejected with :q, leaves
// the file alone.
func TestDiffAcceptWithEditsThenReject(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "alpha\nbeta\ngamma\n")
	sb.WriteFile(t, "other.txt", "other\n")
	v := startVim(t, sb, Options{Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	v.Ex(t, "edit a.txt | vsplit other.txt | tabnew | edit other.txt | tabfirst")

	cli.MustOpenDiff(t, a, "alpha\nBETA\ngamma\n")
	s := diffTab(t, v, a)
	if !s.Found || s.Tabs != 3 || s.Tab != 2 {
		t.Fatalf("diff tab %+v: want a third tab, second in order", s)
	}
	if !s.Diff[0] || !s.Diff[1] || strings.Join(s.Left, "\n") != "alpha\nbeta\ngamma" || s.LeftModifiable {
		t.Errorf("left side %q (modifiable %v), diff %v: want the file, read-only, in diff mode", s.Left, s.LeftModifiable, s.Diff)
	}
	if strings.Join(s.Right, "\n") != "alpha\nBETA\ngamma" || s.CurrentBuf != s.RightBuf {
		t.Errorf("right side %q (current %v): want the proposal, focused", s.Right, s.CurrentBuf == s.RightBuf)
	}
	if !strings.Contains(s.Statusline, ":w accepts") {
		t.Errorf("the proposal's statusline %q does not say how to accept", s.Statusline)
	}
	if !v.Bool(t, "len(filter(popup_list(), {_, p -> popup_getpos(p).visible && getbufline(winbufnr(p), 1, '$')->join() =~ ':w accept'})) == 1") {
		t.Errorf("no popup shows the keys")
	}

	v.Ex(t, "call setline(1, 'ALPHA') | write")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if p, c := testkit.DiffNote(t, raw); p != a || c != "ALPHA\nBETA\ngamma\n" {
		t.Errorf("diffAccepted = %s, want the edited proposal for %s", raw, a)
	}
	waitNoDiffTab(t, v, a)
	if tab := v.Eval(t, "tabpagenr()"); tab != 1.0 || v.Eval(t, "tabpagenr('$')") != 2.0 {
		t.Errorf("after accepting: tab %v of %v, want 1 of 2 (where the user was)", tab, v.Eval(t, "tabpagenr('$')"))
	}
	if data, _ := os.ReadFile(a); string(data) != "alpha\nbeta\ngamma\n" {
		t.Errorf("the plugin wrote the file itself: %q", data)
	}
	noDiskNote(t, v)
	// The CLI writes the accepted text; the buffer follows.
	if err := os.WriteFile(a, []byte("ALPHA\nBETA\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v.WaitFor(t, "a.txt to be reloaded", fmt.Sprintf(`getbufline(%s, 1, '$') == ['ALPHA', 'BETA', 'gamma']`, vimString(a)), waitTimeout)

	cli.MustOpenDiff(t, a, "gone\n")
	inProposal(t, v, a, "normal! dd")
	inProposal(t, v, a, "quit!")
	raw = cli.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	if p, _ := testkit.DiffNote(t, raw); p != a {
		t.Errorf("diffRejected for %q, want %q", p, a)
	}
	waitNoDiffTab(t, v, a)
	if n := len(cli.All("ide/diffAccepted")); n != 1 {
		t.Errorf("%d acceptances, want the first only", n)
	}
	if lines := v.Lines(t, vimString(a)); strings.Join(lines, "\n") != "ALPHA\nBETA\ngamma" {
		t.Errorf("the user's buffer now holds %q", lines)
	}
}

// The file changes on disk under an open proposal: the view shows the
// file as it is now and says so; the first :w does not overwrite that
// change, the second does (overDiskChange), and the CLI gets it.
func TestDiffChangedOnDiskTakesASecondWrite(t *testing.T) {
	sb, a, v := vimOnOneFile(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "one\ntwo\n")
	if err := os.WriteFile(a, []byte("one, edited elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v.WaitFor(t, "the changed-on-disk label", fmt.Sprintf(`GicDiffTab(%s).state.disk ==# 'changedOnDisk'`, vimString(a)), waitTimeout)
	s := diffTab(t, v, a)
	if strings.Join(s.Left, "\n") != "one, edited elsewhere" || !strings.Contains(s.Statusline, "CHANGED ON DISK") {
		t.Errorf("view after the change on disk: left %q, statusline %q", s.Left, s.Statusline)
	}
	inProposal(t, v, a, "write")
	v.WaitNote(t, ":w again overwrites it", waitTimeout)
	if n := len(cli.All("ide/diffAccepted")); n != 0 || !diffTab(t, v, a).Found {
		t.Fatalf("the first :w accepted over the change on disk")
	}
	inProposal(t, v, a, "write")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "one\ntwo\n" {
		t.Errorf("diffAccepted content %q", c)
	}
	waitNoDiffTab(t, v, a)
}

// The file changes on disk under an open proposal and is then put back
// as it was: the view says so once each, and the next :w accepts at once.
func TestDiffFilePutBackOnDiskIsAcceptedAtOnce(t *testing.T) {
	sb, a, v := vimOnOneFile(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "one\ntwo\n")
	v.WaitFor(t, "the view", fmt.Sprintf(`GicDiffTab(%s).found`, vimString(a)), waitTimeout)
	if err := os.WriteFile(a, []byte("one, edited elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v.WaitFor(t, "the changed-on-disk label", fmt.Sprintf(`GicDiffTab(%s).state.disk ==# 'changedOnDisk'`, vimString(a)), waitTimeout)
	if err := os.WriteFile(a, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v.WaitFor(t, "the file back", fmt.Sprintf(`GicDiffTab(%s).state.disk ==# 'unchangedOnDisk'`, vimString(a)), waitTimeout)
	if s := diffTab(t, v, a); strings.Join(s.Left, "\n") != "one" || strings.Contains(s.Statusline, "ON DISK") {
		t.Errorf("view with the file back: left %q, statusline %q", s.Left, s.Statusline)
	}
	v.WaitNote(t, "a.txt on disk is back to what it was", waitTimeout)
	inProposal(t, v, a, "write")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "one\ntwo\n" {
		t.Errorf("diffAccepted content %q", c)
	}
	v.LinkRoundTrip(t)
	back := 0
	for _, note := range v.Notes(t) {
		if strings.Contains(note, "back to what it was") {
			back++
		}
	}
	if back != 1 {
		t.Fatalf("told %d times that the file is back as it was, want once: %q", back, v.Notes(t))
	}
}

// The CLI closes the proposal itself (the user answered in the terminal):
// the view closes and the CLI gets the proposal as the user left it.
func TestDiffClosedByTheCLI(t *testing.T) {
	sb, a, v := vimOnOneFile(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "one\ntwo\n")
	inProposal(t, v, a, "call append('$', 'three')")
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	got := cli.CloseDiffContent(t, ctx, a)
	if got == nil || *got != "one\ntwo\nthree\n" {
		t.Errorf("closeDiff content = %v, want the edited proposal", got)
	}
	waitNoDiffTab(t, v, a)
	if n := len(cli.All("ide/diffAccepted")) + len(cli.All("ide/diffRejected")); n != 0 {
		t.Errorf("%d decisions sent for a proposal the CLI closed", n)
	}
}

// :GeminiStatus, the statusline item and the sidecar's status text follow
// the CLIs that connect; :GeminiDoctor reports on the setup and runs the
// sidecar's doctor with the terminal environment.
func TestStatusStatuslineAndDoctor(t *testing.T) {
	sb := testkit.NewSandbox(t)
	v := startVim(t, sb, Options{Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	_, f := sb.WaitDiscovery(t, waitTimeout)
	cli := testkit.ConnectCLI(t, f.Port, f.AuthToken)
	_ = cli
	v.WaitFor(t, "the sidecar's status text", `gemini_companion#Statusline() ==# 'Gemini: 1 CLI connected'`, waitTimeout)
	// :GeminiStatus prints these lines once the sidecar answered status/get.
	var lines []string
	v.Ex(t, "let g:status_lines = [] | call gemini_companion#status#Lines({l -> extend(g:status_lines, l)})")
	v.WaitFor(t, "the status lines", "len(g:status_lines) > 3", waitTimeout)
	v.EvalJSON(t, &lines, "g:status_lines")
	text := strings.Join(lines, "\n")
	for _, want := range []string{"port: " + strconv.Itoa(f.Port), "connected Gemini CLI sessions: 1", "discovery file: " + filepath.Join(sb.DiscoveryDir())} {
		if !strings.Contains(text, want) {
			t.Errorf("status lines lack %q:\n%s", want, text)
		}
	}

	v.Ex(t, "GeminiDoctor")
	v.WaitFor(t, "the doctor's report", "get(b:, 'gemini_doctor', '') ==# 'done'", waitTimeout)
	report := strings.Join(v.Lines(t, "''"), "\n")
	for _, want := range []string{"OK    sidecar running", "OK    +terminal", "gemini-ide-companion doctor", "(doctor exited with code"} {
		if !strings.Contains(report, want) {
			t.Errorf("the doctor's report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "ERROR ") && !strings.Contains(report, "ERROR Gemini CLI") {
		t.Errorf("the doctor reports errors on a working setup:\n%s", report)
	}
}

// :GeminiCli starts the CLI command in a terminal with the environment the
// sidecar gives for terminals; :GeminiToggle hides and shows it; quitting
// Vim ends it, with what it started, even a process ignoring the hangup.
func TestGeminiCliTerminal(t *testing.T) {
	sb := testkit.NewSandbox(t)
	envFile := filepath.Join(sb.TmpDir, "cli-env.txt")
	pidFile := filepath.Join(sb.TmpDir, "child.pid")
	script := "env > '" + envFile + ".tmp' && mv '" + envFile + ".tmp' '" + envFile + "'; " +
		"(trap '' HUP; exec sleep 600) & echo $! > '" + pidFile + "'; echo cli-started; exec cat"
	v := startVim(t, sb, Options{Config: map[string]any{"cli": []string{"sh", "-c", script}, "position": "bottom", "size": 10}})
	v.Ex(t, "GeminiCli")
	v.WaitFor(t, "the terminal", "gemini_companion#terminal#Buffer() > 0", waitTimeout)
	if !testkit.Poll(waitTimeout, func() bool { _, err := os.Stat(envFile); return err == nil }) {
		t.Fatalf("the CLI did not start\n%s", v.diagnostics())
	}
	data, _ := os.ReadFile(envFile)
	_, f := sb.WaitDiscovery(t, waitTimeout)
	for _, want := range []string{"GEMINI_CLI_IDE_SERVER_PORT=" + strconv.Itoa(f.Port), "GEMINI_CLI_IDE_AUTH_TOKEN=" + f.AuthToken, "GEMINI_CLI_IDE_WORKSPACE_PATH=" + sb.Workspace} {
		if !strings.Contains(string(data), want+"\n") {
			t.Errorf("the CLI's environment lacks %s", want)
		}
	}
	if !v.Bool(t, "winheight(bufwinid(gemini_companion#terminal#Buffer())) == 10 && winnr('$') == 2") {
		t.Errorf("the terminal is not a 10-line split: %v windows", v.Eval(t, "winnr('$')"))
	}
	v.Ex(t, "GeminiToggle")
	if v.Bool(t, "bufwinid(gemini_companion#terminal#Buffer()) > 0") {
		t.Errorf(":GeminiToggle did not hide the terminal")
	}
	v.Ex(t, "GeminiToggle")
	if !v.Bool(t, "bufwinid(gemini_companion#terminal#Buffer()) > 0") {
		t.Errorf(":GeminiToggle did not show the terminal again")
	}
	var pid int
	if !testkit.Poll(waitTimeout, func() bool {
		raw, _ := os.ReadFile(pidFile)
		n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		pid = n
		return err == nil
	}) {
		t.Fatal("the CLI's child never wrote its pid")
	}
	v.Quit(t)
	if !testkit.Poll(waitTimeout, func() bool { return !tmuxdrive.GroupAlive(pid) && !tmuxdrive.PIDAlive(pid) }) {
		t.Errorf("the CLI's child %d outlived Vim", pid)
	}
	if files := sb.DiscoveryFiles(); len(files) != 0 {
		t.Errorf("discovery files remain after Vim quit: %v", files)
	}
}

// The same CLI proposes again for a file whose proposal is shown: the new
// one replaces it, with no decision sent for the old one.
func TestNewerProposalReplacesTheShownOne(t *testing.T) {
	sb, a, v := vimOnOneFile(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "one\ntwo\n")
	cli.MustOpenDiff(t, a, "one\nthree\n")
	v.WaitFor(t, "the newer proposal", fmt.Sprintf(`GicDiffTab(%s).right == ['one', 'three']`, vimString(a)), waitTimeout)
	if n := v.Eval(t, "tabpagenr('$')"); n != 2.0 {
		t.Errorf("%v tabs, want the user's and one diff tab", n)
	}
	inProposal(t, v, a, "write")
	raw := cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if _, c := testkit.DiffNote(t, raw); c != "one\nthree\n" {
		t.Errorf("accepted %q, want the newer proposal", c)
	}
	if n := len(cli.All("ide/diffRejected")); n != 0 {
		t.Errorf("%d rejections sent for the replaced proposal", n)
	}
}

// The CLI writes an accepted file in two steps (truncate, then the text),
// the second late: the buffer follows both and ends with the text.
func TestAcceptedFileReloadFollowsAWriteInParts(t *testing.T) {
	sb := testkit.NewSandbox(t)
	a := sb.WriteFile(t, "a.txt", "one\n")
	v := startVim(t, sb, Options{Args: []string{"a.txt"}, Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "one\ntwo\n")
	inProposal(t, v, a, "write")
	cli.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	v.WaitFor(t, "the buffer to show the truncated file", fmt.Sprintf(`getbufline(%s, 1, '$') == ['']`, vimString(a)), waitTimeout)
	if err := os.WriteFile(a, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v.WaitFor(t, "the buffer to show the written text", fmt.Sprintf(`getbufline(%s, 1, '$') == ['one', 'two']`, vimString(a)), waitTimeout)
}

// When the sidecar cannot start, :GeminiCli says why and still opens the
// CLI (without IDE integration).
func TestGeminiCliSaysWhyTheSidecarFailed(t *testing.T) {
	sb := testkit.NewSandbox(t)
	v := startVim(t, sb, Options{Config: map[string]any{
		"sidecar": "/nonexistent/gemini-ide-companion",
		"cli":     []string{"sh", "-c", "echo cli-started; exec cat"},
	}})
	v.Ex(t, "GeminiCli")
	msg := v.WaitNote(t, "the sidecar could not start", waitTimeout)
	if !strings.Contains(msg, "/nonexistent/gemini-ide-companion") {
		t.Errorf("the message does not say which sidecar failed: %q", msg)
	}
	v.WaitFor(t, "the CLI's output", `gemini_companion#terminal#Buffer() > 0 && term_getline(gemini_companion#terminal#Buffer(), 1) ==# 'cli-started'`, waitTimeout)
}
