package a2a_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

var sessionIDRE = regexp.MustCompile(`session_id\\*":\\*"(gs-[0-9a-f]+)`)

// supervise is the script of a supervising model: start a task and wait
// for its decision, answer it with decision, poll its status until the
// task is complete, then say done.
func supervise(task, decision string) func(results []string) testkit.ClaudeStep {
	return func(results []string) testkit.ClaudeStep {
		if len(results) == 0 {
			return testkit.ClaudeStep{Tool: "mcp__gemini__gemini_task_start", Input: map[string]any{"task": task, "async": false}}
		}
		m := sessionIDRE.FindStringSubmatch(results[0])
		if m == nil {
			return testkit.ClaudeStep{Text: "no session: " + results[0]}
		}
		last := results[len(results)-1]
		switch {
		case len(results) == 1:
			return testkit.ClaudeStep{Tool: "mcp__gemini__gemini_respond", Input: map[string]any{"session_id": m[1], "decision": decision}}
		case strings.Contains(last, `complete`) && len(results) > 2:
			return testkit.ClaudeStep{Text: "Claude: the task is complete."}
		case len(results) > 12:
			return testkit.ClaudeStep{Text: "Claude: gave up waiting."}
		}
		return testkit.ClaudeStep{Tool: "mcp__gemini__gemini_status", Input: map[string]any{"session_id": m[1], "wait_s": 30}}
	}
}

// readmeBlock returns the first fenced block of the given language in the
// README's section heading that contains want.
func readmeBlock(t *testing.T, heading, lang, want string) string {
	t.Helper()
	for _, b := range testkit.ReadmeBlocks(t, heading, lang) {
		if strings.Contains(b, want) {
			return b
		}
	}
	t.Fatalf("README.md's %q has no ```%s block with %q: update this test with the README", heading, lang, want)
	return ""
}

// TestClaudeCodeAsClient: Claude Code (npm, tests/a2a/claude) configured
// exactly as the README says (`claude mcp add …`, the bridge and the A2A
// server found on PATH, as installed) runs offline against a fake Messages
// API, and its model supervises the Gemini agent: a task's edit comes as a
// decision with its diff, approved through Claude's tool call it is on
// disk; denied, the file is untouched.
func TestClaudeCodeAsClient(t *testing.T) {
	t.Parallel()
	claude := testkit.NewClaudeCode(t)
	sb := newSandbox(t)
	// Claude Code and the server it starts through the bridge share the
	// user's HOME (the server reads its settings there).
	claude.Dir, claude.Env = sb.Workspace, append(os.Environ(), sb.Env()...)

	// The README's line, run in the project as the user runs it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	claude.Configure(ctx, t, strings.TrimSpace(readmeBlock(t, "## A2A bridge", "sh", "claude mcp add")))

	run := func(t *testing.T, fc *testkit.FakeClaude, prompt string) string {
		t.Helper()
		return claude.Print(ctx, t, fc, prompt, "mcp__gemini__gemini_task_start,mcp__gemini__gemini_respond,mcp__gemini__gemini_status")
	}

	t.Run("EditApproved", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "hello.txt")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "hello from gemini\n"}))
		sb.Fake.Reply(fakegemini.Text("I wrote hello.txt."))
		fc := &testkit.FakeClaude{Next: supervise("create hello.txt", "approved")}
		out := run(t, fc, "have gemini create hello.txt")
		results := strings.Join(fc.Results(), "\n")
		if !strings.Contains(out, "Claude: the task is complete.") {
			t.Fatalf("claude output:\n%s\ntool results:\n%s", out, results)
		}
		for _, want := range []string{`file_edit`, `+hello from gemini`, `I wrote hello.txt.`} {
			if !strings.Contains(results, want) {
				t.Fatalf("the tool results Claude's model got lack %q:\n%s", want, results)
			}
		}
		if got, _ := testkit.ReadFile(t, path); got != "hello from gemini\n" {
			t.Fatalf("hello.txt = %q after Claude approved the edit", got)
		}
	})

	t.Run("EditDenied", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "keep.txt")
		writeFile(t, path, "original\n")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "clobbered\n"}))
		fc := &testkit.FakeClaude{Next: supervise("rewrite keep.txt", "denied")}
		out := run(t, fc, "have gemini rewrite keep.txt")
		if !strings.Contains(out, "Claude: the task is complete.") {
			t.Fatalf("claude output:\n%s", out)
		}
		if got, _ := testkit.ReadFile(t, path); got != "original\n" {
			t.Fatalf("keep.txt = %q after Claude denied the edit; want it untouched", got)
		}
	})
}
