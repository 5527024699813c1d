package edtools

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// readmeLine returns the first line of a ```sh block of README.md's
// section heading that contains want.
func readmeLine(t *testing.T, heading, want string) string {
	t.Helper()
	for _, b := range testkit.ReadmeBlocks(t, heading, "sh") {
		for _, line := range strings.Split(b, "\n") {
			if strings.Contains(line, want) {
				return strings.TrimSpace(line)
			}
		}
	}
	t.Fatalf("README.md's %q has no ```sh line with %q", heading, want)
	return ""
}

// Claude Code (pinned, offline against a fake Messages API), set up with
// the README's `claude mcp add` line and started in the editor's terminal:
// its model calls mcp__editor__getDiagnostics and gets the editor's
// diagnostics.
func TestClaudeCodeCallsGetDiagnostics(t *testing.T) {
	claude := testkit.NewClaudeCode(t)
	sb := testkit.NewSandbox(t)
	file := sb.WriteFile(t, "main.go", mainGo)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	si := &standIn{release: make(chan struct{})}
	defer close(si.release)
	ed.SetHandler(si.handle)
	res := ed.Initialize(t, sb, map[string]any{"protocolVersion": 2, "capabilities": map[string]bool{"diagnostics": true}})

	env := testkit.WithEnv(noCLIEnv(sb), "HOME="+sb.Home, "PATH="+binDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range res.Env {
		env = testkit.WithEnv(env, k+"="+v)
	}
	claude.Dir, claude.Env = sb.Workspace, env
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	claude.Configure(ctx, t, readmeLine(t, "## Editor tools: what the editor knows, for the model", "claude mcp add"))

	fc := &testkit.FakeClaude{Prefix: "mcp__editor__", Next: func(results []string) testkit.ClaudeStep {
		if len(results) == 0 {
			return testkit.ClaudeStep{Tool: "mcp__editor__getDiagnostics", Input: map[string]any{"path": file}}
		}
		return testkit.ClaudeStep{Text: "Claude: main.go has one error."}
	}}
	out := claude.Print(ctx, t, fc, "what is wrong with main.go?", "mcp__editor__getDiagnostics")
	results := strings.Join(fc.Results(), "\n")
	if !strings.Contains(out, "Claude: main.go has one error.") || !strings.Contains(results, "undefined: answer") {
		t.Fatalf("claude output:\n%s\ntool results its model got:\n%s", out, results)
	}
}
