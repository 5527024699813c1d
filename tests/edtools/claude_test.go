package edtools

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// readmeLine returns the first line of a ```sh block of README.md's
// section heading that contains want.
func readmeLine(t *testing.T, heading, want string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	text = text[i+len(heading)+2:]
	if j := strings.Index(text, "\n## "); j >= 0 {
		text = text[:j]
	}
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text, -1) {
		for _, line := range strings.Split(m[1], "\n") {
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
	claude := filepath.Join(testkit.ModuleRoot(t), "tests", "a2a", "claude", "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		tmuxdrive.Missing(t, "needs Claude Code: run (cd tests/a2a/claude && npm ci)")
	}
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
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	add := readmeLine(t, "## Editor tools: what the editor knows, for the model", "claude mcp add")
	cmd := exec.CommandContext(ctx, "bash", "-c", strings.Replace(add, "claude ", `"$CLAUDE" `, 1))
	cmd.Dir, cmd.Env = sb.Workspace, append(env, "CLAUDE="+claude)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", add, err, out)
	}

	fc := &testkit.FakeClaude{Prefix: "mcp__editor__", Next: func(results []string) testkit.ClaudeStep {
		if len(results) == 0 {
			return testkit.ClaudeStep{Tool: "mcp__editor__getDiagnostics", Input: map[string]any{"path": file}}
		}
		return testkit.ClaudeStep{Text: "Claude: main.go has one error."}
	}}
	api := httptest.NewServer(fc)
	defer api.Close()
	cmd = exec.CommandContext(ctx, claude, "-p", "what is wrong with main.go?", "--output-format", "json",
		"--allowedTools", "mcp__editor__getDiagnostics")
	cmd.Dir, cmd.Env = sb.Workspace, append(env, testkit.ClaudeEnv(api.URL)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	results := strings.Join(fc.Results(), "\n")
	if !strings.Contains(string(out), "Claude: main.go has one error.") || !strings.Contains(results, "undefined: answer") {
		t.Fatalf("claude output:\n%s\ntool results its model got:\n%s", out, results)
	}
}
