package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// reviewPrompt is what the standalone companion asks under each diff.
const reviewPrompt = "Accept [a], reject [r], or edit then accept [e]?"

// TestStandaloneCompanionReviewsTheCLIsEdits is the "done" scenario with the
// real interactive Gemini CLI: the companion runs on its own in one terminal
// (`gemini-ide-companion serve`), the CLI in another, in the same workspace.
// The CLI connects to the companion; each file write the model proposes is
// shown as a diff in the companion's terminal, and what the user answers
// there decides what the CLI writes to disk.
func TestStandaloneCompanionReviewsTheCLIsEdits(t *testing.T) {
	tmuxdrive.Require(t)
	gemini := tmuxdrive.GeminiBin(t)
	bin := testkit.Binary(t)
	sb := testkit.NewSandbox(t)
	api := fakegemini.Start(t)

	target := filepath.Join(sb.Workspace, "notes.txt")
	const original = "first line\n"
	if err := os.WriteFile(target, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}

	// Terminal A: the standalone companion. Its $EDITOR (for "edit then
	// accept") appends a line the way a user typing in an editor would.
	editScript := filepath.Join(t.TempDir(), "edit.sh")
	if err := os.WriteFile(editScript, []byte("#!/bin/sh\nprintf 'line the user typed in $EDITOR\\n' >> \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	companion := tmuxdrive.Start(t, tmuxdrive.Options{
		Dir:     sb.Workspace,
		Env:     tmuxdrive.MergeEnv(sb.Env(), "EDITOR="+editScript, "VISUAL="+editScript, "NO_COLOR=1"),
		Command: []string{bin, "serve", "--workspace", sb.Workspace},
		Width:   160, Height: 50,
	})
	_, disc := sb.WaitDiscovery(t, 20*time.Second)
	if disc.WorkspacePath != sb.Workspace {
		t.Fatalf("the companion serves %q, want %q", disc.WorkspacePath, sb.Workspace)
	}
	if disc.IDEInfo.DisplayName == "" {
		t.Fatalf("the discovery file has no ideInfo.displayName; the CLI would refuse it")
	}
	// In a terminal, the companion says that one key answers.
	companion.WaitFor(t, "with one key", 10*time.Second)

	// Terminal B: the Gemini CLI in the same workspace, no IDE variables:
	// it finds the companion through the discovery file.
	cli := tmuxdrive.Start(t, tmuxdrive.Options{
		Dir:     sb.Workspace,
		Env:     tmuxdrive.MergeEnv(withoutIDEVars(os.Environ()), tmuxdrive.GeminiEnv(t, sb.Home, sb.TmpDir, api.URL)...),
		Command: []string{gemini},
		Width:   160, Height: 50,
	})
	cli.WaitFor(t, "Type your message", 60*time.Second)
	ideStatus(t, cli, disc.IDEInfo.DisplayName, 30*time.Second)

	t.Run("accept", func(t *testing.T) {
		proposed := "first line\nsecond line, proposed by the model\n"
		api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": target, "content": proposed}))
		before := len(api.Requests())
		cli.Type(t, "add a second line to notes.txt")

		// The companion's terminal shows the diff, then asks.
		waitQuestion(t, companion, "+second line, proposed by the model")
		// The CLI waits for the answer meanwhile; nothing is written yet.
		cli.WaitFor(t, "Apply this change?", 30*time.Second)
		if got := readFile(t, target); got != original {
			t.Fatalf("the file changed before the user answered: %q", got)
		}

		// One key press, no Enter.
		companion.Keys(t, "a")
		waitFile(t, target, proposed, 30*time.Second, cli)
		// The CLI reports the write to the model as done.
		reqs := api.WaitRequests(t, before+2, 30*time.Second)
		if !strings.Contains(reqs[before].Text(), "add a second line to notes.txt") {
			t.Fatalf("the CLI's request does not carry the prompt: %s", reqs[before].Body)
		}
		if !toolSucceeded(reqs[before+1], "write_file") {
			t.Fatalf("the CLI did not report a successful write_file; it sent: %s", reqs[before+1].Body)
		}
	})

	t.Run("reject", func(t *testing.T) {
		before := readFile(t, target)
		api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": target, "content": "this must never reach the disk\n"}))
		cli.Type(t, "rewrite notes.txt")

		waitQuestion(t, companion, "+this must never reach the disk")
		cli.WaitFor(t, "Apply this change?", 30*time.Second)
		companion.Keys(t, "r")
		// The CLI shows the write as cancelled; only then is "the file is
		// untouched" meaningful.
		cli.WaitFor(t, "Request cancelled.", 30*time.Second)
		if got := readFile(t, target); got != before {
			t.Fatalf("a rejected proposal changed the file: %q, want %q", got, before)
		}
	})

	t.Run("edit then accept", func(t *testing.T) {
		proposed := readFile(t, target) + "third line, proposed by the model\n"
		api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": target, "content": proposed}))
		before := len(api.Requests())
		cli.Type(t, "add a third line to notes.txt")

		waitQuestion(t, companion, "+third line, proposed by the model")
		cli.WaitFor(t, "Apply this change?", 30*time.Second)
		companion.Keys(t, "e")
		waitFile(t, target, proposed+"line the user typed in $EDITOR\n", 30*time.Second, cli)
		turnEnds(t, api, before)
	})

	t.Run("answered in the CLI instead", func(t *testing.T) {
		proposed := readFile(t, target) + "fourth line, allowed in the CLI\n"
		api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": target, "content": proposed}))
		before := len(api.Requests())
		cli.Type(t, "add a fourth line to notes.txt")

		waitQuestion(t, companion, "+fourth line, allowed in the CLI")
		cli.WaitFor(t, "Apply this change?", 30*time.Second)
		// "Allow once" is the CLI's highlighted choice.
		cli.Keys(t, "Enter")
		waitFile(t, target, proposed, 30*time.Second, cli)
		// The companion drops the question: the CLI closed the diff.
		companion.WaitFor(t, "was answered in Gemini CLI", 10*time.Second)
		turnEnds(t, api, before)
	})

	t.Run("the next proposal appears at once", func(t *testing.T) {
		// The reported bug: after a diff was answered in the CLI, the
		// companion showed the next one only after Enter was pressed in
		// its terminal. Nothing is typed into the companion here until
		// the question is on its screen.
		cli.Type(t, "/clear")
		// The input box empties at once; the history goes only once the
		// CLI has cleared it, and a prompt typed before that is lost.
		cli.WaitUntil(t, "the cleared CLI, ready for a prompt", 30*time.Second, func(s string) bool {
			return strings.Contains(s, "Type your message") && !strings.Contains(s, "allowed in the CLI")
		})
		proposed := readFile(t, target) + "fifth line, shown without a key press\n"
		api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": target, "content": proposed}))
		before := len(api.Requests())
		cli.Type(t, "add a fifth line to notes.txt")
		promptSent(t, api, cli, before)
		waitQuestion(t, companion, "+fifth line, shown without a key press")
		cli.WaitFor(t, "Apply this change?", 30*time.Second)
		companion.Keys(t, "a")
		waitFile(t, target, proposed, 30*time.Second, cli)
	})
}

// turnEnds waits until the CLI has sent the write's result to the model
// (the request after the prompt's), so that a reply scripted next is taken
// by the next prompt and not by the end of this turn.
func turnEnds(t *testing.T, api *fakegemini.Server, before int) {
	t.Helper()
	api.WaitRequests(t, before+2, 30*time.Second)
}

// promptSent waits until the CLI has sent the model a request after the
// first before ones (the prompt just typed), showing the CLI's screen if
// it never does.
func promptSent(t *testing.T, api *fakegemini.Server, cli *tmuxdrive.Pane, before int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(api.Requests()) <= before {
		if time.Now().After(deadline) {
			t.Fatalf("the CLI never sent the prompt to the model; its screen is:\n%s", cli.Screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitQuestion waits until the companion's terminal shows a diff line
// (addedLine, with its "+") and, after it, the question to answer; an
// earlier diff's question does not count.
func waitQuestion(t *testing.T, companion *tmuxdrive.Pane, addedLine string) {
	t.Helper()
	companion.WaitUntil(t, fmt.Sprintf("%q and then the review question", addedLine), 30*time.Second, func(s string) bool {
		at := strings.LastIndex(s, addedLine)
		return at >= 0 && strings.LastIndex(s, reviewPrompt) > at
	})
}

// withoutIDEVars drops variables that would lead the CLI to an IDE other
// than through the discovery file (e.g. when the tests run in VS Code).
func withoutIDEVars(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "GEMINI_CLI_IDE_") || strings.HasPrefix(kv, "TERM_PROGRAM=") ||
			strings.HasPrefix(kv, "TERMINAL_EMULATOR=") || strings.HasPrefix(kv, "TMUX") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return string(data)
}

// waitFile polls until path holds exactly want.
func waitFile(t *testing.T, path, want string, timeout time.Duration, cli *tmuxdrive.Pane) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(path)
		if err == nil && string(data) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q (err %v), want %q; the CLI shows:\n%s", path, data, err, want, cli.Screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// toolSucceeded reports whether req carries a result for tool that is not an
// error.
func toolSucceeded(req fakegemini.Request, tool string) bool {
	for _, fr := range req.FunctionResponses() {
		if fr.Name != tool {
			continue
		}
		if _, failed := fr.Response["error"]; failed {
			return false
		}
		return true
	}
	return false
}
